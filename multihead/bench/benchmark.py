"""``multihead bench``: attention throughput against the machine's limits and torch SDPA, in one run.

Every number is measured in this process and reported as a ratio: ours / SDPA (speed-up) and
ours / the limit (the share of the machine reached). Absolute timings on a shared CPU are noise;
ratios measured seconds apart are not.

Work counted per call (formulas from multihead.accounting):
    decode   bytes of K and V read, kv_cache_bytes(1 layer) = 2 * B * H_kv * Tk * d * bytes;
             limit: the streaming-read bandwidth (sum of a large fp32 tensor).
    prefill  attention_flops(causal=True), ~2 * B * H * T^2 * d for Tq = Tk = T;
             limit: the matmul peak of the input dtype and, for 16-bit inputs, also the fp32 peak
             (the real ceiling of a kernel that upcasts to fp32 GEMMs on a CPU without bf16 units).
"""
from __future__ import annotations

import os
import sys
import time
from dataclasses import asdict, astuple, dataclass, field

import torch

from multihead.accounting import attention_flops, dtype_bytes, kv_cache_bytes, score_matrix_bytes
from multihead.bench.limits import machine_description, measure_matmul_flops, measure_read_bandwidth, time_call

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
# Implementations compared: SDPA backends and multihead backends (through multihead.attention).
SDPA_IMPLS = ("sdpa-math", "sdpa-flash")
OURS = {"decode": ("decode", "fast_decode"), "prefill": ("tiled", "fast_prefill")}
BEST_OURS = {"decode": "fast_decode", "prefill": "fast_prefill"}
# The SDPA math backend materializes [B, H, T, T] scores (and its softmax copy); skip it beyond this.
MATH_MAX_SCORE_BYTES = 2 * 1024**3


@dataclass
class Case:
    """One point of the grid: q [B, H, Tq, d] against k, v [B, H_kv, T, d] (Tq = 1 for decode)."""
    kind: str                # "decode" or "prefill"
    dtype: str               # "fp32", "bf16", "fp16"
    T: int                   # cached tokens (decode) or sequence length (prefill, causal)
    H: int = 32
    H_kv: int = 8
    d: int = 128
    B: int = 1

    @property
    def tq(self) -> int:
        return 1 if self.kind == "decode" else self.T

    def work(self) -> float:
        """Bytes of K+V (decode) or causal FLOPs (prefill) of one call."""
        if self.kind == "decode":
            return kv_cache_bytes(1, self.H_kv, self.d, self.T, dtype_bytes(self.dtype), self.B)
        return float(attention_flops(self.B, self.H, self.tq, self.T, self.d, causal=True))

    def label(self) -> str:
        return f"{self.kind} {self.dtype} T={self.T} H={self.H}/{self.H_kv}"


@dataclass
class BenchConfig:
    """What to run. ``full()`` is the committed benchmark; ``quick()`` fits a CI test."""
    cases: list[Case]
    repeats: int = 3
    bandwidth_bytes: int = 1 << 30
    gemm_n: dict[str, int] = field(default_factory=lambda: {"fp32": 2048, "bf16": 512, "fp16": 512})
    max_seconds: float = 60.0     # a predicted-slower call (SDPA in bf16) is measured on a reduced shape
    memory_T: int | None = 32768  # peak-memory check of the prefill kernels at this T (None: skip)
    memory_heads: tuple[int, int] = (32, 8)

    @staticmethod
    def full() -> "BenchConfig":
        cases = []
        for dt, tokens in (("fp32", (32768, 131072)), ("bf16", (65536, 262144))):
            for T in tokens:                       # 131072 fp32 / 262144 bf16 tokens = 1 GiB of K+V
                cases.append(Case("decode", dt, T, 32, 8))
            cases.append(Case("decode", dt, tokens[-1], 8, 8))     # MHA, same bytes: no GQA reuse
        for dt in ("fp32", "bf16"):
            for T in (1024, 4096, 16384):
                cases.append(Case("prefill", dt, T, 32, 8))
        cases.append(Case("prefill", "fp32", 4096, 32, 32))       # MHA: same FLOPs, 4x the K/V
        # Peak memory at T=32k with 8/2 heads: the ratio to q+k+v+out does not depend on H, and
        # 32/8 heads would take minutes per call on 2 cores.
        return BenchConfig(cases, memory_heads=(8, 2))

    @staticmethod
    def quick() -> "BenchConfig":
        cases = [Case("decode", "fp32", 8192), Case("decode", "bf16", 8192),
                 Case("prefill", "fp32", 512), Case("prefill", "bf16", 256)]
        return BenchConfig(cases, repeats=2, bandwidth_bytes=128 << 20,
                           gemm_n={"fp32": 512, "bf16": 128, "fp16": 128}, max_seconds=2.0,
                           memory_T=1024, memory_heads=(8, 2))


def measure_limits(cfg: BenchConfig, dtypes: set[str], clock: str = "wall") -> dict:
    """GEMM peak per dtype (FLOP/s) and streaming-read bandwidth (bytes/s), best of a few runs."""
    out = {"read_bandwidth": {**measure_read_bandwidth(cfg.bandwidth_bytes, 5, clock=clock).to_dict(),
                              "nbytes": cfg.bandwidth_bytes}}
    for dt in sorted(dtypes | {"fp32"}):
        n = cfg.gemm_n[dt]
        out[f"gemm_{dt}"] = {**measure_matmul_flops(DTYPES[dt], n, 3 if dt == "fp32" else 2,
                                                    clock=clock).to_dict(), "n": n}
    return out


def _inputs(case: Case, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    dt = DTYPES[case.dtype]

    def rnd(*shape):
        return torch.randn(*shape, generator=g).to(dt)
    return (rnd(case.B, case.H, case.tq, case.d), rnd(case.B, case.H_kv, case.T, case.d),
            rnd(case.B, case.H_kv, case.T, case.d))


def _call(impl: str, case: Case, q, k, v):
    """The function to time for implementation ``impl`` on these inputs."""
    causal = case.kind == "prefill"
    if impl.startswith("sdpa-"):
        from torch.nn.attention import SDPBackend, sdpa_kernel
        from torch.nn.functional import scaled_dot_product_attention
        backend = SDPBackend.MATH if impl == "sdpa-math" else SDPBackend.FLASH_ATTENTION

        def run():
            with sdpa_kernel(backend):
                return scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=case.H != case.H_kv)
        return run
    from multihead.functional import attention
    return lambda: attention(q, k, v, is_causal=causal, backend=impl)


def _predicted_seconds(impl: str, case: Case, limits: dict) -> float:
    """A pessimistic guess of one call's time, used only to size repeats and shrink hopeless runs."""
    if case.kind == "decode":
        rate = 0.02 * limits["read_bandwidth"]["best"]
        if impl.startswith("sdpa") and case.dtype != "fp32":
            rate /= 10                                       # SDPA's 16-bit decode is ~5x slower still
        return case.work() / rate
    # Every prefill path here computes 16-bit inputs with fp32 arithmetic (SDPA's CPU kernels upcast
    # too: measured ~50 GFLOP/s in bf16 against ~1 GFLOP/s for a bf16 matmul), so the fp32 peak.
    return case.work() / (0.3 * limits["gemm_fp32"]["best"]) * (4 if impl == "sdpa-math" else 1)


def _shrink(impl: str, case: Case, limits: dict, max_seconds: float) -> Case:
    """A smaller case of the same kind/dtype/d to measure a throughput that would take too long at
    full size: first one GQA group (H = G, H_kv = 1), then halve T. Throughput is per byte/FLOP, so
    the rate carries over (it usually grows with size, so the reduced rate flatters nobody)."""
    c = case
    if _predicted_seconds(impl, c, limits) > max_seconds and c.H_kv > 1:
        c = Case(c.kind, c.dtype, c.T, c.H // c.H_kv, 1, c.d, c.B)
    while _predicted_seconds(impl, c, limits) > max_seconds and c.T > 128:
        c = Case(c.kind, c.dtype, c.T // 2, c.H, c.H_kv, c.d, c.B)
    return c


def _skip_reason(impl: str, case: Case) -> str | None:
    if impl in ("sdpa-math", "reference"):
        need = 2 * score_matrix_bytes(case.B, case.H, case.tq, case.T, 4)
        if need > MATH_MAX_SCORE_BYTES:
            return f"would materialize {need / 1e9:.1f} GB of scores"
    if impl == "sdpa-math" and case.H != case.H_kv:
        # SDPA's math path repeats K and V to H heads (and upcasts 16-bit inputs).
        need = 2 * case.B * case.H * case.T * case.d * 4
        if need > MATH_MAX_SCORE_BYTES:
            return f"would copy K/V to {case.H} heads: {need / 1e9:.1f} GB"
    return None


def measure_case(case: Case, impls: tuple[str, ...], limits: dict, cfg: BenchConfig,
                 clock: str = "wall") -> list[dict]:
    """Time every implementation on ``case``, interleaved: each round times each implementation
    once, so a change in the machine's load during the case hits all of them alike; the best
    round counts. Returns one JSON-able row per implementation, with the shape it was measured on."""
    rows, plans, inputs = [], [], {}
    for impl in impls:
        row = {"impl": impl, **asdict(case), "unit": "B/s" if case.kind == "decode" else "FLOP/s"}
        rows.append(row)
        reason = _skip_reason(impl, case)
        if reason:
            row["skipped"] = reason
            continue
        measured = _shrink(impl, case, limits, cfg.max_seconds)
        key = astuple(measured)
        if key not in inputs:
            inputs[key] = _inputs(measured)
        guess = _predicted_seconds(impl, measured, limits)
        # Long calls: one warm-up is itself a sample of the same cost, so time fewer of them.
        repeats, warmup = (cfg.repeats, 1) if guess < 5 else (2, 1) if guess < 20 else (1, 0)
        plans.append((row, measured, _call(impl, measured, *inputs[key]), repeats, warmup, []))
    for _, _, fn, _, warmup, _ in plans:
        for _ in range(warmup):
            fn()
    for r in range(max((p[3] for p in plans), default=0)):
        for _, _, fn, repeats, _, times in plans:
            if r < repeats:
                times.extend(time_call(fn, 1, 0, clock=clock))
    for row, measured, _, repeats, _, times in plans:
        work = measured.work()
        med = sorted(times)[len(times) // 2]
        row.update(seconds=min(times), seconds_median=med, repeats=repeats,
                   rate=work / min(times), rate_median=work / med)
        if measured != case:
            row["measured_on"] = asdict(measured)
    return rows


def peak_extra_memory(backend: str, T: int, H: int, H_kv: int, d: int = 128, dtype: str = "fp32") -> dict:
    """Peak memory a causal prefill call adds on top of its inputs, measured in a fresh process.

    The child allocates q, k, v, resets the kernel's peak-RSS counter (VmHWM, via
    /proc/self/clear_refs), runs the call and reads the peak: extra = VmHWM - VmRSS before the call
    (it includes the output). Returned with the bytes of q, k, v and out for the ratio the issue
    asks for (<= 2x). Linux only.
    """
    import json
    import subprocess
    code = f"""
import json, torch
from multihead.functional import attention
def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) * 1024
torch.manual_seed(0)
dt = getattr(torch, {str(DTYPES[dtype]).removeprefix('torch.')!r})
q = torch.randn(1, {H}, {T}, {d}).to(dt); k = torch.randn(1, {H_kv}, {T}, {d}).to(dt)
v = torch.randn(1, {H_kv}, {T}, {d}).to(dt)
open("/proc/self/clear_refs", "w").write("5")       # reset the peak to the current RSS
before = status("VmRSS:")
out = attention(q, k, v, is_causal=True, backend={backend!r})
print(json.dumps({{"before": before, "peak": status("VmHWM:"), "finite": bool(torch.isfinite(out).all())}}))
"""
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    r = json.loads(res.stdout.strip().splitlines()[-1])
    eb = dtype_bytes(dtype)
    io_bytes = eb * d * T * (2 * H + 2 * H_kv)               # q and out [1, H, T, d]; k, v [1, H_kv, T, d]
    extra = r["peak"] - r["before"]
    return {"backend": backend, "T": T, "H": H, "H_kv": H_kv, "d": d, "dtype": dtype,
            "extra_bytes": extra, "qkvo_bytes": io_bytes, "ratio": extra / io_bytes,
            "score_matrix_bytes": score_matrix_bytes(1, H, T, T, 4), "finite": r["finite"],
            "seconds": time.perf_counter() - t0}


def impls_for(case: Case) -> tuple[str, ...]:
    return SDPA_IMPLS + OURS[case.kind]


def run_benchmark(cfg: BenchConfig, progress: bool = True, threads: int | None = None,
                  clock: str = "wall", command: str = "") -> dict:
    """Measure the limits, then every implementation on every case; returns the JSON report."""
    from tqdm import tqdm
    if threads is not None:
        torch.set_num_threads(threads)
    t_start = time.time()
    load_before = os.getloadavg()
    dtypes = {c.dtype for c in cfg.cases}
    n_jobs = sum(len(impls_for(c)) for c in cfg.cases)
    n_mem = 2 if cfg.memory_T else 0
    bar = tqdm(total=1 + n_jobs + n_mem, desc="bench", unit="step", file=sys.stderr, disable=not progress)
    bar.set_postfix_str("limits")
    limits = measure_limits(cfg, dtypes, clock)
    bar.update(1)
    rows = []
    for case in cfg.cases:
        bar.set_postfix_str(case.label())
        rows.extend(measure_case(case, impls_for(case), limits, cfg, clock))
        bar.update(len(impls_for(case)))
    memory = []
    if cfg.memory_T:
        H, H_kv = cfg.memory_heads
        for backend in ("tiled", "fast_prefill"):
            bar.set_postfix_str(f"memory {backend} T={cfg.memory_T}")
            memory.append(peak_extra_memory(backend, cfg.memory_T, H, H_kv))
            bar.update(1)
    bar.close()
    add_ratios(rows, limits)
    return {
        "command": command,
        "machine": {**machine_description(), "cpu_count": os.cpu_count()},
        "clock": clock,
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t_start)),
        "seconds": time.time() - t_start,
        "limits": limits,
        "results": rows,
        "memory": memory,
        "targets": check_targets(rows, memory),
    }


def limit_of(row: dict, limits: dict, dtype: str | None = None) -> float:
    """The rate this row is judged against: read bandwidth (decode) or the GEMM peak of ``dtype``."""
    if row["kind"] == "decode":
        return limits["read_bandwidth"]["best"]
    return limits[f"gemm_{dtype or row['dtype']}"]["best"]


def add_ratios(rows: list[dict], limits: dict) -> None:
    """Add share of the limit and speed-up versus the best SDPA backend on the same case, in place."""
    def key(r):
        return (r["kind"], r["dtype"], r["T"], r["H"], r["H_kv"], r["d"], r["B"])
    best_sdpa: dict = {}
    for r in rows:
        if r["impl"].startswith("sdpa") and "rate" in r:
            k = key(r)
            if r["rate"] > best_sdpa.get(k, (0, ""))[0]:
                best_sdpa[k] = (r["rate"], r["impl"])
    for r in rows:
        if "rate" not in r:
            continue
        r["of_limit"] = r["rate"] / limit_of(r, limits)
        if r["kind"] == "decode":
            # Decode does 2 FLOPs per query head of a KV head's group (G of them) per K or V element:
            # 2*G / bytes-per-element FLOPs per byte. On a CPU without 16-bit matmul units those run
            # as fp32 FMAs, so the roofline is min(bandwidth, fp32 GEMM peak / intensity).
            intensity = 2 * (r["H"] // r["H_kv"]) / dtype_bytes(r["dtype"])
            r["roofline"] = min(limits["read_bandwidth"]["best"], limits["gemm_fp32"]["best"] / intensity)
            r["of_roofline"] = r["rate"] / r["roofline"]
        if r["kind"] == "prefill" and r["dtype"] != "fp32":
            r["of_fp32_gemm"] = r["rate"] / limit_of(r, limits, "fp32")
        if key(r) in best_sdpa:
            r["best_sdpa"] = best_sdpa[key(r)][1]
            r["vs_sdpa"] = r["rate"] / best_sdpa[key(r)][0]


# The targets, as (kind, dtype, T, H, H_kv) -> minimum ratios.
TARGETS = [
    {"kind": "decode", "dtype": "fp32", "T": 131072, "H": 32, "H_kv": 8, "of_limit": 0.70, "vs_sdpa": 3.0},
    {"kind": "decode", "dtype": "bf16", "T": 262144, "H": 32, "H_kv": 8, "of_limit": 0.50, "vs_sdpa": 10.0},
    {"kind": "prefill", "dtype": "fp32", "T": 4096, "H": 32, "H_kv": 8, "vs_sdpa": 0.9},
    {"kind": "prefill", "dtype": "fp32", "T": 16384, "H": 32, "H_kv": 8, "vs_sdpa": 0.9},
    {"kind": "prefill", "dtype": "bf16", "T": 4096, "H": 32, "H_kv": 8, "vs_sdpa": 2.0, "of_limit": 0.5},
    {"kind": "prefill", "dtype": "bf16", "T": 16384, "H": 32, "H_kv": 8, "vs_sdpa": 2.0, "of_limit": 0.5},
]


def check_targets(rows: list[dict], memory: list[dict]) -> list[dict]:
    """Each target met or not, by the ratios of multihead's best backend in this run."""
    out = []
    for t in TARGETS:
        want = {k: t[k] for k in ("kind", "dtype", "T", "H", "H_kv")}
        row = next((r for r in rows if r["impl"] == BEST_OURS[t["kind"]] and "rate" in r
                    and all(r[k] == v for k, v in want.items())), None)
        if row is None:
            continue
        for metric in ("of_limit", "vs_sdpa"):
            if metric in t and metric in row:
                out.append({**want, "impl": row["impl"], "metric": metric, "target": t[metric],
                            "value": row[metric], "met": row[metric] >= t[metric]})
    for m in memory:
        if m["backend"] == "fast_prefill":
            out.append({"kind": "memory", "T": m["T"], "impl": m["backend"], "metric": "extra/qkvo",
                        "target": 2.0, "value": m["ratio"], "met": m["ratio"] <= 2.0})
    return out


def plot(report: dict, path: str) -> None:
    """Throughput vs T per implementation, decode (GB/s) and prefill (GFLOP/s), limits as lines."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    lim = report["limits"]
    rows = [r for r in report["results"] if "rate" in r and "measured_on" not in r]
    panels = sorted({(r["kind"], r["dtype"]) for r in rows})
    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 4), squeeze=False)
    for ax, (kind, dt) in zip(axes[0], panels):
        scale, unit = (1e9, "GB/s") if kind == "decode" else (1e9, "GFLOP/s")
        sel = [r for r in rows if r["kind"] == kind and r["dtype"] == dt]
        for impl in sorted({r["impl"] for r in sel}):
            for heads in sorted({(r["H"], r["H_kv"]) for r in sel}):
                pts = sorted((r["T"], r["rate"] / scale) for r in sel if r["impl"] == impl
                             and (r["H"], r["H_kv"]) == heads)
                if len(pts) >= 1:
                    ax.plot(*zip(*pts), marker="o", label=f"{impl} {heads[0]}/{heads[1]}")
        if kind == "decode":
            ax.axhline(lim["read_bandwidth"]["best"] / scale, color="k", ls="--", label="read bandwidth")
        else:
            ax.axhline(lim["gemm_fp32"]["best"] / scale, color="k", ls="--", label="fp32 GEMM peak")
            if dt != "fp32":
                ax.axhline(lim[f"gemm_{dt}"]["best"] / scale, color="r", ls=":", label=f"{dt} GEMM peak")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("T (tokens)")
        ax.set_ylabel(unit)
        ax.set_title(f"{kind} {dt}")
        ax.legend(fontsize=6)
    fig.suptitle(f"multihead bench ({report['machine'].get('cpu_count')} CPUs, "
                 f"load {report['load_average_before'][0]:.1f})", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def markdown(report: dict) -> str:
    """The report as a markdown page: command, machine, load, limits, ratio table, targets."""
    lim = report["limits"]
    out = [f"# multihead bench results", "",
           f"Command: `{report['command']}`", "",
           f"Started {report['started_utc']}, {report['seconds'] / 60:.1f} min; {report['machine']['processor']}, "
           f"{report['machine']['cpu_count']} CPUs, torch {report['machine']['torch']}, "
           f"{report['machine']['threads']} threads, {report['clock']} clock. Load average (1/5/15 min) "
           f"{'/'.join(f'{x:.1f}' for x in report['load_average_before'])} before, "
           f"{'/'.join(f'{x:.1f}' for x in report['load_average_after'])} after: the machine was shared, so "
           f"only ratios measured in this run mean anything.", "",
           "## Limits measured in the same run (best of several)", "",
           "| limit | value | spread |", "|---|---|---|",
           f"| streaming read ({lim['read_bandwidth']['nbytes'] / 2**20:,.0f} MiB fp32 sum) | "
           f"{lim['read_bandwidth']['best'] / 1e9:,.1f} GB/s | {lim['read_bandwidth']['spread']:.0%} |"]
    for key, m in lim.items():
        if key.startswith("gemm_"):
            out.append(f"| matmul {key[5:]} n={m['n']} | {m['best'] / 1e9:,.2f} GFLOP/s | {m['spread']:.0%} |")
    out += ["", "## Throughput as ratios", "",
            "Decode: bytes of K+V read per second vs the read bandwidth. Prefill: causal FLOPs per second vs "
            "the GEMM peak of the input dtype (for bf16 also vs the fp32 peak, the real ceiling of a kernel "
            "that upcasts to fp32 GEMMs). Decode rows also give the share of the roofline min(bandwidth, fp32 GEMM "
            "peak / (2 G / bytes per element)): with G query heads per KV head, every K/V element costs 2G FLOPs, "
            "which this CPU runs as fp32 FMAs. vs SDPA: our rate / the best SDPA backend's rate on the same case.", "",
            "| case | implementation | throughput | % of limit | vs best SDPA | note |", "|---|---|---|---|---|---|"]
    for r in report["results"]:
        case = f"{r['kind']} {r['dtype']} T={r['T']:,} H={r['H']}/{r['H_kv']}"
        if "rate" not in r:
            out.append(f"| {case} | {r['impl']} | - | - | - | skipped: {r.get('skipped', '')} |")
            continue
        pct = f"{r['of_limit']:.0%}" + (f" ({r['of_fp32_gemm']:.0%} of fp32)" if "of_fp32_gemm" in r else "") \
            + (f" ({r['of_roofline']:.0%} of roofline)" if "of_roofline" in r else "")
        note = ""
        if "measured_on" in r:
            m = r["measured_on"]
            note = f"rate measured at T={m['T']:,} H={m['H']}/{m['H_kv']} (full size too slow)"
        vs = f"{r['vs_sdpa']:.2f}x" if "vs_sdpa" in r else "-"
        name = f"**{r['impl']}**" if r["impl"].startswith("fast_") else r["impl"]
        out.append(f"| {case} | {name} | {format_rate(r)} | {pct} | {vs} | {note} |")
    if report.get("memory"):
        out += ["", "## Peak extra memory of a causal prefill (fresh process, peak RSS)", "",
                "| backend | shape | extra | q+k+v+out | ratio | T^2 scores would be |", "|---|---|---|---|---|---|"]
        for m in report["memory"]:
            out.append(f"| {m['backend']} | {m['dtype']} T={m['T']:,} H={m['H']}/{m['H_kv']} d={m['d']} | "
                       f"{m['extra_bytes'] / 2**20:,.0f} MiB | {m['qkvo_bytes'] / 2**20:,.0f} MiB | {m['ratio']:.2f}x | "
                       f"{m['score_matrix_bytes'] / 2**30:,.1f} GiB |")
    if report.get("targets"):
        out += ["", "## Targets (issue 5)", "", "| case | metric | target | measured | met |", "|---|---|---|---|---|"]
        for g in report["targets"]:
            out.append(f"| {g['kind']} {g.get('dtype', '')} T={g['T']:,} | {g['metric']} | {g['target']:g} | "
                       f"{g['value']:.2f} | {'yes' if g['met'] else 'no'} |")
    return "\n".join(out) + "\n"


def format_rate(row: dict) -> str:
    r = row["rate"]
    return f"{r / 1e9:,.2f} GB/s" if row["kind"] == "decode" else f"{r / 1e9:,.1f} GFLOP/s"


__all__ = ["Case", "BenchConfig", "run_benchmark", "measure_limits", "measure_case", "peak_extra_memory",
           "add_ratios", "check_targets", "plot", "markdown", "TARGETS", "format_rate"]
