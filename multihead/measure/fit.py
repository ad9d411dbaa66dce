"""Fit the CPU time model (``multihead.cost.time.cpu_profile``) to measured points.

Every fit is a non-negative least-squares problem in relative error,

    minimize sum_i w_i^2 ((sum_j c_j X_ij - t_i) / t_i)^2  over c >= 0,

solved by ``scipy.optimize.nnls`` (Lawson-Hanson active set: the exact optimum). Each point's
weight is w_i = 1 / (spread_i + 0.02): a point that scattered over its repeats counts less.

Prefill (``PrefillCosts``), per kernel:  t = overhead + rows * c_row + scores * c_score + flops / F
(+ a per-score term for scores that spill out of the last-level cache, + a masking pass, each
fitted only where the grid can tell it apart). Decode (``DecodeCosts``): t = overhead + KV / BW +
flops / F_decode, or overlapped, t = overhead + max(KV / BW, flops / F): both forms are fitted
and the better kept, since which one a kernel follows is a measurement, like ``skips_masked``.
"""
from __future__ import annotations

import math
import statistics

import numpy as np

from multihead.cost.time.attention_time import SPILL_BYTES_PER_SCORE
from multihead.cost.time.cpu_profile import DecodeCosts, PrefillCosts, decode_rows_class
from multihead.measure.shapes import AttnShape

# multihead.attention's kernels that materialize the [B, H, Tq, Tk] score matrix (kernels/__init__.py).
MATERIALIZING = {"reference"}
NOISE_FLOOR = 0.02     # in the weights: a point with no measured spread is not trusted infinitely
MIN_SHARE = 1e-3       # a term explaining less of every point's time than this is not identified


def fit_nonnegative(columns: list[list[float]], times: list[float], noise: list[float] | None = None,
                    known: list[float] | None = None) -> tuple[list[float], float]:
    """Coefficients c >= 0 minimizing the weighted relative error (module docstring), and the RMS
    relative residual (unweighted). An all-zero column gets coefficient 0. ``known``: a part of
    each time already accounted for (t_i = known_i + sum_j c_j X_ij)."""
    X = np.array(columns, dtype=float).T            # (points, terms)
    t = np.array(times, dtype=float)
    w = 1.0 / (np.array(noise, dtype=float) + NOISE_FLOOR) if noise is not None else np.ones_like(t)
    w = w / w.mean()
    A = X / t[:, None]                             # relative error: each row divided by its time
    b = 1.0 - (np.array(known, dtype=float) / t if known is not None else 0.0)
    scale = np.abs(A).max(axis=0)                  # condition the solve: every column's max is 1
    used = scale > 0
    coef = np.zeros(X.shape[1])
    # on first fit: importing calibrate (or validate) stays light
    from scipy.optimize import nnls
    sol, _ = nnls(w[:, None] * A[:, used] / scale[used], w * b, maxiter=50 * X.shape[1])
    coef[used] = sol / scale[used]
    return coef.tolist(), float(np.sqrt(np.mean((A @ coef - b) ** 2)))


def fit_prefill(points: list[tuple[AttnShape, float]], skips_masked: bool = True,
                materializes: bool = False, cache_bytes: float = 0.0,
                noise: list[float] | None = None, matmul_flops: float | None = None) -> tuple[PrefillCosts, float]:
    """``PrefillCosts`` from (shape, best seconds) points of one kernel, and the RMS relative
    residual. Counts follow what the kernel does, as ``cost.attention_time.attention_seconds`` counts them: a
    kernel that does not skip masked scores computes Tq * Tk of them even when causal; one that
    materializes the scores pays the spilled-score term once a call's fp32 scores exceed ``cache_bytes``.

    A grid whose FLOPs do not show in its times (tiny shapes, where per-call and per-row costs
    dominate) gives no matmul rate; then F is the machine's measured matmul rate ``matmul_flops``
    (the kernel's GEMMs cannot beat it) and the other terms are fitted to what remains."""
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
    times = [t for _, t in points]
    coef, res = fit_nonnegative(cols, times, noise=noise)
    if not _explains(coef[3], cols[3], times):
        if not matmul_flops:
            raise RuntimeError("calibrate: the prefill timings admit no positive matmul rate (the grid's FLOPs "
                               "do not show in its times); rerun on a quieter machine or a larger grid")
        flops, cols[3] = cols[3], [0.0] * len(points)
        coef, res = fit_nonnegative(cols, times, noise=noise, known=[f / matmul_flops for f in flops])
        coef[3] = 1.0 / matmul_flops
    c0, c_row, c_score, inv_f = coef[:4]
    return PrefillCosts(flops_per_s=1.0 / inv_f, seconds_per_score=c_score, seconds_per_row=c_row,
                        overhead_s=c0, skips_masked=skips_masked, materializes=materializes,
                        **{name: coef[i] for name, i in extra.items()}), res


def skips_masked(points: list[tuple[AttnShape, float]]) -> bool:
    """Does this kernel skip masked scores? Measured: a causal call of the same shape as a full
    one takes about (T+1)/(2T) of its time if it does, about all of it if it does not. With no
    such pair, assume it does."""
    def key(s: AttnShape) -> tuple:
        return (s.heads, s.kv_heads, s.head_dim, s.tq, s.tk)
    full = {key(s): t for s, t in points if not s.causal}
    ratios = [t / full[key(s)] for s, t in points if s.causal and key(s) in full]
    return not ratios or statistics.median(ratios) < 0.75


def _decode_columns(points: list[tuple[AttnShape, float]], cache_bytes: float, split: bool = True,
                    compute: bool = True):
    """(KV bytes within the cache, KV bytes beyond it or None, flops or None) per point. With points
    on both sides of ``cache_bytes`` (one call's K and V) and ``split``, the KV beyond it gets its
    own rate. With one FLOP-per-byte ratio only (one head grouping), flops are a fixed multiple of
    the KV bytes and the two rates cannot be told apart: the time is charged to the reads alone."""
    kv = [s.kv_bytes for s, _ in points]
    ratios = {round(s.flops / b, 9) for (s, _), b in zip(points, kv)}
    flops = [float(s.flops) for s, _ in points] if compute and len(ratios) > 1 else None
    big = [b if cache_bytes and b > cache_bytes else 0.0 for b in kv]
    if not (split and any(big) and not all(big)):
        return kv, None, flops
    return [b - x for b, x in zip(kv, big)], big, flops


def fit_decode(points: list[tuple[AttnShape, float]], cache_bytes: float = 0.0,
               noise: list[float] | None = None, read_bytes_per_s: float | None = None) -> tuple[DecodeCosts, float]:
    """``DecodeCosts`` (overhead, KV read rate, compute rate) from decode points, and the RMS
    relative residual; the added and the overlapped form are both fitted, the better kept.

    A decode step must read its KV cache, so the read rates must explain a share of the time.
    When noisy points let the compute term (or the separate rate beyond the cache) take the reads'
    share, these points cannot identify that term, and it is dropped: first compute, then the
    split. When even the reads alone show no rate (tiny caches, where the per-call overhead is all
    there is), the read rate is the machine's measured streaming rate ``read_bytes_per_s``."""
    times = [t for _, t in points]
    for split, compute in ((True, True), (True, False), (False, True), (False, False)):
        fitted = _fit_decode_form(*_decode_columns(points, cache_bytes, split, compute), times, noise)
        if fitted is not None:
            return fitted
    if not read_bytes_per_s:
        raise RuntimeError("calibrate: the decode timings admit no positive bandwidth; rerun on a quieter machine")
    kv, _, flops = _decode_columns(points, cache_bytes, split=False)
    coef, res = fit_nonnegative([[1.0] * len(times), [0.0] * len(times), flops or [0.0] * len(times)], times,
                                noise=noise, known=[b / read_bytes_per_s for b in kv])
    return _decode_costs([coef[0], 1.0 / read_bytes_per_s, coef[2]], False, False), res


def _fit_decode_form(small: list[float], big: list[float] | None, flops: list[float] | None, times: list[float],
                     noise: list[float] | None) -> tuple[DecodeCosts, float] | None:
    """The best of the added and overlapped forms over these columns, or None when a read rate
    comes out zero."""
    ones = [1.0] * len(times)
    coef, res = fit_nonnegative([ones, small, flops or [0.0] * len(times)] + ([big] if big else []), times,
                                noise=noise)
    if not _explains(coef[1], small, times) or (big and not _explains(coef[3], big, times)):
        return None
    best = (res, coef, False)
    if flops is None:                     # reads alone: the overlapped form is the same model
        return _decode_costs(coef, big is not None, False), res

    def split_times(c: list[float]) -> list[tuple[float, float]]:     # (read time, compute time) per point
        return [(c[1] * a + (c[3] * b if big else 0.0), c[2] * f)
                for a, b, f in zip(small, big or small, flops)]
    # Overlapped: piecewise linear, so alternate between assigning each point to the term that
    # dominates it and refitting each term on its own points (a few rounds converge).
    reads_dominate = [r >= f for r, f in split_times(coef)]
    for _ in range(20):
        cols = [ones, [a if m else 0.0 for a, m in zip(small, reads_dominate)],
                [0.0 if m else f for f, m in zip(flops, reads_dominate)]]
        cols += [[b if m else 0.0 for b, m in zip(big, reads_dominate)]] if big else []
        c, _ = fit_nonnegative(cols, times, noise=noise)
        if not _explains(c[1], small, times) or (big and not _explains(c[3], big, times)):
            break
        pred = [c[0] + max(r, f) for r, f in split_times(c)]
        r_ov = math.sqrt(statistics.fmean(((p - t) / t) ** 2 for p, t in zip(pred, times)))
        if r_ov < best[0]:
            best = (r_ov, c, True)
        nxt = [r >= f for r, f in split_times(c)]
        if nxt == reads_dominate:
            break
        reads_dominate = nxt
    res, coef, overlapped = best
    return _decode_costs(coef, big is not None, overlapped), res


def _explains(coef: float, column: list[float], times: list[float]) -> bool:
    """Does a term account for a share of some point's time (0.1%, the floor of what timing on
    this machine resolves)? A coefficient of 1e-27 s/byte is zero that rounding left positive."""
    return coef > 0 and max(coef * x / t for x, t in zip(column, times)) >= MIN_SHARE


def _decode_costs(coef: list[float], split: bool, overlapped: bool) -> DecodeCosts:
    c0, inv_bw, inv_f = coef[:3]
    return DecodeCosts(bytes_per_s=1.0 / inv_bw, flops_per_s=1.0 / inv_f if inv_f > 0 else None, overhead_s=c0,
                       spilled_bytes_per_s=1.0 / coef[3] if split else None, overlapped=overlapped)


def fit_points(points: list[dict], cache_bytes: float, matmul_flops: dict[str, float] | None = None,
               read_bytes_per_s: float | None = None) -> tuple[dict, dict, dict]:
    """Fit the time model to measured points (``profile["points"]``): per kernel and dtype,
    (prefill terms, decode terms, RMS relative residuals). The dtype's plain key (the fallback
    for shapes whose kernel is unknown) gets the kernel that ran the largest calibration call:
    long-context planning is about the large shapes. ``matmul_flops`` (per dtype) and
    ``read_bytes_per_s``: the machine's measured rates, for a grid too small to determine the
    kernel's own (``fit_prefill``, ``fit_decode``)."""
    groups: dict[tuple[str, str, str | None], list[tuple[AttnShape, float, float]]] = {}
    for p in points:
        s = AttnShape(**p["shape"])
        groups.setdefault((s.kind, s.dtype, p.get("backend")), []).append((s, p["best"], max(0.0, p.get("spread", 0.0))))
    prefill: dict[str, PrefillCosts] = {}
    decode: dict[str, DecodeCosts] = {}
    residuals: dict[str, float] = {}
    for (kind, dt, backend), group in sorted(groups.items(), key=lambda kv: -max(s.flops + s.kv_bytes for s, *_ in kv[1])):
        key = f"{dt}/{backend}" if backend else dt
        pts, noise = [(s, t) for s, t, _ in group], [n for *_, n in group]
        if kind == "prefill":
            if len(pts) < 4:
                continue       # too few points to fit four terms: the fallback serves these shapes
            prefill[key], residuals[f"prefill {key}"] = fit_prefill(
                pts, skips_masked(pts), materializes=backend in MATERIALIZING, cache_bytes=cache_bytes, noise=noise,
                matmul_flops=(matmul_flops or {}).get(dt))
            prefill.setdefault(dt, prefill[key])
        elif dt not in decode and len(pts) >= 3:
            decode[dt], residuals[f"decode {key}"] = fit_decode(pts, cache_bytes, noise, read_bytes_per_s)
            # and per row grouping of the kernel (decode_rows_class), where it has enough points
            classes: dict[str, list[int]] = {}
            for i, (s, _) in enumerate(pts):
                classes.setdefault(decode_rows_class(s.heads // s.kv_heads * s.tq), []).append(i)
            for cls, idx in sorted(classes.items()):
                if len(classes) > 1 and len(idx) >= 3:
                    decode[f"{dt}/{cls}"], residuals[f"decode {key} {cls}"] = fit_decode(
                        [pts[i] for i in idx], cache_bytes, [noise[i] for i in idx], read_bytes_per_s)
    return prefill, decode, residuals
