"""Decode attention as its own kernel: its roofline adds to the weight GEMMs', it does not hide under them.

A decode step runs, per layer, the projection GEMMs (read the weights, ``2 * tokens`` FLOPs per
weight) and then the attention kernel (read every sequence's KV cache, QK^T and PV on it), one after
the other on the stream. The session-5 model charged the step max(all FLOPs / F, (weights + KV) / BW):
at a large batch the GEMMs turn compute-bound while the attention kernel stays memory-bound, and the
max let the KV read hide under the GEMMs' arithmetic (and, with MLA, the attention FLOPs under the
weight read). With this term the step is

    max(linear FLOPs / F, weights / BW) + max(attention FLOPs / F16, KV / BW)

per GPU (eta_f and eta_m the fitted efficiencies of both kernels, no new constant). The attention
kernel's own arithmetic intensity is what decides which side of its roofline it is on:

    FLOPs / byte = (H / tp) * pair_flops / (bytes of one token's KV on a GPU)

- GQA: pair_flops = 4 d, a token's KV = 2 * (H_kv / tp) * d * bytes, so intensity = 2 G / bytes with
  G = H / H_kv the query heads per KV head: bandwidth-bound for every G the models use (G <= 16 gives
  at most 16 FLOP/B in bf16, far below a GPU's F / BW of 150-600).
- MLA, absorbed form (how engines decode): every head of the GPU meets the same latent of
  kv_lora_rank + qk_rope_head_dim elements (the rope part included), pair_flops =
  2 (kv_lora_rank + rope) + 2 kv_lora_rank, and the latent is replicated on every GPU of the TP group:
  intensity = (H / tp) * 2176 / (576 * 2) = 1.9 H / tp FLOP/B for DeepSeek-V3's shape, 242 at TP 1
  (compute-bound on an H100: the absorbed kernel is a GEMM over the latent), 30 at TP 8.
- Context length scales both sides alike; batch scales both sides alike. What batch changes is the
  GEMMs' side: the attention time no longer vanishes once their FLOPs exceed the weight read.

``KERNELS = "merged"`` is session 5's single max. Session 6 refitted both and compared them by 5-fold
cross-validation by document on the fitted documents (reports/gpu-time/session6_variant_cv.py): out-of-
document median |error| separate / merged: all 13.2% / 13.6%, dense 10.2% / 9.7%, MoE 18.9% / 18.6%, MLA
15.2% / 13.8%, log-RMS 0.3285 / 0.3284. The training documents do not support the separate kernels (every
class is better merged), so the default stays "merged"; "separate" is kept as the variant it was tested as.
No torch.
"""
from __future__ import annotations

KERNELS = "merged"         # "separate": attention's roofline adds to the GEMMs'; "merged": one max over both


def attention_roofline_s(attn_flops: float, kv_bytes: float, flops_per_s: float, bytes_per_s: float) -> float:
    """Seconds of the decode attention kernel on one GPU: max(FLOPs / F, KV bytes / BW).

    ``attn_flops`` and ``kv_bytes`` per GPU, ``flops_per_s`` and ``bytes_per_s`` the achieved rates
    (peak * efficiency). Zero work is zero time; a rate <= 0 is refused by name."""
    if flops_per_s <= 0 or bytes_per_s <= 0:
        raise ValueError(f"decode attention: rates must be > 0, got flops_per_s={flops_per_s}, bytes_per_s={bytes_per_s}")
    return max(attn_flops / flops_per_s, kv_bytes / bytes_per_s)


def intensity(attn_flops: float, kv_bytes: float) -> float:
    """Arithmetic intensity of the decode attention kernel, FLOPs per KV byte (inf for no bytes)."""
    return attn_flops / kv_bytes if kv_bytes else float("inf")


def split_step(*, linear_s: float, attention_compute_s: float, weight_s: float, kv_s: float) -> tuple[float, float, float]:
    """(compute_s, memory_s, attention_s) of a decode step's Phase: with separate kernels the GEMMs keep
    their own roofline (compute = linear, memory = weights) and the attention kernel's roofline is added
    as ``attention_s``; merged, both FLOPs go to compute, both reads to memory, attention_s = 0."""
    if KERNELS == "merged":
        return linear_s + attention_compute_s, weight_s + kv_s, 0.0
    if KERNELS != "separate":
        raise ValueError(f"decode attention: KERNELS must be 'separate' or 'merged', got {KERNELS!r}")
    return linear_s, weight_s, max(attention_compute_s, kv_s)
