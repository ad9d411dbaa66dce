"""Run the commands a doc quotes and rewrite the output blocks under them, or check them.

A quoted output in a doc is a fenced block right after a marker line

    <!-- output: multihead plan ... -->

``python scripts/doc_outputs.py docs/search.md`` reruns every marked command in process
(``multihead.cli.main``) and rewrites the block under it; ``--check`` exits 1 naming the first
stale block instead (tests/test_search.py runs the check, so a quoted number cannot drift).
Lines matching ``VOLATILE`` (wall-clock seconds) are compared with the number masked.

``| exit: N`` after the command expects exit status N (``multihead check`` of a broken target: 1).
An excerpt: ``<!-- output: multihead plan ... | lines: REGEX -->`` keeps only the output lines that
match REGEX (re.search), in order: a doc can quote the few lines it talks about, and they are still
the command's own (README.md, docs/planner.md; tests/test_docs_numbers.py checks every doc).
"""
from __future__ import annotations

import contextlib
import io
import re
import shlex
import sys
from pathlib import Path

MARK = re.compile(r"^<!-- output: (?P<cmd>.+?) -->\n```[a-z]*\n(?P<out>.*?)```\n", re.S | re.M)
VOLATILE = re.compile(r"(evaluated in |checks?, |checks?, [0-9.]+ s wall, )[0-9.]+( s)")


def run(command: str, expect: int = 0) -> str:
    from multihead.cli import main
    argv = shlex.split(command)
    if argv[:1] != ["multihead"]:
        raise ValueError(f"doc command must start with 'multihead': {command!r}")
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(argv[1:])
    if code != expect:
        raise RuntimeError(f"{command!r} exited {code}, not {expect}")
    return buf.getvalue()


def output(spec: str) -> str:
    """What the block under a marker holds: the command's output, or its lines matching `| lines: REGEX`."""
    command, _, pattern = spec.partition(" | lines: ")
    command, _, code = command.partition(" | exit: ")       # a command that reports a failure: its exit status
    fresh = run(command, int(code or 0))
    if not pattern:
        return fresh
    keep = re.compile(pattern)
    return "".join(line + "\n" for line in fresh.splitlines() if keep.search(line))


def stale_blocks(text: str) -> list[tuple[str, str, str]]:
    """(command, quoted, fresh) for every marked block whose quoted output differs from a fresh run."""
    out = []
    for m in MARK.finditer(text):
        fresh = output(m["cmd"])
        if VOLATILE.sub(r"\1#\2", fresh) != VOLATILE.sub(r"\1#\2", m["out"]):
            out.append((m["cmd"], m["out"], fresh))
    return out


def rewrite(text: str) -> str:
    return MARK.sub(lambda m: f"<!-- output: {m['cmd']} -->\n```\n{output(m['cmd'])}```\n", text)


def main(argv: list[str]) -> int:
    check = "--check" in argv
    paths = [Path(a) for a in argv if a != "--check"]
    for path in paths:
        text = path.read_text(encoding="utf-8")
        if check:
            stale = stale_blocks(text)
            if stale:
                print(f"{path}: stale output of {stale[0][0]!r}; run python scripts/doc_outputs.py {path}")
                return 1
        else:
            path.write_text(rewrite(text), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
