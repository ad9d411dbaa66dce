"""The one timing loop, and what its numbers mean.

A measurement is a list of samples (seconds of one call each, after warm-up). On a shared machine
noise only ever slows a run down, so the **best** sample is what a time model predicts, and

    spread = median / best - 1

is the run-to-run noise of that measurement (0 on a quiet machine; 0.1 = the typical call took
10% longer than the best). Every command that measures (calibrate, validate, bench, the limits)
reports this one spread. Several functions timed together are **interleaved**: each round times
each of them once, so a change in the machine's load hits all of them alike.
"""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Callable, Sequence

CLOCKS = {
    "wall": time.perf_counter,
    # CPU seconds of this process (all its threads): with one torch thread that is the work itself,
    # and unlike wall time it does not count the time other processes hold the core.
    "cpu": time.process_time,
}

# A call whose warm-up took longer than this is timed fewer times (3): a best-of-3 of multi-second
# calls is already stable, and the grid must finish in minutes.
LONG_CALL_S = 2.0


def clock_fn(clock: str = "wall") -> Callable[[], float]:
    if clock not in CLOCKS:
        raise ValueError(f"--clock: expected one of {sorted(CLOCKS)}, got {clock!r}")
    return CLOCKS[clock]


@dataclass
class Timing:
    """Seconds of one function's timed calls."""
    samples: list[float]

    @property
    def best(self) -> float:
        return min(self.samples)

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def spread(self) -> float:
        """median / best - 1: the run-to-run noise (see the module docstring)."""
        return self.median / self.best - 1.0

    def to_dict(self) -> dict:
        return {"best": self.best, "median": self.median, "samples": self.samples, "spread": self.spread}

    def rate(self, work: float) -> dict:
        """The same measurement as a rate (work per second: FLOP/s, bytes/s). Its spread is the
        timing's: best rate / median rate - 1 = median time / best time - 1."""
        rates = [work / t for t in self.samples]
        return {"best": max(rates), "median": statistics.median(rates), "samples": rates, "spread": self.spread}


def time_calls(fns: Sequence[Callable[[], object]], *, repeats: int | Sequence[int] = 5,
               warmup: int | Sequence[int] = 1, min_seconds: float = 0.0, max_repeats: int = 50,
               clock: str = "wall") -> list[Timing]:
    """Time each of ``fns`` interleaved: after its warm-up calls, round after round times each
    function once, until every function has ``repeats`` samples (its own count when a list is
    given; 3 at most for a call whose warm-up took over LONG_CALL_S) and, for a short call, until
    its samples add up to ``min_seconds`` (at most ``max_repeats``)."""
    now = clock_fn(clock)
    n = len(fns)
    want = list(repeats) if isinstance(repeats, Sequence) else [repeats] * n
    warm = list(warmup) if isinstance(warmup, Sequence) else [warmup] * n
    for i, fn in enumerate(fns):
        t0 = now()
        for _ in range(warm[i]):
            fn()
        if warm[i] and (now() - t0) / warm[i] > LONG_CALL_S:
            want[i] = min(want[i], 3)
    samples: list[list[float]] = [[] for _ in fns]

    def wants_more(i: int) -> bool:
        got = samples[i]
        return len(got) < want[i] or (sum(got) < min_seconds and len(got) < max(max_repeats, want[i]))
    while any(wants_more(i) for i in range(n)):
        for i, fn in enumerate(fns):
            if wants_more(i):
                t0 = now()
                fn()
                samples[i].append(now() - t0)
    return [Timing(s) for s in samples]


def time_call(fn: Callable[[], object], **kwargs) -> Timing:
    """``time_calls`` for one function."""
    return time_calls([fn], **kwargs)[0]
