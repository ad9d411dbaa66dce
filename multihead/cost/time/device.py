"""A device as the cost model sees it: memory, bandwidth and matmul peaks (the roofline), with sources.

Catalog GPUs (``multihead/catalog/gpus.json``) carry datasheet peaks and their source; a kernel
reaches a stated fraction of them (``flops_efficiency``, ``bandwidth_efficiency``). A profile
measured on this machine (``multihead calibrate``) stores already-effective figures (efficiency
1.0) plus its kernels' own terms in ``prefill`` / ``decode``; those terms are read by
``cost/time/cpu_profile.py``, never by the GPU roofline here.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from importlib import resources

from multihead.catalog import entries
from multihead.cost.spec.units import canonical_dtype

# Stated defaults: a well-tuned kernel reaches about half of the datasheet tensor-core peak
# (FlashAttention-2: 50-73% of A100 peak forward, figures.md section 4) and ~80% of datasheet bandwidth.
DEFAULT_FLOPS_EFFICIENCY = 0.5
DEFAULT_BANDWIDTH_EFFICIENCY = 0.8


@dataclass
class DeviceSpec:
    """``matmul_flops``: peak FLOP/s of a large matmul per dtype; ``memory_bytes`` in bytes (1e9 = 1 GB).
    ``prefill``/``decode``: a measured profile's kernel terms by dtype (cost/time/cpu_profile.py)."""
    name: str
    memory_bytes: float
    bandwidth_bytes_per_s: float
    matmul_flops: dict[str, float]
    flops_efficiency: float = DEFAULT_FLOPS_EFFICIENCY
    bandwidth_efficiency: float = DEFAULT_BANDWIDTH_EFFICIENCY
    source: str = ""
    kind: str = "catalog"          # "catalog", "explicit" or "measured"
    extra: dict = field(default_factory=dict)   # measured profiles keep their details here
    prefill: dict = field(default_factory=dict)
    decode: dict = field(default_factory=dict)

    def matmul_key(self, dtype: str) -> str:
        return pick_dtype(self.matmul_flops, dtype)

    def peak_flops(self, dtype: str = "fp16") -> float:
        return self.matmul_flops[self.matmul_key(dtype)]

    def effective_flops(self, dtype: str = "fp16") -> float:
        """Sustained FLOP/s for matmuls in ``dtype``: peak * flops_efficiency."""
        return self.peak_flops(dtype) * self.flops_efficiency

    def effective_bandwidth(self) -> float:
        """Sustained bytes/s of a streaming read: bandwidth * bandwidth_efficiency."""
        return self.bandwidth_bytes_per_s * self.bandwidth_efficiency

    @property
    def cache_bytes(self) -> float:
        """Last-level cache of a measured machine (0: unknown, no cache term)."""
        return float(self.extra.get("cache_bytes") or 0.0)


def dtype_key(dtype: str) -> str:
    """A dtype name as device tables key it ('bfloat16' -> 'bf16'); unknown names pass through."""
    try:
        return canonical_dtype(dtype)
    except ValueError:
        return str(dtype).removeprefix("torch.").lower()


def pick_dtype(table: dict, dtype: str) -> str:
    """The key of ``table`` to use for ``dtype``: itself, else fp16 (fp8/int8/int4 weights are usually
    dequantized into a 16-bit matmul), else fp32, else the first ("dtype/backend" keys count by dtype)."""
    dtypes = [k.split("/")[0] for k in table]
    for k in (dtype_key(dtype), "fp16", "fp32"):
        if k in dtypes:
            return k
    return dtypes[0]


def compute_seconds(flops: float, device: DeviceSpec, dtype: str = "fp16") -> float:
    """Compute-bound work: t = FLOPs / effective FLOP/s."""
    return flops / device.effective_flops(dtype)


def memory_seconds(nbytes: float, device: DeviceSpec) -> float:
    """Bandwidth-bound work: t = bytes read / effective bandwidth."""
    return nbytes / device.effective_bandwidth()


GPUS_JSON = resources.files("multihead.catalog") / "gpus.json"


def gpu_catalog() -> dict[str, dict]:
    """Name -> entry of catalog/gpus.json; a new dict, shared entries (read-only, multihead.catalog)."""
    return entries(GPUS_JSON)


def gpu_key(name: str, names) -> str | None:
    """The catalog's spelling of a GPU name: case-insensitive, and the SXM part for a bare name
    ('H100' and 'h100-sxm' are 'H100-SXM'); None if unknown. One rule for every catalog door."""
    keys = {k.lower(): k for k in names if not k.startswith("_")}
    low = str(name).lower()
    return keys.get(low) or keys.get(f"{low}-sxm") or keys.get(low.removesuffix("-sxm"))


def catalog_gpu(name: str) -> DeviceSpec:
    """A catalog GPU by name (case-insensitive; 'H100' is the SXM part: gpu_key); an unknown name lists the closest."""
    catalog = gpu_catalog()
    key = gpu_key(name, catalog)
    if key is None:
        close = difflib.get_close_matches(name, list(catalog), n=3, cutoff=0.3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ValueError(f"gpu: unknown GPU {name!r}{hint} (known: {', '.join(catalog)};"
                         " or give a profile .json written by `multihead calibrate`)")
    e = catalog[key]
    return DeviceSpec(name=key, memory_bytes=e["memory_gb"] * 1e9, bandwidth_bytes_per_s=e["bandwidth_tbps"] * 1e12,
                      matmul_flops={dtype_key(k): v * 1e12 for k, v in e["matmul_tflops"].items()},
                      source=e["source"], kind="catalog")
