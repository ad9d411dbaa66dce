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


def holds_the_gil_on_long_keys(q, k, v, attn_mask=None, is_causal=False, scale=None):
    if k.shape[2] > 1000:                             # a C call that never releases the GIL: the child's
        import ctypes                                 # own watchdog thread cannot run (issue 26 item 9)
        ctypes.PyDLL(None).sleep(3600)                # PyDLL keeps the GIL held during the call
    return F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, is_causal=is_causal, scale=scale)


def forks_a_helper_and_exits(q, k, v, attn_mask=None, is_causal=False, scale=None):
    if k.shape[2] > 100:
        if os.fork() == 0:                            # the helper inherits every open descriptor
            time.sleep(3600)
            os._exit(0)
        os._exit(3)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, is_causal=is_causal, scale=scale)


def returns_a_list_of_ints(q, k, v, attn_mask=None, is_causal=False, scale=None):
    return [1, 2, 3]                                  # was reported as "returned int" (issue 26 item 18)


def exits_on_first_call(q, k, v, attn_mask=None, is_causal=False, scale=None):
    sys.exit(0)                                       # the checker's very first call (audit finding 2)


def hangs_on_first_call(q, k, v, attn_mask=None, is_causal=False, scale=None):
    while True:                                       # releases the GIL: the child's own watchdog answers
        time.sleep(0.05)
