"""Units, once: the dtype table (bytes per element) and the number formatters.

Every module that turns a dtype name into bytes or a number into text for people calls these.
Bytes for people are decimal (1 GB = 1e9 B, as GPU datasheets count); ``fmt_gib`` exists only to
quote what serving engines print (vLLM's "GiB" are 2^30 B). JSON keeps raw numbers.
"""
from __future__ import annotations

import math

# Bytes per element of each storage format. Canonical short names first; the aliases below map
# HF / torch spellings (config.json "torch_dtype": "bfloat16") onto them.
DTYPE_BYTES: dict[str, float] = {
    "fp32": 4, "fp16": 2, "bf16": 2, "fp8": 1, "int8": 1, "int4": 0.5,
}
_ALIASES = {
    "float32": "fp32", "float": "fp32", "float16": "fp16", "half": "fp16", "bfloat16": "bf16",
    "float8": "fp8", "float8_e4m3fn": "fp8", "float8_e5m2": "fp8", "fp8_e4m3": "fp8", "fp8_e5m2": "fp8",
}
SIXTEEN_BIT = ("fp16", "bf16")


def canonical_dtype(name, arg: str = "dtype") -> str:
    """The canonical short name ('bf16', ...) of a dtype spelled any common way ('torch.bfloat16')."""
    key = str(name).removeprefix("torch.").lower()
    key = _ALIASES.get(key, key)
    if key not in DTYPE_BYTES:
        raise ValueError(f"{arg}: expected one of {', '.join(DTYPE_BYTES)} (or float32, bfloat16, ...), "
                         f"got {name!r}")
    return key


def dtype_bytes(name, arg: str = "dtype") -> float:
    """Bytes per element of ``name`` (int4 packs two per byte: 0.5)."""
    return DTYPE_BYTES[canonical_dtype(name, arg)]


# -- formatters --------------------------------------------------------------------------------------
def fmt_bytes(x: float) -> str:
    """Decimal bytes: '20.97 GB', '163.84 KB'; from 1 TB on also in GB: '1.31 TB (1,311 GB)'."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if abs(x) >= scale:
            return f"{x / scale:,.2f} {unit}" + (f" ({x / 1e9:,.0f} GB)" if unit == "TB" else "")
    return f"{x:,.0f} B"


def fmt_gib(x: float) -> str:
    """Binary gibibytes as serving engines print them (vLLM: 'Model loading took 14.25 GiB')."""
    return f"{x / 2 ** 30:,.2f} GiB"


def fmt_int(x: float) -> str:
    """An exact count with separators ('163,840'); non-integers or huge values in 3 significant digits."""
    return f"{x:,.0f}" if math.isfinite(x) and float(x).is_integer() and abs(x) < 1e15 else f"{x:.3g}"


def fmt_count(x: float) -> str:
    """A parameter count: '8.03 B (8,030,261,248)' or '67.11 M (67,108,864)'."""
    return f"{x / 1e9:,.2f} B ({x:,.0f})" if x >= 1e9 else f"{x / 1e6:,.2f} M ({x:,.0f})"


def fmt_flops(x: float) -> str:
    return f"{x / 1e12:,.0f} TFLOP ({x:.2e})" if x >= 1e12 else f"{x / 1e9:,.2f} GFLOP ({x:.2e})"


def fmt_seconds(x: float) -> str:
    if x >= 1:
        return f"{x:,.1f} s"
    if x >= 1e-3:
        return f"{x * 1e3:,.2f} ms"
    return f"{x * 1e6:,.1f} us"


def fmt_passes(n: int) -> str:
    return f"{n} pass" + ("es" if n != 1 else "")
