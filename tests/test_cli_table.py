"""Every command x bad values -> exit 2, ONE line on stderr naming the argument, no traceback,
nothing written (issue 11's CLI table).

Each row runs ``multihead.cli.main`` in-process (fast) in an empty temporary working directory,
with the cache pointed at another temporary folder, and checks: the exit code is 2; stderr is
exactly one line, ``multihead CMD: error: ...``, containing the argument's name; no "Traceback";
the working directory is still empty; the bad path itself was not created. A row that does not
fail within ROW_SECONDS is stopped (and fails): bad input must be refused before any work.
A few rows run the real entry point (``python -m multihead``) in a subprocess.

Rows of commands whose modules have not yet adopted multihead.cli._args are listed in PENDING
with their owner: they are expected to fail (xfail, strict, so a row that starts passing must
be taken off the list).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import multihead.functional  # noqa: F401  (imported here, not inside a timed row: see below)
from multihead.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[1]
# A row is stopped after this long. Imports are done once at collection (build_parser below):
# stopping a row inside an import would leave a half-initialized module for the rows after it.
ROW_SECONDS = 20
PENDING_ROW_SECONDS = 3      # a pending row may start real work (a benchmark): stop it sooner
build_parser()

INT_BAD = ["-1", "0", "1e30", "inf", "nan", "", "abc", "1.5"]
SEED_BAD = ["-1", "1e30", "inf", "nan", "", "abc", "1.5"]
POS_FLOAT_BAD = ["-1", "0", "inf", "nan", "", "abc", "1e400"]
PROB_BAD = ["-0.5", "0", "1.5", "inf", "nan", "", "abc"]
# "@full" is a symlink in the working directory to /dev/full (a special file; a command that
# appended ".png" to it would write full.png in the working directory, not in /dev).
# Missing folders and files are relative, i.e. inside the temporary working directory: a command
# that created them anyway is caught by the "working directory unchanged" check, and nothing
# lands outside the test's folder.
OUT_BAD = ["", "missing-dir/x.png", "@full", "."]
IN_BAD = ["", "missing.json", "/dev/null", "."]

PLAN = ["plan", "example-13b-gqa8", "--tokens", "1000", "--gpu", "H100-SXM"]
CHECK = ["check", "torch.nn.functional:scaled_dot_product_attention"]

# (command prefix, argument, bad values). The argument is appended as `ARG VALUE`.
TABLE: list[tuple[list[str], str, list[str]]] = [
    (["demo"], "--tokens", INT_BAD),
    (["demo"], "--seed", SEED_BAD),
    (["plan", "example-13b-gqa8", "--gpu", "H100-SXM"], "--tokens", INT_BAD),
    *[(PLAN, arg, INT_BAD) for arg in ("--batch", "--passes", "--chunks", "--gpus")],
    *[(["plan", "--heads", "32", "--head-dim", "128", "--tokens", "1000", "--gpu", "H100-SXM"], arg, INT_BAD)
      for arg in ("--layers", "--kv-heads", "--hidden")],
    # --params 0 is legal: a plan of the attention alone (no weights), as validate's one-layer rows use
    (PLAN, "--params", [b for b in POS_FLOAT_BAD if b != "0"]),
    *[(PLAN, arg, POS_FLOAT_BAD) for arg in ("--gpu-memory-gb", "--effective-tflops", "--bandwidth-tbps")],
    *[(PLAN, arg, PROB_BAD) for arg in ("--flops-efficiency", "--bandwidth-efficiency", "--memory-utilization")],
    (PLAN, "--plot", OUT_BAD),
    (PLAN, "--gpu", ["", "/dev/null", "no-such-gpu-i11"]),
    (CHECK, "--seed", SEED_BAD),
    *[(CHECK, arg, INT_BAD) for arg in ("--d-model", "--heads", "--kv-heads")],
    *[(["bench", "--quick"], arg, OUT_BAD) for arg in ("--json", "--plot", "--markdown")],
    (["bench", "--quick"], "--threads", INT_BAD),
    (["calibrate", "--quick"], "--out", OUT_BAD),
    (["calibrate", "--quick"], "--threads", INT_BAD),
    (["validate", "--quick"], "--profile", IN_BAD),
    *[(["validate", "--quick"], arg, OUT_BAD) for arg in ("--out", "--plot", "--markdown")],
    (["validate", "--quick"], "--threads", INT_BAD),
    (["gpu-time"], "--measurements", IN_BAD),
    # a missing folder under a writable one is made by --fit (as heads report --out-dir does), so
    # only a non-folder and an empty name are bad here
    (["gpu-time", "--fit"], "--out", ["", "@full"]),
    *[(["perplexity"], arg, INT_BAD) for arg in ("--windows", "--window-tokens", "--batch-size")],
    (["perplexity"], "--seed", SEED_BAD),
    (["generate", "--prompt", "hi"], "--max-new-tokens", INT_BAD),
    *[(["heads", "importance"], arg, INT_BAD) for arg in ("--windows", "--window-tokens", "--batch-rows",
                                                          "--threads")],
    (["heads", "importance"], "--seed", SEED_BAD),
    *[(["heads", "importance"], arg, OUT_BAD) for arg in ("--plot", "--save")],
    (["heads", "prune"], "--importance", IN_BAD),
    (["heads", "prune"], "--fractions", ["", "2", "-0.1", "nan", "a,b", "0.1,,0.2"]),
    (["heads", "merge-kv"], "--kv-heads", ["", "0", "-1", "5x", "nan"]),
    (["heads", "merge-kv"], "--uptrain-lr", PROB_BAD),
]

ROWS = [(prefix, arg, bad) for prefix, arg, bads in TABLE for bad in bads]

# PENDING: rows expected to fail until the command's owner adopts multihead.cli._args (row id ->
# owner), as measured when this table landed. Strict xfail: a row that starts passing fails
# the run until it is taken off this list. The lead removes entries as the owners land.
PENDING: dict[str, str] = {
}


def _command(prefix: list[str]) -> str:
    """The (sub)command a row exercises: 'plan', 'heads prune', ..."""
    return " ".join(prefix[:2]) if prefix[0] == "heads" else prefix[0]


def _row_id(prefix, arg, bad):
    return f"{_command(prefix)} {arg}={bad!r}"


def _params():
    for prefix, arg, bad in ROWS:
        owner = PENDING.get(_row_id(prefix, arg, bad))
        marks = [pytest.mark.xfail(strict=True, reason=f"pending: {owner} adopts cli._args")] if owner else []
        yield pytest.param(prefix, arg, bad, id=_row_id(prefix, arg, bad), marks=marks)


class _TooSlow(Exception):
    pass


def _alarm(signum, frame):
    raise _TooSlow("not refused in time: bad input must be refused before any work")


def _check_error(code: int, err: str, command: str, arg: str) -> None:
    lines = err.strip().splitlines()
    assert code == 2, (code, err[-800:])
    assert "Traceback" not in err, err[-800:]
    assert len(lines) == 1, err[-800:]
    assert lines[0].startswith(f"multihead {command}: error: ") or lines[0].startswith("multihead: error: "), lines
    assert arg.lstrip("-") in lines[0], (arg, lines[0])


@pytest.mark.parametrize("prefix, arg, bad", list(_params()))
def test_cli_bad_value(prefix, arg, bad, tmp_path, monkeypatch, capsys):
    seconds = PENDING_ROW_SECONDS if _row_id(prefix, arg, bad) in PENDING else ROW_SECONDS
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("MULTIHEAD_CACHE", str(tmp_path / "cache"))
    if bad == "@full":
        (cwd / "full").symlink_to("/dev/full")
        bad = "full"
    before = sorted(p.name for p in cwd.iterdir())
    existed = os.path.lexists(bad) if bad else True
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        code = main([*prefix, arg, bad])
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    out, err = capsys.readouterr()
    _check_error(code, err, _command(prefix), arg)
    assert sorted(p.name for p in cwd.iterdir()) == before, list(cwd.iterdir())
    if not existed:
        assert not os.path.lexists(bad)
    for suffix in (".png", ".json", ".md"):
        if bad and not existed:
            assert not os.path.lexists(bad + suffix)


@pytest.mark.parametrize("argv, arg", [
    (["demo", "--tokens", "1e9"], "--tokens"),
    (["demo", "--seed", "-1"], "--seed"),
    (["generate", "--prompt", "hi", "--max-new-tokens", "0"], "--max-new-tokens"),
    (["demo", "--no-such-flag"], "--no-such-flag"),
])
def test_cli_entry_point_subprocess(argv, arg, tmp_path):
    """The installed entry point (python -m multihead) behaves like main(): one line, exit 2."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MULTIHEAD_CACHE": str(tmp_path / "cache")}
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    r = subprocess.run([sys.executable, "-m", "multihead", *argv], cwd=cwd, env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 2 and r.stdout == "", (r.returncode, r.stdout[-500:], r.stderr[-500:])
    assert len(r.stderr.strip().splitlines()) == 1 and arg in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert list(cwd.iterdir()) == []


def test_cli_runtime_oserror_is_one_line(tmp_path, monkeypatch, capsys):
    """An OSError raised while a command runs (a path that went away) is one line, exit 2."""
    import argparse

    def boom(args):
        open(tmp_path / "missing" / "x.json")

    parser_args = argparse.Namespace(func=boom, command="demo")
    monkeypatch.setattr("multihead.cli._parser", lambda: _FixedParser(parser_args))
    assert main([]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "x.json" in err and "No such file or directory" in err


class _FixedParser:
    def __init__(self, args):
        self.args = args

    def parse_args(self, argv):
        return self.args
