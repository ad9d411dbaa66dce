"""An optional part missing (issue 25 item 5): one line naming what to install, exit 2, no traceback,
and nothing printed before it as if the command had started (`multihead web` printed "serving on
http://..." and then `ModuleNotFoundError: No module named 'uvicorn'`). Each case runs in a child
process whose sys.modules[NAME] = None, which is how Python reports a module as not installed."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = [
    ("uvicorn", ["web", "--port", "8799"], "pip install 'multihead[web]'"),
    ("fastapi", ["web", "--port", "8799"], "pip install 'multihead[web]'"),
    ("plotly", ["web", "--port", "8799"], "pip install 'multihead[web]'"),
    ("plotly", ["plan", "Llama-3.1-8B", "--tokens", "1000", "--html", "{tmp}/p.html"], "pip install 'multihead[web]'"),
    ("transformers", ["perplexity"], "pip install -e '.[models]'"),
    ("transformers", ["heads", "importance"], "pip install -e '.[models]'"),
    ("matplotlib", ["plan", "Llama-3.1-8B", "--tokens", "1000", "--plot", "{tmp}/m.png"], "pip install matplotlib"),
]


@pytest.mark.parametrize("module, argv, install", CASES, ids=[f"{m}-{a[0]}" for m, a, _ in CASES])
def test_missing_optional_dependency_is_one_line(module, argv, install, tmp_path):
    code = (f"import sys; sys.modules[{module!r}] = None\n"
            "from multihead.cli import main\n"
            f"sys.exit(main({[a.format(tmp=tmp_path) for a in argv]!r}))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
    err = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-1500:])
    assert len(err) == 1 and "Traceback" not in proc.stderr, proc.stderr[-1500:]
    assert module in err[0] and install in err[0], err[0]
    assert "serving on" not in proc.stdout
    assert not list(tmp_path.iterdir())          # nothing written
