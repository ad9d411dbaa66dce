"""A target module whose import never finishes (issue 26 item 9: `multihead check` waited a fixed
120 s whatever --timeout said)."""
import time

while True:
    time.sleep(0.05)


def attention(q, k, v, attn_mask=None, is_causal=False, scale=None):   # never reached
    raise AssertionError
