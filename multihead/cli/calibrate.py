"""``multihead calibrate``: measure this machine and write a device profile for ``plan --device``."""
from __future__ import annotations

import argparse

from multihead import jsonout
from multihead.cli import _args as A
from multihead.cli._timing import add_timing_args, check_timing_args

DTYPES = ("fp32", "bf16", "fp16")


def _dtype(text: str) -> str:
    if text.strip() not in DTYPES:
        raise argparse.ArgumentTypeError(f"expected one of {', '.join(DTYPES)}, got {text!r}")
    return text.strip()


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "calibrate", help="measure this machine and write a device profile (JSON)",
        description="Measure this machine's matmul throughput per dtype, streaming-read bandwidth and "
                    "multihead.attention's prefill and decode times on a small grid of shapes; fit the "
                    "CPU time model of multihead.cost.time.cpu_profile to them and write a device profile. Use it with "
                    "`multihead plan --device FILE` and `multihead validate --profile FILE`.")
    p.add_argument("--out", metavar="FILE", type=A.output_file(), default=None,
                   help="where to write the profile (default: $MULTIHEAD_CACHE/profile.json, "
                        "else ~/.cache/multihead/profile.json)")
    p.add_argument("--quick", action="store_true",
                   help="tiny shapes, a few seconds (for CI; the numbers are rough)")
    p.add_argument("--dtypes", type=A.list_of(_dtype), default="fp32", metavar="LIST",
                   help="attention dtypes to calibrate, comma-separated from fp32,bf16,fp16 "
                        "(default fp32; low-precision matmuls are slow on CPUs without a hardware path)")
    add_timing_args(p, "torch threads to measure with (default: torch's default, all cores)")
    p.add_argument("--json", action="store_true", help="print the profile as one JSON object")
    p.set_defaults(func=run)


def run(args) -> int:
    from multihead.cost.time.cpu_profile import device_to_profile
    from multihead.measure.calibrate import run_calibration
    check_timing_args(args)
    spec, path = run_calibration(args.out, quick=args.quick, dtypes=tuple(dict.fromkeys(args.dtypes)),
                                 threads=args.threads, clock=args.clock, progress=not args.json)
    if args.json:
        print(jsonout.dumps({**device_to_profile(spec), "path": str(path)}))
        return 0
    print_profile(spec, path)
    return 0


def print_profile(spec, path) -> None:
    from rich.console import Console
    from rich.table import Table
    e = spec.extra
    t = Table(title=f"{spec.name}: profile written to {path}")
    t.add_column("quantity")
    t.add_column("value", justify="right")
    t.add_column("spread", justify="right")
    lim = e.get("limits", {})
    for dt, v in spec.matmul_flops.items():
        t.add_row(f"matmul {dt} (n={lim.get(f'matmul_{dt}', {}).get('n', '?')})", f"{v / 1e9:,.1f} GFLOP/s",
                  f"{lim.get(f'matmul_{dt}', {}).get('spread', 0):.0%}")
    t.add_row("streaming read", f"{spec.bandwidth_bytes_per_s / 1e9:,.1f} GB/s",
              f"{lim.get('read_bandwidth', {}).get('spread', 0):.0%}")
    for key, c in spec.prefill.items():
        if "/" not in key and any(k.startswith(key + "/") for k in spec.prefill):
            continue        # the plain dtype key repeats one kernel's terms (the fallback)
        t.add_row(f"prefill {key}", f"F {c.flops_per_s / 1e9:,.1f} GFLOP/s, softmax "
                  f"{c.seconds_per_score * 1e9:.3f} ns/score, {c.seconds_per_row * 1e9:.1f} ns/row, "
                  f"{c.overhead_s * 1e6:.0f} us/call{'' if c.skips_masked else ', computes masked scores'}"
                  + (f", +{c.seconds_per_spilled_score * 1e9:.3f} ns/score beyond the cache"
                     if c.seconds_per_spilled_score else "")
                  + (f", +{c.seconds_per_masked_score * 1e9:.3f} ns/score to mask"
                     if c.seconds_per_masked_score else ""), "")
    for key, c in spec.decode.items():
        flops = f", compute {c.flops_per_s / 1e9:,.1f} GFLOP/s" if c.flops_per_s else ""
        spill = f" ({c.spilled_bytes_per_s / 1e9:,.2f} beyond the cache)" if c.spilled_bytes_per_s else ""
        form = ("; reads and compute overlap: max of the two" if c.overlapped else "; reads + compute") if flops else ""
        t.add_row(f"decode {key}", f"KV {c.bytes_per_s / 1e9:,.2f} GB/s{spill}{flops}, {c.overhead_s * 1e6:.0f} us/call{form}", "")
    for k, v in e.get("fit_rms_relative_residual", {}).items():   # noqa: B007
        t.add_row(f"fit residual {k} (RMS)", f"{v:.1%}", "")
    t.add_row("run-to-run spread (median, max)",
              f"{e['spread']['median']:.1%}, {e['spread']['max']:.1%}", "")
    t.add_row("kernel", str(e.get("kernel")), "")
    t.add_row("clock, threads", f"{e.get('clock')}, {e.get('threads')}", "")
    t.add_row("load average before/after", f"{e['load_average']['before']} / {e['load_average']['after']}", "")
    Console().print(t)
