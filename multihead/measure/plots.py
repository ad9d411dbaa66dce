"""The figures of ``bench`` and ``validate``, built from their JSON results (``multihead.figures``
saves them; tests read the axes back). matplotlib is imported by the first figure, not with this
module (~0.4 s a process that only imports it)."""
from __future__ import annotations

import math

VALIDATION_MARKERS = {"prefill": "o", "decode": "s", "smollm2 prefill": "^", "smollm2 decode": "v"}
BAND = 0.15            # the +-15% band drawn around predicted = measured (the max-error target)


def validation_figure(result: dict):
    """Predicted versus measured (log-log), one series per group with each prediction's interval
    as an error bar, the y = x line and the +-15% band."""
    from multihead.figures import plt
    fig, ax = plt.subplots(figsize=(6.4, 6.0))
    lo, hi = math.inf, 0.0
    for g in result["by_group"]:
        rs = [r for r in result["rows"] if r["group"] == g]
        x = [r["measured_s"] for r in rs]
        y = [r["predicted_s"] for r in rs]
        err = [[r["predicted_s"] - r["interval_s"][0] for r in rs], [r["interval_s"][1] - r["predicted_s"] for r in rs]]
        ax.errorbar(x, y, yerr=err, fmt=VALIDATION_MARKERS.get(g, "o"), capsize=2, label=g)
        lo, hi = min(lo, *x, *y), max(hi, *x, *y)
    line = [lo / 1.5, hi * 1.5]
    ax.plot(line, line, "k-", lw=0.8, label="predicted = measured")
    ax.fill_between(line, [v * (1 - BAND) for v in line], [v * (1 + BAND) for v in line], color="grey", alpha=0.15,
                    label=f"+-{BAND:.0%}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("measured (s, best of repeats)")
    ax.set_ylabel("predicted by multihead plan --device PROFILE (s)")
    ax.set_title(f"median |error| {result['median_abs_error']:.1%}, max {result['max_abs_error']:.1%} "
                 f"(attention rows)", fontsize=10)
    ax.legend(fontsize=8)
    return fig


def bench_figure(report: dict):
    """Throughput vs T per implementation and head counts, one panel per (kind, dtype): decode in
    GB/s with the read bandwidth as a line, prefill in GFLOP/s with the GEMM peaks as lines."""
    lim = report["limits"]
    rows = [r for r in report["results"] if "rate" in r and "measured_on" not in r]
    panels = sorted({(r["kind"], r["shape"]["dtype"]) for r in rows})
    from multihead.figures import plt
    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 4), squeeze=False)
    for ax, (kind, dt) in zip(axes[0], panels):
        sel = [r for r in rows if r["kind"] == kind and r["shape"]["dtype"] == dt]
        for impl in sorted({r["impl"] for r in sel}):
            for heads in sorted({(r["shape"]["heads"], r["shape"]["kv_heads"]) for r in sel}):
                pts = sorted((r["shape"]["tk"], r["rate"] / 1e9) for r in sel if r["impl"] == impl
                             and (r["shape"]["heads"], r["shape"]["kv_heads"]) == heads)
                if pts:
                    ax.plot(*zip(*pts), marker="o", label=f"{impl} {heads[0]}/{heads[1]}")
        if kind == "decode":
            ax.axhline(lim["read_bandwidth"]["best"] / 1e9, color="k", ls="--", label="read bandwidth")
        else:
            ax.axhline(lim["gemm_fp32"]["best"] / 1e9, color="k", ls="--", label="fp32 GEMM peak")
            if dt != "fp32":
                ax.axhline(lim[f"gemm_{dt}"]["best"] / 1e9, color="r", ls=":", label=f"{dt} GEMM peak")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("T (tokens)")
        ax.set_ylabel("GB/s" if kind == "decode" else "GFLOP/s")
        ax.set_title(f"{kind} {dt}")
        ax.legend(fontsize=6)
    load = report["load_average_before"][0] if report["load_average_before"] else float("nan")
    fig.suptitle(f"multihead bench ({report['machine'].get('cpu_count')} CPUs, load {load:.1f})", fontsize=9)
    return fig
