"""The --threads / --clock options shared by the commands that measure this machine."""
from __future__ import annotations

import argparse


def add_timing_args(p: argparse.ArgumentParser, threads_help: str) -> None:
    p.add_argument("--threads", type=int, default=None, metavar="N", help=threads_help)
    p.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                   help="wall: elapsed time (default); cpu: the process's CPU time, meaningful only with "
                        "--threads 1, which other processes competing for the cores do not inflate")


def check_timing_args(args) -> None:
    """Reject a thread count below 1, and CPU time over several threads (it would sum them)."""
    if args.threads is not None and args.threads < 1:
        raise ValueError(f"--threads: expected an integer >= 1, got {args.threads}")
    if args.clock == "cpu" and args.threads != 1:
        raise ValueError("--clock: 'cpu' sums the CPU time of every thread; it needs --threads 1")
