"""Targets that misbehave as processes, not as attention, for the checker's isolation tests:

    multihead check tests/hostile_targets.py:exits_zero      -> exit 1, `exit` finding
"""
from __future__ import annotations

import os
import sys
import time

import torch.nn.functional as F


def exits_zero(q, k, v, attn_mask=None, is_causal=False, scale=None):
    if k.shape[2] > 100:
        sys.exit(0)                                   # a CI job would read status 0 as a pass
    return F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, is_causal=is_causal, scale=scale)


def os_exits_zero(q, k, v, attn_mask=None, is_causal=False, scale=None):
    if k.shape[2] > 100:
        os._exit(0)                                   # no exception, no cleanup: only a child process survives it
    return F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, is_causal=is_causal, scale=scale)


def hangs_on_long_keys(q, k, v, attn_mask=None, is_causal=False, scale=None):
    while k.shape[2] > 1000:                          # a block loop that never advances
        time.sleep(0.05)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, is_causal=is_causal, scale=scale)


def scales_q_in_place(q, k, v, attn_mask=None, is_causal=False, scale=None):
    s = q.shape[-1] ** -0.5 if scale is None else scale
    q.mul_(s)                                         # writes into the caller's tensor
    return F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, is_causal=is_causal, scale=1.0)


def crashes_on_odd_lengths(q, k, v, attn_mask=None, is_causal=False, scale=None):
    if k.shape[2] > 64 and k.shape[2] % 64:
        return q.new_zeros(1)[5]                      # IndexError, as an unguarded tail block would
    return F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, is_causal=is_causal, scale=scale)
