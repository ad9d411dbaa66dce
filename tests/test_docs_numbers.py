"""Numbers a doc quotes from a command's output are that command's output now (issue 25 item 6:
README's 26.90 ms / 37.2 tok/s and its Llama-3.1-70B example, docs/planner.md's 42.6 tok/s and
23.5 ms had drifted from what the code prints). Every marked block (`<!-- output: multihead ... -->`
above a fenced block, optionally `| lines: REGEX`) in README.md and docs/*.md is rerun in process
and compared; fix a failure with `python scripts/doc_outputs.py FILE`."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _doc_outputs():
    spec = importlib.util.spec_from_file_location("doc_outputs", ROOT / "scripts" / "doc_outputs.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


MARKED = [p for p in DOCS if _doc_outputs().MARK.search(p.read_text(encoding="utf-8"))]


def test_the_issues_docs_are_generated():
    names = {p.name for p in MARKED}
    assert {"README.md", "planner.md"} <= names, names
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(_doc_outputs().MARK.findall(readme)) >= 2        # the make-plan answer and the 70B serving example


@pytest.mark.parametrize("path", MARKED, ids=[p.name for p in MARKED])
def test_quoted_outputs_are_current(path):
    stale = _doc_outputs().stale_blocks(path.read_text(encoding="utf-8"))
    assert not stale, (f"{path.name}: the output of {stale[0][0]!r} changed; run python scripts/doc_outputs.py "
                       f"{path.relative_to(ROOT)}\nquoted:\n{stale[0][1]}\nnow:\n{stale[0][2]}")
