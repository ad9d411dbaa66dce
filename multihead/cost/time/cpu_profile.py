"""A machine measured by ``multihead calibrate``: its attention kernels' time terms and the profile file.

The roofline (cost/time/device.py) has two terms, FLOPs / F and bytes / BW. A CPU running this library's
own kernels is described better by the terms below, fitted per dtype (and per kernel, "dtype/backend",
and decode row grouping, "dtype/r1|r4|rmix") and stored in the profile JSON:

    prefill call:  t = overhead + flops / F + scores * c_score + rows * c_row (+ spill, mask terms)
    decode step:   t = overhead + kv_bytes / BW_kv + flops / F_decode + weight_bytes / BW

This module only reads and writes those numbers; it imports no torch and nothing above cost/. The
kernel choice of ``attention(backend="auto")`` is written here once (``auto_backend``, torch-free):
``functional.choose_backend`` calls it, and ``backend_for`` predicts with it which kernel a measured
profile runs. The GPU roofline never comes here.
"""
from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path

from multihead.cost.time.device import DeviceSpec, catalog_gpu, dtype_key, pick_dtype
from multihead.cost.counts.formulas import score_matrix_bytes

PROFILE_SCHEMA = "multihead.device-profile/1"
SELECTOR = "multihead.functional.choose_backend"

@dataclass
class PrefillCosts:
    """Terms of one attention call's time (see the module docstring), for one dtype.

    ``flops_per_s`` None means: the device's effective matmul rate for the dtype.
    ``skips_masked``: whether the kernel skips the scores a causal mask removes (a tiled kernel
    skips the blocks above the diagonal; a materialized one computes all Tq * Tk and masks them).
    """
    flops_per_s: float | None = None
    seconds_per_score: float = 0.0
    seconds_per_row: float = 0.0
    overhead_s: float = 0.0
    skips_masked: bool = True
    # A kernel that materializes the [B, H, Tq, Tk] scores makes its softmax passes over that
    # matrix, each reading one fp32 copy and writing another (8 bytes per score): in the last-
    # level cache while that fits, from memory beyond.
    materializes: bool = False
    seconds_per_spilled_score: float = 0.0
    # A kernel that computes every score and masks afterwards pays a masking pass per score.
    seconds_per_masked_score: float = 0.0


@dataclass
class DecodeCosts:
    """Terms of one decode step's attention time, for one KV dtype.

    ``bytes_per_s`` None means: the device's effective bandwidth. ``flops_per_s`` None means the
    FLOPs are hidden under the memory traffic (no compute term).
    """
    bytes_per_s: float | None = None
    flops_per_s: float | None = None
    overhead_s: float = 0.0
    # Read rate when one call's K and V exceed the last-level cache (None: the same rate). A
    # kernel that touches K/V more than once (a packing copy, then the matmul) finds the second
    # touch in cache only while they fit.
    spilled_bytes_per_s: float | None = None
    # Whether the kernel's K/V reads and its arithmetic overlap (a kernel that prefetches ahead
    # of its FMAs): then a step takes the longer of the two, as on a roofline, not their sum.
    overlapped: bool = False



def decode_rows_class(rows: int) -> str:
    """The row grouping of a decode call with ``rows`` = G * Tq query rows per KV head, as the C
    kernel runs it: "r1" (one row), "r4" (all rows in groups of 4), "rmix" (some rows one at a
    time). Why separate terms: per byte of K/V the kernel reads 18-21 GB/s with one row and 12-13
    with 4 or 8 on one core here, which one read rate cannot fit (docs/validation.md)."""
    return "r1" if rows <= 1 else "r4" if rows % 4 == 0 else "rmix"



def prefill_costs(device: DeviceSpec, dtype: str = "fp16", backend: str | None = None) -> PrefillCosts:
    """The attention-call terms for ``dtype`` (and kernel ``backend`` when the profile has per-backend
    terms, keyed "dtype/backend"), with F resolved to a number (catalog GPUs: the roofline's F alone)."""
    key = pick_dtype(device.prefill, dtype) if device.prefill else None
    c = device.prefill.get(f"{key}/{backend}") if backend else None
    c = c or (device.prefill.get(key) if key else None) or PrefillCosts()
    return dataclasses.replace(c, flops_per_s=c.flops_per_s or device.effective_flops(dtype))


def decode_costs(device: DeviceSpec, dtype: str | None = None, rows_per_kv_head: int | None = None) -> DecodeCosts:
    """The decode-step terms for a KV cache in ``dtype``, bandwidth resolved: those of the kernel's row
    grouping ("dtype/class") when the profile has them and ``rows_per_kv_head`` is given, else the dtype's."""
    key = pick_dtype(device.decode, dtype or "fp16") if device.decode else None
    c = device.decode.get(f"{key}/{decode_rows_class(rows_per_kv_head)}") if key and rows_per_kv_head else None
    c = c or (device.decode.get(key) if key else None) or DecodeCosts()
    return dataclasses.replace(c, bytes_per_s=c.bytes_per_s or device.effective_bandwidth())


# The rule by which ``multihead.attention(backend="auto")`` picks a kernel, written once here (torch-free)
# so the CPU time model predicts the kernel that will run: functional.choose_backend calls auto_backend.
# Decode-sized queries go to fast_decode (K/V streamed once) when the C kernels are built or the keys
# are many enough for its torch-op path to pay off; small score matrices to the reference; the rest
# to fast_prefill (docs/performance.md).
DECODE_MAX_TQ = 16
DECODE_MIN_TK = 1024
AUTO_REFERENCE_BYTES = 64 * 1024**2


def auto_backend(batch: int, heads: int, tq: int, tk: int, compute_bytes: int, native: bool,
                 score_limit: int | None = None) -> str:
    """The backend "auto" resolves to: ``compute_bytes`` per score in the accumulation dtype (4 for
    fp32/fp16/bf16, 8 for fp64), ``native``: whether the C kernels are built, ``score_limit``: the
    reference backend's limit in force (multihead.functional.max_score_bytes(); None: none), so
    auto never picks the reference above a limit the user lowered below AUTO_REFERENCE_BYTES."""
    if tq <= DECODE_MAX_TQ and (tk >= DECODE_MIN_TK or native):
        return "fast_decode"
    threshold = AUTO_REFERENCE_BYTES if score_limit is None else min(AUTO_REFERENCE_BYTES, score_limit)
    if score_matrix_bytes(batch, heads, tq, tk, compute_bytes) <= threshold:
        return "reference"
    return "fast_prefill"


def backend_for(device: DeviceSpec, batch: int, heads: int, tq: int, tk: int, dtype: str = "fp16") -> str | None:
    """The kernel a measured profile's attention runs for this shape (auto_backend, the rule
    ``multihead.attention(backend="auto")`` uses), with the C kernels as the profile recorded them
    (``native_kernels``; a profile from before that field: built, the usual case); None for GPUs."""
    if device.extra.get("backend_selector") != SELECTOR:
        return None
    compute = 8 if dtype_key(dtype) == "fp64" else 4
    return auto_backend(batch, heads, tq, tk, compute, bool(device.extra.get("native_kernels", True)))


def load_device(name_or_path: str, *, flops_efficiency: float | None = None,
                bandwidth_efficiency: float | None = None) -> DeviceSpec:
    """A catalog GPU by name (case-insensitive) or a measured profile JSON file by path."""
    path = Path(str(name_or_path)).expanduser()
    if not str(name_or_path).strip():
        raise ValueError("gpu: expected a catalog GPU name or a profile .json path, got ''")
    if path.exists() and not path.is_file():
        raise ValueError(f"gpu: {path} is not a regular file (expected a profile .json)")
    spec = _device_from_profile(path) if path.suffix == ".json" or path.exists() else catalog_gpu(str(name_or_path))
    if flops_efficiency is not None:
        spec.flops_efficiency = flops_efficiency
    if bandwidth_efficiency is not None:
        spec.bandwidth_efficiency = bandwidth_efficiency
    return spec


# ---- measured profiles: JSON <-> DeviceSpec ---------------------------------------------------


_CORE = ("name", "memory_bytes", "bandwidth_bytes_per_s", "matmul_flops",
         "flops_efficiency", "bandwidth_efficiency", "source", "kind", "schema", "attention")


def device_to_profile(spec: DeviceSpec) -> dict:
    """The JSON object ``multihead calibrate`` writes; ``load_device`` reads it back unchanged."""
    out = {"schema": PROFILE_SCHEMA, "name": spec.name, "kind": spec.kind,
           "memory_bytes": spec.memory_bytes, "bandwidth_bytes_per_s": spec.bandwidth_bytes_per_s,
           "matmul_flops": dict(spec.matmul_flops), "flops_efficiency": spec.flops_efficiency,
           "bandwidth_efficiency": spec.bandwidth_efficiency, "source": spec.source,
           "attention": {"prefill": {k: asdict(v) for k, v in spec.prefill.items()},
                         "decode": {k: asdict(v) for k, v in spec.decode.items()}}}
    out.update({k: v for k, v in spec.extra.items() if k not in out})
    return out


def write_profile(spec: DeviceSpec, path: str | Path) -> Path:
    path = Path(path).expanduser()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(device_to_profile(spec), indent=2) + "\n")
    return path


def _number(p: dict, key: str, where: str, *, positive: bool = True, optional: bool = False):
    if key not in p or p[key] is None:
        if optional:
            return None
        raise ValueError(f"gpu: {where} lacks the field {key!r}")
    value = p[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"gpu: {where} field {key!r}: expected a finite number, got {value!r}")
    if value < 0 or (positive and value == 0):
        raise ValueError(f"gpu: {where} field {key!r}: expected a {'positive' if positive else 'non-negative'}"
                         f" number, got {value!r}")
    return float(value)


def _flag(p: dict, key: str, where: str, default: bool = True) -> bool:
    value = p.get(key, default)
    if not isinstance(value, bool):
        raise ValueError(f"gpu: {where} field {key!r}: expected true or false, got {value!r}")
    return value


def _table(p: dict, key: str, where: str, optional: bool = False) -> dict:
    if key not in p:
        if optional:
            return {}
        raise ValueError(f"gpu: {where} lacks the field {key!r}")
    if not isinstance(p[key], dict):
        raise ValueError(f"gpu: {where} field {key!r}: expected an object {{dtype: ...}}, got {p[key]!r}")
    return p[key]


def _device_from_profile(path: Path) -> DeviceSpec:
    """Read a profile written by ``multihead calibrate`` (schema: ``device_to_profile``)."""
    if not path.exists():
        raise ValueError(f"gpu: profile file {str(path)!r} does not exist")
    try:
        p = json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise ValueError(f"gpu: {path} is not valid JSON ({err})") from None
    if not isinstance(p, dict):
        raise ValueError(f"gpu: profile {path}: expected a JSON object, got {type(p).__name__}")
    where = f"profile {path}"
    if not isinstance(p.get("name"), str):
        raise ValueError(f"gpu: {where} lacks the field 'name' (a string)")
    flops = _table(p, "matmul_flops", where)
    if not flops:
        raise ValueError(f"gpu: {where} field 'matmul_flops' is empty: expected {{dtype: FLOP/s}}")
    matmul = {dtype_key(k): _number(flops, k, f"{where} matmul_flops") for k in flops}
    attention = _table(p, "attention", where, optional=True)
    prefill = {}
    for dt, c in _table(attention, "prefill", f"{where} attention", optional=True).items():
        w = f"{where} attention.prefill.{dt}"
        if not isinstance(c, dict):
            raise ValueError(f"gpu: {w}: expected an object, got {c!r}")
        dkey = "/".join([dtype_key(dt.split("/")[0])] + dt.split("/")[1:])
        prefill[dkey] = PrefillCosts(
            flops_per_s=_number(c, "flops_per_s", w, optional=True),
            seconds_per_score=_number(c, "seconds_per_score", w, positive=False, optional=True) or 0.0,
            seconds_per_row=_number(c, "seconds_per_row", w, positive=False, optional=True) or 0.0,
            overhead_s=_number(c, "overhead_s", w, positive=False, optional=True) or 0.0,
            skips_masked=_flag(c, "skips_masked", w),
            materializes=_flag(c, "materializes", w, default=False),
            seconds_per_spilled_score=_number(c, "seconds_per_spilled_score", w, positive=False,
                                              optional=True) or 0.0,
            seconds_per_masked_score=_number(c, "seconds_per_masked_score", w, positive=False,
                                             optional=True) or 0.0)
    decode = {}
    for dt, c in _table(attention, "decode", f"{where} attention", optional=True).items():
        w = f"{where} attention.decode.{dt}"
        if not isinstance(c, dict):
            raise ValueError(f"gpu: {w}: expected an object, got {c!r}")
        decode["/".join([dtype_key(dt.split("/")[0])] + dt.split("/")[1:])] = DecodeCosts(
            bytes_per_s=_number(c, "bytes_per_s", w, optional=True),
            flops_per_s=_number(c, "flops_per_s", w, optional=True),
            overhead_s=_number(c, "overhead_s", w, positive=False, optional=True) or 0.0,
            spilled_bytes_per_s=_number(c, "spilled_bytes_per_s", w, optional=True),
            overlapped=_flag(c, "overlapped", w, default=False))
    return DeviceSpec(name=p["name"], memory_bytes=_number(p, "memory_bytes", where),
                      bandwidth_bytes_per_s=_number(p, "bandwidth_bytes_per_s", where),
                      matmul_flops=matmul,
                      flops_efficiency=_number(p, "flops_efficiency", where, optional=True) or 1.0,
                      bandwidth_efficiency=_number(p, "bandwidth_efficiency", where, optional=True) or 1.0,
                      source=p.get("source", f"measured profile {path}"),
                      kind=p.get("kind", "measured"),
                      extra={k: v for k, v in p.items() if k not in _CORE},
                      prefill=prefill, decode=decode)
