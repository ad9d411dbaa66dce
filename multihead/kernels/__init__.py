"""Attention kernels and the backend registry that multihead.attention dispatches on.

Every kernel has one signature (``Kernel``)::

    kernel(q, k, v, mask, *, is_causal: bool, scale: float) -> (out, lse)

    q     [B, H, Tq, d]      any float dtype; k [B, H_kv, Tk, d], v [B, H_kv, Tk, d_v], same
                             dtype and device as q; H % H_kv == 0 (query head h reads KV head
                             h // (H / H_kv)); Tq, Tk >= 1. Tensors may be non-contiguous views
                             (e.g. a KVCache slice).
    mask  None, or a 4-dim tensor broadcastable to [B, H, Tq, Tk] (not expanded): bool
                             (True = attend) or float in the compute dtype, added to the scores.
    is_causal                bottom-right aligned: query i sees key j iff j <= i + Tk - Tq;
                             combined with ``mask`` (both must allow a pair).
    scale                    multiplies Q K^T.
    out   [B, H, Tq, d_v]    in the compute dtype (fp32 for fp16/bf16/fp32 inputs, fp64 for
                             fp64); rows with no visible key are 0.
    lse   [B, H, Tq]         log-sum-exp of each row's scaled, masked scores; fp32 (fp64 for
                             fp64 inputs); -inf for rows with no visible key.

The caller (multihead.functional.attention) has already validated shapes, dtypes and devices,
normalized the mask and chosen the scale; it casts ``out`` back to the input dtype. To add a
backend, write kernels/<name>.py with such a function and add one line to BACKENDS.
"""
from __future__ import annotations

from typing import Callable

from torch import Tensor

from multihead.kernels import decode, fast_decode, fast_prefill, reference, tiled

Kernel = Callable[..., "tuple[Tensor, Tensor]"]

# name -> kernel. "auto" is not a kernel: functional.choose_backend resolves it to one of these.
BACKENDS: dict[str, Kernel] = {
    "reference": reference.attention,   # materialized [B, H, Tq, Tk] scores; exact FLOP count
    "tiled": tiled.attention,           # online softmax over key blocks; O(Tq*d + block^2) memory
    "decode": decode.attention,         # split-K over the key sequence, merged by lse; small Tq
    "fast_decode": fast_decode.attention,    # decode tuned for this CPU: K/V streamed once, chunked upcast
    "fast_prefill": fast_prefill.attention,  # tiled tuned for this CPU: GEMM-sized blocks, in-place softmax
}

__all__ = ["BACKENDS", "Kernel"]
