"""``multihead calibrate``: measure this machine and fit the time model of ``devices.py`` to it.

What is measured (each point repeated; the best time is kept, because on a shared machine noise
only ever slows a run down, and the spread over repeats is recorded):

- the limits (``bench.limits``): matmul FLOP/s per dtype, streaming-read bytes/s;
- ``multihead.attention`` (whatever ``backend="auto"`` runs; torch SDPA stands in when multihead's
  kernels are not importable) on a small grid of prefill shapes and decode cache lengths.

The prefill terms of ``devices.PrefillCosts`` (per-call overhead, per-row cost, per-score softmax
cost, matmul rate F) are then the non-negative least-squares fit, in relative error, of

    t = overhead + rows * c_row + scores * c_score + flops / F

over the grid, per kernel (``choose_backend`` says which kernel ran each shape), weighted by
each point's run-to-run spread. The grid varies T (separates overhead, T and T^2 terms) and the
head dimension (flops = 4 d scores, so two values of d separate the matmul from the softmax);
causal and full calls of one shape tell whether a kernel skips masked scores and price its
masking pass; a kernel that materializes the scores gets a per-score term beyond the last-level
cache when points lie on both sides of it. The decode terms come the same way from
t = overhead + kv_bytes / BW_kv + flops / F_decode (or the max of the two terms, for a kernel
whose reads and arithmetic overlap: both forms are fitted, the better kept), over cache lengths
and four head groupings (flops per byte = H / (2 H_kv)), fitted together (the dtype's terms) and
per row grouping of the kernel (``devices.decode_rows_class``). Validation (``bench.validate``)
uses other sizes and other head counts than these.
"""
from __future__ import annotations

import datetime as _dt
import itertools
import math
import os
import statistics
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from multihead import accounting
from multihead.bench.limits import clock_fn, machine_description, measure_matmul_flops, measure_read_bandwidth
from multihead.devices import (SPILL_BYTES_PER_SCORE, DecodeCosts, DeviceSpec, PrefillCosts, decode_rows_class,
                               write_profile)

TORCH_DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}

# multihead.attention's kernels that materialize the [B, H, Tq, Tk] score matrix (kernels/__init__.py).
MATERIALIZING = {"reference"}


# ---- shapes and the kernel under test ---------------------------------------------------------

@dataclass(frozen=True)
class AttnShape:
    """One attention call: q [batch, heads, tq, head_dim], k/v [batch, kv_heads, tk, head_dim]."""
    heads: int
    kv_heads: int
    head_dim: int
    tq: int
    tk: int
    causal: bool = True
    dtype: str = "fp32"
    batch: int = 1

    @property
    def kind(self) -> str:
        return "decode" if self.tq == 1 else "prefill"

    @property
    def flops(self) -> int:
        return accounting.attention_flops(self.batch, self.heads, self.tq, self.tk, self.head_dim,
                                          causal=self.causal)

    @property
    def scores(self) -> int:
        pairs = accounting.causal_pairs(self.tq, self.tk) if self.causal else self.tq * self.tk
        return self.batch * self.heads * pairs

    @property
    def rows(self) -> int:
        return self.batch * self.heads * self.tq

    @property
    def kv_bytes(self) -> float:
        return accounting.kv_cache_bytes(1, self.kv_heads, self.head_dim, self.tk,
                                         accounting.dtype_bytes(self.dtype), self.batch)

    def label(self) -> str:
        mask = "causal" if self.causal else "full"
        if self.kind == "decode":
            return f"decode H{self.heads}/{self.kv_heads} d{self.head_dim} Tk={self.tk} {self.dtype}"
        return f"prefill H{self.heads}/{self.kv_heads} d{self.head_dim} T={self.tq} {mask} {self.dtype}"


def attention_kernel():
    """(fn(q, k, v, is_causal) -> out, description): multihead.attention with backend="auto",
    or torch SDPA when multihead's attention is not importable (recorded as such)."""
    try:
        from multihead.functional import attention
    except ImportError as err:   # kernels not built yet: say so in the profile
        import torch.nn.functional as F

        def sdpa(q, k, v, is_causal):
            return F.scaled_dot_product_attention(q, k, v, is_causal=is_causal,
                                                  enable_gqa=k.shape[1] != q.shape[1])
        return sdpa, f"torch SDPA (stand-in: multihead.attention not importable: {err})"

    def ours(q, k, v, is_causal):
        return attention(q, k, v, is_causal=is_causal, backend="auto")
    return ours, "multihead.attention(backend='auto')"


def resolved_backend(shape: AttnShape) -> str | None:
    """The kernel ``multihead.attention(backend="auto")`` runs for ``shape`` (its own rule)."""
    try:
        from multihead.functional import choose_backend
    except ImportError:
        return None
    return str(choose_backend(shape.batch, shape.heads, shape.tq, shape.tk, TORCH_DTYPES[shape.dtype]))


def _inputs(shape: AttnShape, seed: int = 0):
    """Random q [B, H, Tq, d] and k [B, H_kv, Tk, d] in the shape's dtype."""
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(shape.batch, shape.heads, shape.tq, shape.head_dim, generator=g)
    k = torch.randn(shape.batch, shape.kv_heads, shape.tk, shape.head_dim, generator=g)
    return q.to(TORCH_DTYPES[shape.dtype]), k.to(TORCH_DTYPES[shape.dtype])


def last_level_cache_bytes() -> int:
    """Size of the largest CPU cache (Linux sysfs), or 32 MiB when it cannot be read."""
    best = 0
    base = Path("/sys/devices/system/cpu/cpu0/cache")
    for idx in base.glob("index*"):
        try:
            text = (idx / "size").read_text().strip()
        except OSError:
            continue
        mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
        try:
            best = max(best, int(text.rstrip("KMG")) * mult)
        except ValueError:
            continue
    return best or 32 << 20


@dataclass
class Timing:
    """Seconds of one shape's calls: best (what the model predicts), median and all samples."""
    best: float
    median: float
    samples: list[float]

    @property
    def spread(self) -> float:
        """Relative run-to-run spread: median / best - 1 (noise only slows a run down)."""
        return self.median / self.best - 1.0

    def to_dict(self) -> dict:
        return {**asdict(self), "spread": self.spread}


def time_attention(fn, shape: AttnShape, *, repeats: int = 5, min_seconds: float = 0.3,
                   max_repeats: int = 50, clock: str = "wall") -> Timing:
    """Time ``fn`` on ``shape``: one warm-up, then at least ``repeats`` calls (more, up to
    ``max_repeats``, while the total stays under ``min_seconds``).

    A decode step cycles through enough separate K/V caches that together exceed twice the last-
    level cache: in a real model every layer reads its own cache, so the KV cache streams from
    memory; timing one small cache over and over would measure the CPU cache instead.
    """
    q, k = _inputs(shape, seed=1)
    copies = 1
    if shape.kind == "decode":
        copies = max(1, min(64, math.ceil(2 * last_level_cache_bytes() / max(shape.kv_bytes, 1))))
    kvs = [(torch.randn_like(k, dtype=torch.float32).to(k.dtype),
            torch.randn_like(k, dtype=torch.float32).to(k.dtype)) for _ in range(copies)]
    now = clock_fn(clock)
    t0 = now()
    fn(q, *kvs[0], shape.causal)       # warm-up: allocations, thread pool, code paths
    if now() - t0 > 2.0:               # long calls: three repeats are enough for a best-of
        repeats = min(repeats, 3)
    samples: list[float] = []
    total = 0.0
    i = 0
    while len(samples) < repeats or (total < min_seconds and len(samples) < max_repeats):
        kk, vv = kvs[i % copies]
        i += 1
        t0 = now()
        fn(q, kk, vv, shape.causal)
        dt = now() - t0
        samples.append(dt)
        total += dt
    return Timing(best=min(samples), median=statistics.median(samples), samples=samples)


# ---- the fit -----------------------------------------------------------------------------------

def fit_nonnegative(columns: list[list[float]], times: list[float],
                    required: tuple[int, ...] = (), noise: list[float] | None = None) -> tuple[list[float], float]:
    """Coefficients c >= 0 minimizing sum_i w_i^2 ((sum_j c_j X_ij - t_i) / t_i)^2, and the RMS
    relative residual (unweighted). Exhaustive over subsets of columns (a handful): exact NNLS.
    Columns in ``required`` must get a positive coefficient (a term that cannot be zero).
    ``noise``: each point's relative run-to-run spread; w_i = 1 / (spread_i + 0.02), so a point
    that scattered over its repeats counts less (inverse-noise weighting)."""
    import numpy as np
    X = np.array(columns, dtype=float).T            # (points, terms)
    t = np.array(times, dtype=float)
    w = 1.0 / (np.array(noise, dtype=float) + 0.02) if noise is not None else np.ones_like(t)
    w = w / w.mean()
    A = X / t[:, None]                             # relative error
    b = np.ones_like(t)
    n_terms = X.shape[1]
    best = (math.inf, [0.0] * n_terms)
    for r in range(1, n_terms + 1):
        for subset in itertools.combinations(range(n_terms), r):
            cols = list(subset)
            scale = np.abs(A[:, cols]).max(axis=0)      # condition the solve
            if np.any(scale == 0):
                continue                                  # an all-zero column: no term to fit
            sol, *_ = np.linalg.lstsq(w[:, None] * A[:, cols] / scale, w * b, rcond=None)
            sol = sol / scale
            if np.any(sol < 0) or not set(required) <= set(cols) or np.any(sol[[cols.index(j) for j in required]] <= 0):
                continue
            coef = np.zeros(n_terms)
            coef[cols] = sol
            loss = float(np.mean((w * (A @ coef - b)) ** 2))
            if loss < best[0] - 1e-15:
                best = (loss, coef.tolist())
    coef = np.array(best[1])
    return best[1], float(np.sqrt(np.mean((A @ coef - b) ** 2)))


def fit_prefill(points: list[tuple[AttnShape, float]], skips_masked: bool = True,
                materializes: bool = False, cache_bytes: float = 0.0,
                noise: list[float] | None = None) -> tuple[PrefillCosts, float]:
    """Fit ``PrefillCosts`` to (shape, best seconds) points of one kernel; returns the terms and the
    RMS relative residual. The counts follow what the kernel does, as ``devices.attention_seconds``
    counts them: a kernel that does not skip masked scores computes Tq * Tk of them even when
    causal; one that materializes the scores pays the spilled-score term once a call's fp32 score
    matrix exceeds ``cache_bytes``."""
    def counted(s: AttnShape) -> float:
        return s.scores if (skips_masked or not s.causal) else s.batch * s.heads * s.tq * s.tk
    scores = [counted(s) for s, _ in points]
    cols = [[1.0] * len(points), [s.rows for s, _ in points], scores,
            [4.0 * s.head_dim * n for (s, _), n in zip(points, scores)]]
    spilled = [n if materializes and cache_bytes and SPILL_BYTES_PER_SCORE * n > cache_bytes else 0.0
               for n in scores]
    masked = [n if s.causal and not skips_masked else 0.0 for (s, _), n in zip(points, scores)]
    extra = {}                                 # optional terms, fitted only where identifiable
    for name, col in (("seconds_per_spilled_score", spilled), ("seconds_per_masked_score", masked)):
        if any(col) and not all(col):
            extra[name] = len(cols)
            cols.append(col)
    coef, res = fit_nonnegative(cols, [t for _, t in points], required=(3,), noise=noise)
    c0, c_row, c_score, inv_f = coef[:4]
    if inv_f <= 0:
        raise RuntimeError("calibrate: the prefill timings admit no positive matmul rate; rerun on a quieter machine")
    return PrefillCosts(flops_per_s=1.0 / inv_f, seconds_per_score=c_score, seconds_per_row=c_row,
                        overhead_s=c0, skips_masked=skips_masked, materializes=materializes,
                        **{name: coef[i] for name, i in extra.items()}), res


def skips_masked(points: list[tuple[AttnShape, float]]) -> bool:
    """Does this kernel skip masked scores? Measured: a causal call of the same shape as a full
    one takes about (T+1)/(2T) of its time if it does, about all of it if it does not. With no
    such pair, assume it does."""
    full = {(s.heads, s.kv_heads, s.head_dim, s.tq, s.tk): t for s, t in points if not s.causal}
    ratios = [t / full[(s.heads, s.kv_heads, s.head_dim, s.tq, s.tk)] for s, t in points
              if s.causal and (s.heads, s.kv_heads, s.head_dim, s.tq, s.tk) in full]
    return not ratios or statistics.median(ratios) < 0.75


def fit_decode(points: list[tuple[AttnShape, float]], cache_bytes: float = 0.0,
               noise: list[float] | None = None) -> tuple[DecodeCosts, float]:
    """Fit ``DecodeCosts`` (overhead, KV read rate, compute rate) to decode points; with points on
    both sides of ``cache_bytes`` (one call's K and V), the KV rate beyond the cache separately.

    Two forms are fitted and the one with the smaller RMS relative residual is kept: reads and
    arithmetic added (t = c0 + KV / BW + flops / F), or overlapped (t = c0 + max(KV / BW,
    flops / F), a kernel that prefetches ahead of its FMAs). Which one the kernel follows is
    measured, like ``skips_masked``: a prefetching kernel at G = 4 runs at its read rate alone."""
    kv = [s.kv_bytes for s, _ in points]
    big = [b if cache_bytes and b > cache_bytes else 0.0 for b in kv]
    split = any(big) and not all(big)
    small = [b - x for b, x in zip(kv, big)] if split else kv
    flops = [s.flops for s, _ in points]
    times = [t for _, t in points]
    required = (1, 3) if split else (1,)
    cols = [[1.0] * len(points), small, flops] + ([big] if split else [])
    coef, res = fit_nonnegative(cols, times, required=required, noise=noise)
    best = (res, coef, False)

    # Overlapped: piecewise linear, so alternate between assigning each point to the term that
    # dominates it and refitting each term on its own points (a few rounds converge).
    def predict(c: list[float]) -> list[tuple[float, float]]:       # (read time, compute time)
        return [(c[1] * a + (c[3] * b if split else 0.0), c[2] * f) for a, b, f in zip(small, big, flops)]
    reads_dominate = [r >= f for r, f in predict(coef)]
    for _ in range(20):
        ov = [[1.0] * len(points), [a if m else 0.0 for a, m in zip(small, reads_dominate)],
              [0.0 if m else f for f, m in zip(flops, reads_dominate)]]
        ov += [[b if m else 0.0 for b, m in zip(big, reads_dominate)]] if split else []
        c, _ = fit_nonnegative(ov, times, required=required, noise=noise)
        if c[1] <= 0 or (split and c[3] <= 0):
            break
        pred = [c[0] + max(r, f) for r, f in predict(c)]
        r_ov = math.sqrt(statistics.fmean(((p - t) / t) ** 2 for p, t in zip(pred, times)))
        if r_ov < best[0]:
            best = (r_ov, c, True)
        nxt = [r >= f for r, f in predict(c)]
        if nxt == reads_dominate:
            break
        reads_dominate = nxt
    res, coef, overlapped = best
    c0, inv_bw, inv_f = coef[:3]
    if inv_bw <= 0:
        raise RuntimeError("calibrate: the decode timings admit no positive bandwidth; rerun on a quieter machine")
    return DecodeCosts(bytes_per_s=1.0 / inv_bw, flops_per_s=1.0 / inv_f if inv_f > 0 else None, overhead_s=c0,
                       spilled_bytes_per_s=1.0 / coef[3] if split else None, overlapped=overlapped), res


# ---- the calibration grid ----------------------------------------------------------------------

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
    # which the kernel runs one at a time (devices.decode_rows_class).
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
                   prefill_full_tokens=(96, 3000), prefill_extra=(), decode_heads=((4, 1, 32), (2, 2, 16), (8, 1, 16), (3, 1, 16)),
                   decode_tokens=(1100, 2048, 4096), matmul_n={"fp32": 256, "bf16": 48, "fp16": 48},
                   bandwidth_bytes=16 << 20, repeats=2, min_seconds=0.0, name="quick")

    def prefill_shapes(self, dtype: str) -> list[AttnShape]:
        out = [AttnShape(h, hk, d, t, t, True, dtype) for h, hk, d in self.prefill_heads
               for t in self.prefill_tokens]
        out += [AttnShape(h, hk, d, t, t, False, dtype) for h, hk, d in self.prefill_heads
                for t in self.prefill_full_tokens]
        out += [AttnShape(h, hk, d, t, t, True, dtype) for h, hk, d, t in self.prefill_extra]
        return out

    def decode_shapes(self, dtype: str) -> list[AttnShape]:
        return [AttnShape(h, hk, d, 1, t, False, dtype) for h, hk, d in self.decode_heads
                for t in self.decode_tokens]


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform
    return platform.processor() or platform.machine()


def _memory_bytes() -> float:
    try:
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 0.0


def load_average() -> list[float] | None:
    """1, 5 and 15 minute load averages (other processes competing for the cores)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def calibrate(plan: CalibrationPlan | None = None, *, progress: bool = True) -> DeviceSpec:
    """Measure this machine and return its ``DeviceSpec`` (kind "measured"), ready to write."""
    from tqdm import tqdm
    plan = plan or CalibrationPlan()
    fn, kernel = attention_kernel()
    ours = kernel.startswith("multihead.attention")
    load_before = load_average()
    shapes = [s for dt in plan.attention_dtypes for s in plan.prefill_shapes(dt) + plan.decode_shapes(dt)]
    bar = tqdm(total=len(plan.matmul_n) + 1 + len(shapes), desc="calibrate", disable=not progress,
               file=sys.stderr)

    limits: dict[str, dict] = {}
    matmul = {}
    for dt, n in plan.matmul_n.items():
        bar.set_postfix_str(f"matmul {dt} n={n}")
        m = measure_matmul_flops(TORCH_DTYPES[dt], n=n, repeats=max(2, plan.repeats), clock=plan.clock)
        matmul[dt] = m.best
        limits[f"matmul_{dt}"] = {"n": n, **m.to_dict()}
        bar.update()
    bar.set_postfix_str("read bandwidth")
    bw = measure_read_bandwidth(plan.bandwidth_bytes, repeats=max(2, plan.repeats), clock=plan.clock)
    limits["read_bandwidth"] = {"bytes": plan.bandwidth_bytes, **bw.to_dict()}
    bar.update()

    points: list[dict] = []
    for s in shapes:
        bar.set_postfix_str(s.label())
        t = time_attention(fn, s, repeats=plan.repeats, min_seconds=plan.min_seconds, clock=plan.clock)
        backend = resolved_backend(s) if ours else None
        points.append({"shape": asdict(s), "label": s.label(), "backend": backend, **t.to_dict()})
        bar.update()
    bar.close()
    cache = float(last_level_cache_bytes())
    prefill, decode, residuals = fit_points(points, cache)
    threads = torch.get_num_threads()
    now = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0)
    spec = DeviceSpec(
        name=f"{_cpu_name()} ({threads} threads)", memory_bytes=_memory_bytes(),
        bandwidth_bytes_per_s=bw.best, matmul_flops=matmul, flops_efficiency=1.0,
        bandwidth_efficiency=1.0, kind="measured",
        source=f"measured by multihead calibrate on {now.isoformat()}",
        prefill=prefill, decode=decode,
        extra={"date": now.isoformat(), "machine": {**machine_description(), "cpu": _cpu_name(),
                                                    "last_level_cache_bytes": last_level_cache_bytes()},
               "cache_bytes": cache, "kernel": kernel, "grid": plan.name, "clock": plan.clock, "threads": threads,
               "backend_selector": "multihead.functional.choose_backend" if ours else None,
               "load_average": {"before": load_before, "after": load_average()}})
    for p in points:        # each point against the fitted model, for the record
        p["fitted_s"] = predict_seconds(spec, AttnShape(**p["shape"]))
    spreads = [p["spread"] for p in points]
    spec.extra.update({
        "spread": {"median": statistics.median(spreads), "max": max(spreads),
                   "definition": "median / best - 1 over the repeats of one shape"},
        "fit_rms_relative_residual": residuals, "limits": limits, "points": points})
    return spec


def fit_points(points: list[dict], cache_bytes: float) -> tuple[dict, dict, dict]:
    """Fit the time model to measured points (``profile["points"]``): per kernel and dtype,
    (prefill terms, decode terms, RMS relative residuals). The dtype's plain key (the fallback
    for shapes whose kernel is unknown) gets the kernel that ran the largest calibration call:
    long-context planning is about the large shapes."""
    groups: dict[tuple[str, str, str | None], list[tuple[AttnShape, float]]] = {}
    spreads: dict[tuple[str, str, str | None], list[float]] = {}
    for p in points:
        s = AttnShape(**p["shape"])
        key = (s.kind, s.dtype, p.get("backend"))
        groups.setdefault(key, []).append((s, p["best"]))
        spreads.setdefault(key, []).append(max(0.0, p.get("spread", 0.0)))
    prefill: dict[str, PrefillCosts] = {}
    decode: dict[str, DecodeCosts] = {}
    residuals: dict[str, float] = {}
    for (kind, dt, backend), pts in sorted(groups.items(), key=lambda kv: -max(s.flops + s.kv_bytes for s, _ in kv[1])):
        key = f"{dt}/{backend}" if backend else dt
        noise = spreads[(kind, dt, backend)]
        if kind == "prefill":
            if len(pts) < 4:
                continue       # too few points to fit four terms: the fallback serves these shapes
            prefill[key], residuals[f"prefill {key}"] = fit_prefill(
                pts, skips_masked(pts), materializes=backend in MATERIALIZING, cache_bytes=cache_bytes,
                noise=noise)
            prefill.setdefault(dt, prefill[key])
        elif dt not in decode and len(pts) >= 3:
            decode[dt], residuals[f"decode {key}"] = fit_decode(pts, cache_bytes, noise=noise)
            # and per row grouping of the kernel (decode_rows_class), where it has enough points
            classes: dict[str, list[int]] = {}
            for i, (s, _) in enumerate(pts):
                classes.setdefault(decode_rows_class(s.heads // s.kv_heads * s.tq), []).append(i)
            for cls, idx in sorted(classes.items()):
                if len(classes) > 1 and len(idx) >= 3:
                    decode[f"{dt}/{cls}"], residuals[f"decode {key} {cls}"] = fit_decode(
                        [pts[i] for i in idx], cache_bytes, noise=[noise[i] for i in idx])
    return prefill, decode, residuals


def refit(profile: DeviceSpec) -> DeviceSpec:
    """The same profile with its recorded points fitted again by the current model."""
    import dataclasses
    prefill, decode, residuals = fit_points(profile.extra["points"], profile.cache_bytes)
    spec = dataclasses.replace(profile, prefill=prefill, decode=decode, extra=dict(profile.extra))
    spec.extra["fit_rms_relative_residual"] = residuals
    for p in spec.extra["points"]:
        p["fitted_s"] = predict_seconds(spec, AttnShape(**p["shape"]))
    return spec


def predict_seconds(device: DeviceSpec, s: AttnShape) -> float:
    """The model's time for one call of ``s`` on ``device``: the same functions the planner uses."""
    from multihead.devices import attention_prefill_seconds, decode_attention_seconds
    if s.kind == "decode":
        return decode_attention_seconds(device, n_heads=s.heads, n_kv_heads=s.kv_heads, tk=s.tk,
                                        head_dim=s.head_dim, batch=s.batch, dtype=s.dtype)
    return attention_prefill_seconds(device, n_heads=s.heads, tq=s.tq, tk=s.tk, head_dim=s.head_dim,
                                     batch=s.batch, causal=s.causal, dtype=s.dtype)


def default_profile_path() -> Path:
    """profile.json in multihead's cache folder (multihead.paths.cache_dir)."""
    from multihead.paths import cache_dir
    return cache_dir("profile.json")


def set_threads(threads: int | None, clock: str = "wall") -> None:
    """Set torch's thread count; the "cpu" clock needs one thread (all work on the timed thread)."""
    clock_fn(clock)
    if threads is not None:
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise ValueError(f"--threads: expected a positive integer, got {threads!r}")
        torch.set_num_threads(threads)
    if clock == "cpu" and torch.get_num_threads() != 1:
        raise ValueError(f"--clock cpu: expected --threads 1 (CPU time of one thread), got "
                         f"{torch.get_num_threads()} threads")


def run_calibration(out: str | Path | None = None, *, quick: bool = False,
                    dtypes: tuple[str, ...] = ("fp32",), threads: int | None = None,
                    clock: str = "wall", progress: bool = True) -> tuple[DeviceSpec, Path]:
    """Calibrate and write the profile to ``out`` (default: ``default_profile_path()``)."""
    for dt in dtypes:
        if dt not in TORCH_DTYPES:
            raise ValueError(f"--dtypes: expected some of {sorted(TORCH_DTYPES)}, got {dt!r}")
    set_threads(threads, clock)
    plan = CalibrationPlan.quick() if quick else CalibrationPlan()
    plan.attention_dtypes = tuple(dtypes)
    plan.clock = clock
    spec = calibrate(plan, progress=progress)
    return spec, write_profile(spec, out or default_profile_path())
