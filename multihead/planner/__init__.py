"""The planner: accounts -> decision -> fallbacks -> explanation -> rendering.

    from multihead import planner
    p = planner.plan("Llama-3.1-8B", tokens=131072, device="H100-SXM", kv_dtype="fp8")
    p.outcome.decision, p.memory.kv_cache_bytes, p.compute.decode_seconds_per_token
    p.to_dict()            # the JSON of `multihead plan --json` (flat keys + one object per section)
    planner.render(p)      # the tables; planner.render_explain(p); planner.plot_memory(p, "m.png")

    from multihead.planner.request import PlanRequest     # the one request type (CLI, page, library)
    req = PlanRequest(model="Qwen/Qwen2.5-7B-Instruct", gpu="H100", max_model_len=32768)
    planner.report(req)    # the JSON object of `multihead plan --json`; planner.plan_request(req) -> Plan
    planner.curve(req)     # memory per GPU vs context length (one plan; the page's chart)

Layout: request.py (PlanRequest: the validated request, the engines' flag names), front.py (request
-> plan, report, curve: what the CLI, the page and `plan --html` call), inputs.py (model, device, workload resolved and checked), accounts.py (Accounts: bytes,
FLOPs, seconds per GPU; chunk splitting, bisections), plan.py (the Plan tree and its parts),
decision.py (one pass / chunks / nothing fits; positions; the chunked alternative), fallbacks.py,
notes.py (warnings), explain.py (--explain lines), sections.py (optional sections such as
``serving``), rendering.py (tables, JSON, plot). Counts come from ``multihead.cost`` only.
"""
from __future__ import annotations

from pathlib import Path

from multihead.cost.time.device import DeviceSpec
from multihead.cost.spec.model import ModelSpec
from multihead.cost.spec.precision import resolve as resolve_precision
from multihead.planner import sections
from multihead.planner.accounts import MemoryAccount, Accounts, chunk_tokens, fewest_chunks, max_tokens_that_fit
from multihead.planner.decision import build_outcome
from multihead.planner.explain import explain
from multihead.planner.fallbacks import fallbacks, gqa_quality_lines
from multihead.planner.inputs import Workload, check_tensor_parallel, resolve_device, resolve_spec
from multihead.planner.notes import build_warnings
from multihead.planner.plan import (QUALITY_REPORT, Fallback, Plan, build_compute, build_inputs, build_memory,
                                    build_parameters)

DEFAULT_MEMORY_UTILIZATION = 0.9


def plan(model: str | ModelSpec | None = None, *, tokens: int, batch: int = 1, passes: int = 1,
         chunks: int | None = None, params: float | None = None, layers: int | None = None,
         heads: int | None = None, kv_heads: int | None = None, head_dim: int | None = None,
         hidden: int | None = None, intermediate: int | None = None, vocab: int | None = None,
         max_position: int | None = None, weights_dtype: str | None = None, kv_dtype: str | None = None,
         quantization: str | None = None, device: str | DeviceSpec | None = None,
         gpu_memory_gb: float | None = None, effective_tflops: float | None = None,
         bandwidth_tbps: float | None = None, flops_efficiency: float | None = None,
         bandwidth_efficiency: float | None = None, gpus: int = 1,
         memory_utilization: float = DEFAULT_MEMORY_UTILIZATION, attention: str = "tiled",
         causal_skip: bool = False, quality_report: str | Path | None = QUALITY_REPORT,
         options: dict | None = None) -> Plan:
    """Plan T tokens (batch B, ``passes`` passes) of ``model`` on ``device``; raises ValueError on bad input.

    ``model``: catalog name, config.json path or ModelSpec (explicit fields override it). ``device``:
    catalog GPU, measured profile path or DeviceSpec; or all of gpu_memory_gb, effective_tflops and
    bandwidth_tbps. ``chunks``: evaluate this split instead of choosing one. ``quantization``: vLLM's
    --quantization name. ``options``: per-section options ({"serving": {...}}).
    """
    work = Workload(tokens, batch, passes, chunks, gpus, attention, causal_skip, memory_utilization)
    if quantization is not None or weights_dtype is not None or kv_dtype is not None:
        # the engine serves the precision the text's accounts assume (as `multihead plan` passes it on:
        # planner/front.serving_precision); a serving option the caller set must agree with it
        from types import SimpleNamespace
        from multihead.planner.front import check_precision, serving_precision
        serving = {k: v for k, v in dict((options or {}).get("serving") or {}).items() if v not in (None, "")}
        if quantization and serving.get("quantization") not in (None, quantization):
            raise ValueError(f"quantization: {quantization} disagrees with the serving option quantization "
                             f"{serving['quantization']}; give one of them")
        asked = SimpleNamespace(weights_dtype=weights_dtype, kv_dtype=kv_dtype,
                                quantization=quantization or serving.get("quantization"),
                                dtype=serving.get("dtype"), kv_cache_dtype=serving.get("kv_cache_dtype"))
        check_precision(asked)
        for key, value in {**({"quantization": quantization} if quantization else {}),
                           **serving_precision(asked)}.items():
            serving.setdefault(key, value)
        options = {**(options or {}), "serving": serving}
    if isinstance(model, (str, Path)):      # read once (the one model door): its spec, and its config for the engines
        from multihead.cost.spec.lookup import find_model
        found = find_model(model)
        model = found.spec
        serving = dict((options or {}).get("serving") or {})
        if serving.get("config") is None:
            serving.update(config=found.config, model_id=found.model_id)
            options = {**(options or {}), "serving": serving}
    spec = resolve_spec(model, params=params, layers=layers, heads=heads, kv_heads=kv_heads, head_dim=head_dim,
                        hidden=hidden, intermediate=intermediate, vocab=vocab, max_position=max_position)
    check_tensor_parallel(spec, gpus)
    dev = resolve_device(device, gpu_memory_gb=gpu_memory_gb, effective_tflops=effective_tflops,
                         bandwidth_tbps=bandwidth_tbps, flops_efficiency=flops_efficiency,
                         bandwidth_efficiency=bandwidth_efficiency)
    st = Accounts(spec, dev, resolve_precision(spec, weights_dtype, kv_dtype, quantization), batch, gpus, attention,
               memory_utilization)
    return build(st, work, quality_report, options)


def build(st: Accounts, work: Workload, quality_report=None, options: dict | None = None) -> Plan:
    """The plan of one Accounts and workload: parts, outcome, warnings, fallbacks, sections, explanation."""
    T = work.tokens
    from multihead.planner.serving import engine_for
    engine = engine_for(st, st.spec.name, T, (options or {}).get("serving"))
    st.engine = None if isinstance(engine, str) else engine      # read by the decision, fallbacks, section
    single = st.memory(T)
    compute = build_compute(st, single, T, work.passes, work.causal_skip)
    outcome = build_outcome(st, T, work.passes, work.chunks, single, work.causal_skip,
                            compute.attention_prefill_seconds)
    p = Plan(inputs=build_inputs(st, T, work.passes, work.causal_skip), parameters=build_parameters(st),
             memory=build_memory(st, single, T), compute=compute, outcome=outcome,
             warnings=build_warnings(st, T, single, outcome.decision, outcome.chunking_loses),
             fallbacks=fallbacks(st, T, work.passes, single, compute.prefill_seconds, quality_report,
                                 work.causal_skip), accounts=st)
    p.sections = sections.build_all(p, st, options)
    p.explain = explain(p) + [line for s in p.sections.values() if hasattr(s, "explain") for line in s.explain()]
    return p


def memory_curve(p: Plan, tokens: list[int], kv_heads: int | None = None) -> list[float]:
    """Total single-pass bytes per GPU at each context length, for the plan's model and settings."""
    return [p.accounts.memory(t, kv_heads=kv_heads).total_bytes for t in tokens]


def longest_fitting_context(p: Plan, kv_heads: int | None = None) -> int:
    """The longest single pass that fits the plan's GPU (0 if none)."""
    return max_tokens_that_fit(p.accounts, kv_heads)


def plan_request(req) -> Plan:
    """The Plan of a PlanRequest (planner/front.py)."""
    from multihead.planner.front import plan_request as _plan_request
    return _plan_request(req)


def report(req) -> dict:
    """The object `multihead plan --json` prints for a PlanRequest."""
    from multihead.planner.front import report as _report
    return _report(req)


def curve(req, plan: Plan | None = None) -> dict:
    """Memory per GPU vs context length for a PlanRequest (the page's chart, `plan --html`)."""
    from multihead.planner.front import curve as _curve
    return _curve(req, plan)


def render(p: Plan, console=None, explain: bool = False) -> None:
    from multihead.planner.rendering import render as _render
    _render(p, console, explain)


def render_explain(p: Plan, console=None) -> None:
    from multihead.planner.rendering import render_explain as _render_explain
    _render_explain(p, console)


def plot_memory(p: Plan, path) -> Path:
    from multihead.planner.rendering import plot_memory as _plot
    return _plot(p, path)


__all__ = ["plan", "plan_request", "report", "curve", "build", "Plan", "Fallback", "Accounts", "MemoryAccount", "Workload", "sections", "memory_curve",
           "longest_fitting_context", "fewest_chunks", "chunk_tokens", "render", "render_explain", "plot_memory",
           "resolve_device", "resolve_spec", "gqa_quality_lines"]
