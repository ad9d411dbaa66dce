"""The plan's ``serving`` section: the serving account of the planned model, in vLLM's terms.

Always built (registered in ``sections``): what vLLM will allocate per GPU for this model on this
GPU, how many requests of ``--max-model-len`` (default: the plan's T) fit at once, the longest
one, and the launch command (``--emit``). The numbers come from ``cost/serving_answer.py``; this
module only maps the plan's inputs onto an engine request and renders the section.
"""
from __future__ import annotations

from multihead.planner import sections

_FLAGS = ("pipeline_parallel_size", "max_num_batched_tokens", "max_num_seqs", "block_size")


class ServingSection:
    """The ``serving`` JSON object, with its text heading and --explain lines."""

    def __init__(self, data: dict):
        self.data = data

    def to_dict(self) -> dict:
        return self.data

    def render(self, console) -> None:
        from multihead.cli.serving import render
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
    from multihead.cost.serving_answer import gpu_memory_bytes
    if device.kind == "catalog":
        name, total = gpu_memory_bytes(device.name)
        return total, name
    if device.kind == "explicit":
        return device.memory_bytes, device.name or "stated GPU memory"
    return None, device.name


def _kv_flag(o: dict, precision) -> str:
    if o.get("kv_cache_dtype"):
        return o["kv_cache_dtype"]
    return "fp8" if precision.kv == "fp8" else "auto"


def _config(o: dict, model: str) -> tuple[dict, str | None]:
    """(raw config.json, HF id) for the vision tower, rope cache and launch command: given in the
    options, else looked up by the plan's model name or path; ({}, None) for a model from flags."""
    if o.get("config") is not None:
        return o["config"], o.get("model_id")
    from multihead.cli.serving import load_model
    try:
        return load_model(model)
    except (ValueError, ImportError):
        return {}, None


def build(ctx: sections.Context):
    """The serving section of a plan (None is never returned: a CPU profile gets a one-line reason)."""
    from multihead.cost.serving_answer import Request, answer
    o, setup = dict(ctx.options), ctx.setup
    cfg, model_id = _config(o, ctx.plan.inputs.model)
    total, gpu = _physical_bytes(setup.device)
    if total is None:
        return ServingSection({"fits": False, "reason": f"no serving account: {gpu} is a measured CPU "
                               "profile, not a GPU a serving engine runs on"})
    req = Request(tensor_parallel_size=setup.gpus, gpu_memory_utilization=setup.memory_utilization,
                  max_model_len=o.get("max_model_len") or ctx.plan.inputs.tokens,
                  **{k: o[k] for k in _FLAGS if o.get(k) is not None},
                  model=model_id or setup.spec.name, gpu=gpu, kv_cache_dtype=_kv_flag(o, setup.precision),
                  dtype=o.get("dtype") or "auto", quantization=o.get("quantization"))
    data = answer(cfg, req, emit=o.get("emit", "vllm"), heads=setup.spec.num_heads,
                  input_len=o.get("input_len"), output_len=o.get("output_len"), spec=setup.spec, gpu_bytes=total,
                  device=setup.device)
    return ServingSection(data)


sections.register("serving", build)
