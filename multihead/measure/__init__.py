"""Measuring this machine: one shape type, one timing loop, the limits, the fits, and the three
commands built on them.

    shapes.py     AttnShape: one attention call (q [B, H, Tq, d], k/v [B, H_kv, Tk, d]) and its work
    timing.py     the one timing loop (interleaved, best / median / spread = median / best - 1)
    limits.py     matmul FLOP/s, streaming-read bytes/s, and what the machine is
    memory.py     peak extra memory of one call, measured in a fresh process (python -m ...)
    fit.py        the time model's terms from measured points (scipy NNLS)
    calibrate.py  `multihead calibrate`: the grid, the fit, the device profile
    validate.py   `multihead validate`: planner predictions against held-out measurements
    benchmark.py  `multihead bench`: throughput against the limits and torch SDPA
    reports.py    their tables (markdown and the CLI's rich tables); plots.py their figures
"""
