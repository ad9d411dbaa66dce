"""``multihead validate``: the planner predicts, this machine measures; print the error."""
from __future__ import annotations

import json
import sys
from pathlib import Path


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "validate", help="check the planner's time predictions against measurements on this machine",
        description="With a device profile from `multihead calibrate`, ask the planner (one layer, "
                    "--params 0) for attention prefill and decode times on held-out shapes that "
                    "calibration did not use, measure multihead.attention on the same shapes, and "
                    "report predicted, measured and error; with the models extra, SmolLM2-135M's "
                    "whole prefill and per-token decode too.")
    p.add_argument("--profile", metavar="FILE", default=None,
                   help="device profile (default: the one `multihead calibrate` writes; calibrated "
                        "first if it does not exist)")
    p.add_argument("--quick", action="store_true", help="tiny shapes, no model (for CI)")
    p.add_argument("--no-models", action="store_true", help="skip the SmolLM2 rows")
    p.add_argument("--threads", type=int, default=None, metavar="N",
                   help="torch threads to measure with (default: the profile's)")
    p.add_argument("--clock", choices=("wall", "cpu"), default=None,
                   help="wall or cpu (the process's CPU time, one thread; default: the profile's)")
    p.add_argument("--json", action="store_true", help="print one JSON object (median_abs_error, "
                   "max_abs_error as fractions, rows, ...)")
    p.add_argument("--out", metavar="FILE", default=None, help="also write the JSON to FILE")
    p.add_argument("--plot", metavar="FILE", default=None, help="predicted-versus-measured plot (PNG)")
    p.add_argument("--markdown", metavar="FILE", default=None, help="also write a markdown report to FILE")
    p.set_defaults(func=run)


def run(args) -> int:
    from multihead.bench.calibrate import default_profile_path, run_calibration
    from multihead.bench.validate import ValidationPlan, markdown, plot, validate
    path = Path(args.profile).expanduser() if args.profile else default_profile_path()
    if not path.exists():
        if args.profile:
            raise ValueError(f"--profile: {str(path)!r} does not exist (write one with `multihead calibrate --out FILE`)")
        print(f"multihead validate: no profile at {path}; calibrating first", file=sys.stderr)
        run_calibration(path, quick=args.quick, threads=args.threads, clock=args.clock or "wall",
                        progress=not args.json)
    plan = ValidationPlan.quick() if args.quick else ValidationPlan()
    result = validate(str(path), plan, models=not args.no_models, threads=args.threads, clock=args.clock,
                      progress=not args.json)
    result["profile"] = str(path)
    if args.plot:
        result["plot"] = plot(result, args.plot)
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    if args.markdown:
        Path(args.markdown).write_text(markdown(result, _command(args)))
    if args.json:
        print(json.dumps(result))
    else:
        print_result(result)
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


def _s(x: float) -> str:
    return f"{x * 1e3:,.2f} ms" if x < 1 else f"{x:,.3f} s"


def print_result(result: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    from multihead.bench.validate import bandwidth_line
    t = Table(title=f"multihead validate: {result['device']['name']} ({result['kernel']}; "
                    f"predicted by {result['predictor']})")
    for col in ("shape", "kernel", "predicted", "interval", "measured (best)", "spread", "error"):
        t.add_column(col, justify="left" if col in ("shape", "kernel") else "right")
    for r in result["rows"]:
        lo, hi = r["interval_s"]
        t.add_row(r["label"], str(r["backend"] or ""), _s(r["predicted_s"]), f"{_s(lo)} .. {_s(hi)}",
                  _s(r["measured_s"]), f"{r['spread']:.1%}",
                  f"[{'green' if abs(r['error']) <= 0.05 else 'yellow' if abs(r['error']) <= 0.15 else 'red'}]"
                  f"{r['error']:+.1%}[/]")
    c = Console()
    c.print(t)
    for g, sm in result["by_group"].items():
        c.print(f"{g}: median |error| {sm['median_abs_error']:.1%}, max {sm['max_abs_error']:.1%}, "
                f"bias {sm['mean_error']:+.1%}, inside interval {sm['interval_coverage']:.0%} ({sm['rows']} rows)")
    tg = result["targets"]
    c.print(f"targets over {tg['over']}: median <= 5%, max <= 15%: "
            f"{'[green]met[/]' if tg['met'] else '[red]not met[/]'} (median {result['median_abs_error']:.1%}, "
            f"max {result['max_abs_error']:.1%}); {result['clock']} clock, {result['threads']} threads, "
            f"load average {result['load_average']['before']}")
    for line in bandwidth_line(result):
        c.print(line[2:])
    for n in result["notes"]:
        c.print(f"note: {n}")
    if result.get("plot"):
        c.print(f"plot: {result['plot']}")
