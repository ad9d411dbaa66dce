"""Resolve the CLI's target spec, "package.module:name" or "path/to/file.py:name", to an object."""
from __future__ import annotations

import difflib
import importlib
import importlib.util
import os
import sys


def split_target(spec: str) -> tuple[str, str]:
    """(module or file, attribute) of "pkg.mod:attr" or "file.py:attr", importing nothing.

    A spec without a colon or naming a .py file that does not exist raises ValueError here, so
    `multihead check` refuses it at parse time instead of starting a child process to find out."""
    if not isinstance(spec, str) or spec.count(":") < 1 or spec.endswith(":") or spec.startswith(":"):
        raise ValueError(f"target: expected package.module:name or path/to/file.py:name, got {spec!r}")
    mod_part, _, attr = spec.rpartition(":")
    if mod_part.endswith(".py") and not os.path.isfile(mod_part):
        raise ValueError(f"target: no such file {mod_part!r}")
    return mod_part, attr


def load_target(spec: str):
    """"pkg.mod:attr" (attr may be dotted, e.g. Class.method) or "file.py:attr" -> the object.

    Every failure (no colon, module not found, an exception while importing, missing attribute)
    raises ValueError naming the argument, never a traceback."""
    mod_part, attr = split_target(spec)
    if mod_part.endswith(".py"):
        name = "_multihead_check_" + os.path.splitext(os.path.basename(mod_part))[0]
        try:
            module_spec = importlib.util.spec_from_file_location(name, mod_part)
            module = importlib.util.module_from_spec(module_spec)
            sys.modules[name] = module
            module_spec.loader.exec_module(module)
        except Exception as err:   # noqa: BLE001 - user code: report, do not crash
            sys.modules.pop(name, None)
            raise ValueError(f"target: importing {mod_part} raised {type(err).__name__}: {err}") from None
    else:
        if os.getcwd() not in sys.path and "" not in sys.path:
            sys.path.insert(0, os.getcwd())   # as `python -m` would: modules in the current directory import
        try:
            module = importlib.import_module(mod_part)
        except ModuleNotFoundError as err:
            raise ValueError(f"target: cannot import {mod_part!r} ({err})") from None
        except Exception as err:   # noqa: BLE001
            raise ValueError(f"target: importing {mod_part!r} raised {type(err).__name__}: {err}") from None
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            close = difflib.get_close_matches(part, [n for n in dir(obj) if not n.startswith("__")], n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise ValueError(f"target: {mod_part!r} has no attribute {attr!r}{hint}")
        obj = getattr(obj, part)
    return obj
