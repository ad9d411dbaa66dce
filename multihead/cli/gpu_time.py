"""``multihead gpu-time``: the GPU-time model against published measurements (fit on part, test on the rest)."""
from __future__ import annotations

import argparse
import json

from multihead.cli import _args as A


def add_request_flags(p: argparse.ArgumentParser) -> None:
    """The request the serving times are for (shared by ``multihead serving`` and ``multihead plan``)."""
    g = p.add_argument_group("request (for TTFT, TPOT and tokens/s)")
    g.add_argument("--input-len", type=A.int_range(1, A.MAX_TOKENS),
                   help="prompt tokens per request (default: max-model-len less --output-len)")
    g.add_argument("--output-len", type=A.int_range(1, A.MAX_TOKENS),
                   help="new tokens per request (default 1024, at most a quarter of max-model-len)")
    load = g.add_mutually_exclusive_group()
    load.add_argument("--concurrency", type=A.int_range(1, 1 << 20),
                      help="evaluate at N requests in flight (closed loop): serving.at")
    load.add_argument("--request-rate", type=A.float_range(0, 1e6, lo_open=True),
                      help="evaluate at R requests/s arriving as a Poisson process (open loop): serving.at")


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "gpu-time", help="validate the GPU-time model (TTFT, TPOT, throughput) against published measurements",
        description="Predict every row of reports/gpu-time/measurements.json (published TTFT, decode tokens/s, "
                    "ITL and throughput on A100/H100/H200/L40S/MI300X) with the committed constants and print the "
                    "error by split: the fitted rows (training, and sets 1 and 2, seen) and held-out set 3. --fit "
                    "refits the constants on the fitted rows only and rewrites "
                    "multihead/cost/catalog/gpu_time_fit.json and reports/gpu-time/.")
    p.add_argument("--fit", action="store_true", help="refit the constants and rewrite the fit file and the reports")
    p.add_argument("--measurements", type=A.input_file(), help="table of measurements (default reports/gpu-time/measurements.json)")
    p.add_argument("--out", type=A.output_dir(), help="report folder for --fit (default reports/gpu-time/)")
    p.add_argument("--cv", action="store_true",
                   help="4-fold cross-validation inside the fitted rows (how model variants are chosen; slow)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from multihead.cost import timing_validation as tv
    if args.cv:
        summ = tv.cross_validate(tv.load_table(args.measurements))
        if args.json:
            print(json.dumps(summ, indent=1))
            return 0
        print("out-of-fold error of the fitted rows (4 folds):")
        for fam, s in summ.items():
            if isinstance(s, dict) and s.get("n"):
                print(f"  {fam}: n {s['n']}, median {s['median_abs'] * 100:.1f}%, max {s['max_abs'] * 100:.1f}%")
        print(f"  log-RMS {summ['log_rms']:.4f}")
        return 0
    result = tv.run(refit=args.fit, measurements=args.measurements, out_dir=args.out)
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    print(f"constants: {result['source'] if not args.fit else 'refitted on the fitted rows (training, sets 1 and 2)'}")
    print(f"split: {tv.SPLIT_RULE}")
    print("\n".join(tv._summary_lines(result["summary"])))
    return 0
