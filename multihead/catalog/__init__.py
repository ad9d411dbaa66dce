"""The catalogs shipped with multihead (gpus.json, models.json here; the serving and GPU-time tables
in multihead/cost/catalog/) and the one reader every plan-time lookup goes through.

A plan looks its catalogs up many times (the web page's memory curve, 76 plans: ~1,400 lookups), so
each file is parsed once per version of it: the cache is keyed on (path, mtime_ns, size, inode), and
a file rewritten in this process (``multihead gpu-time --fit``, a test) is parsed again.
"""
from __future__ import annotations

import functools
import json
import os
import time
from pathlib import Path
from typing import Any

# A rewrite inside the file system's timestamp tick that keeps the size would keep the cache key
# too, so a file modified this recently is parsed afresh on every read (git's "racily clean" rule).
RACY_NS = 2_000_000_000


def read_json(path: str | os.PathLike) -> Any:
    """The parsed JSON of the file at ``path`` (UTF-8), parsed once per version of the file.

    The result is SHARED by every caller reading the same file: never mutate it; copy what you
    change (``dict(entry)``, ``{**entry, key: value}``)."""
    st = os.stat(path)
    if time.time_ns() - st.st_mtime_ns < RACY_NS:
        return _parse.__wrapped__(os.fspath(path), st.st_mtime_ns, st.st_size, st.st_ino)
    return _parse(os.fspath(path), st.st_mtime_ns, st.st_size, st.st_ino)


def entries(path: str | os.PathLike) -> dict[str, Any]:
    """A catalog's entries: its top-level keys minus the ``_``-prefixed notes, in a new dict each call
    (the entries themselves are shared, see ``read_json``)."""
    return {k: v for k, v in read_json(path).items() if not k.startswith("_")}


@functools.lru_cache(maxsize=64)
def _parse(path: str, mtime_ns: int, size: int, inode: int) -> Any:
    return json.loads(Path(path).read_text(encoding="utf-8"))
