"""Peak memory a causal prefill call adds on top of its inputs, measured in a fresh process.

``peak_extra_memory`` runs this module as ``python -m multihead.measure.memory ...``: the child
allocates q, k, v, resets the kernel's peak-RSS counter (VmHWM, via /proc/self/clear_refs), runs
the call and reads the peak. extra = VmHWM - VmRSS before the call (it includes the output).
A fresh process, because a parent's allocator caches and earlier peaks would hide the call's own.
Linux only (/proc).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

from multihead.cost.counts.formulas import score_matrix_bytes
from multihead.measure.shapes import AttnShape


def _status_bytes(key: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"/proc/self/status has no {key}")


def measure_in_this_process(shape: AttnShape, backend: str, threads: int | None = None) -> dict:
    """The child's work: RSS before the call, the peak during it, whether the output is finite."""
    import torch

    from multihead.functional import attention
    if threads:
        torch.set_num_threads(threads)        # this process exists for this one measurement
    # A warm-up call on a small shape first: one-time costs (loading the C kernel, imports, starting
    # worker threads and their allocator arenas) belong to the process, not to the call measured.
    small = AttnShape.prefill(shape.heads, shape.kv_heads, shape.head_dim, min(shape.tq, 256), shape.dtype, shape.causal)
    attention(*small.inputs(seed=1), is_causal=shape.causal, backend=backend)
    q, k, v = shape.inputs(seed=0)
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")                                    # reset the peak to the current RSS
    before = _status_bytes("VmRSS:")
    out = attention(q, k, v, is_causal=shape.causal, backend=backend)
    return {"before": before, "peak": _status_bytes("VmHWM:"), "finite": bool(torch.isfinite(out).all()),
            "threads": torch.get_num_threads()}


def peak_extra_memory(backend: str, T: int, H: int, H_kv: int, d: int = 128, dtype: str = "fp32",
                      threads: int | None = None) -> dict:
    """Peak extra memory of a causal prefill of T tokens on ``backend``, measured in a child process
    (with ``threads`` torch threads; None: torch's default); returned with the bytes of q, k, v and
    out (the ratio extra / those is what the target bounds)."""
    shape = AttnShape.prefill(H, H_kv, d, T, dtype)
    t0 = time.perf_counter()
    argv = [sys.executable, "-m", "multihead.measure.memory", backend, *map(str, (T, H, H_kv, d)), dtype,
            "--threads", str(threads or 0)]
    res = subprocess.run(argv, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise RuntimeError(f"memory measurement of {backend} failed: {res.stderr.strip()[-500:]}")
    r = json.loads(res.stdout.strip().splitlines()[-1])
    extra = r["peak"] - r["before"]
    return {"backend": backend, "shape": shape.to_dict(), "label": shape.label(), "threads": r["threads"],
            "extra_bytes": extra, "qkvo_bytes": shape.io_bytes, "ratio": extra / shape.io_bytes,
            "score_matrix_bytes": score_matrix_bytes(1, H, T, T, 4), "finite": r["finite"],
            "seconds": time.perf_counter() - t0}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m multihead.measure.memory", description=__doc__.split("\n")[0])
    p.add_argument("backend")
    for name in ("T", "H", "H_kv", "d"):
        p.add_argument(name, type=int)
    p.add_argument("dtype")
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    a = p.parse_args(argv)
    shape = AttnShape.prefill(a.H, a.H_kv, a.d, a.T, a.dtype)
    print(json.dumps(measure_in_this_process(shape, a.backend, a.threads or None)))


if __name__ == "__main__":
    main()
