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
0.4+; TensorRT-LLM; gpt-fast) selects the fitted t_layer; the prefill's own t_layer (eager launches)
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
    return tuple(int(x) for x in m.group(1).split("."))


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
        for f in fams:
            lo, hi = f.get("since_date"), f.get("until_date")
            if (lo is None or date >= lo) and (hi is None or date < hi):
                return f["family"]
    return table[engine]["default"]


def cost_key(engine: str, family: str) -> str:
    """The key of an engine family's fitted constants: "vllm@v1"; engines with one family: the name."""
    fams = versions_catalog()["engines"][engine]["families"]
    return engine if len(fams) == 1 else f"{engine}@{family}"


def cost_keys() -> list[str]:
    out = []
    for engine, entry in versions_catalog()["engines"].items():
        out += [cost_key(engine, f["family"]) for f in entry["families"]]
    return out


def layer_kernels(spec) -> float:
    """Kernels of the model's decoder layers relative to a dense GQA layer's 9, summed over its
    layers: the L_eff of the module docstring (= L for a dense model)."""
    L = spec.num_layers
    attn = ATTENTION_KERNELS["mla" if spec.mla is not None else "gqa"]
    moe = spec.moe
    moe_layers = moe.moe_layers if moe is not None else 0
    shared = SHARED_EXPERT_KERNELS if moe is not None and moe.shared_experts else 0
    dense = 2 * NORM_KERNELS + attn + MLP_KERNELS["dense"]
    routed = 2 * NORM_KERNELS + attn + MLP_KERNELS["moe"] + shared
    return ((L - moe_layers) * dense + moe_layers * routed) / DENSE_LAYER_KERNELS


def sequence_overhead_s(setup, sequences: float) -> float:
    """Host work per sequence and step (scheduling, sampling, detokenizing, output processing) that the
    engine does not overlap with the GPU: ``sequences`` * t_seq of the engine family (0 when not fitted).
    It is what makes a decode step of thousands of sequences slower than its bytes and FLOPs."""
    c = setup.constants
    key = setup.cost_key
    for k in (key, key.split("@")[0]):
        if k in c.sequence_overhead_s:
            return sequences * c.sequence_overhead_s[k]
    return 0.0


def fixed_overhead_s(setup, phase: str, sequences: float = 0.0) -> float:
    """Fixed cost of one forward of ``setup`` ("prefill" or "decode") over ``sequences`` sequences:
    L_eff * t_layer of its engine family and phase, plus the per-sequence host cost; a decode without
    CUDA graphs (``enforce_eager``) pays the eager (prefill) per-layer cost."""
    if phase not in ("prefill", "decode"):
        raise ValueError(f"phase: expected 'prefill' or 'decode', got {phase!r}")
    c = setup.constants
    key = setup.cost_key
    eager = phase == "prefill" or getattr(setup, "enforce_eager", False)
    per_layer = None
    if eager:
        for k in (key, key.split("@")[0]):
            if k in c.prefill_layer_overhead_s:
                per_layer = c.prefill_layer_overhead_s[k]
                break
    if per_layer is None:
        per_layer = c.layer_overhead(key)
    return layer_kernels(setup.spec) * per_layer + sequence_overhead_s(setup, sequences)
