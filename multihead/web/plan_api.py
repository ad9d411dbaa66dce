"""The planner, as the web page and ``plan --html`` see it: the CLI's own ``plan --json``, in process.

Every number on the planner page comes from ``multihead plan --json``: ``plan_json`` turns the
page's options into the CLI's argv and runs ``multihead.cli.main`` on it, so the page takes
exactly the CLI's flags, returns byte-identical JSON and shows byte-identical error messages.
Nothing here computes a formula; the memory-vs-context curve is the same call at other T.

The three functions that know the planner's library side (catalog names, the training length)
are at the bottom; everything else only knows the CLI.
"""
from __future__ import annotations

import contextlib
import contextvars
import io
import json
import math
import re
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

# Options the page may pass (the CLI's long flags, dashes as underscores). Output flags (--json,
# --plot, --html, --list, --explain) are the server's business, not the page's.
_OUTPUT_FLAGS = {"json", "plot", "html", "list", "explain"}
_UPLOAD_DIR = "uploaded"   # a dropped config.json is the model "uploaded/config.json"
_capture: contextvars.ContextVar[tuple[io.StringIO, io.StringIO] | None] = contextvars.ContextVar("capture", default=None)
_INSTALL = threading.Lock()


@dataclass
class PlanError(ValueError):
    """The CLI refused the options: its one-line message and the argument it names (or None)."""
    message: str
    field: str | None

    def __str__(self) -> str:
        return self.message


def options_to_argv(options: dict) -> list[str]:
    """{"model": "Llama-3.1-8B", "tokens": 32768, "kv_dtype": "fp8", "causal_skip": True} -> CLI argv.

    Keys are the CLI's long flags with underscores; True adds a bare flag, False/None/"" omit it.
    """
    if not isinstance(options, dict):
        raise PlanError("options: expected a JSON object of plan flags", "options")
    argv = []
    model = options.get("model")
    if model not in (None, ""):
        argv.append(str(model))
    for key, value in options.items():
        if key == "model" or value is None or value is False or value == "":
            continue
        if not isinstance(key, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", key) or key in _OUTPUT_FLAGS:
            raise PlanError(f"{key}: not a plan option the page can set", str(key))
        flag = "--" + key.replace("_", "-")
        if value is True:
            argv.append(flag)
        elif isinstance(value, (int, float, str)):
            argv += [flag, str(value)]
        else:
            raise PlanError(f"{key}: expected a number or a string, got {type(value).__name__}", key)
    return argv


class _Routed(io.TextIOBase):
    """Stands in for sys.stdout / sys.stderr: writes go to this context's capture buffer while
    run_cli runs in it, else to the real stream. Unlike contextlib.redirect_stdout (which swaps
    the stream for every thread), concurrent requests and the server's own output stay apart."""

    def __init__(self, real, index: int):
        self.real, self.index = real, index

    def write(self, text: str) -> int:
        cap = _capture.get()
        return (cap[self.index] if cap is not None else self.real).write(text)

    def flush(self) -> None:
        if _capture.get() is None:
            self.real.flush()

    def __getattr__(self, name):             # encoding, isatty, fileno, ...: the real stream's
        return getattr(self.real, name)


def _install() -> None:
    with _INSTALL:
        if not isinstance(sys.stdout, _Routed):
            sys.stdout = _Routed(sys.stdout, 0)
        if not isinstance(sys.stderr, _Routed):
            sys.stderr = _Routed(sys.stderr, 1)


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    """``multihead <argv>`` in this process: (exit code, stdout, stderr)."""
    from multihead.cli import main

    _install()
    out, err = io.StringIO(), io.StringIO()
    token = _capture.set((out, err))
    try:
        rc = main(argv)
    except SystemExit as exc:                # should main() ever let argparse exit
        rc = exc.code if isinstance(exc.code, int) else 2
    finally:
        _capture.reset(token)
    return rc, out.getvalue(), err.getvalue()


@contextlib.contextmanager
def _uploaded(options: dict, config_text: str | None):
    """Options with a dropped config.json written to a private folder as the model; yields
    (options, folder prefix to hide from the output, or None)."""
    if config_text is None:
        yield options, None
        return
    with tempfile.TemporaryDirectory(prefix="multihead-web-") as tmp:
        path = Path(tmp) / _UPLOAD_DIR / "config.json"
        path.parent.mkdir()
        path.write_text(config_text, encoding="utf-8")
        yield {**options, "model": str(path)}, tmp + "/"


def plan_text(options: dict, config_text: str | None = None) -> str:
    """The exact text ``multihead plan <options> --json`` prints (without its final newline).

    config_text: the content of a dropped config.json; it is passed to the CLI as
    ``uploaded/config.json`` (its private folder's path is left out of the output and errors).
    Raises PlanError with the CLI's message when the CLI exits non-zero.
    """
    with _uploaded(options, config_text) as (opts, hide):
        rc, out, err = run_cli(["plan", *options_to_argv(opts), "--json"])
    if hide:
        out, err = out.replace(hide, ""), err.replace(hide, "")
    if rc != 0:
        raise _error(err)
    return out[:-1] if out.endswith("\n") else out


def plan_json(options: dict, config_text: str | None = None) -> dict:
    return json.loads(plan_text(options, config_text))


def _error(stderr: str) -> PlanError:
    """The CLI's last error line -> PlanError naming the argument ("tokens: ..." or "argument --tokens: ...")."""
    lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
    line = next((ln for ln in reversed(lines) if ": error: " in ln), lines[-1] if lines else "plan failed")
    message = line.split(": error: ", 1)[-1]
    m = re.match(r"argument (?:--)?([a-z][\w-]*)", message) or re.match(r"([a-z][\w-]*):", message)
    return PlanError(message, m.group(1).replace("-", "_") if m else None)


def context_grid(plan: dict, trained: int | None, points: int = 24) -> list[int]:
    """Context lengths for the memory curve: log-spaced from 1,024 to past T and the training length."""
    top = max(4 * plan["tokens"], 2 * (trained or 0), 8192)
    grid = {int(round(1024 * (top / 1024) ** (i / (points - 1)))) for i in range(points)}
    return sorted(grid | {plan["tokens"]} | ({trained} if trained else set()))


def memory_curve(options: dict, config_text: str | None = None) -> dict:
    """Memory per GPU of one pass vs context length, each point a ``plan --json`` at that T.

    Curves: this model's H_kv, and MHA (H_kv = H) and MQA (H_kv = 1) where the CLI accepts them
    (tensor parallelism may refuse some). Returns {"tokens": [...], "curves": [{"label", "kv_heads",
    "total_memory_bytes": [...]}], "usable_memory_bytes", "gpu_memory_bytes", "trained_length", "T"}.
    """
    base = plan_json(options, config_text)
    trained = trained_length(base, options, config_text)
    grid = context_grid(base, trained)
    curves = []
    for kv in sorted({base["num_kv_heads"], base["num_attention_heads"], 1}, reverse=True):
        label = "MHA" if kv == base["num_attention_heads"] else ("MQA" if kv == 1 else f"GQA-{kv}")
        ys = []
        for t in grid:
            try:
                ys.append(plan_json({**options, "tokens": t, "kv_heads": kv}, config_text)["total_memory_bytes"])
            except PlanError:
                ys.append(None)
        if any(y is not None for y in ys):
            curves.append({"label": label, "kv_heads": kv, "this_model": kv == base["num_kv_heads"],
                           "total_memory_bytes": ys})
    return {"tokens": grid, "curves": curves, "T": base["tokens"], "trained_length": trained,
            "usable_memory_bytes": base["usable_memory_bytes"], "gpu_memory_bytes": base["gpu_memory_bytes"]}


# -- the cost model's side: catalog names and the training length -----------------------------------
def catalog() -> dict:
    """Catalog model and GPU names, as ``multihead plan --list`` shows them."""
    from multihead import cost

    return {"models": cost.model_names(), "gpus": list(cost.gpu_catalog())}


def trained_length(plan: dict, options: dict, config_text: str | None = None) -> int | None:
    """The model's training length (max_position_embeddings) for the chart's mark: from the plan
    JSON when it carries one, else from the model spec the CLI read; None when unknown."""
    for key in ("max_position_embeddings", "trained_length", "max_position"):
        value = plan.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0:
            return int(value)
    if options.get("max_position"):
        return int(options["max_position"])
    from multihead import cost

    with _uploaded(options, config_text) as (opts, _):
        try:
            spec = cost.resolve_model(opts["model"]) if opts.get("model") else None
        except ValueError:
            return None
    return getattr(spec, "max_position_embeddings", None) or None
