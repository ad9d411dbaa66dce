"""The command line. Thin: each subcommand parses, calls one library function, and prints.

Every subcommand lives in its own module here and exposes ``register(subparsers)``, which adds
its parser and sets ``func`` (args -> exit code). Bad input raises ``ValueError`` with a message
naming the argument; it is printed without a traceback and the exit code is 2.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys

# Subcommand modules, in the order --help lists them.
COMMANDS = ["plan", "check", "bench", "calibrate", "validate", "gpu-time", "perplexity", "generate", "heads", "demo"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="multihead",
        description="Softmax and multi-head attention for long-context inference: compute it, size it, check it.")
    from multihead import __version__
    parser.add_argument("--version", action="version", version=f"multihead {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"multihead.cli.{name.replace('-', '_')}")
        except ModuleNotFoundError as err:
            if err.name == f"multihead.cli.{name.replace('-', '_')}":
                continue   # command not built yet
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except ValueError as err:
        print(f"multihead {args.command}: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `multihead plan --json | head`: the reader left; point stdout at /dev/null so the
        # interpreter's final flush does not print a second traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
