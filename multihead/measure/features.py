"""Rows of ``multihead bench`` for the attention features of issue 19, each a ratio of two calls
timed interleaved in this process (measure.timing.time_calls), so a change in the machine's load
hits both alike. Round i times both calls once; its ratio is baseline_i / ours_i, and a row
reports the ratio of best times and the min / median / max of the per-round ratios (the spread).

    window   causal prefill with window_size=(W - 1, 0) (each query sees W keys) against the same
             attention given as a dense [T, T] bool mask (how a 4-D HF mask reaches SDPA), both
             backend="auto". Target: >= 3x at T = 16384, W = 4096. Also reported: the mask plus
             is_causal=True, where the kernel can skip the blocks above the diagonal itself.
    varlen   attention_varlen on a packed batch of mixed lengths against the sum of the same
             sequences run alone (one call each, timed back to back as one function). Target:
             ours / alone <= 1.10. Also reported: the padded batch [N, T_max] with a key mask.
    paged    one decode step over a paged cache (pages shuffled in the pool, page_size 256)
             against the same step over a contiguous cache. Target: paged / contiguous <= 1.10
             at 131072 cached tokens.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass

import torch

import multihead as mh
from multihead.measure.shapes import TORCH_DTYPES
from multihead.measure.timing import time_calls


@dataclass
class FeatureConfig:
    window_T: int = 16384
    window: int = 4096
    window_heads: tuple[int, int, int] = (8, 2, 64)           # H, H_kv, d
    varlen_lengths: tuple[int, ...] = (4096, 2048, 1536, 1024, 512, 300, 128, 17)
    varlen_heads: tuple[int, int, int] = (8, 2, 64)
    paged_T: int = 131072
    paged_heads: tuple[int, int, int] = (32, 8, 128)
    page_size: int = 256
    dtype: str = "fp32"
    repeats: int = 5

    @staticmethod
    def quick() -> "FeatureConfig":
        return FeatureConfig(window_T=2048, window=512, varlen_lengths=(512, 200, 64, 3), paged_T=8192,
                             paged_heads=(8, 2, 64), repeats=2)


def _row(name: str, shape: str, ours, base, target: str, ok) -> dict:
    """A row from the Timings of ours and the baseline (paired by round)."""
    ratios = [b / o for o, b in zip(ours.samples, base.samples)]
    row = {"name": name, "shape": shape, "ours": ours.to_dict(), "baseline": base.to_dict(),
           "speedup_best": base.best / ours.best, "speedup_median_round": statistics.median(ratios),
           "speedup_min_round": min(ratios), "speedup_max_round": max(ratios), "target": target}
    row["met"] = None if ok is None else bool(ok(row))
    return row


def window_rows(cfg: FeatureConfig, clock: str = "wall") -> list[dict]:
    H, H_kv, d = cfg.window_heads
    T, W = cfg.window_T, cfg.window
    dt = TORCH_DTYPES[cfg.dtype]
    g = torch.Generator().manual_seed(0)
    q = torch.randn(1, H, T, d, generator=g).to(dt)
    k, v = (torch.randn(1, H_kv, T, d, generator=g).to(dt) for _ in range(2))
    i = torch.arange(T)
    band = (i[None, :] <= i[:, None]) & (i[None, :] > i[:, None] - W)          # [T, T] bool, T^2 bytes
    with torch.no_grad():
        ours, dense, dense_causal = time_calls([
            lambda: mh.attention(q, k, v, is_causal=True, window_size=(W - 1, 0)),
            lambda: mh.attention(q, k, v, band),
            lambda: mh.attention(q, k, v, band, is_causal=True)], repeats=cfg.repeats, clock=clock)
    shape = f"T={T} window={W} H={H}/{H_kv} d={d} {cfg.dtype}"
    return [_row("window vs dense mask", shape, ours, dense, ">= 3x", lambda r: r["speedup_best"] >= 3),
            _row("window vs dense mask + is_causal", shape, ours, dense_causal, "(reported)", None)]


def varlen_rows(cfg: FeatureConfig, clock: str = "wall") -> list[dict]:
    H, H_kv, d = cfg.varlen_heads
    dt = TORCH_DTYPES[cfg.dtype]
    lengths = list(cfg.varlen_lengths)
    g = torch.Generator().manual_seed(1)
    total = sum(lengths)
    q = torch.randn(total, H, d, generator=g).to(dt)
    k, v = (torch.randn(total, H_kv, d, generator=g).to(dt) for _ in range(2))
    cu = torch.tensor([0] + torch.tensor(lengths).cumsum(0).tolist(), dtype=torch.int32)
    alone = [tuple(t[a:b].transpose(0, 1).unsqueeze(0) for t in (q, k, v)) for a, b in zip(cu[:-1], cu[1:])]
    N, T_max = len(lengths), max(lengths)
    padded = [torch.zeros(N, h, T_max, d, dtype=dt) for h in (H, H_kv, H_kv)]
    for n, (qa, ka, va) in enumerate(alone):
        for buf, src in zip(padded, (qa, ka, va)):
            buf[n, :, :src.shape[2]] = src[0]
    key_mask = (torch.arange(T_max)[None, :] < torch.tensor(lengths)[:, None]).view(N, 1, 1, T_max)

    def run_alone():
        for qa, ka, va in alone:
            mh.attention(qa, ka, va, is_causal=True)
    with torch.no_grad():
        ours, base, pad = time_calls([
            lambda: mh.attention_varlen(q, k, v, cu, cu, T_max, T_max, is_causal=True),
            run_alone,
            # Padded rows are right-padded, so causal top-left = bottom-right here: the mask hides the pads.
            lambda: mh.attention(*padded, key_mask & torch.ones(T_max, T_max, dtype=torch.bool).tril())],
            repeats=cfg.repeats, clock=clock)
    shape = f"lengths={lengths} H={H}/{H_kv} d={d} {cfg.dtype} causal"
    # speedup = alone / varlen: >= 1/1.10 means varlen costs at most 10% more than the sum alone.
    return [_row("varlen vs each sequence alone", shape, ours, base, "<= 1.10x the time alone",
                 lambda r: r["speedup_best"] >= 1 / 1.10),
            _row("varlen vs padded batch", shape, ours, pad, "(reported)", None)]


def paged_rows(cfg: FeatureConfig, clock: str = "wall") -> list[dict]:
    H, H_kv, d = cfg.paged_heads
    T, P = cfg.paged_T, cfg.page_size
    dt = TORCH_DTYPES[cfg.dtype]
    g = torch.Generator().manual_seed(2)
    q = torch.randn(1, H, 1, d, generator=g).to(dt)
    k, v = (torch.randn(1, H_kv, T, d, generator=g).to(dt) for _ in range(2))
    n = T // P
    perm = torch.randperm(n, generator=g)                        # pages scattered over the pool
    k_pages, v_pages = (torch.empty(n, H_kv, P, d, dtype=dt) for _ in range(2))
    k_pages[perm] = k[0].unflatten(1, (n, P)).transpose(0, 1)              # (n, H_kv, P, d)
    v_pages[perm] = v[0].unflatten(1, (n, P)).transpose(0, 1)
    table = perm.view(1, n).to(torch.int32)
    with torch.no_grad():
        ours, base = time_calls([
            lambda: mh.attention_with_kvcache(q, k_pages, v_pages, cache_seqlens=T, block_table=table),
            lambda: mh.attention(q, k, v)], repeats=max(cfg.repeats, 10), clock=clock)
    shape = f"Tk={T} page_size={P} H={H}/{H_kv} d={d} {cfg.dtype} Tq=1"
    return [_row("paged vs contiguous decode", shape, ours, base, "<= 1.10x contiguous",
                 lambda r: r["speedup_best"] >= 1 / 1.10)]


def run_features(cfg: FeatureConfig, clock: str = "wall") -> list[dict]:
    """All rows (window, varlen, paged) of one run."""
    return window_rows(cfg, clock) + varlen_rows(cfg, clock) + paged_rows(cfg, clock)


def feature_table(rows: list[dict]) -> tuple[list[str], list[list[str]]]:
    """(headers, rows) for printing: speed-up of ours over the baseline, best and per-round spread."""
    headers = ["row", "shape", "ours best s", "baseline best s", "speed-up (best)", "per-round min/median/max",
               "target", "met"]
    out = []
    for r in rows:
        out.append([r["name"], r["shape"], f"{r['ours']['best']:.4f}", f"{r['baseline']['best']:.4f}",
                    f"{r['speedup_best']:.2f}x",
                    f"{r['speedup_min_round']:.2f}/{r['speedup_median_round']:.2f}/{r['speedup_max_round']:.2f}",
                    r["target"], "-" if r["met"] is None else ("yes" if r["met"] else "NO")])
    return headers, out
