"""``multihead bench``: attention throughput vs the machine's limits and torch SDPA, as ratios."""
from __future__ import annotations

import json
import shlex
import sys

from multihead.cli._timing import add_timing_args, check_timing_args


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "bench", help="benchmark attention backends against the machine's limits and torch SDPA",
        description="In one process: measure this machine's matmul peak per dtype and streaming-read "
                    "bandwidth, then time torch SDPA (math and flash backends) and multihead's backends on "
                    "decode (one query against a GQA KV cache) and causal prefill over a grid of T, H/H_kv "
                    "and dtype. Prints throughput, the share of the limit (read bandwidth for decode, GEMM "
                    "peak for prefill) and the speed-up over SDPA's best backend, and checks the targets "
                    "of docs/performance.md. The full grid takes many minutes; --quick runs in seconds.")
    p.add_argument("--quick", action="store_true", help="a tiny grid (well under a minute, for CI)")
    p.add_argument("--json", metavar="FILE", default=None,
                   help="write the full report as JSON to FILE ('-' prints it on stdout instead of the table)")
    p.add_argument("--plot", metavar="FILE", default=None, help="write throughput vs T (PNG/SVG/PDF) to FILE")
    p.add_argument("--markdown", metavar="FILE", default=None,
                   help="write the results as a markdown page (command, load, limits, ratios, targets)")
    add_timing_args(p, "torch threads (default: torch's default, all cores)")
    p.add_argument("--no-memory", action="store_true", help="skip the peak-memory check of the prefill kernels")
    p.set_defaults(func=run)


def run(args) -> int:
    from multihead.bench.benchmark import BenchConfig, plot, run_benchmark
    check_timing_args(args)
    cfg = BenchConfig.quick() if args.quick else BenchConfig.full()
    if args.no_memory:
        cfg.memory_T = None
    command = "multihead " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if sys.argv[1:2] == ["bench"] \
        else "multihead bench"
    report = run_benchmark(cfg, progress=True, threads=args.threads, clock=args.clock, command=command)
    if args.plot:
        plot(report, args.plot)
    if args.markdown:
        from multihead.bench.benchmark import markdown
        with open(args.markdown, "w") as f:
            f.write(markdown(report))
    if args.json == "-":
        print(json.dumps(report))
        return 0
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    print_report(report)
    return 0


def print_report(report: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    from multihead.bench.benchmark import format_rate
    con = Console()
    lim = report["limits"]
    t = Table(title="limits measured in this run (best of several)")
    t.add_column("limit")
    t.add_column("value", justify="right")
    t.add_column("spread", justify="right")
    t.add_row(f"streaming read ({lim['read_bandwidth']['nbytes'] / 2**20:,.0f} MiB)",
              f"{lim['read_bandwidth']['best'] / 1e9:,.1f} GB/s", f"{lim['read_bandwidth']['spread']:.0%}")
    for key, m in lim.items():
        if key.startswith("gemm_"):
            t.add_row(f"matmul {key[5:]} (n={m['n']})", f"{m['best'] / 1e9:,.1f} GFLOP/s", f"{m['spread']:.0%}")
    con.print(t)

    t = Table(title=f"attention throughput (load average {report['load_average_before'][0]:.1f} -> "
                    f"{report['load_average_after'][0]:.1f}; {report['clock']} clock)")
    for col in ("case", "implementation", "throughput", "% of limit", "vs best SDPA", "note"):
        t.add_column(col, justify="left" if col in ("case", "implementation", "note") else "right")
    last = None
    for r in report["results"]:
        case = f"{r['kind']} {r['dtype']} T={r['T']:,} H={r['H']}/{r['H_kv']}"
        if "rate" not in r:
            t.add_row(case if case != last else "", r["impl"], "-", "-", "-", r.get("skipped", ""))
            last = case
            continue
        pct = f"{r['of_limit']:.0%}"
        if "of_fp32_gemm" in r:
            pct += f" ({r['of_fp32_gemm']:.0%} of fp32)"
        if "of_roofline" in r:
            pct += f" ({r['of_roofline']:.0%} of roofline)"
        note = ""
        if "measured_on" in r:
            m = r["measured_on"]
            note = f"rate measured at T={m['T']:,} H={m['H']}/{m['H_kv']}"
        vs = f"{r['vs_sdpa']:.2f}x" if "vs_sdpa" in r else "-"
        style = "bold" if r["impl"].startswith("fast_") else None
        t.add_row(case if case != last else "", r["impl"], format_rate(r), pct, vs, note, style=style)
        last = case
    con.print(t)

    if report.get("memory"):
        t = Table(title="peak extra memory of a causal prefill (fresh process, RSS)")
        for col in ("backend", "shape", "extra", "q+k+v+out", "ratio", "T^2 scores would be"):
            t.add_column(col, justify="right")
        for m in report["memory"]:
            t.add_row(m["backend"], f"{m['dtype']} T={m['T']:,} H={m['H']}/{m['H_kv']}",
                      f"{m['extra_bytes'] / 2**20:,.0f} MiB", f"{m['qkvo_bytes'] / 2**20:,.0f} MiB",
                      f"{m['ratio']:.2f}x", f"{m['score_matrix_bytes'] / 2**30:,.1f} GiB")
        con.print(t)
    if report.get("targets"):
        t = Table(title="targets (docs/performance.md)")
        for col in ("case", "metric", "target", "measured", "met"):
            t.add_column(col)
        for g in report["targets"]:
            case = f"{g['kind']} {g.get('dtype', '')} T={g['T']:,}".replace("  ", " ")
            t.add_row(case, g["metric"], f"{g['target']:g}", f"{g['value']:.2f}", "yes" if g["met"] else "NO")
        con.print(t)
