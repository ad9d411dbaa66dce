"""The one JSON writer of every command's output (``--json``, written reports): never non-finite.

Python's json writes ``Infinity`` and ``NaN`` by default, which is not JSON (a browser's
JSON.parse and most parsers refuse it). Every number the planner prints must be finite; a
non-finite one is a bug upstream (an unbounded input), so it is refused here by name rather than
written: ``dumps`` is json.dumps with allow_nan=False whose error names the field.
"""
from __future__ import annotations

import json
import math


def dumps(obj, **kw) -> str:
    """json.dumps(obj, allow_nan=False, **kw); a non-finite number raises ValueError naming its field."""
    try:
        return json.dumps(obj, allow_nan=False, **kw)
    except ValueError:
        where = non_finite_field(obj)
        if where is None:
            raise
        raise ValueError(f"{where[0]}: {where[1]!r} is not a finite number, so it cannot be written as JSON "
                         f"(an input beyond its sensible range upstream)") from None


def non_finite_field(obj) -> tuple[str, float] | None:
    """(path, value) of the first non-finite float in a JSON-like value, or None (iterative)."""
    stack = [(obj, "")]
    while stack:
        node, path = stack.pop()
        if isinstance(node, float) and not math.isfinite(node):
            return path or "(top level)", node
        if isinstance(node, dict):
            stack.extend((v, f"{path}.{k}" if path else str(k)) for k, v in reversed(list(node.items())))
        elif isinstance(node, (list, tuple)):
            stack.extend((v, f"{path}[{i}]") for i, v in reversed(list(enumerate(node))))
    return None
