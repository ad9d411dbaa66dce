"""Promises of docs/layout.md that a change could silently break."""
from __future__ import annotations

import subprocess
import sys


def test_every_command_parser_is_built_without_torch():
    """`multihead CMD --help` or a bad argument must not load torch (seconds per process): each
    command's parser reads only torch-free modules (hf/shipped.py for the shipped models' facts),
    and `multihead check` refuses a malformed target spec before importing anything."""
    code = ("import sys; from multihead.cli import COMMANDS, build_parser, main; p = build_parser();"
            " rc = main(['check', 'no_colon']);"
            " print(len(COMMANDS), rc, sorted(m for m in ('torch', 'transformers', 'multihead.kernels') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    out = r.stdout.split(" ", 2)
    assert int(out[0]) >= 12 and out[1] == "2" and out[2].strip() == "[]"
    assert "argument target: expected package.module:name" in r.stderr


def test_hf_attention_names_load_on_first_use():
    """`import multihead.hf` is light; its attention names still work (PEP 562 module __getattr__).

    The lightness needs a fresh interpreter; the names are resolved here, through the module's
    __getattr__ itself (a fresh interpreter loading torch for them cost ~1.5 s of CPU)."""
    code = "import sys, multihead.hf; print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    import pytest

    import multihead.hf as hf
    from multihead.hf import attention
    assert hf.__getattr__("NAME") == attention.NAME == "multihead"
    for name in ("register", "registered_names", "multihead_attention_forward"):
        assert hf.__getattr__(name) is getattr(attention, name) and callable(getattr(hf, name))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        hf.__getattr__("nope")


def test_library_modules_never_import_the_cli():
    """docs/layout.md's arrows point down: cli/ imports the library, never the other way; web/ is the
    other front end and calls the planner as a library too (issue 27), never the CLI; __main__ is `python -m`."""
    import ast
    from pathlib import Path

    pkg = Path(__file__).resolve().parents[1] / "multihead"
    offenders = []
    for path in pkg.rglob("*.py"):
        rel = path.relative_to(pkg).as_posix()
        if rel.startswith("cli/") or rel == "__main__.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            offenders += [f"{rel}:{node.lineno} {n}" for n in names if n == "multihead.cli" or n.startswith("multihead.cli.")]
    assert offenders == []
