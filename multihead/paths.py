"""Where multihead keeps files between runs: the ONE resolver of its cache directory.

    $MULTIHEAD_CACHE                  if set and not empty ("~" expanded, made absolute)
    $XDG_CACHE_HOME/multihead         else, if XDG_CACHE_HOME is set to an absolute path
    ~/.cache/multihead                else

(The XDG base-directory spec says a relative or empty XDG_CACHE_HOME is to be ignored.) The
compiled kernels, the de-quantized model, the cleaned text and the calibration profile all live
under this one root, each in its own sub-folder or file.

Anything built there is built in a private temporary directory next to its destination and
renamed into place (``atomic_build``): a reader never sees a half-written file, two processes
building at once both succeed (the second rename wins with identical content), and a build
killed half-way leaves only a ``.tmp-<pid>-*`` folder, which the next build removes once its
process is gone (or it is an hour old).
"""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Iterator

__all__ = ["cache_dir", "atomic_build", "clean_stale_builds"]

TMP_PREFIX = ".tmp-"
STALE_AFTER_S = 3600.0       # a build older than this is dead even if its pid was reused


def cache_dir(*parts: str) -> Path:
    """The cache root (see the module docstring), joined with ``parts``. Nothing is created."""
    env = os.environ.get("MULTIHEAD_CACHE", "")
    if env:
        root = Path(env).expanduser()
    else:
        xdg = os.environ.get("XDG_CACHE_HOME", "")
        base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
        root = base / "multihead"
    return Path(os.path.abspath(root)).joinpath(*parts)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True          # exists, owned by someone else
    return True


def clean_stale_builds(parent: Path) -> None:
    """Remove temporary build folders in ``parent`` left by killed builds.

    A folder is stale when the process named in it is gone, or it is older than STALE_AFTER_S.
    Folders of the older unnamed form (``tmp*`` from tempfile) count as stale after a minute.
    """
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return
    now = time.time()
    for e in entries:
        try:
            if not e.is_dir(follow_symlinks=False):
                continue
            age = now - e.stat(follow_symlinks=False).st_mtime
        except OSError:
            continue
        if e.name.startswith(TMP_PREFIX):
            pid = e.name[len(TMP_PREFIX):].split("-", 1)[0]
            stale = age > STALE_AFTER_S or (pid.isdigit() and not _pid_alive(int(pid)))
        else:
            stale = e.name.startswith("tmp") and age > 60
        if stale:
            shutil.rmtree(e.path, ignore_errors=True)


@contextlib.contextmanager
def atomic_build(dest: Path) -> Iterator[Path]:
    """Yield a temporary path to write ``dest``'s content to; on success it is renamed to ``dest``.

    The temporary file lies in a private folder in dest's directory (same file system, so the
    rename is atomic). On an exception nothing is renamed and the folder is removed.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    clean_stale_builds(dest.parent)
    tmp = Path(tempfile.mkdtemp(prefix=f"{TMP_PREFIX}{os.getpid()}-", dir=dest.parent))
    try:
        out = tmp / dest.name
        yield out
        os.replace(out, dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
