"""The plan's inputs, resolved and checked: the model (catalog, config.json or flags), the device
(catalog GPU, measured profile or explicit figures) and the workload. Bad input: ValueError naming it."""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from multihead.cost.time.cpu_profile import load_device
from multihead.cost.time.device import DeviceSpec
from multihead.cost.spec.lookup import resolve_model
from multihead.cost.counts.memory import check_tensor_parallel as check_tensor_parallel_rule
from multihead.cost.spec.model import ModelSpec
from multihead.cost.spec.units import SIXTEEN_BIT

MAX_TOKENS = 1 << 40            # every account is closed-form; beyond this nothing is meaningful


@dataclass(frozen=True)
class Workload:
    tokens: int
    batch: int = 1
    passes: int = 1
    chunks: int | None = None
    gpus: int = 1
    attention: str = "tiled"
    causal_skip: bool = False
    memory_utilization: float = 0.9

    def __post_init__(self):
        for name in ("tokens", "batch", "passes", "gpus"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= MAX_TOKENS:
                raise ValueError(f"{name}: expected a positive integer, got {v!r}")
        if self.chunks is not None and (not isinstance(self.chunks, int) or not 1 <= self.chunks <= self.tokens):
            raise ValueError(f"chunks: expected an integer from 1 to tokens={self.tokens}, got {self.chunks!r}")
        if self.attention not in ("tiled", "materialized"):
            raise ValueError(f"attention: expected 'tiled' or 'materialized', got {self.attention!r}")
        if not (isinstance(self.memory_utilization, (int, float)) and 0 < self.memory_utilization <= 1):
            raise ValueError(f"memory-utilization: expected a fraction in (0, 1], got {self.memory_utilization}")


def _positive(name: str, v) -> None:
    if v is not None and not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
        raise ValueError(f"{name}: expected a finite positive number, got {v}")


def resolve_device(device: str | DeviceSpec | None = None, *, gpu_memory_gb: float | None = None,
                   effective_tflops: float | None = None, bandwidth_tbps: float | None = None,
                   flops_efficiency: float | None = None, bandwidth_efficiency: float | None = None) -> DeviceSpec:
    """A DeviceSpec from a catalog name / profile path / DeviceSpec, with explicit figures on top.
    Explicit figures are already effective: they replace the peak and set its efficiency to 1.0."""
    from multihead import values as V
    _positive("gpu-memory-gb", gpu_memory_gb)
    # the CLI's and the page's physical ranges (values.py) for library callers too: a subnormal
    # rate or efficiency (5e-324) made every time Infinity
    for name, check, v in (("effective-tflops", V.EFFECTIVE_TFLOPS, effective_tflops),
                           ("bandwidth-tbps", V.BANDWIDTH_TBPS, bandwidth_tbps),
                           ("flops-efficiency", V.EFFICIENCY, flops_efficiency),
                           ("bandwidth-efficiency", V.EFFICIENCY, bandwidth_efficiency)):
        if v is not None:
            V.checked(check, name, v)
    if device is None:
        missing = [n for n, v in (("--gpu-memory-gb", gpu_memory_gb), ("--effective-tflops", effective_tflops),
                                  ("--bandwidth-tbps", bandwidth_tbps)) if v is None]
        if missing:
            raise ValueError(f"gpu: expected --gpu NAME (or --device PROFILE.json) or all of --gpu-memory-gb, "
                             f"--effective-tflops, --bandwidth-tbps; missing {', '.join(missing)}")
        return DeviceSpec(name=f"{gpu_memory_gb:g} GB GPU (explicit figures)", memory_bytes=gpu_memory_gb * 1e9,
                          bandwidth_bytes_per_s=bandwidth_tbps * 1e12,
                          matmul_flops={k: effective_tflops * 1e12 for k in SIXTEEN_BIT},
                          flops_efficiency=1.0, bandwidth_efficiency=1.0,
                          source="command line (effective figures)", kind="explicit",
                          stated=frozenset({"flops_efficiency", "bandwidth_efficiency"}))
    spec = device if isinstance(device, DeviceSpec) else load_device(str(device))
    spec = dataclasses.replace(spec, matmul_flops=dict(spec.matmul_flops), prefill=dict(spec.prefill),
                               decode=dict(spec.decode))
    if flops_efficiency is not None:
        spec.flops_efficiency, spec.stated = flops_efficiency, spec.stated | {"flops_efficiency"}
    if bandwidth_efficiency is not None:
        spec.bandwidth_efficiency, spec.stated = bandwidth_efficiency, spec.stated | {"bandwidth_efficiency"}
    if gpu_memory_gb is not None:     # the engines' budget too (reported_memory_bytes), not the catalog's row
        spec.memory_bytes = spec.reported_memory_bytes = gpu_memory_gb * 1e9
    # explicit figures replace a profile's measured kernel terms too: the user's number is the rate
    if effective_tflops is not None:      # a GPU keeps its other dtypes' peaks (fp8, the fp32 ALU rate)
        kept = {} if spec.kind == "measured" else spec.matmul_flops
        spec.matmul_flops = {**kept, **{k: effective_tflops * 1e12 for k in SIXTEEN_BIT}}
        spec.flops_efficiency, spec.prefill, spec.stated = 1.0, {}, spec.stated | {"flops_efficiency"}
    if bandwidth_tbps is not None:
        spec.bandwidth_bytes_per_s = bandwidth_tbps * 1e12
        spec.bandwidth_efficiency, spec.decode, spec.stated = 1.0, {}, spec.stated | {"bandwidth_efficiency"}
    return spec


def resolve_spec(model=None, *, params=None, layers=None, heads=None, kv_heads=None, head_dim=None,
                 hidden=None, intermediate=None, vocab=None, max_position=None) -> ModelSpec:
    """The model: a catalog name, a config.json path or a ModelSpec, with explicit fields on top.
    Without a model, --layers, --heads and --params are needed; --hidden defaults to heads*head_dim."""
    base = resolve_model(model)
    over = dict(num_layers=layers, num_heads=heads, num_kv_heads=kv_heads, head_dim=head_dim, hidden_size=hidden,
                intermediate_size=intermediate, vocab_size=vocab, max_position_embeddings=max_position, params=params)
    if base is not None:
        return base.with_overrides(**over)
    missing = [f"--{n}" for n, v in (("layers", layers), ("heads", heads)) if v is None]
    if hidden is None and head_dim is None:
        missing.append("--hidden or --head-dim")
    if params is None and (intermediate is None or vocab is None):
        missing.append("--params (or --intermediate and --vocab)")
    if missing:
        raise ValueError(f"model: expected a model name, a config.json path, or explicit {', '.join(missing)}")
    if hidden is None:
        if not isinstance(heads, int) or not isinstance(head_dim, int) or heads <= 0 or head_dim <= 0:
            raise ValueError(f"heads/head-dim: expected positive integers, got {heads}, {head_dim}")
        hidden = heads * head_dim
    return ModelSpec(name="model from flags", hidden_size=hidden, num_layers=layers, num_heads=heads,
                     num_kv_heads=kv_heads, head_dim=head_dim, intermediate_size=intermediate, vocab_size=vocab,
                     max_position_embeddings=max_position, params=params, source="command-line flags")


def check_tensor_parallel(spec: ModelSpec, gpus: int) -> None:
    """Tensor parallelism's placement rule (cost.counts.memory.check_tensor_parallel, the one the serving
    account checks too) for the plan's --tensor-parallel-size / --gpus."""
    check_tensor_parallel_rule(spec.num_heads, spec.num_kv_heads, gpus, spec.mla is not None, "tensor_parallel_size",
                               "--gpus / --tensor-parallel-size")
