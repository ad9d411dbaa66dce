"""``multihead bench``: attention throughput vs the machine's limits and torch SDPA, as ratios."""
from __future__ import annotations

import shlex
import sys
from pathlib import Path

from multihead import jsonout
from multihead.cli import _args as A
from multihead.cli._timing import PLOT_FILE, add_timing_args, check_timing_args, write_outputs


def _json_target(text: str):
    return "-" if text == "-" else A.output_file()(text)


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "bench", help="benchmark attention backends against the machine's limits and torch SDPA",
        description="In one process: measure this machine's matmul peak per dtype and streaming-read "
                    "bandwidth, then time torch SDPA (math and flash backends) and multihead's backends on "
                    "decode (one query against a GQA KV cache) and causal prefill over a grid of T, H/H_kv "
                    "and dtype. Prints throughput, the share of the limit (read bandwidth for decode, GEMM "
                    "peak for prefill) and the speed-up over SDPA's best backend, and checks the targets "
                    "of docs/performance.md. The full grid takes many minutes; --quick runs in seconds. "
                    "Output paths are checked before anything runs, and the JSON is written first.")
    p.add_argument("--quick", action="store_true", help="a tiny grid (well under a minute, for CI)")
    p.add_argument("--targets-only", action="store_true",
                   help="only the cases that docs/performance.md sets targets for, prefill up to T=4096, full "
                        "size, no memory check and no feature rows")
    p.add_argument("--json", metavar="FILE", type=_json_target, default=None,
                   help="write the full report as JSON to FILE ('-' prints it on stdout instead of the table)")
    p.add_argument("--plot", metavar="FILE", type=PLOT_FILE, default=None,
                   help="write throughput vs T (.png/.svg/.pdf) to FILE")
    p.add_argument("--markdown", metavar="FILE", type=A.output_file(), default=None,
                   help="write the results as a markdown page (command, load, limits, ratios, targets)")
    add_timing_args(p, "torch threads (default: torch's default, all cores)")
    p.add_argument("--no-memory", action="store_true", help="skip the peak-memory check of the prefill kernels")
    p.add_argument("--features-only", action="store_true",
                   help="run only the rows of the attention features (window vs dense mask, varlen vs each "
                        "sequence alone, paged vs contiguous decode; multihead/measure/features.py)")
    p.set_defaults(func=run)


def run(args) -> int:
    from multihead.figures import save
    from multihead.measure.benchmark import BenchConfig, run_benchmark
    from multihead.measure.calibrate import torch_threads
    from multihead.measure.features import FeatureConfig, run_features
    from multihead.measure.plots import bench_figure
    from multihead.measure.reports import bench_markdown
    from multihead.kernels import fast_native
    check_timing_args(args)
    fast_native.requested_path()       # MULTIHEAD_CPU_PATH checked before anything runs (ValueError: exit 2)
    if args.features_only and (args.plot or args.markdown):
        raise ValueError("--features-only: the plot and markdown page are of the main grid; use --json")
    if args.quick and args.targets_only:
        raise ValueError("--targets-only: runs full-size cases; it cannot be combined with --quick")
    cfg = BenchConfig.quick() if args.quick else BenchConfig.targets() if args.targets_only else BenchConfig.full()
    if args.no_memory:
        cfg.memory_T = None
    command = "multihead " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if sys.argv[1:2] == ["bench"] \
        else "multihead bench"
    with torch_threads(args.threads, args.clock):
        if args.features_only:
            report = {"command": command, "clock": args.clock, "results": []}
        else:
            report = run_benchmark(cfg, progress=True, clock=args.clock, command=command)
        if not args.targets_only:        # the feature rows have no targets here
            report["features"] = run_features(FeatureConfig.quick() if args.quick else FeatureConfig(), args.clock)
    to_stdout = args.json == "-"
    if to_stdout:
        print(jsonout.dumps(report))
    else:
        print_report(report)
    write_outputs([
        ("--json", None if to_stdout else args.json, lambda p: Path(p).write_text(jsonout.dumps(report, indent=1))),
        ("--plot", args.plot, lambda p: save(bench_figure(report), p)),
        ("--markdown", args.markdown, lambda p: Path(p).write_text(bench_markdown(report)))])
    return 0


def _rich(table, title: str):
    from rich.table import Table
    headers, rows = table
    t = Table(title=title)
    for h in headers:
        t.add_column(h)
    for r in rows:
        t.add_row(*r, style="bold" if r[1].startswith("fast_") else None)
    return t


def print_report(report: dict) -> None:
    from rich.console import Console

    from multihead.measure import reports
    con = Console()
    if report.get("features"):
        from multihead.measure.features import feature_table
        con.print(_rich(feature_table(report["features"]), "attention features: ratios within this run"))
    if not report.get("results"):
        return
    con.print(reports.cpu_path_line(report).replace("**", ""))
    con.print(_rich(reports.bench_limits(report), "limits measured in this run (best of several)"))
    load = [report["load_average_before"] or ["?"], report["load_average_after"] or ["?"]]
    con.print(_rich(reports.bench_results(report),
                    f"attention throughput (load average {load[0][0]} -> {load[1][0]}; {report['clock']} clock)"))
    if report.get("memory"):
        con.print(_rich(reports.bench_memory(report), "peak extra memory of a causal prefill (fresh process, RSS)"))
    if report.get("targets"):
        con.print(_rich(reports.bench_targets(report), "targets (docs/performance.md)"))
