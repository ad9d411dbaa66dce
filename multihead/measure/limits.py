"""The machine's physical limits, measured in this process, and what the numbers were measured on.

Every performance claim in multihead is a ratio against these (or against torch SDPA) measured in
the same run, because absolute timings on a shared 2-core machine are noise. Each limit is a
``Timing`` of a call of known work, reported as a rate (``Timing.rate``).
"""
from __future__ import annotations

import os
import platform
from pathlib import Path

import torch

from multihead.kernels._common import last_level_cache_bytes  # noqa: F401  (re-exported)
from multihead.measure.timing import time_call


def measure_matmul_flops(dtype: torch.dtype = torch.float32, n: int = 2048, repeats: int = 5,
                         clock: str = "wall") -> dict:
    """FLOP/s of an n x n x n matmul in ``dtype`` (2 n^3 FLOPs per call): best, median, samples, spread."""
    a = torch.randn(n, n).to(dtype)
    b = torch.randn(n, n).to(dtype)
    return time_call(lambda: torch.mm(a, b), repeats=repeats, clock=clock).rate(2.0 * n ** 3)


def measure_read_bandwidth(nbytes: int = 1 << 30, repeats: int = 5, clock: str = "wall") -> dict:
    """Bytes/s of a streaming read: the sum of an fp32 tensor of ``nbytes`` (1 GiB by default)."""
    x = torch.ones(nbytes // 4, dtype=torch.float32)
    return time_call(lambda: x.sum(), repeats=repeats, clock=clock).rate(float(x.numel() * 4))


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def memory_bytes() -> float:
    """Physical memory of this machine (0 when the OS does not say)."""
    try:
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 0.0


def load_average() -> list[float] | None:
    """1, 5 and 15 minute load averages (other processes competing for the cores)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def machine_description() -> dict:
    """What the numbers were measured on."""
    return {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpu": cpu_name(),
        "cpu_count": os.cpu_count(),
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "last_level_cache_bytes": last_level_cache_bytes(),
    }
