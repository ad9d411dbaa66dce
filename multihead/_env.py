"""Environment variables that hold numbers: parsed here, in one place, with errors naming the variable.

An empty variable counts as unset (the POSIX and XDG convention), so ``VAR= cmd`` restores the
default. Anything else that is not a number in range is refused, never read as 0 or ignored.
"""
from __future__ import annotations

import os
from decimal import Decimal, InvalidOperation

__all__ = ["env_int"]


def env_int(name: str, default: int, *, minimum: int = 0) -> int:
    """os.environ[name] as an integer >= minimum ('2147483648', '2_000_000_000' or an exactly
    integral '2e9'), or ``default`` when unset or empty. Raises ValueError naming ``name``."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = Decimal(text.replace("_", ""))
    except InvalidOperation:
        value = None
    if value is None or not value.is_finite() or value != value.to_integral_value() or value < minimum:
        raise ValueError(f"{name}: expected a whole number >= {minimum} (e.g. 2147483648 or 2e9), "
                         f"got {os.environ[name]!r}; unset it for the default {default}")
    return int(value)
