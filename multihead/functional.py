"""multihead.attention: exact scaled-dot-product attention with MHA / GQA / MQA and three backends.

This module validates the arguments, normalizes the mask, chooses a backend and casts the result
back; the arithmetic lives in multihead/kernels/ (one file per backend, registered in
multihead.kernels.BACKENDS).
"""
from __future__ import annotations

import contextlib
import contextvars
import math
import numbers
from typing import Iterator

import torch
from torch import Tensor

from multihead._env import env_int
from multihead.cost.time.cpu_profile import AUTO_REFERENCE_BYTES, DECODE_MAX_TQ, DECODE_MIN_TK, auto_backend
from multihead.cost.counts.formulas import score_matrix_bytes
from multihead.kernels import BACKENDS, fast_decode, fast_native, window
from multihead.kernels.mods import ScoreMods
from multihead.softmax_ops import compute_dtype

__all__ = ["attention", "choose_backend", "score_mods", "score_limit", "max_score_bytes", "normalize_mask",
           "check_score_limit", "MAX_SCORE_BYTES", "AUTO_REFERENCE_BYTES", "DECODE_MAX_TQ", "DECODE_MIN_TK"]

# The reference backend refuses to materialize a score matrix larger than this (bytes, in the
# compute dtype). It is the default, read once at import (2 GiB, or the environment variable
# MULTIHEAD_MAX_SCORE_BYTES: configuration, not an override). The one way to change the limit is
# `with score_limit(n):`, which the caller owns and which is local to its thread / async task;
# max_score_bytes() reads the private copy below, so assigning MAX_SCORE_BYTES changes nothing.
MAX_SCORE_BYTES: int = env_int("MULTIHEAD_MAX_SCORE_BYTES", 2 * 1024**3)   # ValueError naming it if bad
_DEFAULT_SCORE_LIMIT = MAX_SCORE_BYTES
_score_limit: contextvars.ContextVar[int | None] = contextvars.ContextVar("score_limit", default=None)

# backend="auto": few queries -> fast_decode; a small score matrix -> reference (one big matmul is
# fastest when it fits in cache-friendly memory); anything else -> fast_prefill (the tuned forms of
# decode and tiled, measured by `multihead bench`). fast_decode's C kernel beats reference at every
# cache length (one query, 9/3 and 32/8 heads, Tk = 16-1024: 52-400 us against 150-900 us); without
# it, fast_decode's torch-op path only pays off from DECODE_MIN_TK keys.
# (the rule and its three constants: cost/cpu_profile.auto_backend, so the CPU time model predicts it)

_FLOAT_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)

# Kernels that apply window / softcap / ALiBi themselves (the ``mods`` keyword). Any other kernel
# gets a window from kernels/window.py (a mask is all a window needs); softcap and ALiBi, which
# change the scores inside a kernel, are handed to the plain kernel of the same family.
MODS_KERNELS = {"reference", "tiled", "decode"}
MODS_FALLBACK = {"fast_prefill": "tiled", "fast_decode": "decode"}


@torch.compiler.assume_constant_result
def max_score_bytes() -> int:
    """The reference backend's current limit: the innermost score_limit(), else the default
    (MAX_SCORE_BYTES as read at import). Under torch.compile it is read once, while tracing, as a
    constant of the graph (dynamo cannot trace ContextVar.get: a graph break, an error with
    fullgraph=True): a compiled call keeps the limit that held when it was compiled."""
    value = _score_limit.get()
    return _DEFAULT_SCORE_LIMIT if value is None else value


@contextlib.contextmanager
def score_limit(nbytes: int) -> Iterator[None]:
    """Temporarily set the reference backend's score-matrix limit (bytes), e.g. in a test."""
    if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 0:
        raise ValueError(f"nbytes: expected an integer >= 0, got {nbytes!r}")
    token = _score_limit.set(nbytes)
    try:
        yield
    finally:
        _score_limit.reset(token)


def choose_backend(B: int, H: int, Tq: int, Tk: int, dtype: torch.dtype = torch.float32) -> str:
    """The backend "auto" resolves to for these sizes (see DECODE_MAX_TQ, AUTO_REFERENCE_BYTES):
    never one that max_score_bytes() would refuse (reference only within both limits)."""
    return auto_backend(B, H, Tq, Tk, compute_dtype(dtype).itemsize, fast_native.available(),
                        max_score_bytes())   # the one rule


# The backends that hold all B*H*Tq*Tk scores at once, so max_score_bytes() bounds them.
SCORE_BACKENDS = ("reference", "decode")


def check_score_limit(name: str, B: int, H: int, Tq: int, Tk: int, dtype: torch.dtype) -> None:
    """Refuse, naming ``backend``, a reference / decode call whose scores exceed max_score_bytes()."""
    if name not in SCORE_BACKENDS:
        return
    need = score_matrix_bytes(B, H, Tq, Tk, compute_dtype(dtype).itemsize)
    limit = max_score_bytes()
    if need > limit:
        raise ValueError(
            f"backend: {name!r} would materialize a [B, H, Tq, Tk] = [{B}, {H}, {Tq}, {Tk}] score "
            f"matrix of {need:,.0f} bytes ({need / 1e9:.2f} GB), over the limit of {limit:,} bytes "
            f"(raise it with multihead.functional.score_limit(n), or its default with the environment "
            f"variable MULTIHEAD_MAX_SCORE_BYTES); "
            f"use backend='tiled', whose memory grows with T, not T^2")


def check_scale(scale, d: int) -> float:
    """``scale`` as a float: None -> 1/sqrt(d); any finite real number (Python or NumPy, as SDPA
    takes); a bool, a tensor, a string or a non-finite number is a ValueError naming it."""
    if scale is None:
        return 1.0 / math.sqrt(d)
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real) or not math.isfinite(scale):
        raise ValueError(f"scale: expected a finite number, got {scale!r}")
    return float(scale)


def check_flag(name: str, value) -> None:
    """is_causal / return_lse: exactly True or False (a truthy string is not a flag)."""
    if not isinstance(value, bool):
        raise ValueError(f"{name}: expected True or False, got {value!r}")


def _check_qkv(q: Tensor, k: Tensor, v: Tensor) -> None:
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, Tensor):
            raise ValueError(f"{name}: expected a torch.Tensor, got {type(t).__name__}")
        if t.dim() != 4:
            layout = "[B, H, Tq, d]" if name == "q" else "[B, H_kv, Tk, d]"
            raise ValueError(f"{name}: expected 4 dims {layout}, got shape {tuple(t.shape)}")
        if t.dtype not in _FLOAT_DTYPES:
            raise ValueError(f"{name}: expected dtype float16, bfloat16, float32 or float64, got {t.dtype}")
    for name, t in (("k", k), ("v", v)):
        if t.dtype != q.dtype:
            raise ValueError(f"{name}: dtype {t.dtype} does not match q's dtype {q.dtype}")
        if t.device != q.device:
            raise ValueError(f"{name}: device {t.device} does not match q's device {q.device}")
    B, H, Tq, d = q.shape
    _, H_kv, Tk, d_k = k.shape
    if B == 0 or H == 0 or d == 0:
        raise ValueError(f"q: expected B, H and d >= 1, got shape {tuple(q.shape)}")
    if Tq == 0:
        raise ValueError(f"q: expected Tq >= 1 queries, got shape {tuple(q.shape)} (T=0)")
    if Tk == 0:
        raise ValueError(f"k: expected Tk >= 1 keys, got shape {tuple(k.shape)} (T=0)")
    if k.shape[0] != B:
        raise ValueError(f"k: batch {k.shape[0]} does not match q's batch {B}")
    if H_kv == 0 or H % H_kv:
        raise ValueError(f"k: q's H={H} heads must be a multiple of k's H_kv={H_kv} heads")
    if d_k != d:
        raise ValueError(f"k: head dim d={d_k} does not match q's d={d}")
    if v.shape[:3] != k.shape[:3] or v.shape[3] == 0:
        raise ValueError(f"v: expected shape [B, H_kv, Tk, d_v] = {tuple(k.shape[:3])} + (d_v,), "
                         f"got {tuple(v.shape)}")


def _window_side(value, side: str) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < -1:
        raise ValueError(f"window_size: expected (left, right) integers >= -1 (-1 = unbounded), got {side}={value!r}")
    return None if value == -1 else value


def score_mods(q: Tensor, window_size=(-1, -1), softcap: float = 0.0,
               alibi_slopes: Tensor | None = None, batch: int | None = None) -> ScoreMods:
    """Validate flash-attention's window_size / softcap / alibi_slopes into a ScoreMods.

    window_size (left, right): -1 = unbounded; softcap: 0 = off, else > 0; alibi_slopes: [H] or
    [B, H] float, expanded to [B, H] fp32 (``batch`` overrides q's B, for packed varlen input).
    """
    if not isinstance(window_size, (tuple, list)) or len(window_size) != 2:
        raise ValueError(f"window_size: expected (left, right), got {window_size!r}")
    left, right = (_window_side(x, side) for x, side in zip(window_size, ("left", "right")))
    if isinstance(softcap, bool) or not isinstance(softcap, (int, float)) or not (
            math.isfinite(softcap) and softcap >= 0):
        raise ValueError(f"softcap: expected a finite number >= 0 (0 = off), got {softcap!r}")
    slopes = None
    if alibi_slopes is not None:
        B = q.shape[0] if batch is None else batch
        H = q.shape[1] if batch is None else q.shape[-2]
        if not isinstance(alibi_slopes, Tensor) or not alibi_slopes.is_floating_point() or \
                tuple(alibi_slopes.shape) not in ((H,), (B, H)):
            got = tuple(alibi_slopes.shape) if isinstance(alibi_slopes, Tensor) else type(alibi_slopes).__name__
            raise ValueError(f"alibi_slopes: expected a float tensor of shape [H] = [{H}] or [B, H] = [{B}, {H}], got {got}")
        if alibi_slopes.device != q.device:
            raise ValueError(f"alibi_slopes: device {alibi_slopes.device} does not match q's device {q.device}")
        slopes = alibi_slopes.to(compute_dtype(q.dtype)).expand(B, H)
    return ScoreMods(left, right, float(softcap), slopes)


def normalize_mask(attn_mask: Tensor | None, q: Tensor, k: Tensor) -> Tensor | None:
    """Validate ``attn_mask`` and return it as 4 dims broadcastable to [B, H, Tq, Tk] (not expanded):
    bool stays bool (True = attend), a float mask is cast to the compute dtype (it is added)."""
    if attn_mask is None:
        return None
    if not isinstance(attn_mask, Tensor):
        raise ValueError(f"attn_mask: expected a bool or float tensor, got {type(attn_mask).__name__}")
    if attn_mask.dtype != torch.bool and not attn_mask.is_floating_point():
        raise ValueError(f"attn_mask: expected dtype bool (True = attend) or a float dtype (added to the "
                         f"scores), got {attn_mask.dtype}")
    if attn_mask.device != q.device:
        raise ValueError(f"attn_mask: device {attn_mask.device} does not match q's device {q.device}")
    target = (q.shape[0], q.shape[1], q.shape[2], k.shape[2])
    try:
        ok = attn_mask.dim() <= 4 and torch.broadcast_shapes(attn_mask.shape, target) == target
    except RuntimeError:
        ok = False
    if not ok:
        raise ValueError(f"attn_mask: shape {tuple(attn_mask.shape)} is not broadcastable to "
                         f"[B, H, Tq, Tk] = {list(target)}")
    mask = attn_mask.reshape((1,) * (4 - attn_mask.dim()) + tuple(attn_mask.shape))
    if mask.dtype != torch.bool:
        mask = mask.to(compute_dtype(q.dtype))
    return mask


def attention(q: Tensor, k: Tensor, v: Tensor, attn_mask: Tensor | None = None, *, is_causal: bool = False,
              scale: float | None = None, window_size: tuple[int, int] = (-1, -1), softcap: float = 0.0,
              alibi_slopes: Tensor | None = None, return_lse: bool = False,
              backend: str = "auto") -> Tensor | tuple[Tensor, Tensor]:
    """softmax(q k^T * scale + mask) v, exactly, for MHA, GQA and MQA.

    Shapes (PyTorch's scaled_dot_product_attention conventions):
        q          [B, H, Tq, d]
        k          [B, H_kv, Tk, d]     H a multiple of H_kv: MHA H_kv = H, GQA, MQA H_kv = 1.
                                        Query head h reads KV head h // (H / H_kv) (as
                                        repeat_interleave would), but K/V are never repeated.
        v          [B, H_kv, Tk, d_v]   (d_v may differ from d)
        attn_mask  broadcastable to [B, H, Tq, Tk]: bool (True = attend) or float (added to the
                   scaled scores; -inf drops a key).
        returns    out [B, H, Tq, d_v] in q's dtype; with return_lse, (out, lse) where lse
                   [B, H, Tq] is each row's log-sum-exp of the scaled, masked scores, float32
                   (float64 for float64 inputs), -inf for a row that sees no key.

    is_causal aligns the causal mask bottom-right: query i sees key j iff j <= i + (Tk - Tq), so
    the last query sees every key, which is what a decode step over a KV cache needs. Example,
    Tq = 2 new tokens after 3 cached (Tk = 5); x = attended:

                  key j:  0 1 2 3 4
        query 0 (pos 3):  x x x x .
        query 1 (pos 4):  x x x x x

    (SDPA aligns top-left instead: its query 0 would see key 0 only.) With Tq > Tk the first
    Tq - Tk queries see nothing. When both attn_mask and is_causal are given they are combined:
    a pair is attended only if the mask allows it AND it is causal.

    Score modifications (flash-attention's names; multihead.kernels.mods), in this order:
        softcap       c > 0: scaled scores s -> c * tanh(s / c) (Gemma-2); 0 = off.
        alibi_slopes  [H] or [B, H]: s -> s - slope[b, h] * |p_i - j|, p_i = i + Tk - Tq.
        window_size   (left, right): query i sees key j iff p_i - left <= j <= p_i + right;
                      -1 = unbounded. With is_causal, right is 0. Work is O(Tq * window): key
                      blocks outside the band are never computed.

    A query row that sees no key (all masked) returns zeros, never NaN. scale defaults to
    1/sqrt(d). fp16/bf16 inputs are computed with fp32 arithmetic throughout and rounded once at
    the end.

    backend: "reference" (materializes the [B, H, Tq, Tk] scores; refuses above
    max_score_bytes()), "tiled" (online softmax over key blocks, O(Tq*d + block^2) memory),
    "decode" (split the keys, merge by lse; for small Tq), any other name in
    multihead.kernels.BACKENDS, or "auto" (choose_backend). The fast kernels have no softcap or
    ALiBi: a call with them runs on tiled (for fast_prefill) or decode (for fast_decode); a
    window alone runs on the fast kernel one band slice at a time (kernels/window.py).
    """
    fast = _decode_fast_path(q, k, v, attn_mask, is_causal, scale, window_size, softcap, alibi_slopes,
                             backend, return_lse)
    if fast is not None:
        out, lse = fast
        if out.dtype != q.dtype:
            out = out.to(q.dtype)
        return (out, lse) if return_lse else out
    _check_qkv(q, k, v)
    check_flag("is_causal", is_causal)
    check_flag("return_lse", return_lse)
    scale = check_scale(scale, q.shape[3])
    mask = normalize_mask(attn_mask, q, k)
    mods = score_mods(q, window_size, softcap, alibi_slopes)
    out, lse = _run(q, k, v, mask, is_causal, scale, mods, backend)
    out = out.to(q.dtype)
    return (out, lse) if return_lse else out


def _decode_fast_path(q, k, v, attn_mask, is_causal, scale, window_size, softcap, alibi_slopes,
                      backend, return_lse) -> tuple[Tensor, Tensor | None] | None:
    """A decode step of a shape already validated (kernels/fast_decode.fast_call), or None.

    Why: a generation loop calls attention once per layer and token with the same shapes; at a
    few hundred cached tokens the C kernel takes microseconds and the checks below took ~40 us
    per call. Only the plainest call qualifies (no mask, window, softcap or ALiBi); everything
    else, and every first call of a shape, takes the full path."""
    if attn_mask is not None or alibi_slopes is not None or (backend != "auto" and backend != "fast_decode"):
        return None
    if type(softcap) not in (int, float) or softcap != 0 or window_size != (-1, -1):
        return None
    if type(is_causal) is not bool or type(return_lse) is not bool or not (scale is None or type(scale) is float):
        return None
    return fast_decode.fast_call(q, k, v, is_causal, scale, bool(return_lse))


def _run(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, is_causal: bool, scale: float,
         mods: ScoreMods, backend: str) -> tuple[Tensor, Tensor]:
    """Choose the kernel for validated arguments and run it; (out, lse) in the compute dtype."""
    B, H, Tq, _ = q.shape
    Tk = k.shape[2]
    if not isinstance(backend, str) or (backend != "auto" and backend not in BACKENDS):
        raise ValueError(f"backend: expected 'auto' or one of {sorted(BACKENDS)}, got {backend!r}")
    name = choose_backend(B, H, Tq, Tk, q.dtype) if backend == "auto" else backend
    check_score_limit(name, B, H, Tq, Tk, q.dtype)      # reference / decode hold all B*H*Tq*Tk scores

    if not mods.active:
        if name == "fast_decode" and mask is None:      # later calls of this shape skip the checks
            fast_decode.remember(q, k, v, is_causal, scale)
        return BACKENDS[name](q, k, v, mask, is_causal=is_causal, scale=scale)
    if name in MODS_KERNELS:
        return BACKENDS[name](q, k, v, mask, is_causal=is_causal, scale=scale, mods=mods)
    grad = torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in (q, k, v, mask))
    if mods.score_only and not grad:      # a window alone: the fast kernel on band slices
        return window.attention(BACKENDS[name], q, k, v, mask, is_causal=is_causal, scale=scale, mods=mods)
    name = MODS_FALLBACK.get(name, "tiled")
    if name in SCORE_BACKENDS and score_matrix_bytes(B, H, Tq, Tk, compute_dtype(q.dtype).itemsize) > max_score_bytes():
        name = "tiled"               # our fallback (fast_decode's), never beyond the score limit
    return BACKENDS[name](q, k, v, mask, is_causal=is_causal, scale=scale, mods=mods)
