"""The lesson playground's numbers, computed by multihead itself (never in the browser).

softmax with temperature and shift, the overflow demo (the text's sections 3.1 and 4.2), a small
causal mask, the two-head toy (section 5.2) and the MHA/GQA/MQA KV fraction (sections 2.4, 5.3).
Tensors go to the page as lists; inf and nan as the strings "inf", "-inf", "nan" (JSON has neither).
"""
from __future__ import annotations

import math

import torch

import multihead
from multihead import values
from multihead.softmax_ops import softmax

DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32, "fp64": torch.float64}
MAX_LOGITS = 16          # the playground's bars: a handful of logits is the point
MAX_CAUSAL_T = 12        # a heatmap a reader can still read cell by cell


LOGIT_BOUND = 1e4        # every lesson endpoint's logits (and the softmax card's shift): |z| <= 1e4


def bound_text(x: float) -> str:
    """A bound as a reader writes it: 2147483647, 0.01, 1e+06 (never 2.14748e+09 for an integer)."""
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else f"{x:g}"


def _check(value, name: str, lo: float, hi: float, integer: bool = False):
    """A number in [lo, hi] (an int when integer), else ValueError naming it, by multihead.values'
    one rule (the planner request's): an int, an integral float (6.0) or text spelling one ("6",
    "1e1") for an integer; a number or its text for a number; never a bool; finite; 10**400 is out
    of range, not an overflow."""
    kind = "an integer" if integer else "a number"
    if value is None or value == "":
        raise ValueError(f"{name}: this entry is empty; enter a number")
    rule = values.IntRange(int(lo), int(hi)) if integer else values.FloatRange(lo, hi)
    try:
        return rule(value) if integer else float(rule(value))
    except ValueError:
        raise ValueError(f"{name}: expected {kind} in [{bound_text(lo)}, {bound_text(hi)}], "
                         f"got {repr(value)[:40]}") from None


def _logits(values, name: str = "logits") -> list[float]:
    if not isinstance(values, list) or not 1 <= len(values) <= MAX_LOGITS:
        raise ValueError(f"{name}: expected a list of 1 to {MAX_LOGITS} numbers")
    return [_check(v, f"{name}[{i}]", -LOGIT_BOUND, LOGIT_BOUND) for i, v in enumerate(values)]


def _dtype(name) -> torch.dtype:
    if not isinstance(name, str) or name not in DTYPES:
        raise ValueError(f"dtype: expected one of {', '.join(DTYPES)}, got {name!r}")
    return DTYPES[name]


def plain(t: torch.Tensor):
    """A tensor as (nested lists of) floats, non-finite values as strings."""
    return _json_floats(t.detach().to(torch.float64).tolist())


def _json_floats(x):
    if isinstance(x, list):
        return [_json_floats(v) for v in x]
    return x if math.isfinite(x) else ("nan" if math.isnan(x) else ("inf" if x > 0 else "-inf"))


def naive_softmax(z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The definition as written (section 2.1), e^z / sum e^z, in z's own dtype: no max subtracted.

    Kept only to show what goes wrong: e^z overflows past ln(finfo.max) (88.7 in fp32, 11.09 in
    fp16) and inf / inf is nan. Returns (e^z, the sum, the quotient), all in z's dtype.
    """
    e = torch.exp(z)
    s = e.sum(dim=-1, keepdim=True)
    return e, s, e / s


def softmax_demo(logits, temperature=1.0, dtype="fp32", subtract_max=True, d_k=None, shift=0.0) -> dict:
    """softmax(z / sqrt(d_k) / temperature) in the chosen dtype, with or without the max subtracted.

    subtract_max: multihead's softmax (max-subtracted, accumulated in fp32 for 16-bit inputs);
    otherwise naive_softmax in the dtype itself. shift: a constant added to every logit, to show
    softmax(z + c) = softmax(z). d_k: divide by sqrt(d_k) first (None: no scaling).
    """
    subtract_max = values.checked(values.flag, "subtract_max", subtract_max)
    z = torch.tensor(_logits(logits), dtype=torch.float64)
    tau = _check(temperature, "temperature", 0.01, 100)
    c = _check(shift, "shift", -LOGIT_BOUND, LOGIT_BOUND)
    scale = 1.0 if d_k in (None, 0) else 1.0 / math.sqrt(_check(d_k, "d_k", 1, 65536, integer=True))
    dt = _dtype(dtype)
    x = (z * scale / tau).to(dt)                     # the logits the exponent sees, in dtype
    if subtract_max:
        p = softmax(x)
        exps, total = torch.exp((x - x.max()).to(torch.float64)), None
    else:
        exps, total, p = naive_softmax(x)
    shifted = softmax(((z + c) * scale / tau).to(dt))
    finite = bool(torch.isfinite(p.to(torch.float64)).all())
    return {"dtype": dtype, "logits_used": plain(x), "exp": plain(exps),
            "sum_exp": None if total is None else plain(total)[0], "probs": plain(p),
            "sum_probs": plain(p.to(torch.float64).sum()) if finite else "nan",
            "finite": finite, "finfo_max": torch.finfo(dt).max,
            "overflow_logit": math.log(torch.finfo(dt).max),
            "shifted_probs": plain(shifted),
            "shift_max_abs_diff": plain((shifted.to(torch.float64) - softmax(x).to(torch.float64)).abs().max())}


def causal_demo(T=6, seed=0) -> dict:
    """Random scores [T, T], the causal mask (True = attend, j <= i) and the row-wise softmax."""
    T = _check(T, "T", 1, MAX_CAUSAL_T, integer=True)
    g = torch.Generator().manual_seed(_check(seed, "seed", 0, 2**31 - 1, integer=True))
    scores = torch.randn(T, T, generator=g, dtype=torch.float64)
    keep = torch.ones(T, T, dtype=torch.bool).tril()
    probs = softmax(scores, mask=keep)
    shown = scores.masked_fill(~keep, float("-inf"))
    return {"T": T, "scores": plain(shown), "probs": plain(probs), "row_sums": plain(probs.sum(-1)),
            "upper_max": plain(probs.masked_fill(keep, 0).abs().max())}


def two_heads(x1=(1, 0, 0, 0), x2=(0, 1, 0, 0), causal=False) -> dict:
    """Section 5.2: D = 4, H = 2, d_k = 2, identity projections, head 1 reads dims 0-1, head 2 dims 2-3.

    The outputs come from multihead.attention; the weights shown are multihead's softmax of the
    same scaled scores (attention() never returns them).
    """
    causal = values.checked(values.flag, "causal", causal)
    rows = []
    for name, x in (("x1", x1), ("x2", x2)):
        if not isinstance(x, (list, tuple)) or len(x) != 4:
            raise ValueError(f"{name}: needs 4 numbers (D = 4), got {len(x) if isinstance(x, (list, tuple)) else 0}")
        rows.append(_logits(list(x), name))
    X = torch.tensor(rows, dtype=torch.float64)
    B, T, D, H = 1, 2, 4, 2
    dk = D // H
    q = X.view(B, T, H, dk).transpose(1, 2)            # [B, H, T, d_k]; W_Q = W_K = W_V = I
    out = multihead.attention(q, q, q, is_causal=causal)          # [B, H, T, d_k]
    keep = torch.ones(T, T, dtype=torch.bool).tril() if causal else None
    weights = softmax(q @ q.transpose(-2, -1) / math.sqrt(dk), mask=keep)   # [B, H, T, T]
    concat = out.transpose(1, 2).reshape(B, T, D)      # transpose first, then merge heads
    return {"heads": [{"inputs": plain(q[0, h]), "weights": plain(weights[0, h]), "output": plain(out[0, h])}
                      for h in range(H)], "concat": plain(concat[0]), "scale": 1 / math.sqrt(dk)}


def kv_fraction(heads=32, kv_heads=8, layers=32, head_dim=128, tokens=4096, dtype="fp16") -> dict:
    """KV cache of MHA, this GQA and MQA, each the planner's report (`multihead plan --json`) with those heads."""
    from multihead import planner
    from multihead.planner.request import PlanRequest

    H = _check(heads, "heads", 1, 1024, integer=True)
    kv = _check(kv_heads, "kv_heads", 1, H, integer=True)
    if H % kv:
        raise ValueError(f"kv_heads: H_kv must divide H = {H}, got {kv}")
    base = {"params": 1e9, "layers": _check(layers, "layers", 1, 1024, integer=True), "heads": H,
            "head_dim": _check(head_dim, "head_dim", 1, 1024, integer=True),
            "tokens": _check(tokens, "tokens", 1, 10_000_000, integer=True), "kv_dtype": dtype,
            "gpu_memory_gb": 80, "effective_tflops": 100, "bandwidth_tbps": 2}
    rows = []
    for name, k in (("MHA", H), (f"GQA-{kv}", kv), ("MQA", 1)):
        p = planner.report(PlanRequest(**base, kv_heads=k))
        rows.append({"name": name, "kv_heads": k, "kv_cache_bytes_per_token": p["kv_cache_bytes_per_token"],
                     "kv_cache_bytes": p["kv_cache_bytes"]})
    mha = rows[0]["kv_cache_bytes_per_token"]
    for r in rows:
        r["fraction_of_mha"] = r["kv_cache_bytes_per_token"] / mha
    return {"rows": rows, "query_heads_per_kv_head": H // kv}
