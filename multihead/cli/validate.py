"""``multihead validate``: the planner predicts, this machine measures; print the error."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from multihead import jsonout
from multihead.cli import _args as A
from multihead.cli._timing import PLOT_FILE, add_timing_args, write_outputs


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "validate", help="check the planner's time predictions against measurements on this machine",
        description="With a device profile from `multihead calibrate`, ask the planner (one layer, "
                    "--params 0) for attention prefill and decode times on held-out shapes that "
                    "calibration did not use, measure multihead.attention on the same shapes, and "
                    "report predicted, measured and error; with the models extra, SmolLM2-135M's "
                    "whole prefill and per-token decode too. Output paths are checked before anything "
                    "runs, and the JSON is written first.")
    p.add_argument("--profile", metavar="FILE", default=None,
                   help="device profile (default: the one `multihead calibrate` writes; calibrated "
                        "first if it does not exist)")
    p.add_argument("--quick", action="store_true", help="tiny shapes, no model (for CI)")
    p.add_argument("--no-models", action="store_true", help="skip the SmolLM2 rows")
    add_timing_args(p, "torch threads to measure with (default: the profile's)", clock_default=None)
    p.add_argument("--json", action="store_true", help="print one JSON object (median_abs_error, "
                   "max_abs_error as fractions, rows, ...)")
    p.add_argument("--out", metavar="FILE", type=A.output_file(), default=None, help="also write the JSON to FILE")
    p.add_argument("--plot", metavar="FILE", type=PLOT_FILE, default=None,
                   help="predicted-versus-measured plot (.png/.svg/.pdf)")
    p.add_argument("--markdown", metavar="FILE", type=A.output_file(), default=None,
                   help="also write a markdown report to FILE")
    p.set_defaults(func=run)


def _profile(args) -> Path:
    """The profile to use: --profile (an existing, readable file), else the default one, calibrated
    first when missing (the default folder is checked to be writable by calibrate's --out rules)."""
    from multihead.measure.calibrate import default_profile_path, run_calibration
    if args.profile is not None:         # '' is a bad path, not 'use the default'
        try:
            return A.input_file()(args.profile)
        except argparse.ArgumentTypeError as err:
            raise ValueError(f"--profile: {err} (write one with `multihead calibrate --out FILE`)") from None
    path = default_profile_path()
    if not path.exists():
        print(f"multihead validate: no profile at {path}; calibrating first", file=sys.stderr)
        run_calibration(path, quick=args.quick, threads=args.threads, clock=args.clock or "wall",
                        progress=not args.json)
    return path


def _load_profile(path: Path, name: str):
    """The profile read once, here, so that its checks (cost.time.cpu_profile, whose messages name the
    planner's --gpu, which can be a profile path) name this command's argument instead."""
    from multihead.cost.time.cpu_profile import load_device
    try:
        return load_device(str(path))
    except ValueError as err:
        said = str(err).removeprefix("gpu: ")
        hint = "write one with `multihead calibrate --out FILE`" if name == "--profile" else \
            "delete it and run `multihead calibrate` again"
        raise ValueError(f"{name}: {said} ({hint})") from None


def run(args) -> int:
    from multihead.figures import save
    from multihead.measure.plots import validation_figure
    from multihead.measure.reports import validation_markdown
    from multihead.measure.validate import ValidationPlan, validate
    if args.clock == "cpu" and args.threads not in (None, 1):
        raise ValueError("--clock: 'cpu' sums the CPU time of every thread; it needs --threads 1")
    path = _profile(args)
    device = _load_profile(path, "--profile" if args.profile is not None else "profile")
    plan = ValidationPlan.quick() if args.quick else ValidationPlan()
    result = validate(device, plan, models=not args.no_models, threads=args.threads, clock=args.clock,
                      progress=not args.json)
    result["profile"] = str(path)
    if args.plot:
        result["plot"] = str(args.plot)
    if args.json:
        print(jsonout.dumps(result))
    else:
        print_result(result)
    write_outputs([
        ("--out", args.out, lambda p: Path(p).write_text(jsonout.dumps(result, indent=2) + "\n")),
        ("--plot", args.plot, lambda p: save(validation_figure(result), p)),
        ("--markdown", args.markdown, lambda p: Path(p).write_text(validation_markdown(result, _command(args))))])
    return 0


def _command(args) -> str:
    """The command line that made this result (for the report)."""
    parts = ["multihead validate"]
    for flag, value in (("--profile", args.profile), ("--threads", args.threads), ("--clock", args.clock),
                        ("--out", args.out), ("--plot", args.plot), ("--markdown", args.markdown)):
        if value is not None:
            parts += [flag, str(value)]
    parts += [flag for flag, on in (("--quick", args.quick), ("--no-models", args.no_models)) if on]
    return " ".join(parts)


def print_result(result: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    from multihead.measure import reports
    headers, rows = reports.validation_rows(result)
    t = Table(title=f"multihead validate: {result['device']['name']} ({result['kernel']}; "
                    f"predicted by {result['predictor']})")
    for h in headers:
        t.add_column(h, justify="left" if h in ("shape", "kernel") else "right")
    for r, row in zip(result["rows"], rows):
        color = "green" if abs(r["error"]) <= 0.05 else "yellow" if abs(r["error"]) <= 0.15 else "red"
        t.add_row(*row[:-1], f"[{color}]{row[-1]}[/]")
    c = Console()
    c.print(t)
    for g, sm in result["by_group"].items():
        c.print(f"{g}: median |error| {sm['median_abs_error']:.1%}, max {sm['max_abs_error']:.1%}, "
                f"bias {sm['mean_error']:+.1%}, inside interval {sm['interval_coverage']:.0%} ({sm['rows']} rows)")
    c.print(f"{reports.validation_headline(result)}; {result['clock']} clock, {result['threads']} threads, "
            f"load average {result['load_average']['before']}")
    for line in reports.bandwidth_line(result):
        c.print(line[2:])
    for n in result["notes"]:
        c.print(f"note: {n}")
    if result.get("plot"):
        c.print(f"plot: {result['plot']}")
