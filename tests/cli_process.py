"""`multihead <argv>` answered by ONE separate, long-lived Python process (the web tests' CLI).

The web tests compare what the server answers with what the CLI prints, run outside the server's
process. Starting an interpreter per call cost ~0.25 s of CPU (imports), ~30 calls in the web
tests; here one child process runs ``multihead.cli.main(argv)`` for each request it reads on
stdin: the CLI's own path from argv to exit code, stdout and stderr (an exception that escapes
main() gives a traceback on stderr and exit code 1, as ``python -m multihead`` would). Real
``python -m multihead`` runs are kept where the interpreter's entry point is the point
(test_web_api: one byte-for-byte plan, one error line, ``plan --html``).
"""
from __future__ import annotations

import atexit
import json
import select
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENV = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(Path.home())}
TIMEOUT_S = 120

_LOOP = r"""
import contextlib, io, json, os, sys, traceback
from multihead.cli import main
for line in sys.stdin:
    cwd, argv = json.loads(line)
    os.chdir(cwd)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(argv)
        except SystemExit as exit_:
            rc = exit_.code if isinstance(exit_.code, int) else 1
        except BaseException:
            traceback.print_exc()
            rc = 1
    sys.__stdout__.write(json.dumps([rc, out.getvalue(), err.getvalue()]) + "\n")
    sys.__stdout__.flush()
"""
_child: subprocess.Popen | None = None


def _process() -> subprocess.Popen:
    global _child
    if _child is None or _child.poll() is not None:
        _child = subprocess.Popen([sys.executable, "-c", _LOOP], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True, cwd=ROOT, env=ENV)
        atexit.register(_close, _child)
    return _child


def _close(child: subprocess.Popen) -> None:
    """At exit: close its stdin (the loop ends); a child stuck in a request is killed, not waited on."""
    try:
        child.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()


def run(args: list[str], cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """`multihead <args>` in cwd, in the CLI process: (returncode, stdout, stderr) as subprocess.run gives."""
    child = _process()
    child.stdin.write(json.dumps([str(cwd), [str(a) for a in args]]) + "\n")
    child.stdin.flush()
    if not select.select([child.stdout], [], [], TIMEOUT_S)[0]:
        child.kill()
        child.wait()                                  # so that the next call starts a new one
        raise AssertionError(f"multihead {' '.join(args)}: no answer in {TIMEOUT_S} s")
    line = child.stdout.readline()
    assert line, f"multihead {' '.join(args)}: the CLI process died (exit code {child.wait()})"
    rc, out, err = json.loads(line)
    return subprocess.CompletedProcess(["multihead", *args], rc, out, err)


def run_fresh(args: list[str], cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """`python -m multihead <args>` as a user starts it: a new interpreter for this one call."""
    return subprocess.run([sys.executable, "-m", "multihead", *args], capture_output=True, text=True,
                          cwd=cwd, env=ENV, timeout=TIMEOUT_S, check=False)
