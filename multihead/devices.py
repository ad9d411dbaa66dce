"""Devices and the roofline: how long a count of FLOPs or bytes takes on a given machine.

A ``DeviceSpec`` is either a catalog GPU (datasheet peaks times stated efficiency factors) or a
profile measured on this machine by ``multihead calibrate``. The planner turns counts from
``accounting`` into seconds only through the functions here: one cost model for both.
"""
from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

# Stated defaults: a well-tuned kernel reaches about half of the datasheet tensor-core peak
# (FlashAttention-2: 50-73% of A100 peak forward) and ~80% of datasheet bandwidth.
DEFAULT_FLOPS_EFFICIENCY = 0.5
DEFAULT_BANDWIDTH_EFFICIENCY = 0.8


@dataclass
class DeviceSpec:
    """A machine as the cost model sees it.

    ``matmul_flops`` maps a dtype name to the peak FLOP/s of a large matmul in that dtype;
    ``flops_efficiency`` and ``bandwidth_efficiency`` scale the peaks to what real kernels
    reach. A measured profile stores already-effective numbers and efficiencies of 1.0.
    """
    name: str
    memory_bytes: float
    bandwidth_bytes_per_s: float
    matmul_flops: dict[str, float]
    flops_efficiency: float = DEFAULT_FLOPS_EFFICIENCY
    bandwidth_efficiency: float = DEFAULT_BANDWIDTH_EFFICIENCY
    source: str = ""
    kind: str = "catalog"          # "catalog", "explicit" or "measured"
    extra: dict = field(default_factory=dict)   # measured profiles keep their details here

    def effective_flops(self, dtype: str = "fp16") -> float:
        """Sustained FLOP/s for matmuls in ``dtype``: peak * flops_efficiency."""
        key = _dtype_key(dtype)
        peaks = self.matmul_flops
        if key not in peaks:
            # fp8/int8/int4 weights are usually dequantized into a 16-bit matmul
            key = "fp16" if "fp16" in peaks else next(iter(peaks))
        return peaks[key] * self.flops_efficiency

    def effective_bandwidth(self) -> float:
        """Sustained bytes/s for a streaming read: bandwidth * bandwidth_efficiency."""
        return self.bandwidth_bytes_per_s * self.bandwidth_efficiency


def _dtype_key(dtype: str) -> str:
    name = str(dtype).removeprefix("torch.").lower()
    return {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float8": "fp8"}.get(name, name)


def compute_seconds(flops: float, device: DeviceSpec, dtype: str = "fp16") -> float:
    """Time of compute-bound work: t = FLOPs / effective FLOP/s."""
    return flops / device.effective_flops(dtype)


def memory_seconds(nbytes: float, device: DeviceSpec) -> float:
    """Time of bandwidth-bound work: t = bytes read / effective bandwidth."""
    return nbytes / device.effective_bandwidth()


def attention_seconds(device: DeviceSpec, flops: float, dtype: str = "fp16") -> float:
    """Time of the attention core (QK^T, softmax, PV) given its FLOPs: compute-bound at long T."""
    return compute_seconds(flops, device, dtype)


def decode_step_seconds(device: DeviceSpec, kv_bytes: float, weight_bytes: float) -> float:
    """One generated token reads every weight and the whole KV cache once: t = (W + KV) / BW."""
    return memory_seconds(kv_bytes + weight_bytes, device)


def gpu_catalog() -> dict[str, dict]:
    text = resources.files("multihead.catalog").joinpath("gpus.json").read_text()
    return {k: v for k, v in json.loads(text).items() if not k.startswith("_")}


def load_device(name_or_path: str, *, flops_efficiency: float | None = None,
                bandwidth_efficiency: float | None = None) -> DeviceSpec:
    """A catalog GPU by name (case-insensitive) or a measured profile JSON file by path."""
    path = Path(name_or_path)
    if path.suffix == ".json" or path.exists():
        spec = _device_from_profile(path)
    else:
        catalog = gpu_catalog()
        by_lower = {k.lower(): k for k in catalog}
        key = by_lower.get(name_or_path.lower())
        if key is None:
            close = difflib.get_close_matches(name_or_path, list(catalog), n=3, cutoff=0.3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise ValueError(f"gpu: unknown GPU {name_or_path!r}{hint} (known: {', '.join(catalog)})")
        e = catalog[key]
        spec = DeviceSpec(name=key, memory_bytes=e["memory_gb"] * 1e9,
                          bandwidth_bytes_per_s=e["bandwidth_tbps"] * 1e12,
                          matmul_flops={k: v * 1e12 for k, v in e["matmul_tflops"].items()},
                          source=e["source"], kind="catalog")
    if flops_efficiency is not None:
        spec.flops_efficiency = flops_efficiency
    if bandwidth_efficiency is not None:
        spec.bandwidth_efficiency = bandwidth_efficiency
    return spec


def _device_from_profile(path: Path) -> DeviceSpec:
    """Read a profile written by ``multihead calibrate`` (schema: see bench/calibrate.py)."""
    if not path.exists():
        raise ValueError(f"device: profile file {str(path)!r} does not exist")
    try:
        p = json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise ValueError(f"device: {path} is not valid JSON ({err})") from None
    for key in ("name", "memory_bytes", "bandwidth_bytes_per_s", "matmul_flops"):
        if key not in p:
            raise ValueError(f"device: profile {path} lacks the field {key!r}")
    return DeviceSpec(name=p["name"], memory_bytes=float(p["memory_bytes"]),
                      bandwidth_bytes_per_s=float(p["bandwidth_bytes_per_s"]),
                      matmul_flops={k: float(v) for k, v in p["matmul_flops"].items()},
                      flops_efficiency=float(p.get("flops_efficiency", 1.0)),
                      bandwidth_efficiency=float(p.get("bandwidth_efficiency", 1.0)),
                      source=p.get("source", f"measured profile {path}"), kind="measured",
                      extra={k: v for k, v in p.items() if k not in {
                          "name", "memory_bytes", "bandwidth_bytes_per_s", "matmul_flops",
                          "flops_efficiency", "bandwidth_efficiency", "source"}})
