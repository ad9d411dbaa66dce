"""Devices and the time model: how long attention, a count of FLOPs or a count of bytes takes.

A ``DeviceSpec`` is either a catalog GPU (datasheet peaks times stated efficiency factors) or a
profile measured on this machine by ``multihead calibrate``. The planner turns counts from
``accounting`` into seconds only through the functions here: one cost model for both.

The model of one attention call (prefill, Tq queries against Tk keys, per dtype):

    t = overhead + flops / F + scores * c_score + rows * c_row

- ``flops / F``: the QK^T and PV matmuls (4 d FLOPs per computed score) at the kernel's sustained
  matmul rate F (the roofline's compute side);
- ``scores * c_score``: the softmax over every computed score (max, exp, sum, rescale): a few
  elementwise passes over each score block, bound by exp throughput and cache bandwidth rather
  than by the matmul units, so it costs per score, not per FLOP;
- ``rows * c_row``: per query row (B*H*Tq): reading q, writing o, normalizing, per-block
  bookkeeping that grows with T, not T^2;
- ``overhead``: per call (dispatch, thread start-up, buffer allocation).

A decode step (one query per sequence against a cache) reads every cached K and V once:

    t = overhead + kv_bytes / BW_kv + flops / F_decode + weight_bytes / BW

For a catalog GPU only the roofline terms are non-zero (F = peak * flops_efficiency, BW_kv = BW =
datasheet bandwidth * bandwidth_efficiency, F_decode infinite: a GPU hides decode's few FLOPs under
its memory traffic). A measured profile stores every term, fitted by ``multihead calibrate`` to
the kernel that ``multihead.attention`` actually runs.
"""
from __future__ import annotations

import difflib
import json
import math
import dataclasses
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path

# Stated defaults: a well-tuned kernel reaches about half of the datasheet tensor-core peak
# (FlashAttention-2: 50-73% of A100 peak forward) and ~80% of datasheet bandwidth.
DEFAULT_FLOPS_EFFICIENCY = 0.5
DEFAULT_BANDWIDTH_EFFICIENCY = 0.8

PROFILE_SCHEMA = "multihead.device-profile/1"


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


@dataclass
class DeviceSpec:
    """A machine as the cost model sees it.

    ``matmul_flops`` maps a dtype name to the peak FLOP/s of a large matmul in that dtype;
    ``flops_efficiency`` and ``bandwidth_efficiency`` scale the peaks to what real kernels
    reach. A measured profile stores already-effective numbers and efficiencies of 1.0, plus
    the attention kernel's own terms in ``prefill`` and ``decode`` (keyed by dtype).
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
    prefill: dict[str, PrefillCosts] = field(default_factory=dict)
    decode: dict[str, DecodeCosts] = field(default_factory=dict)

    def effective_flops(self, dtype: str = "fp16") -> float:
        """Sustained FLOP/s for matmuls in ``dtype``: peak * flops_efficiency."""
        return self.matmul_flops[_pick(self.matmul_flops, dtype)] * self.flops_efficiency

    def effective_bandwidth(self) -> float:
        """Sustained bytes/s for a streaming read: bandwidth * bandwidth_efficiency."""
        return self.bandwidth_bytes_per_s * self.bandwidth_efficiency

    def prefill_costs(self, dtype: str = "fp16", backend: str | None = None) -> PrefillCosts:
        """The attention-call terms for ``dtype`` (and kernel ``backend`` when the profile has
        per-backend terms, keyed "dtype/backend"), with F resolved to a number."""
        key = _pick(self.prefill, dtype) if self.prefill else None
        c = self.prefill.get(f"{key}/{backend}") if backend else None
        c = c or (self.prefill.get(key) if key else None) or PrefillCosts()
        return dataclasses.replace(c, flops_per_s=c.flops_per_s or self.effective_flops(dtype))

    @property
    def cache_bytes(self) -> float:
        """Last-level cache size of a measured machine (0: unknown, no cache term)."""
        return float(self.extra.get("cache_bytes") or 0.0)

    def backend_for(self, batch: int, heads: int, tq: int, tk: int, dtype: str = "fp16") -> str | None:
        """The kernel a measured profile's attention would run for this shape: the profile names
        its selector (``multihead.functional.choose_backend``), so the model follows the same
        rule as ``multihead.attention(backend="auto")``. None for catalog GPUs."""
        if self.extra.get("backend_selector") != "multihead.functional.choose_backend":
            return None
        import torch   # only measured multihead profiles get here
        from multihead.functional import choose_backend
        tdt = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}.get(
            _dtype_key(dtype), torch.float32)
        try:
            return choose_backend(batch, heads, tq, tk, tdt)
        except Exception:      # noqa: BLE001 - a changed selector must not break planning
            return None

    def decode_costs(self, dtype: str | None = None, rows_per_kv_head: int | None = None) -> DecodeCosts:
        """The decode-step terms for a KV cache in ``dtype``, with the bandwidth resolved: those of
        the kernel's row grouping (``decode_rows_class``, keyed "dtype/class") when the profile
        has them and ``rows_per_kv_head`` is given, else the dtype's."""
        key = _pick(self.decode, dtype or "fp16") if self.decode else None
        c = self.decode.get(f"{key}/{decode_rows_class(rows_per_kv_head)}") if key and rows_per_kv_head else None
        c = c or (self.decode.get(key) if key else None) or DecodeCosts()
        return dataclasses.replace(c, bytes_per_s=c.bytes_per_s or self.effective_bandwidth())


def decode_rows_class(rows: int) -> str:
    """The row grouping of a decode call with ``rows`` = G * Tq query rows per KV head, as the C
    kernel runs it: "r1" (one row), "r4" (all rows in groups of 4), "rmix" (some rows one at a
    time). Why separate terms: per byte of K/V the kernel reads 18-21 GB/s with one row and 12-13
    with 4 or 8 on one core here, which one read rate cannot fit (docs/validation.md)."""
    return "r1" if rows <= 1 else "r4" if rows % 4 == 0 else "rmix"


def _dtype_key(dtype: str) -> str:
    name = str(dtype).removeprefix("torch.").lower()
    return {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float8": "fp8"}.get(name, name)


def _pick(table: dict, dtype: str) -> str:
    """The key of ``table`` to use for ``dtype``: itself, else fp16 (fp8/int8/int4 are usually
    dequantized into a 16-bit matmul), else fp32, else the first entry ("dtype/backend" keys
    count by their dtype)."""
    key = _dtype_key(dtype)
    dtypes = [k.split("/")[0] for k in table]
    for k in (key, "fp16", "fp32"):
        if k in dtypes:
            return k
    return dtypes[0]


def compute_seconds(flops: float, device: DeviceSpec, dtype: str = "fp16") -> float:
    """Time of compute-bound work: t = FLOPs / effective FLOP/s."""
    return flops / device.effective_flops(dtype)


def memory_seconds(nbytes: float, device: DeviceSpec) -> float:
    """Time of bandwidth-bound work: t = bytes read / effective bandwidth."""
    return nbytes / device.effective_bandwidth()


def attention_seconds(device: DeviceSpec, flops: float, dtype: str = "fp16", *,
                      head_dim: int | None = None, rows: float | None = None, calls: int = 1,
                      heads: int | None = None, batch: int = 1, tokens: int | None = None,
                      kv_tokens: int | None = None, causal: bool | None = None) -> float:
    """Time of ``calls`` attention calls (QK^T, softmax, PV) doing ``flops`` in all.

    t = calls * overhead + flops / F + scores * c_score + rows * c_row, where scores =
    flops / (4 * head_dim) (each computed score costs 4 d FLOPs) and ``rows`` = query rows of all
    calls, B * H * Tq * calls (default: from ``heads`` and ``tokens``). With ``flops`` alone this
    is the roofline flops / F plus one call's overhead (a catalog GPU has only the F term).

    Shape, for a measured profile of ``multihead.attention``: ``heads`` and ``batch`` per call,
    ``tokens`` = Tq per call (default rows / (calls * batch * heads)), ``kv_tokens`` = Tk (default
    Tq), ``causal`` (default: inferred, flops below 3/4 of the full count). With them the model
    picks the kernel ``attention(backend="auto")`` runs for that shape, and, when that kernel
    computes every score and masks afterwards, counts the B * H * Tq * Tk scores it computes.
    ``flops`` is the caller's count (causal or not, sliding windows included).
    """
    if rows is None:
        rows = calls * batch * heads * tokens if heads and tokens else 0.0
    if tokens is None and heads and rows:
        tokens = max(1, round(rows / (calls * batch * heads)))
    kv = kv_tokens or tokens
    shaped = bool(head_dim and heads and tokens)
    if causal is None and shaped:
        causal = flops < 0.75 * 4 * head_dim * calls * batch * heads * tokens * kv
    backend = device.backend_for(batch, heads, tokens, kv, dtype) if shaped else None
    c = device.prefill_costs(dtype, backend)
    scores = flops / (4 * head_dim) if head_dim else 0.0
    masked = 0.0
    if causal and shaped and not c.skips_masked:
        scores = masked = calls * batch * heads * tokens * kv     # all computed, then masked
        flops = 4 * head_dim * scores
    spilled = scores if spills(device, c, scores / max(calls, 1)) else 0.0
    return (calls * c.overhead_s + flops / c.flops_per_s + scores * c.seconds_per_score
            + spilled * c.seconds_per_spilled_score + masked * c.seconds_per_masked_score
            + rows * c.seconds_per_row)


SPILL_BYTES_PER_SCORE = 8    # an out-of-place pass over fp32 scores: read one copy, write another


def spills(device: DeviceSpec, costs: PrefillCosts, scores_per_call: float) -> bool:
    """Does one pass over a call's materialized scores (source and destination, fp32) overflow
    the last-level cache?"""
    return bool(costs.materializes and device.cache_bytes
                and SPILL_BYTES_PER_SCORE * scores_per_call > device.cache_bytes)


def attention_prefill_seconds(device: DeviceSpec, *, n_heads: int, tq: int, tk: int,
                              head_dim: int, batch: int = 1, causal: bool = True,
                              dtype: str = "fp16", layers: int = 1) -> float:
    """Time of ``layers`` attention calls on q [batch, n_heads, tq, head_dim] (any H_kv).

    FLOPs come from ``accounting`` (causal: only the kept pairs, about half).
    """
    from multihead.accounting import attention_flops
    flops = attention_flops(batch, n_heads, tq, tk, head_dim, causal=causal)
    return attention_seconds(device, layers * flops, dtype, head_dim=head_dim, heads=n_heads,
                             tokens=tq, kv_tokens=tk, batch=batch, calls=layers, causal=causal)


def decode_step_seconds(device: DeviceSpec, kv_bytes: float, weight_bytes: float, *,
                        dtype: str | None = None, flops: float = 0.0, calls: int = 1,
                        rows_per_kv_head: int | None = None) -> float:
    """One generated token reads every weight and the whole KV cache once.

    t = calls * overhead + KV / BW_kv + flops / F_decode + W / BW: ``kv_bytes`` read by the
    attention kernel (in ``dtype``), ``flops`` of its QK^T and PV (4 * B * H * Tk * d), ``calls``
    = layers, ``rows_per_kv_head`` = G * Tq picks the kernel's row-grouping terms when a measured
    profile has them. For a kernel whose reads and arithmetic overlap (``DecodeCosts.overlapped``) the
    attention term is max(KV / BW_kv, flops / F_decode) instead of the sum. With a catalog GPU
    this is the plain roofline (KV + W) / BW.
    """
    c = device.decode_costs(dtype, rows_per_kv_head)
    compute = flops / c.flops_per_s if c.flops_per_s else 0.0
    rate = c.bytes_per_s
    if c.spilled_bytes_per_s and device.cache_bytes and kv_bytes / max(calls, 1) > device.cache_bytes:
        rate = c.spilled_bytes_per_s
    reads = kv_bytes / rate
    attention = max(reads, compute) if c.overlapped else reads + compute
    return calls * c.overhead_s + attention + memory_seconds(weight_bytes, device)


def decode_attention_seconds(device: DeviceSpec, *, n_heads: int, n_kv_heads: int, tk: int,
                             head_dim: int, batch: int = 1, dtype: str = "fp16",
                             layers: int = 1) -> float:
    """Attention time of one decode step (one query per sequence, ``tk`` cached tokens, no weights)."""
    from multihead.accounting import attention_flops, dtype_bytes, kv_cache_bytes
    kv = kv_cache_bytes(layers, n_kv_heads, head_dim, tk, dtype_bytes(dtype), batch)
    flops = layers * attention_flops(batch, n_heads, 1, tk, head_dim)
    return decode_step_seconds(device, kv, 0.0, dtype=dtype, flops=flops, calls=layers,
                               rows_per_kv_head=n_heads // n_kv_heads)


def gpu_catalog() -> dict[str, dict]:
    text = resources.files("multihead.catalog").joinpath("gpus.json").read_text()
    return {k: v for k, v in json.loads(text).items() if not k.startswith("_")}


def load_device(name_or_path: str, *, flops_efficiency: float | None = None,
                bandwidth_efficiency: float | None = None) -> DeviceSpec:
    """A catalog GPU by name (case-insensitive) or a measured profile JSON file by path."""
    path = Path(str(name_or_path)).expanduser()
    if path.suffix == ".json" or path.exists():
        spec = _device_from_profile(path)
    else:
        catalog = gpu_catalog()
        by_lower = {k.lower(): k for k in catalog}
        key = by_lower.get(str(name_or_path).lower())
        if key is None:
            close = difflib.get_close_matches(name_or_path, list(catalog), n=3, cutoff=0.3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise ValueError(f"gpu: unknown GPU {name_or_path!r}{hint} (known: {', '.join(catalog)};"
                             " or give a profile .json written by `multihead calibrate`)")
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
        raise ValueError(f"device: {where} lacks the field {key!r}")
    value = p[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"device: {where} field {key!r}: expected a finite number, got {value!r}")
    if value < 0 or (positive and value == 0):
        raise ValueError(f"device: {where} field {key!r}: expected a {'positive' if positive else 'non-negative'}"
                         f" number, got {value!r}")
    return float(value)


def _flag(p: dict, key: str, where: str, default: bool = True) -> bool:
    value = p.get(key, default)
    if not isinstance(value, bool):
        raise ValueError(f"device: {where} field {key!r}: expected true or false, got {value!r}")
    return value


def _table(p: dict, key: str, where: str, optional: bool = False) -> dict:
    if key not in p:
        if optional:
            return {}
        raise ValueError(f"device: {where} lacks the field {key!r}")
    if not isinstance(p[key], dict):
        raise ValueError(f"device: {where} field {key!r}: expected an object {{dtype: ...}}, got {p[key]!r}")
    return p[key]


def _device_from_profile(path: Path) -> DeviceSpec:
    """Read a profile written by ``multihead calibrate`` (schema: ``device_to_profile``)."""
    if not path.exists():
        raise ValueError(f"device: profile file {str(path)!r} does not exist")
    try:
        p = json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise ValueError(f"device: {path} is not valid JSON ({err})") from None
    if not isinstance(p, dict):
        raise ValueError(f"device: profile {path}: expected a JSON object, got {type(p).__name__}")
    where = f"profile {path}"
    if not isinstance(p.get("name"), str):
        raise ValueError(f"device: {where} lacks the field 'name' (a string)")
    flops = _table(p, "matmul_flops", where)
    if not flops:
        raise ValueError(f"device: {where} field 'matmul_flops' is empty: expected {{dtype: FLOP/s}}")
    matmul = {_dtype_key(k): _number(flops, k, f"{where} matmul_flops") for k in flops}
    attention = _table(p, "attention", where, optional=True)
    prefill = {}
    for dt, c in _table(attention, "prefill", f"{where} attention", optional=True).items():
        w = f"{where} attention.prefill.{dt}"
        if not isinstance(c, dict):
            raise ValueError(f"device: {w}: expected an object, got {c!r}")
        dkey = "/".join([_dtype_key(dt.split("/")[0])] + dt.split("/")[1:])
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
            raise ValueError(f"device: {w}: expected an object, got {c!r}")
        decode["/".join([_dtype_key(dt.split("/")[0])] + dt.split("/")[1:])] = DecodeCosts(
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
