"""Shared test helpers: an independent float64 attention oracle and torch SDPA, both written the
obvious way (repeat K/V per query head, build the full mask), so they share no code with
multihead.kernels."""
from __future__ import annotations

import importlib
import importlib.util
import os

import pytest
import torch
import torch.nn.functional as F

# One intra-op thread per core per xdist worker: `pytest -n 2` on 2 cores with torch's default of
# 2 threads each oversubscribes the CPU, and small ops then wait on each other's spin-locks
# (measured: a 0.17 s test took 11 s on a loaded 2-core machine).
_workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
torch.set_num_threads(max(1, (os.cpu_count() or 1) // _workers))


def bottom_right_causal(tq: int, tk: int, device=None) -> torch.Tensor:
    """Bool [Tq, Tk]: query i sees key j iff j <= i + Tk - Tq (multihead's / FlashAttention's rule)."""
    return torch.ones(tq, tk, dtype=torch.bool, device=device).tril(diagonal=tk - tq)


def full_keep(q, k, attn_mask=None, is_causal=False) -> torch.Tensor:
    """The combined bool keep-mask [B, H, Tq, Tk] (only for bool or absent masks)."""
    B, H, Tq, _ = q.shape
    Tk = k.shape[2]
    keep = torch.ones(B, H, Tq, Tk, dtype=torch.bool, device=q.device)
    if is_causal:
        keep = keep & bottom_right_causal(Tq, Tk, q.device)
    if attn_mask is not None:
        keep = keep & attn_mask
    return keep


def attention_fp64(q, k, v, attn_mask=None, is_causal=False, scale=None):
    """softmax(q k^T * scale + mask) v in float64; returns (out, lse); empty rows -> 0 and -inf.
    The oracle of tests/attention_oracle.py without score modifications (one float64 oracle)."""
    from attention_oracle import oracle
    return oracle(q, k, v, attn_mask, is_causal, scale)


def attention_sdpa(q, k, v, attn_mask=None, is_causal=False):
    """torch SDPA in the inputs' dtype, K/V repeat_interleave'd for GQA, causal made bottom-right."""
    G = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(G, 1), v.repeat_interleave(G, 1)
    if is_causal:   # SDPA's is_causal aligns top-left when Tq != Tk: give it the mask explicitly
        attn_mask = full_keep(q, k, attn_mask, is_causal=True)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)


def markdown_tables(md: str) -> list[list[list[str]]]:
    """Every table of a markdown page, as rows of cells (header row first, separator dropped):
    reports are checked for the numbers in their cells, not for strings copied from a run."""
    tables, cur = [], []
    for line in md.splitlines() + [""]:
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            if not all(set(c) <= set("-:") for c in cells):
                cur.append(cells)
        elif cur:
            tables.append(cur)
            cur = []
    return tables


# ---- tests that need the optional real-weights packages ----------------------------------------
# `make test` (= CI) installs every one of them, so a missing package there is a broken setup, not
# a reason to pass quietly: a test marked ``@pytest.mark.needs("module", ...)`` FAILS, naming what
# is missing and how to install it. Running the suite deliberately without them (a machine with no
# room for the weights) takes MULTIHEAD_TESTS_WITHOUT=models: those tests then skip, with the reason.
ALLOW_MISSING = os.environ.get("MULTIHEAD_TESTS_WITHOUT", "") == "models"


def missing_modules(*names: str) -> list[str]:
    return [n for n in names if importlib.util.find_spec(n) is None]


def _missing_message(missing: list[str]) -> str:
    from multihead.hf.errors import INSTALL_HINT
    return (f"not installed: {', '.join(missing)}; {' '.join(INSTALL_HINT.split())} "
            f"(or set MULTIHEAD_TESTS_WITHOUT=models to skip these tests on purpose)")


def require(name: str):
    """Import an optional package for a whole test module: the module, or a failure (or, with
    MULTIHEAD_TESTS_WITHOUT=models, a skip) that says what to install."""
    if missing_modules(name):
        if ALLOW_MISSING:
            pytest.skip(_missing_message([name]), allow_module_level=True)
        raise ImportError(_missing_message([name]))
    return importlib.import_module(name)


def pytest_configure(config):
    config.addinivalue_line("markers", "needs(*modules): fails (CI) or skips (MULTIHEAD_TESTS_WITHOUT=models) "
                                       "when an optional package is missing")


def pytest_runtest_setup(item):
    for mark in item.iter_markers("needs"):
        missing = missing_modules(*mark.args)
        if missing:
            (pytest.skip if ALLOW_MISSING else pytest.fail)(_missing_message(missing))
