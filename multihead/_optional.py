"""Optional dependencies: which extra installs a module, and the one-line message when it is missing.

``multihead`` needs only torch, numpy, rich, tqdm, matplotlib and scipy; the web page, the real
weights and the tests come as extras (pyproject.toml). A command that needs a missing one says, on
one line, what to install (the CLI prints it as its error, exit 2), before it does anything else.
"""
from __future__ import annotations

import importlib

# top-level module -> the extra that installs it (pyproject.toml [project.optional-dependencies])
EXTRAS = {
    "fastapi": "web", "uvicorn": "web", "plotly": "web", "starlette": "web", "anyio": "web",
    "transformers": "models", "gguf": "models", "accelerate": "models", "tokenizers": "models",
    "safetensors": "models",
    "pytest": "test", "xdist": "test", "hypothesis": "test", "httpx": "test", "playwright": "test",
}
FOR = {"web": "the web page (multihead web, plan --html)", "models": "the real-weights commands",
       "test": "the test suite and the page's screenshots"}


class MissingDependency(ValueError):
    """A module of an extra (or of multihead itself) is not installed. A ValueError, so the CLI
    prints the message as one line, exit 2, no traceback."""


def message(module: str | None) -> str:
    """'NAME is not installed (EXTRA: what it is for): pip install 'multihead[EXTRA]'' for a module."""
    top = (module or "?").split(".")[0]
    extra = EXTRAS.get(top)
    if extra is None:
        return f"{top} is not installed (a dependency of multihead): pip install {top}, or `make setup`"
    return f"{top} is not installed (needed by {FOR[extra]}): pip install 'multihead[{extra}]', or `make setup`"


def require(*modules: str) -> None:
    """Import each module, or raise MissingDependency naming the first missing one and its extra."""
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError as err:
            raise MissingDependency(message(getattr(err, "name", None) or name)) from None
