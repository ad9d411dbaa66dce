"""``multihead calibrate``: measure this machine and fit the CPU time model (``cost/time/cpu_profile.py``) to it.

What is measured (each point repeated; ``timing.py`` says what best, median and spread mean):

- the limits (``limits.py``): matmul FLOP/s per dtype, streaming-read bytes/s;
- ``multihead.attention(backend="auto")`` on a small grid of prefill shapes and decode cache
  lengths (``CalibrationPlan``), the kernel that ran each shape recorded (``choose_backend``).

The terms are then fitted per kernel (``fit.py``). The grid varies T (separates overhead, T and
T^2 terms) and the head dimension (flops = 4 d scores, so two values of d separate the matmul
from the softmax); causal and full calls of one shape tell whether a kernel skips masked scores;
decode covers cache lengths and four head groupings (flops per byte = H / (2 H_kv)). Validation
(``validate.py``) uses other sizes and other head counts than these.
"""
from __future__ import annotations

import contextlib
import datetime as _dt
import math
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import torch

from multihead.cost.time.cpu_profile import write_profile
from multihead.cost.time.device import DeviceSpec
from multihead.measure import limits
from multihead.measure.fit import fit_points
from multihead.measure.shapes import TORCH_DTYPES, AttnShape
from multihead.measure.timing import clock_fn, time_call


def attention_call(shape: AttnShape, backend: str = "auto") -> Callable[[], torch.Tensor]:
    """A call of ``multihead.attention`` on ``shape`` to time. A decode step cycles through enough
    separate K/V caches that together exceed twice the last-level cache: in a real model every layer
    reads its own cache, so the KV cache streams from memory; timing one small cache over and over
    would measure the CPU cache instead."""
    from multihead.functional import attention
    q, k, v = shape.inputs(seed=1)
    copies = 1
    if shape.kind == "decode":
        copies = max(1, min(64, math.ceil(2 * limits.last_level_cache_bytes() / max(shape.kv_bytes, 1))))
    kvs = [(k, v)] + [AttnShape.inputs(shape, seed=2 + i)[1:] for i in range(copies - 1)]
    turn = iter(range(1 << 62))

    def call() -> torch.Tensor:
        kk, vv = kvs[next(turn) % copies]
        return attention(q, kk, vv, is_causal=shape.causal, backend=backend)
    return call


def resolved_backend(shape: AttnShape) -> str:
    """The kernel ``multihead.attention(backend="auto")`` runs for ``shape`` (its own rule)."""
    from multihead.functional import choose_backend
    return str(choose_backend(shape.batch, shape.heads, shape.tq, shape.tk, TORCH_DTYPES[shape.dtype]))


def predict_seconds(device: DeviceSpec, s: AttnShape) -> float:
    """The model's time for one call of ``s`` on ``device``: the same functions the planner uses."""
    from multihead.cost.time.attention_time import attention_prefill_seconds, decode_attention_seconds
    if s.kind == "decode":
        return decode_attention_seconds(device, n_heads=s.heads, n_kv_heads=s.kv_heads, tk=s.tk,
                                        head_dim=s.head_dim, batch=s.batch, dtype=s.dtype)
    return attention_prefill_seconds(device, n_heads=s.heads, tq=s.tq, tk=s.tk, head_dim=s.head_dim,
                                     batch=s.batch, causal=s.causal, dtype=s.dtype)


@dataclass
class CalibrationPlan:
    """What calibrate measures. The defaults avoid every size and head count validation uses.

    Prefill T spans both sides of ``multihead.attention``'s reference/tiled switch at these head
    counts, so each kernel gets its own points; the non-causal points tell whether a kernel skips
    masked scores.
    """
    attention_dtypes: tuple[str, ...] = ("fp32",)
    prefill_heads: tuple[tuple[int, int, int], ...] = ((4, 1, 64), (4, 2, 128))   # (H, H_kv, d)
    prefill_tokens: tuple[int, ...] = (96, 320, 700, 1300, 1700, 1900, 2500, 3600, 5000, 7000)
    prefill_full_tokens: tuple[int, ...] = (700, 1300, 3600)     # also measured without the causal mask
    # More heads at moderate T: the tiled kernel at the T where per-row costs matter most.
    prefill_extra: tuple[tuple[int, int, int, int], ...] = (
        (16, 4, 64, 1100), (16, 4, 64, 1500), (16, 4, 64, 2600),
        (16, 8, 128, 1100), (16, 8, 128, 1500), (16, 8, 128, 2600))
    # FLOP-per-byte ratios H / (2 H_kv) in fp32 of 2, 0.5, 4 and 1.5: with only two, the added and
    # the overlapped decode forms would fit equally well. (6, 2, 64) has three rows per KV head,
    # which the kernel runs one at a time (cost.time.cpu_profile.decode_rows_class).
    decode_heads: tuple[tuple[int, int, int], ...] = ((16, 4, 128), (6, 6, 64), (16, 2, 128), (6, 2, 64))
    decode_tokens: tuple[int, ...] = (1500, 6000, 24000, 50000, 100000)
    matmul_n: dict[str, int] = field(default_factory=lambda: {"fp32": 2048, "bf16": 192, "fp16": 192})
    bandwidth_bytes: int = 1 << 30
    repeats: int = 5
    min_seconds: float = 0.3
    name: str = "full"
    clock: str = "wall"      # "cpu": the process CPU time (one thread; robust to other load)

    @classmethod
    def quick(cls) -> "CalibrationPlan":
        """CI-sized: tiny shapes, seconds in all; the numbers are rough."""
        return cls(prefill_heads=((2, 1, 16), (2, 1, 32)), prefill_tokens=(32, 96, 256, 1500, 2100, 3000),
                   prefill_full_tokens=(96, 3000), prefill_extra=(),
                   decode_heads=((4, 1, 32), (2, 2, 16), (8, 1, 16), (3, 1, 16)),
                   decode_tokens=(1100, 2048, 4096), matmul_n={"fp32": 256, "bf16": 48, "fp16": 48},
                   bandwidth_bytes=16 << 20, repeats=2, min_seconds=0.0, name="quick")

    def prefill_shapes(self, dtype: str) -> list[AttnShape]:
        out = [AttnShape.prefill(h, hk, d, t, dtype) for h, hk, d in self.prefill_heads for t in self.prefill_tokens]
        out += [AttnShape.prefill(h, hk, d, t, dtype, causal=False) for h, hk, d in self.prefill_heads
                for t in self.prefill_full_tokens]
        return out + [AttnShape.prefill(h, hk, d, t, dtype) for h, hk, d, t in self.prefill_extra]

    def decode_shapes(self, dtype: str) -> list[AttnShape]:
        return [AttnShape.decode(h, hk, d, t, dtype) for h, hk, d in self.decode_heads for t in self.decode_tokens]


def measure_limits(plan: CalibrationPlan, bar) -> dict:
    """Matmul FLOP/s per dtype and streaming-read bytes/s, each with its size."""
    out: dict[str, dict] = {}
    for dt, n in plan.matmul_n.items():
        bar.set_postfix_str(f"matmul {dt} n={n}")
        out[f"matmul_{dt}"] = {"n": n, **limits.measure_matmul_flops(TORCH_DTYPES[dt], n, max(2, plan.repeats),
                                                                     plan.clock)}
        bar.update()
    bar.set_postfix_str("read bandwidth")
    out["read_bandwidth"] = {"bytes": plan.bandwidth_bytes,
                             **limits.measure_read_bandwidth(plan.bandwidth_bytes, max(2, plan.repeats), plan.clock)}
    bar.update()
    return out


def calibrate(plan: CalibrationPlan | None = None, *, progress: bool = True) -> DeviceSpec:
    """Measure this machine and return its ``DeviceSpec`` (kind "measured"), ready to write."""
    from tqdm import tqdm
    plan = plan or CalibrationPlan()
    load_before = limits.load_average()
    shapes = [s for dt in plan.attention_dtypes for s in plan.prefill_shapes(dt) + plan.decode_shapes(dt)]
    bar = tqdm(total=len(plan.matmul_n) + 1 + len(shapes), desc="calibrate", disable=not progress, file=sys.stderr)
    lim = measure_limits(plan, bar)
    points: list[dict] = []
    for s in shapes:
        bar.set_postfix_str(s.label())
        t = time_call(attention_call(s), repeats=plan.repeats, min_seconds=plan.min_seconds, clock=plan.clock)
        points.append({"shape": s.to_dict(), "label": s.label(), "backend": resolved_backend(s), **t.to_dict()})
        bar.update()
    bar.close()
    cache = float(limits.last_level_cache_bytes())
    matmul = {k[len("matmul_"):]: v["best"] for k, v in lim.items() if k.startswith("matmul_")}
    prefill, decode, residuals = fit_points(points, cache, matmul, lim["read_bandwidth"]["best"])
    threads = torch.get_num_threads()
    now = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0)
    spec = DeviceSpec(
        name=f"{limits.cpu_name()} ({threads} threads)", memory_bytes=limits.memory_bytes(),
        bandwidth_bytes_per_s=lim["read_bandwidth"]["best"],
        matmul_flops=matmul,
        flops_efficiency=1.0, bandwidth_efficiency=1.0, kind="measured",
        source=f"measured by multihead calibrate on {now.isoformat()}", prefill=prefill, decode=decode,
        extra={"date": now.isoformat(), "machine": limits.machine_description(), "cache_bytes": cache,
               "kernel": "multihead.attention(backend='auto')", "grid": plan.name, "clock": plan.clock,
               "threads": threads, "backend_selector": "multihead.functional.choose_backend",
               "native_kernels": _native_kernels(),
               "load_average": {"before": load_before, "after": limits.load_average()}})
    for p in points:        # each point against the fitted model, for the record
        p["fitted_s"] = predict_seconds(spec, AttnShape(**p["shape"]))
    spreads = [p["spread"] for p in points]
    spec.extra.update({
        "spread": {"median": statistics.median(spreads), "max": max(spreads),
                   "definition": "median / best - 1 over the repeats of one shape"},
        "fit_rms_relative_residual": residuals, "limits": lim, "points": points,
        # terms the grid did not determine, taken from the measured limits (fit.fit_prefill, fit_decode)
        "rates_from_limits": sorted([f"prefill {k}" for k, c in prefill.items() if c.flops_per_s == matmul.get(k.split("/")[0])]
                                    + [f"decode {k}" for k, c in decode.items()
                                       if c.bytes_per_s == lim["read_bandwidth"]["best"]])})
    return spec


def default_profile_path() -> Path:
    """profile.json in multihead's cache folder (multihead.paths.cache_dir)."""
    from multihead.paths import cache_dir
    return cache_dir("profile.json")


@contextlib.contextmanager
def torch_threads(threads: int | None, clock: str = "wall") -> Iterator[None]:
    """Run the block with ``threads`` torch threads (None: as they are), restored afterwards. The
    "cpu" clock needs one thread (it sums the CPU time of all of them). The caller owns this
    process-wide setting for the block, so nothing else may run torch ops concurrently meanwhile."""
    clock_fn(clock)
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        raise ValueError(f"--threads: expected a positive integer, got {threads!r}")
    before = torch.get_num_threads()
    if clock == "cpu" and (threads or before) != 1:
        raise ValueError(f"--clock cpu: expected --threads 1 (CPU time of one thread), got {threads or before} threads")
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def run_calibration(out: str | Path | None = None, *, quick: bool = False,
                    dtypes: tuple[str, ...] = ("fp32",), threads: int | None = None,
                    clock: str = "wall", progress: bool = True) -> tuple[DeviceSpec, Path]:
    """Calibrate and write the profile to ``out`` (default: ``default_profile_path()``)."""
    for dt in dtypes:
        if dt not in TORCH_DTYPES:
            raise ValueError(f"--dtypes: expected some of {sorted(TORCH_DTYPES)}, got {dt!r}")
    plan = CalibrationPlan.quick() if quick else CalibrationPlan()
    plan.attention_dtypes = tuple(dtypes)
    plan.clock = clock
    with torch_threads(threads, clock):
        spec = calibrate(plan, progress=progress)
    return spec, write_profile(spec, out or default_profile_path())


def _native_kernels() -> bool:
    """Whether the C kernels were built for this measurement (the auto kernel choice depends on it)."""
    from multihead.kernels import fast_native
    return fast_native.available()
