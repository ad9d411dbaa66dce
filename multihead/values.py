"""Bounded values from users, checked once (torch-free): integers, finite numbers, choices, flags.

One set of rules for every front door: the CLI's argparse types (cli/_args.py wraps these and
adds "argument --x: ") and the planner's request (planner/request.py, from the CLI, the web page's
JSON or a library call, adds "field: "). A value arrives as a Python value or as text:

- integer: an int (never a bool), an integral finite float (``2.0``), or text that spells one
  (``"12"``, ``"1_000"``, ``"1e5"``, ``"2.0"``); at most 40 characters of text, so a 5,000-digit
  number is refused by the rule, not by Python's int() limit;
- number: an int or float (never a bool) or text that spells one; always finite (inf, nan and
  ``1e5000`` are refused), within the bounds;
- choice: one of a fixed list (exact match of a string, or of an int for integer choices);
- flag: True or False only (``"no"`` is not False, ``1`` is not True).

Each check raises ValueError with the bare reason (``expected an integer in [1, 10], got '0'``);
the caller prefixes the argument's name.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Sequence

MAX_TEXT = 40          # the longest spelling of a number anyone types; longer is not a number


def parse_int(value) -> int | None:
    """An int from an int, an integral finite float or its text ('12', '1_000', '1e6', '2.0'); else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and value.is_integer() else None
    if not isinstance(value, str) or len(value) > MAX_TEXT:
        return None
    text = value.strip()
    try:
        return int(text)
    except ValueError:
        pass
    try:
        d = Decimal(text)
    except InvalidOperation:
        return None
    if not d.is_finite() or d != d.to_integral_value() or abs(d.adjusted()) > MAX_TEXT:
        return None
    return int(d)


def parse_float(value) -> float | None:
    """A finite float from an int, a float or its text; else None (inf, nan, 1e5000, bools, lists)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        try:
            out = float(value)
        except OverflowError:
            return None
    elif isinstance(value, float):
        out = value
    elif isinstance(value, str) and len(value) <= MAX_TEXT:
        try:
            out = float(value)
        except ValueError:
            return None
    else:
        return None
    return out if math.isfinite(out) else None


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass(frozen=True)
class IntRange:
    """An integer in [lo, hi] (either bound may be None)."""
    lo: int | None = None
    hi: int | None = None

    def describe(self) -> str:
        if self.hi is None and self.lo is not None:
            return f"an integer >= {self.lo}"
        return f"an integer in [{self.lo if self.lo is not None else '-inf'}, {self.hi if self.hi is not None else 'inf'}]"

    def __call__(self, value) -> int:
        out = parse_int(value)
        if out is None or (self.lo is not None and out < self.lo) or (self.hi is not None and out > self.hi):
            raise ValueError(f"expected {self.describe()}, got {_shown(value)}")
        return out


@dataclass(frozen=True)
class FloatRange:
    """A finite number in [lo, hi]; (lo, ... with lo_open, ..., hi) with hi_open."""
    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    hi_open: bool = False

    def describe(self) -> str:
        return ("a finite number in " + ("(" if self.lo_open else "[") + (f"{self.lo:g}" if self.lo is not None else "-inf")
                + ", " + (f"{self.hi:g}" if self.hi is not None else "inf")
                + (")" if self.hi_open or self.hi is None else "]"))

    def __call__(self, value) -> float:
        out = parse_float(value)
        bad = out is None
        if not bad and self.lo is not None:
            bad = out <= self.lo if self.lo_open else out < self.lo
        if not bad and self.hi is not None:
            bad = out >= self.hi if self.hi_open else out > self.hi
        if bad:
            raise ValueError(f"expected {self.describe()}, got {_shown(value)}")
        return out


@dataclass(frozen=True)
class Choice:
    """One of a fixed list of strings (or ints: then '16' and 16.0 read as 16)."""
    options: tuple

    def describe(self) -> str:
        return "one of " + ", ".join(str(o) for o in self.options)

    def __call__(self, value):
        if self.options and isinstance(self.options[0], int) and not isinstance(value, bool):
            value = parse_int(value) if parse_int(value) is not None else value
        if isinstance(value, bool) or not isinstance(value, (str, int)) or value not in self.options:
            raise ValueError(f"expected {self.describe()}, got {_shown(value)}")
        return value


@dataclass(frozen=True)
class Text:
    """A non-empty string of at most max_len characters, without control characters."""
    max_len: int = 1000

    def describe(self) -> str:
        return f"a non-empty string of at most {self.max_len} characters"

    def __call__(self, value) -> str:
        if (not isinstance(value, str) or not value.strip() or len(value) > self.max_len
                or any(ord(c) < 32 for c in value)):
            raise ValueError(f"expected {self.describe()}, got {_shown(value)}")
        return value


def flag(value) -> bool:
    """True or False, nothing else."""
    if not isinstance(value, bool):
        raise ValueError(f"expected true or false, got {_shown(value)}")
    return value


def checked(check, name: str, value):
    """check(value), its ValueError prefixed with ``name: ``."""
    try:
        return check(value)
    except ValueError as err:
        raise ValueError(f"{name}: {err}") from None


def choices(options: Sequence) -> Choice:
    return Choice(tuple(options))


# Physically sensible GPU figures, per GPU (one rule for the CLI's flags and the planner's
# request): 0.1 GB .. 100 TB of memory (the largest GPU today has 288 GB); 1 GFLOP/s .. 100
# PFLOP/s sustained (a B200 is ~2.2 PFLOP/s dense 16-bit); 1 GB/s .. 1 PB/s (HBM3e: 8 TB/s); an
# efficiency is a fraction of the peak from 0.1% to 100%. Beyond these, times and capacities
# overflow or underflow (1e300 TFLOP/s gave a ZeroDivisionError, 5e-324 an infinite time).
GPU_MEMORY_GB = FloatRange(0.1, 1e5)
EFFECTIVE_TFLOPS = FloatRange(1e-3, 1e5)
BANDWIDTH_TBPS = FloatRange(1e-3, 1e3)
EFFICIENCY = FloatRange(1e-3, 1.0)
