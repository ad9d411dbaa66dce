"""Fixed costs of a forward by engine, version family and the kernels a layer launches (no torch).

A decode step of a small batch is bound by neither FLOPs nor bytes but by the kernels it runs one
after another: each costs a few microseconds of launch, ramp-up and tail even inside a CUDA graph, and
a prefill that runs eagerly (outside graphs) pays the host's launch cost per kernel as well. So the
fixed cost of a forward is

    L_eff * t_layer(engine, version family, phase)

where t_layer is the fitted cost of one *dense* decoder layer of that engine (9 kernels: 2 norms, the
fused QKV projection, rotary embedding, attention, the output projection, gate-up projection, the
activation, the down projection; vLLM's llama.py) and L_eff counts every layer by its kernels
relative to that dense layer (LAYER_KERNELS):

- multi-head latent attention (DeepSeek-V2/V3, vLLM's MLA backend): 9 kernels instead of 4 (the fused
  q_a/kv_a projection, the q_a and kv_a norms, q_b, rotary, the absorbed W_UK bmm, attention, the
  W_UV bmm, the output projection);
- a routed-expert MLP (vLLM's fused_moe): 7 kernels instead of 3 (router GEMM, top-k, the token
  sort/align, the grouped gate-up GEMM, the activation, the grouped down GEMM, the weighted sum);
  shared experts add a dense MLP's 3.

The engine's version family (catalog/engine_versions.json: vLLM V0 until 0.8, V1 from 0.8; SGLang
0.4+; TensorRT-LLM 0.x (compiled engine) and 1.x (PyTorch backend), each its own costs since session 13 unless POOLED
says otherwise; gpt-fast) selects the fitted t_layer; the prefill's own t_layer (eager launches)
is a second table, falling back to the decode one when it was not fitted.
"""
from __future__ import annotations

import re
from pathlib import Path

from multihead.catalog import read_json

CATALOG = Path(__file__).parents[1] / "catalog"
ENGINE_NAMES = ("vllm", "sglang", "tensorrt-llm", "gpt-fast")

# kernels per part of a decoder layer (see the module docstring)
NORM_KERNELS = 1
ATTENTION_KERNELS = {"gqa": 4, "mla": 9}
MLP_KERNELS = {"dense": 3, "moe": 7}
SHARED_EXPERT_KERNELS = 3
DENSE_LAYER_KERNELS = 2 * NORM_KERNELS + ATTENTION_KERNELS["gqa"] + MLP_KERNELS["dense"]     # 9


def versions_catalog() -> dict:
    return read_json(CATALOG / "engine_versions.json")


def _numbers(version: str) -> tuple[int, ...]:
    m = re.match(r"\s*v?(\d+(?:\.\d+)*)", str(version))
    if not m:
        raise ValueError(f"engine_version: expected a version such as 0.10.2, got {version!r}")
    parts = tuple(int(x) for x in m.group(1).split("."))
    return parts + (0,) * (4 - len(parts))     # padded to 4: "1", "1.x" and "1.0" compare as 1.0.0.0


def version_family(engine: str, version: str | None = None, date: str | None = None) -> str:
    """The version family of ``engine`` at ``version``, else at ``date`` ('YYYY-MM', for a measurement
    that names no version), else the engine's default (newest) family. Raises ValueError naming the
    argument for an unknown engine or an unreadable version."""
    table = versions_catalog()["engines"]
    if engine not in table:
        raise ValueError(f"engine: expected one of {', '.join(table)}, got {engine!r}")
    fams = table[engine]["families"]
    if version is not None:
        v = _numbers(version)
        for f in fams:
            lo, hi = f.get("since_version"), f.get("until_version")
            if (lo is None or v >= _numbers(lo)) and (hi is None or v < _numbers(hi)):
                return f["family"]
        return table[engine]["default"]
    if date is not None:
        if not re.fullmatch(r"\d{4}(-\d{2}){0,2}", str(date)):
            raise ValueError(f"engine_date: expected 'YYYY-MM' (or 'YYYY', 'YYYY-MM-DD'), got {date!r}")
        date = str(date)
        if len(date) == 4:      # a year only: placed when all of it falls in one family
            first, last = (version_family(engine, None, f"{date}-{m}") for m in ("01", "12"))
            if first != last:
                raise ValueError(f"engine_date: {engine} changed version family during {date} ({first} -> {last}); "
                                 "give the month ('YYYY-MM') or the version")
            return first
        for f in fams:
            lo, hi = f.get("since_date"), f.get("until_date")
            if (lo is None or date >= lo) and (hi is None or date < hi):
                return f["family"]
    return table[engine]["default"]


def family_value(table: dict, key: str):
    """A fitted table's entry for a cost key ("vllm@v1"), else the engine's own entry ("vllm"), else None: a family
    the fit file does not have reads what the engine has."""
    return table.get(key, table.get(key.split("@")[0]))


def _family_entry(engine: str, family: str) -> dict:
    for f in versions_catalog()["engines"][engine]["families"]:
        if f["family"] == family:
            return f
    raise ValueError(f"engine_version: {engine} has no version family {family!r}")


# Engines whose version families share one set of fixed costs (none since session 13). Session 12 cross-validated
# TensorRT-LLM's 0.x (compiled engine) and 1.x (PyTorch backend) lines with costs of their own (variant 'trt'); session
# 13 adopted them, with arrival waves and document weights, refitted on all 1,207 rows (reports/gpu-time/session13/
# RULE.md, part 2), so each family reads "tensorrt-llm@0.x" / "tensorrt-llm@1.x". ("tensorrt-llm",) pools them again
# (variant 'trtpooled').
POOLED: tuple[str, ...] = ()


def cost_key(engine: str, family: str) -> str:
    """The key of an engine family's fitted constants: "vllm@v1"; engines with one family (or pooled): the name. A
    family whose kernels and host work are another's (``fixed_costs_of``: vLLM's async-scheduling releases run
    V1's step) reads that family's constants. A key the fit file lacks falls back to the engine's name."""
    fams = versions_catalog()["engines"][engine]["families"]
    family = _family_entry(engine, family).get("fixed_costs_of", family)
    return engine if len(fams) == 1 or engine in POOLED else f"{engine}@{family}"


def cost_keys() -> list[str]:
    out = []
    for engine, entry in versions_catalog()["engines"].items():
        out += [k for k in (cost_key(engine, f["family"]) for f in entry["families"]) if k not in out]
    return out


# Host work overlapped with the GPU's step (session 7). An engine that schedules step n+1 while the GPU runs
# step n (vLLM's async scheduling, on by default in the "v1-async" family; SGLang's overlap scheduler since
# v0.4) hides its per-sequence host work under the step: the step takes max(GPU time, host time), not their sum.
# Not adopted: session 7's refits with it did not finish inside 25 and 45 minutes on the shared 2-core machine (the max()
# makes the least-squares objective non-smooth), so it has no cross-validated result; it stays off, tested.
OVERLAP = False         # True: overlapping families hide their host work under the step; False: they add it


def overlaps_host(setup) -> bool:
    """Whether ``setup``'s engine family overlaps its host work with the GPU (``overlap_host`` in
    catalog/engine_versions.json); False for an engine the catalog does not know."""
    if not OVERLAP or setup.engine not in ENGINE_NAMES:
        return False
    family = version_family(setup.engine, setup.engine_version, setup.engine_date)
    return bool(_family_entry(setup.engine, family).get("overlap_host"))


def charged_host_s(host_s: float, gpu_s: float, overlapped: bool) -> float:
    """Seconds the host's per-sequence work adds to a step whose GPU work takes ``gpu_s``: all of it when the
    engine runs host and GPU in turn, only what sticks out beyond the GPU's time when it overlaps them
    (max(gpu, host) - gpu)."""
    if host_s < 0 or gpu_s < 0:
        raise ValueError(f"host and GPU times must be >= 0, got host_s={host_s}, gpu_s={gpu_s}")
    return max(0.0, host_s - gpu_s) if overlapped else host_s


# Session 7: the MXFP4 MoE backends (vLLM's triton_kernels matmul_ogs path on Hopper and ROCm, FlashInfer's
# TensorRT-LLM-gen fused MoE on Blackwell) fuse SwiGLU into the gate-up grouped GEMM and the weighted combine
# into the down grouped GEMM, and route (top-k + sort) in one kernel: router GEMM, routing, gate-up, down.
# Cross-validated by document on every fitted row (reports/gpu-time/session7_cv.py, on top of the ROCm factor):
# out-of-document median |error| all 12.5% -> 11.6%, MoE/MLA 17.5% -> 16.6%, throughput at a stated batch 24.6% ->
# 20.0%, TTFT 11.0% -> 9.8%, InferenceX #828 TPOT +61% -> +39%, but dense 8.0% -> 8.6%: the rule (better overall and
# not worse for dense) drops it, so it stays off, a tested variant.
MXFP4_MOE_KERNELS = 4
FUSED_MXFP4_MOE = False     # True: an MXFP4 MoE counts 4 kernels; False: fused_moe's 7 like any other (session 6)


def moe_kernels(quantization=None) -> int:
    """Kernels of a routed-expert MLP: 4 for MXFP4 experts (MXFP4_MOE_KERNELS), else fused_moe's 7."""
    mxfp4 = quantization is not None and getattr(quantization, "method", None) == "mxfp4"
    return MXFP4_MOE_KERNELS if FUSED_MXFP4_MOE and mxfp4 else MLP_KERNELS["moe"]


def layer_kernels(spec, quantization=None) -> float:
    """Kernels of the model's decoder layers relative to a dense GQA layer's 9, summed over its
    layers: the L_eff of the module docstring (= L for a dense model); ``quantization`` picks the
    routed-expert MLP's kernel count (moe_kernels)."""
    L = spec.num_layers
    attn = ATTENTION_KERNELS["mla" if spec.mla is not None else "gqa"]
    moe = spec.moe
    moe_layers = moe.moe_layers if moe is not None else 0
    shared = SHARED_EXPERT_KERNELS if moe is not None and moe.shared_experts else 0
    dense = 2 * NORM_KERNELS + attn + MLP_KERNELS["dense"]
    routed = 2 * NORM_KERNELS + attn + moe_kernels(quantization) + shared
    return ((L - moe_layers) * dense + moe_layers * routed) / DENSE_LAYER_KERNELS


def sequence_overhead_s(setup, sequences: float) -> float:
    """Host work per sequence and step (scheduling, sampling, detokenizing, output processing) that the
    engine does not overlap with the GPU: ``sequences`` * t_seq of the engine family (0 when not fitted).
    It is what makes a decode step of thousands of sequences slower than its bytes and FLOPs."""
    per_sequence = family_value(setup.constants.sequence_overhead_s, setup.cost_key)
    return sequences * per_sequence if per_sequence is not None else 0.0


def fixed_overhead_s(setup, phase: str, sequences: float = 0.0) -> float:
    """Fixed cost of one forward of ``setup`` ("prefill" or "decode") over ``sequences`` sequences:
    L_eff * t_layer of its engine family and phase, plus the per-sequence host cost; a decode without
    CUDA graphs (``enforce_eager``) pays the eager (prefill) per-layer cost."""
    if phase not in ("prefill", "decode"):
        raise ValueError(f"phase: expected 'prefill' or 'decode', got {phase!r}")
    c = setup.constants
    key = setup.cost_key
    eager = phase == "prefill" or getattr(setup, "enforce_eager", False)
    per_layer = family_value(c.prefill_layer_overhead_s, key) if eager else None
    if per_layer is None:
        per_layer = c.layer_overhead(key)
    return layer_kernels(setup.spec, setup.quantization) * per_layer + sequence_overhead_s(setup, sequences)


def fixed_and_host_s(setup, phase: str, sequences: float, gpu_s: float) -> float:
    """fixed_overhead_s with the per-sequence host work charged by charged_host_s: its sum for an engine that
    does not overlap host and GPU, else only the part beyond ``gpu_s`` (the step's other terms, the fixed
    per-layer costs included)."""
    host = sequence_overhead_s(setup, sequences)
    layers = fixed_overhead_s(setup, phase, sequences) - host
    return layers + charged_host_s(host, gpu_s + layers, overlaps_host(setup))
