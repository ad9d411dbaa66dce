"""The plan's ``serving`` section: the serving account of the planned model, in vLLM's terms.

Always built (registered in ``sections``): what vLLM will allocate per GPU for this model on this
GPU, how many requests of ``--max-model-len`` (default: the plan's T) fit at once, the longest
one, and the launch command (``--emit``). The numbers come from ``cost/serving/answer.py``; this
module only maps the plan's inputs onto an engine request (the model's config.json comes with the
plan, read by the one model door cost.spec.lookup.find_model) and renders the section as text
(``render``). `multihead serving` (cli/serving.py) prints the same section: the library never
imports CLI code (docs/layout.md).
"""
from __future__ import annotations

from dataclasses import dataclass

from multihead.planner import sections

SHOWN = 5          # settings of the one search the section lists (cheapest first)
_FLAGS = ("pipeline_parallel_size", "max_num_batched_tokens", "max_num_seqs", "block_size")


class ServingSection:
    """The ``serving`` JSON object, with its text heading and --explain lines."""

    def __init__(self, data: dict):
        self.data = data

    def to_dict(self) -> dict:
        return self.data

    def render(self, console) -> None:
        console.print()
        console.print(render(self.data), markup=False, highlight=False, soft_wrap=True)   # commands stay pasteable

    def explain(self) -> list[str]:
        d = self.data
        if "terms" not in d:
            return [f"serving: {d.get('reason')}"]
        lines = [f"serving: {t['name']} = {t['gib']:.2f} GiB ({t['source']})" for t in d["terms"]]
        lines.append(f"serving: kv_cache_tokens = {d['num_gpu_blocks']:,} blocks // {d['kv_cache_groups']} group(s) "
                     f"x block_size = {d['kv_cache_tokens']:,}")
        lines.append(f"serving: max_concurrency = {d['num_gpu_blocks']:,} / {d['blocks_per_request']:,} blocks per "
                     f"request of {d['max_model_len']:,} tokens = {d['max_concurrency']:.2f}")
        return lines


def _physical_bytes(device) -> tuple[float | None, str]:
    """(physical bytes, where from): the catalog's reported memory for a catalog GPU, the stated
    --gpu-memory-gb for an explicit one; None for a measured CPU profile."""
    if device.kind == "catalog":          # the record's reported bytes (cost.catalog_gpu)
        from multihead.cost.serving.answer import gpu_memory_bytes
        return device.reported_memory_bytes or gpu_memory_bytes(device.name)[1], device.name
    if device.kind == "explicit":
        return device.memory_bytes, device.name or "stated GPU memory"
    return None, device.name


def _kv_flag(o: dict, precision) -> str:
    if o.get("kv_cache_dtype"):
        return o["kv_cache_dtype"]
    return "fp8" if precision.kv == "fp8" else "auto"


def _config(o: dict, model: str) -> tuple[dict, str | None]:
    """(raw config.json, HF id) for the vision tower, rope cache and launch command: given in the
    options (the plan's model door read it: planner.plan, front.request_model), else looked up by
    the name of a ModelSpec the caller built (cost.spec.lookup.find_model); ({}, None) for a model
    from flags."""
    if o.get("config") is not None:
        return o["config"], o.get("model_id")
    from multihead.cost.spec.lookup import find_model
    try:
        found = find_model(model)
    except ValueError:
        return {}, None
    return found.config, found.model_id


@dataclass
class Engine:
    """The engine's view of a plan, computed once per plan (planner.build) and read by the one-pass
    decision, the fallbacks and this section: the config, the request in vLLM's flags, the GPU's
    physical bytes, the account of the request and the one search's result (None: it fits)."""
    cfg: dict
    model_id: str | None
    request: object
    total_bytes: float
    account: object
    found: list | None
    options: dict
    refusal: str | None = None       # the length is past every position the model can reach (no command)
    dtype: str = ""                  # the engine's dtype of the account (serving_account's second answer)


def engine_for(accounts, model: str, tokens: int, options: dict | None) -> Engine | str:
    """The Engine of a plan, or the reason there is none (a measured CPU profile)."""
    from multihead.cost.serving.answer import Request, serving_account
    from multihead.planner.search import fallback_search
    o = dict(options or {})
    cfg, model_id = _config(o, model)
    total, gpu = _physical_bytes(accounts.device)
    if total is None:
        return f"no serving account: {gpu} is a measured CPU profile, not a GPU a serving engine runs on"
    req = Request(tensor_parallel_size=accounts.gpus, gpu_memory_utilization=accounts.memory_utilization,
                  max_model_len=o.get("max_model_len") or tokens,
                  **{k: o[k] for k in _FLAGS if o.get(k) is not None},
                  model=model_id or accounts.spec.name, gpu=gpu, kv_cache_dtype=_kv_flag(o, accounts.precision),
                  dtype=o.get("dtype") or "auto", quantization=o.get("quantization"),
                  engine=o.get("engine") or "vllm", engine_version=o.get("engine_version"),
                  mem_fraction_static=o.get("mem_fraction_static"), data_parallel_size=o.get("data_parallel_size") or 1,
                  kv_cache_free_gpu_memory_fraction=o.get("kv_cache_free_gpu_memory_fraction"),
                  expert_parallel_size=o.get("expert_parallel_size") or 1, batching=o.get("batching") or "continuous",
                  enable_dp_attention=bool(o.get("enable_dp_attention")), measured=o.get("measured"),
                  given=frozenset(k for k in _FLAGS if o.get(k) is not None))
    a, dtype = serving_account(cfg, req, spec=accounts.spec, gpu_bytes=total)
    from multihead.cost.serving.answer import length_override
    refusal = length_override(accounts.spec, req.max_model_len)[1]   # a length no rope override reaches
    found = (fallback_search(cfg, req, accounts.spec.num_heads, limit=None, spec=accounts.spec, gpu_bytes=total)
             if not a.fits or a.max_concurrency < 1 else None)
    return Engine(cfg, model_id, req, total, a, found, o, refusal, dtype)


def engine_fits(e: Engine, spec, **flags) -> bool:
    """Whether one request fits the engine's account with some flags changed (vLLM's names:
    kv_cache_dtype, quantization, tensor_parallel_size) and/or the model changed (``spec``: e.g. fewer
    KV heads). The same account as the one-pass decision, so a fallback's ``fits`` means the same."""
    import dataclasses

    from multihead.cost.serving.answer import serving_account
    try:
        a, _ = serving_account(e.cfg, dataclasses.replace(e.request, **flags), spec=spec, gpu_bytes=e.total_bytes)
    except ValueError:
        return False                       # a setting the engine refuses (TP not placing the KV heads)
    return a.fits


def build(ctx: sections.Context):
    """The serving section of a plan (None is never returned: a CPU profile gets a one-line reason)."""
    from multihead.cost.serving.answer import answer
    from multihead.planner.launch import add_command
    from multihead.planner.names import serving_bytes
    from multihead.planner.search import fallback_rows
    e = getattr(ctx.accounts, "engine", None) or engine_for(ctx.accounts, ctx.plan.inputs.model, ctx.plan.inputs.tokens,
                                                         ctx.options)
    if isinstance(e, str):
        return ServingSection({"fits": False, "reason": e})
    o = e.options
    data = answer(e.cfg, e.request, input_len=o.get("input_len"), output_len=o.get("output_len"),
                  spec=ctx.accounts.spec, gpu_bytes=e.total_bytes, device=ctx.accounts.device,
                  account=(e.account, e.dtype),
                  concurrency=o.get("concurrency"), request_rate=o.get("request_rate"))
    add_command(data, e.request, o.get("emit") or o.get("engine") or "vllm", e.found[0][0] if e.found else None,
                e.total_bytes, e.cfg)
    if e.found is not None:
        data["fallbacks"] = fallback_rows(e.found[:SHOWN], e.request, e.account)
    return ServingSection(serving_bytes(data))


def render(out: dict) -> str:
    """The serving section as text: the budget, the engine's numbers, the verdict, the command."""
    engine = {"vllm": "vLLM", "sglang": "SGLang", "tensorrt-llm": "TensorRT-LLM"}.get(out.get("engine", "vllm"),
                                                                                     out.get("engine"))
    lines = [f"Serving ({engine} v{out.get('engine_version', '0.19')} accounting, per GPU)"]
    for t in out["terms"]:
        lines.append(f"  {t['name']:<16} {t['gib']:>9.2f} GiB   {t['source']}")
    if out.get("engine") == "sglang":
        sg = out.get("sglang", {})
        lines.append(f"  KV cache size     {out['kv_cache_tokens']:>9,} tokens (max_total_num_tokens: a token pool of "
                     f"page size {sg.get('page_size', 1)}, {out['page_bytes']:,} B per page per layer x "
                     f"{out['layers_per_group']} layers)")
        groups = sg.get("dp_size") if sg.get("enable_dp_attention") else None
        if groups:
            lines[-1] += f", per attention group; {groups} groups hold {sg['max_total_num_tokens_all_groups']:,}"
        lines.append(f"  max concurrency   {out['max_concurrency']:>9.2f}x for {out['max_model_len']:,} tokens per "
                     f"request (tokens{' of all groups' if groups else ''} / --context-length; SGLang prints no "
                     f"such line)")
    elif out.get("engine") == "tensorrt-llm":
        tr = out.get("tensorrt_llm", {})
        lines.append(f"  KV cache size     {out['kv_cache_tokens']:>9,} tokens ({out['num_gpu_blocks']:,} blocks of "
                     f"{tr.get('tokens_per_block', 32)} tokens, {out['page_bytes']:,} B per block per layer x "
                     f"{out['layers_per_group']} layers; {tr.get('backend', '')} backend)")
        lines.append(f"  max concurrency   {out['max_concurrency']:>9.2f}x for {out['max_model_len']:,} tokens per "
                     f"request (blocks / blocks per --max_seq_len request)")
    else:
        lines.append(f"  KV cache size     {out['kv_cache_tokens']:>9,} tokens ({out['num_gpu_blocks']:,} blocks of "
                     f"{out['page_bytes']:,} B x {out['layers_per_group']} layers, {out['kv_cache_groups']} group(s))")
        lines.append(f"  max concurrency   {out['max_concurrency']:>9.2f}x for {out['max_model_len']:,} tokens per "
                     f"request")
    lines.append(f"  longest request   {out['max_model_len_fit']:>9,} tokens at concurrency 1 (searched up to the "
                 f"larger of the model's positions and --max-model-len)")
    lines.append(f"  prefill           {out['prefill']}")
    from multihead.cost.time.serving_time import render_lines
    lines += ["  " + x for x in render_lines(out)]
    lines.append(f"Verdict: {out['verdict']}")
    if out.get("fallbacks"):
        lines.append("Fallbacks that fit, cheapest first (fewest GPUs, then least precision lost; KV per GPU):")
    for f in out.get("fallbacks", []):
        if f.get("note"):
            lines.append(f"  {' '.join(f['flags'])}: {f['note']}")
            continue
        lines.append(f"  {' '.join(f['flags'])} ({f['gpus']} GPUs): {f['max_concurrency']:.2f}x, "
                     f"{f['kv_cache_tokens']:,} KV tokens, {f['kv_cache_gib_per_gpu']:.2f} GiB KV per GPU")
    if "command" in out:
        lines.append(f"Launch ({out['command']['engine']}, {out['command']['for']}):")
        lines += ["  " + x for x in out["command"]["text"].splitlines()]
        if out["command"]["note"]:
            lines.append(f"  note: {out['command']['note']}")
    return "\n".join(lines)


sections.register("serving", build)
