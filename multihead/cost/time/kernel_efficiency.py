"""Kernel efficiency by engine for the two kernel classes the dense fit cannot speak for (no torch).

The fitted efficiencies eta_f and eta_m (cost/time/timing.py) come mostly from dense GEMMs and GQA attention. Two
kernels of today's models are other code, written per engine:

- the routed experts' grouped GEMMs: vLLM's and SGLang's ``fused_moe`` Triton kernels (and their DeepGEMM /
  CUTLASS paths), TensorRT-LLM's MoE plugin, gpt-fast's per-expert gather; small-M tiles, token sorting and
  expert-major loads make them reach a different share of the GPU's bandwidth (decode) and FLOPs (prefill);
- MLA attention in its absorbed form: FlashMLA / FlashInfer's MLA kernels (SGLang, vLLM), TensorRT-LLM's own.

Session 14 (reports/gpu-time/session14/RULE.md) reads the session-13 model's out-of-document errors as one
efficiency missing per engine: MoE on SGLang and TensorRT-LLM predicted too fast, MLA decode too slow on SGLang and
too fast on vLLM. So each class gets a fitted factor per engine (or per engine and phase, ``PER_PHASE``) on its
achieved rate:

    t_experts = (routed expert bytes / (BW * eta_m), routed FLOPs / (F * eta_f)) / moe_efficiency[engine]
    t_mla     = (MLA attention FLOPs / (F16 * eta_f), latent bytes / (BW * eta_m)) / mla_efficiency[engine]

1 (no entry) is the dense rate. The terms are what ``extra_seconds`` adds to a phase's compute and memory sides.
"""
from __future__ import annotations

KERNEL_EFFICIENCY = True    # session 14's switch (RULE.md): fitted factors on the MoE experts' and MLA's rates
PER_PHASE = False           # True: one factor per engine and phase ('sglang/decode'); False: per engine
TABLES = ("moe_efficiency", "mla_efficiency")


def key(engine: str, phase: str) -> str:
    """The factor's key in a Constants table: the engine's name ("sglang"), or "sglang/decode" with PER_PHASE.
    A version family key ("vllm@v1") reads its engine's factor."""
    name = engine.split("@")[0]
    return f"{name}/{phase}" if PER_PHASE else name


def factor(table: dict, engine: str, phase: str) -> float:
    """A class's efficiency for this engine and phase: the keyed entry, else the engine's own, else 1 (the dense
    rate). Refuses a factor <= 0, and a table keyed by phase read without PER_PHASE, by name."""
    name = engine.split("@")[0]
    if not PER_PHASE and name not in table and any(k.startswith(f"{name}/") for k in table):
        raise ValueError(f"kernel efficiency: the table is keyed by engine and phase ({sorted(table)!r}) but "
                         f"PER_PHASE is off: set kernel_efficiency.PER_PHASE = True to read it")
    value = table.get(key(engine, phase), table.get(name, 1.0))
    if not value > 0:
        raise ValueError(f"kernel efficiency: expected a factor > 0 for {key(engine, phase)!r}, got {value!r}")
    return value


def applies(setup) -> tuple[bool, bool]:
    """(MoE experts, MLA attention): which classes this setup's model has, when the switch is on."""
    if not KERNEL_EFFICIENCY:
        return False, False
    s = setup.spec
    return s.moe is not None, s.mla is not None


def extra_seconds(setup, phase: str, *, routed_flops: float, routed_bytes: float) -> tuple[float, float, float]:
    """(extra linear compute s, extra weight-read s, scale of the attention's compute and KV-read seconds) of one
    forward on one GPU. ``routed_flops`` / ``routed_bytes``: this GPU's routed-expert FLOPs (padding included) and
    bytes (imbalance included) at the dense rate; the extras are their seconds times (1/eta_moe - 1), the scale is
    1/eta_mla (1 without MLA or without the switch)."""
    from multihead.cost.time.timing import linear_flops_per_s, read_seconds
    moe, mla = applies(setup)
    c = setup.constants
    compute = memory = 0.0
    if moe:
        inv = 1.0 / factor(c.moe_efficiency, setup.engine, phase) - 1.0
        compute = routed_flops / linear_flops_per_s(setup) * inv
        memory = read_seconds(setup, routed_bytes) * inv
    scale = 1.0 / factor(c.mla_efficiency, setup.engine, phase) if mla else 1.0
    return compute, memory, scale
