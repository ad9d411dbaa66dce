"""What the commands that measure this machine share: the --threads / --clock options, and
writing their outputs so that a failing one never loses the measurement."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Callable

from multihead.cli import _args as A

PLOT_FILE = A.output_file(suffixes=(".png", ".svg", ".pdf"))


def add_timing_args(p: argparse.ArgumentParser, threads_help: str, clock_default: str | None = "wall") -> None:
    p.add_argument("--threads", type=A.int_range(1, A.MAX_THREADS), default=None, metavar="N", help=threads_help)
    p.add_argument("--clock", choices=("wall", "cpu"), default=clock_default,
                   help="wall: elapsed time; cpu: the process's CPU time, meaningful only with --threads 1, which "
                        "other processes competing for the cores do not inflate"
                        + (f" (default {clock_default})" if clock_default else ""))


def check_timing_args(args) -> None:
    """CPU time over several threads would sum them: --clock cpu needs --threads 1."""
    if args.clock == "cpu" and args.threads != 1:
        raise ValueError("--clock: 'cpu' sums the CPU time of every thread; it needs --threads 1")


def write_outputs(outputs: list[tuple[str, Path | None, Callable[[Path], object]]]) -> list[str]:
    """Write every requested output (flag, path, writer), in order, the measurement's own record
    (JSON) first. One that fails does not stop the others: whatever was measured is kept. Returns
    the paths written; raises ValueError naming each flag that failed, after trying them all."""
    written, failed = [], []
    for flag, path, writer in outputs:
        if path is None:
            continue
        try:
            writer(path)
            written.append(str(path))
        except (OSError, ValueError) as err:
            failed.append(f"{flag} {str(path)!r}: {getattr(err, 'strerror', None) or err}")
    if failed:
        raise ValueError("could not write " + "; ".join(failed) + (f" (written: {', '.join(written)})" if written else ""))
    return written
