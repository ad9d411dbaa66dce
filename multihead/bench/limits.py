"""The machine's physical limits, measured in this process: matmul throughput and read bandwidth.

Every performance claim in multihead is a ratio against these (or against torch SDPA) measured in
the same run, because absolute timings on a shared 2-core machine are noise.
"""
from __future__ import annotations

import platform
import statistics
import time
from dataclasses import asdict, dataclass

import torch


@dataclass
class Measurement:
    """Repeated measurements of one rate (FLOP/s or bytes/s): best, median and their spread."""
    best: float
    median: float
    samples: list[float]

    @property
    def spread(self) -> float:
        """Relative run-to-run spread: (max - min) / median."""
        return (max(self.samples) - min(self.samples)) / self.median if self.median else 0.0

    def to_dict(self) -> dict:
        return {**asdict(self), "spread": self.spread}


CLOCKS = {
    "wall": time.perf_counter,
    # CPU seconds of this process (all its threads): with torch.set_num_threads(1) that is the
    # work itself, and unlike wall time it does not count the time other processes hold the core.
    "cpu": time.process_time,
}


def clock_fn(clock: str = "wall"):
    if clock not in CLOCKS:
        raise ValueError(f"clock: expected one of {sorted(CLOCKS)}, got {clock!r}")
    return CLOCKS[clock]


def time_call(fn, repeats: int = 5, warmup: int = 1, clock: str = "wall") -> list[float]:
    """Seconds of ``fn()`` for each of ``repeats`` runs after ``warmup`` runs (wall clock, or
    the process's CPU time with clock="cpu")."""
    now = clock_fn(clock)
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t0 = now()
        fn()
        times.append(now() - t0)
    return times


def _rates(work: float, times: list[float]) -> Measurement:
    rates = [work / t for t in times]
    return Measurement(best=max(rates), median=statistics.median(rates), samples=rates)


def measure_matmul_flops(dtype: torch.dtype = torch.float32, n: int = 2048, repeats: int = 5,
                         clock: str = "wall") -> Measurement:
    """FLOP/s of an n x n x n matmul in ``dtype``: 2 n^3 FLOPs per call."""
    a = torch.randn(n, n).to(dtype)
    b = torch.randn(n, n).to(dtype)
    return _rates(2.0 * n ** 3, time_call(lambda: torch.mm(a, b), repeats, clock=clock))


def measure_read_bandwidth(nbytes: int = 1 << 30, repeats: int = 5, clock: str = "wall") -> Measurement:
    """Bytes/s of a streaming read: sum of an fp32 tensor of ``nbytes`` (1 GiB by default)."""
    x = torch.ones(nbytes // 4, dtype=torch.float32)
    return _rates(float(x.numel() * 4), time_call(lambda: x.sum(), repeats, clock=clock))


def machine_description() -> dict:
    """What the numbers were measured on."""
    return {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
    }
