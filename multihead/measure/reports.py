"""What ``bench`` and ``validate`` print: each table built once as (headers, rows) of strings,
rendered as markdown here and as a rich table by the CLI."""
from __future__ import annotations

Table = tuple[list[str], list[list[str]]]


def markdown_table(table: Table) -> list[str]:
    headers, rows = table
    return [f"| {' | '.join(headers)} |", "|" + "---|" * len(headers)] + [f"| {' | '.join(r)} |" for r in rows]


def seconds(x: float) -> str:
    return f"{x * 1e3:,.2f} ms" if x < 1 else f"{x:,.3f} s"


# ---- bench -------------------------------------------------------------------------------------

def format_rate(row: dict) -> str:
    r = row["rate"]
    return f"{r / 1e9:,.2f} GB/s" if row["kind"] == "decode" else f"{r / 1e9:,.1f} GFLOP/s"


def _short(shape: dict) -> str:
    return f"T={shape['tk']:,} H={shape['heads']}/{shape['kv_heads']}"


def bench_limits(report: dict) -> Table:
    lim = report["limits"]
    bw = lim["read_bandwidth"]
    rows = [[f"streaming read ({bw['nbytes'] / 2**20:,.0f} MiB fp32 sum)", f"{bw['best'] / 1e9:,.1f} GB/s",
             f"{bw['spread']:.0%}"]]
    rows += [[f"matmul {k[5:]} n={m['n']}", f"{m['best'] / 1e9:,.2f} GFLOP/s", f"{m['spread']:.0%}"]
             for k, m in lim.items() if k.startswith("gemm_")]
    return ["limit", "value", "spread"], rows


def bench_results(report: dict) -> Table:
    rows = []
    for r in report["results"]:
        case = f"{r['kind']} {r['shape']['dtype']} {_short(r['shape'])}"
        if "rate" not in r:
            rows.append([case, r["impl"], "-", "-", "-", f"skipped: {r.get('skipped', '')}"])
            continue
        pct = f"{r['of_limit']:.0%}" + (f" ({r['of_fp32_gemm']:.0%} of fp32)" if "of_fp32_gemm" in r else "") \
            + (f" ({r['of_roofline']:.0%} of roofline)" if "of_roofline" in r else "")
        note = f"rate measured at {_short(r['measured_on'])} (full size too slow)" if "measured_on" in r else ""
        vs = f"{r['vs_sdpa']:.2f}x" if "vs_sdpa" in r else "-"
        rows.append([case, r["impl"], format_rate(r), pct, vs, note])
    return ["case", "implementation", "throughput", "% of limit", "vs best SDPA", "note"], rows


def bench_memory(report: dict) -> Table:
    rows = [[m["backend"], m["label"], f"{m['extra_bytes'] / 2**20:,.0f} MiB", f"{m['qkvo_bytes'] / 2**20:,.0f} MiB",
             f"{m['ratio']:.2f}x", f"{m['score_matrix_bytes'] / 2**30:,.1f} GiB"] for m in report.get("memory", [])]
    return ["backend", "shape", "extra", "q+k+v+out", "ratio", "T^2 scores would be"], rows


def bench_targets(report: dict) -> Table:
    rows = [[g["case"], g["metric"], f"{g['target']:g}", f"{g['value']:.2f}", "yes" if g["met"] else "NO"]
            for g in report.get("targets", [])]
    return ["case", "metric", "target", "measured", "met"], rows


def cpu_path_line(report: dict) -> str:
    """Which inner loops the C kernels ran (fast_native.describe()), and torch's own SIMD level."""
    c = report.get("cpu")
    if not c:
        return "C kernel path: not recorded."
    forced = [f"{k}={c[k]}" for k in ("MULTIHEAD_CPU_PATH", "ATEN_CPU_CAPABILITY", "MKL_ENABLE_INSTRUCTIONS",
                                      "ONEDNN_MAX_CPU_ISA") if c.get(k)]
    return (f"C kernel path: **{c['cpu_path']}** (this CPU runs {', '.join(c['cpu_paths']) or 'none of them'}; "
            f"{'set by ' + ', '.join(forced) if forced else 'chosen at load, no override'}); "
            f"torch's ATen kernels: {c['aten_cpu_capability']}.")


def bench_markdown(report: dict) -> str:
    """The report as a markdown page: command, machine, load, limits, ratio table, targets."""
    m = report["machine"]

    def load(key: str) -> str:
        return "/".join(f"{x:.1f}" for x in report[key]) if report[key] else "?"
    out = ["# multihead bench results", "", f"Command: `{report['command']}`", "",
           f"Started {report['started_utc']}, {report['seconds'] / 60:.1f} min; {m['processor']}, {m['cpu_count']} "
           f"CPUs, torch {m['torch']}, {m['threads']} threads, {report['clock']} clock. Load average (1/5/15 min) "
           f"{load('load_average_before')} before, {load('load_average_after')} after: the machine was shared, so "
           "only ratios measured in this run mean anything.", "", cpu_path_line(report), "",
           "## Limits measured in the same run (best of several)", "", *markdown_table(bench_limits(report)),
           "", "## Throughput as ratios", "",
           "Decode: bytes of K+V read per second vs the read bandwidth. Prefill: causal FLOPs per second vs "
           "the GEMM peak of the input dtype (for bf16 also vs the fp32 peak, the real ceiling of a kernel "
           "that upcasts to fp32 GEMMs). Decode rows also give the share of the roofline min(bandwidth, fp32 GEMM "
           "peak / (2 G / bytes per element)): with G query heads per KV head, every K/V element costs 2G FLOPs, "
           "which this CPU runs as fp32 FMAs. vs SDPA: our rate / the best SDPA backend's rate on the same case.",
           "", *markdown_table(bench_results(report))]
    if report.get("memory"):
        out += ["", "## Peak extra memory of a causal prefill (fresh process, peak RSS)", "",
                *markdown_table(bench_memory(report))]
    if report.get("targets"):
        out += ["", "## Targets (docs/performance.md)", "", *markdown_table(bench_targets(report))]
    return "\n".join(out) + "\n"


# ---- validate ----------------------------------------------------------------------------------

def validation_groups(result: dict) -> Table:
    rows = [[g, str(sm["rows"]), f"{sm['median_abs_error']:.1%}", f"{sm['max_abs_error']:.1%}",
             f"{sm['mean_error']:+.1%}", f"{sm['interval_coverage']:.0%}"] for g, sm in result["by_group"].items()]
    return ["group", "rows", "median abs error", "max abs error", "bias", "inside interval"], rows


def validation_rows(result: dict) -> Table:
    rows = [[r["label"], r["backend"] or "", seconds(r["predicted_s"]),
             f"{seconds(r['interval_s'][0])} .. {seconds(r['interval_s'][1])}", seconds(r["measured_s"]),
             f"{r['spread']:.1%}", f"{r['error']:+.1%}"] for r in result["rows"]]
    return ["shape", "kernel", "predicted", "interval", "measured (best)", "spread", "error"], rows


def bandwidth_line(result: dict) -> list[str]:
    """The read-bandwidth drift line of a report: the profile's rate against this run's."""
    bw = result.get("read_bandwidth")
    if not bw:
        return []
    drift = [bw[k] / bw["calibration"] - 1 for k in ("before", "after")]
    return [f"- streaming read: {bw['calibration'] / 1e9:.1f} GB/s at calibration, {bw['before'] / 1e9:.1f} at the start "
            f"of this run, {bw['after'] / 1e9:.1f} at its end ({drift[0]:+.0%} / {drift[1]:+.0%}): decode rows "
            f"move with it"]


def validation_headline(result: dict) -> str:
    tg = result["targets"]
    return (f"one-layer attention rows: median |error| {result['median_abs_error']:.1%}, max "
            f"{result['max_abs_error']:.1%} (targets 5% / 15%: {'met' if tg['met'] else 'not met'}); "
            f"bias {result['mean_error']:+.1%}; inside the prediction interval: {result['interval_coverage']:.0%}")


def validation_markdown(result: dict, command: str | None = None) -> str:
    """The result as a markdown report: headline, per-group errors, and every row."""
    lines = [f"# multihead validate: {result['device']['name']}", ""]
    if command:
        lines += ["Command:", "", "```bash", command, "```", ""]
    lines += [f"- kernel: `{result['kernel']}`; predicted by `{result['predictor']}`",
              f"- clock: {result['clock']}, torch threads: {result['threads']}, profile date: "
              f"{result['device'].get('date')}",
              f"- load average (1, 5, 15 min) before / after: {result['load_average']['before']} / "
              f"{result['load_average']['after']}",
              *bandwidth_line(result), f"- **{validation_headline(result)}**",
              "", *markdown_table(validation_groups(result)), "", *markdown_table(validation_rows(result))]
    for n in result.get("notes", []):
        lines += ["", f"Note: {n}"]
    return "\n".join(lines) + "\n"
