"""Validated argparse types shared by every subcommand: bad input fails at parse time, before
any work, with one line that names the argument (argparse adds "argument --x: " in front).

Usage (in a cli/<command>.py ``register``)::

    from multihead.cli import _args as A

    p.add_argument("--tokens", type=A.int_range(1, A.MAX_TOKENS), metavar="T")
    p.add_argument("--seed", type=A.SEED, default=0)
    p.add_argument("--windows", type=A.POSITIVE_INT)                      # 1 to MAX_COUNT
    p.add_argument("--lr", type=A.float_range(0, 1, lo_open=True))      # finite, in (0, 1]
    p.add_argument("--top-p", type=A.PROBABILITY)                         # (0, 1]
    p.add_argument("--tflops", type=A.POSITIVE_FLOAT)                     # finite, > 0
    p.add_argument("--fractions", type=A.list_of(A.float_range(0, 1, lo_open=True, hi_open=True)))
    p.add_argument("--json", type=A.output_file())                        # writable, checked now
    p.add_argument("--plot", type=A.output_file(suffixes=(".png", ".svg", ".pdf")))
    p.add_argument("--importance", type=A.input_file())                  # exists, regular, readable

Every type raises argparse.ArgumentTypeError, so the message reads e.g.
``multihead demo: error: argument --tokens: expected an integer in [1, 10000000], got '0'`` and the
exit code is 2 (cli.main prints it on one line, without the usage block). Numbers accept the usual
spellings, including an exactly integral ``1e6`` for an integer; inf and nan are refused
everywhere. Paths: an output is refused if its folder is missing, it is a folder or a special file
(/dev/full, a FIFO), or it cannot be written; nothing is created at parse time. An input must be an
existing, readable, regular file (so /dev/null and folders are refused by name).

Sizes that a library call bounds more tightly (by a model's positions, by memory) are checked
again there; these bounds only stop values no machine could run.
"""
from __future__ import annotations

import argparse
import os
import stat
from pathlib import Path
from typing import Callable, Sequence

from multihead import values

__all__ = ["int_range", "float_range", "list_of", "output_file", "input_file", "SEED", "PROBABILITY", "OPEN_FRACTION",
           "POSITIVE_FLOAT", "POSITIVE_INT", "MAX_TOKENS", "MAX_THREADS", "check_output_file", "GPU_MEMORY_GB",
           "EFFECTIVE_TFLOPS", "BANDWIDTH_TBPS", "EFFICIENCY"]

# Upper bounds for "how many" arguments when nothing tighter is known. 10M tokens is 10x the
# longest context any catalog model supports; a thread count beyond 1024 is a typo; a million of
# anything else (windows, rows, sentences) is past what these commands can run in a day.
MAX_TOKENS = 10_000_000
MAX_THREADS = 1024
MAX_COUNT = 1_000_000


def _fail(message: str) -> None:
    raise argparse.ArgumentTypeError(message)


def _named(fn: Callable, name: str) -> Callable:
    fn.__name__ = name          # argparse shows this in some messages
    return fn


def _parse_int(text: str) -> int | None:
    """int('12'), int('1_000') or an exactly integral '1e6' / '2.0'; None if not an integer
    (multihead.values.parse_int: one rule for the CLI and the planner's request)."""
    return values.parse_int(text)


def int_range(lo: int | None = None, hi: int | None = None) -> Callable[[str], int]:
    """An integer in [lo, hi] (either bound may be None): multihead.values.IntRange."""
    check = values.IntRange(lo, hi)

    def parse(text: str) -> int:
        try:
            return check(text)
        except ValueError as err:
            _fail(str(err))
    return _named(parse, "integer")


def float_range(lo: float | None = None, hi: float | None = None, *, lo_open: bool = False,
                hi_open: bool = False) -> Callable[[str], float]:
    """A finite number in [lo, hi] ((lo, ... with lo_open, ..., hi) with hi_open): multihead.values.FloatRange."""
    check = values.FloatRange(lo, hi, lo_open, hi_open)

    def parse(text: str) -> float:
        try:
            return check(text)
        except ValueError as err:
            _fail(str(err))
    return _named(parse, "number")


def list_of(item: Callable[[str], object], *, min_len: int = 1, max_len: int = 1000) -> Callable[[str], list]:
    """A comma-separated list, each item parsed by ``item`` (another type from this module)."""
    def parse(text: str) -> list:
        parts = [p for p in text.split(",")]
        if not min_len <= len(parts) <= max_len or any(not p.strip() for p in parts):
            _fail(f"expected {min_len} to {max_len} comma-separated values, got {text!r}")
        out = []
        for p in parts:
            try:
                out.append(item(p))
            except argparse.ArgumentTypeError as err:
                _fail(f"in {text!r}: {err}")
        return out
    return _named(parse, "list")


POSITIVE_INT = int_range(1, MAX_COUNT)    # "how many" with no tighter bound known: 1 to 1,000,000
SEED = int_range(0, 2**32 - 1)            # numpy's and torch's seeds both take this range
PROBABILITY = float_range(0.0, 1.0, lo_open=True)
OPEN_FRACTION = float_range(0.0, 1.0, lo_open=True, hi_open=True)    # (0, 1): TensorRT-LLM's free-memory fraction
POSITIVE_FLOAT = float_range(0.0, None, lo_open=True)
# GPU figures: the physically sensible ranges of multihead.values (the planner's request uses the same)
GPU_MEMORY_GB = float_range(values.GPU_MEMORY_GB.lo, values.GPU_MEMORY_GB.hi)
EFFECTIVE_TFLOPS = float_range(values.EFFECTIVE_TFLOPS.lo, values.EFFECTIVE_TFLOPS.hi)
BANDWIDTH_TBPS = float_range(values.BANDWIDTH_TBPS.lo, values.BANDWIDTH_TBPS.hi)
EFFICIENCY = float_range(values.EFFICIENCY.lo, values.EFFICIENCY.hi)


def check_output_file(path: str | os.PathLike, suffixes: Sequence[str] | None = None) -> Path:
    """Raise ValueError unless ``path`` can be created or overwritten as a regular file.

    Nothing is created. ``suffixes``: the allowed extensions (case-insensitive), if restricted.
    """
    text = os.fspath(path)
    if not text.strip():
        raise ValueError("expected a file name, got ''")
    p = Path(text).expanduser()
    if suffixes and p.suffix.lower() not in {s.lower() for s in suffixes}:
        raise ValueError(f"expected a file name ending in {' or '.join(suffixes)}, got {text!r}")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise ValueError(f"{text!r}: folder {str(parent)!r} does not exist")
    try:
        st = os.stat(p)
    except FileNotFoundError:
        st = None
    except OSError as err:
        raise ValueError(f"{text!r}: {err.strerror}") from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        kind = "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise ValueError(f"{text!r} is {kind}; expected a file to write")
    if not os.access(p if st is not None else parent, os.W_OK):
        raise ValueError(f"{text!r}: permission denied (cannot write {'it' if st else 'in ' + repr(str(parent))})")
    return p


def output_file(suffixes: Sequence[str] | None = None) -> Callable[[str], Path]:
    """A path to write: checked by check_output_file at parse time; returns a Path."""
    def parse(text: str) -> Path:
        try:
            return check_output_file(text, suffixes)
        except ValueError as err:
            _fail(str(err))
    return _named(parse, "path")


def output_dir() -> Callable[[str], Path]:
    """A folder to write into: an existing writable one, or one that can be made under an existing
    writable folder (checked at parse time; nothing is created until the command writes)."""
    def parse(text: str) -> Path:
        p = Path(text).expanduser()
        if not text.strip() or (p.exists() and not p.is_dir()):
            _fail(f"expected a folder, got {text!r}")
        existing = next(a for a in (p, *p.absolute().parents) if a.exists())
        if not existing.is_dir() or not os.access(existing, os.W_OK):
            _fail(f"{text!r}: cannot write in {str(existing)!r}")
        return p
    return _named(parse, "folder")


def input_file() -> Callable[[str], Path]:
    """An existing, readable, regular file; returns a Path."""
    def parse(text: str) -> Path:
        if not text.strip():
            _fail("expected a file name, got ''")
        p = Path(text).expanduser()
        try:
            st = os.stat(p)
        except FileNotFoundError:
            _fail(f"{text!r} does not exist")
        except OSError as err:
            _fail(f"{text!r}: {err.strerror}")
        if not stat.S_ISREG(st.st_mode):
            _fail(f"{text!r} is {'a folder' if stat.S_ISDIR(st.st_mode) else 'not a regular file'}; "
                  f"expected a file to read")
        if not os.access(p, os.R_OK):
            _fail(f"{text!r}: permission denied")
        return p
    return _named(parse, "path")
