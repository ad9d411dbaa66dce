"""The attention core in one short run: softmax's worked numbers, exactness, and tiled memory.

``run_demo`` returns plain numbers (the CLI's ``multihead demo`` prints them). Nothing here is
hard-coded: every value is computed on the spot.
"""
from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from typing import Callable, Iterator

import torch
import torch.nn.functional as F

__all__ = ["run_demo", "peak_allocated_bytes"]


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Silence file descriptor 2 (the profiler's C++ side prints start/stop lines there)."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def peak_allocated_bytes(fn: Callable[[], object]) -> int:
    """Peak bytes held by CPU tensors allocated while ``fn()`` runs (earlier allocations ignored).

    torch.profiler with profile_memory=True records every allocator allocation and free as a
    "[memory]" event with a signed size; replaying them in time order, the maximum running sum is
    the call's peak extra allocation.
    """
    from torch.profiler import ProfilerActivity, profile

    with _quiet_stderr(), profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        prof.export_chrome_trace(path)
        with open(path) as f:
            events = json.load(f)["traceEvents"]
    finally:
        os.unlink(path)
    mem = sorted((e["ts"], e["args"]["Bytes"]) for e in events
                 if e.get("name") == "[memory]" and e["args"].get("Device Type", 0) == 0)
    running = peak = 0
    for _, nbytes in mem:
        running += nbytes
        peak = max(peak, running)
    return peak


def run_demo(tokens: int = 8192, seed: int = 0, progress: bool = False) -> dict:
    """Softmax numbers, attention error vs SDPA/fp64 per backend, tiled peak memory at ``tokens``."""
    from tqdm import tqdm

    from multihead.cost.counts.formulas import score_matrix_bytes
    from multihead.functional import attention
    from multihead.kernels import BACKENDS
    from multihead.softmax_ops import softmax

    if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 1:
        raise ValueError(f"--tokens: expected an integer >= 1, got {tokens!r}")
    bar = tqdm(total=3, desc="demo", disable=not progress, leave=False)
    x = torch.tensor([2.0, 1.0, 0.0])
    big = torch.tensor([1000.0, 999.0, 998.0])
    result: dict = {"softmax": {
        "softmax(2,1,0)": softmax(x).tolist(),
        "softmax(2,1,0), temperature 0.5": softmax(x, temperature=0.5).tolist(),
        "softmax(1000,999,998)": softmax(big).tolist(),
        # inf / inf: NaN, reported as None (JSON has no NaN)
        "naive exp/sum of (1000,999,998)": [None if x != x else x
                                             for x in (torch.exp(big) / torch.exp(big).sum()).tolist()],
        "softmax(1,1,1,1)": softmax(torch.ones(4)).tolist(),
    }}
    bar.update()

    # Exactness: GQA 8/2, causal prefill of 300 tokens after 200 cached (bottom-right alignment).
    g = torch.Generator().manual_seed(seed)
    B, H, H_kv, Tq, Tk, d = 1, 8, 2, 300, 500, 64
    q = torch.randn(B, H, Tq, d, generator=g)
    k, v = torch.randn(B, H_kv, Tk, d, generator=g), torch.randn(B, H_kv, Tk, d, generator=g)
    keep = torch.ones(Tq, Tk, dtype=torch.bool).tril(Tk - Tq)
    sdpa = F.scaled_dot_product_attention(q, k.repeat_interleave(H // H_kv, 1),
                                          v.repeat_interleave(H // H_kv, 1), attn_mask=keep)
    exact = F.scaled_dot_product_attention(q.double(), k.double().repeat_interleave(H // H_kv, 1),
                                           v.double().repeat_interleave(H // H_kv, 1), attn_mask=keep)
    rows = []
    for name in BACKENDS:
        out = attention(q, k, v, is_causal=True, backend=name)
        rows.append({"backend": name, "max_abs_err_vs_sdpa": (out - sdpa).abs().max().item(),
                     "max_abs_err_vs_fp64": (out.double() - exact).abs().max().item()})
    result["attention"] = {"shape": {"B": B, "H": H, "H_kv": H_kv, "Tq": Tq, "Tk": Tk, "d": d},
                           "sdpa_fp32_err_vs_fp64": (sdpa.double() - exact).abs().max().item(),
                           "backends": rows}
    bar.update()

    # Memory: tiled attention at T = tokens, one head, d = 64, fp32.
    d = 64
    q, k, v = (torch.randn(1, 1, tokens, d, generator=g) for _ in range(3))
    peak = peak_allocated_bytes(lambda: attention(q, k, v, is_causal=True, backend="tiled"))
    result["memory"] = {"tokens": tokens, "head_dim": d,
                        "score_matrix_bytes": int(score_matrix_bytes(1, 1, tokens, tokens, 4)),
                        "tiled_peak_extra_bytes": peak, "output_bytes": tokens * d * 4}
    bar.update()
    bar.close()
    return result
