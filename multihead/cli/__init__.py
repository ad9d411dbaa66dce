"""The command line. Thin: each subcommand parses, calls one library function, and prints.

Every subcommand lives in its own module here and exposes ``register(subparsers)``, which adds
its parser and sets ``func`` (args -> exit code). Bad input fails with ONE line on stderr,
``multihead CMD: error: <message naming the argument>``, exit code 2, no traceback:

- at parse time, through the validated types of multihead.cli._args (numbers with bounds, paths
  checked before any work) and argparse's own checks (the usage block is not printed; --help has it);
- at run time, when the command raises ValueError (its message names the argument), OSError (a
  file that could not be read or written: the file and the reason are printed) or MemoryError
  (a size this machine cannot hold).

Anything else is a bug and keeps its traceback.
"""
from __future__ import annotations

import argparse
import functools
import importlib
import os
import sys

# Subcommand modules, in the order --help lists them.
COMMANDS = ["plan", "check", "bench", "calibrate", "validate", "serving", "gpu-time", "perplexity", "generate", "heads", "demo", "web"]


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error: ``multihead CMD: error: ...`` (no usage block), exit 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="multihead",
        description="Softmax and multi-head attention for long-context inference: compute it, size it, check it.")
    from multihead import __version__
    parser.add_argument("--version", action="version", version=f"multihead {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMANDS:
        importlib.import_module(f"multihead.cli.{name.replace('-', '_')}").register(sub)
    return parser


# One parser per process: building it (12 subcommands, ~200 arguments) takes ~11 ms, a third of
# a plan; the web page's memory curve runs ~80 plans a request. Parsing leaves the parser as it was
# (argparse keeps no state between parse_args calls; no default here is computed at build time).
_parser = functools.lru_cache(maxsize=1)(build_parser)


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns the exit code (2 for bad input, parse-time or run-time alike)."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:          # --help / --version (0) or a parse error (2), already printed
        return exit_.code if isinstance(exit_.code, int) else 2
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `multihead plan --json | head`: the reader left; point stdout at /dev/null so the
        # interpreter's final flush does not print a second traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except ValueError as err:
        return _fail(args.command, str(err))
    except ImportError as err:           # an optional part not installed: what to install, on one line
        from multihead._optional import message
        return _fail(args.command, message(err.name))
    except OSError as err:
        where = f"{err.filename}: " if err.filename else ""
        return _fail(args.command, f"{where}{err.strerror or err}")
    except MemoryError as err:
        return _fail(args.command, f"out of memory{': ' + str(err) if str(err) else ''} "
                                   f"(the sizes asked for do not fit this machine)")
    except RuntimeError as err:
        if "can't allocate memory" not in str(err):      # torch's CPU allocator failing
            raise
        return _fail(args.command, "out of memory (the sizes asked for do not fit this machine): "
                                   + str(err).split("can't allocate memory", 1)[1].strip(": "))


def _fail(command: str, message: str) -> int:
    """Print ``multihead CMD: error: message`` as one line on stderr; exit code 2."""
    line = " ".join(message.split())        # one line, whatever the message held
    print(f"multihead {command}: error: {line}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
