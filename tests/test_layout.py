"""Promises of docs/layout.md that a change could silently break."""
from __future__ import annotations

import subprocess
import sys


def test_every_command_parser_is_built_without_torch():
    """`multihead CMD --help` or a bad argument must not load torch (seconds per process): each
    command's parser reads only torch-free modules (hf/shipped.py for the shipped models' facts)."""
    code = ("import sys; from multihead.cli import COMMANDS, build_parser; p = build_parser();"
            " print(len(COMMANDS), sorted(m for m in ('torch', 'transformers', 'multihead.kernels') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split(" ", 1)
    assert int(out[0]) >= 12 and out[1].strip() == "[]"


def test_hf_attention_names_load_on_first_use():
    """`import multihead.hf` is light; its attention names still work (PEP 562 module __getattr__)."""
    code = ("import sys, multihead.hf as hf; before = 'torch' in sys.modules;"
            " from multihead.hf import register, NAME; print(before, NAME, callable(register), 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "multihead", "True", "True"]
