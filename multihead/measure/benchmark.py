"""``multihead bench``: attention throughput against the machine's limits and torch SDPA, in one run.

Every number is measured in this process and reported as a ratio: ours / SDPA (speed-up) and
ours / the limit (the share of the machine reached). Absolute timings on a shared CPU are noise;
ratios measured seconds apart are not.

Work counted per call (``AttnShape``, formulas from multihead.cost.counts.formulas):
    decode   bytes of K and V read, kv_cache_bytes(1 layer) = 2 * B * H_kv * Tk * d * bytes;
             limit: the streaming-read bandwidth (sum of a large fp32 tensor).
    prefill  attention_flops(causal=True), ~2 * B * H * T^2 * d for Tq = Tk = T;
             limit: the matmul peak of the input dtype and, for 16-bit inputs, also the fp32 peak
             (the real ceiling of a kernel that upcasts to fp32 GEMMs on a CPU without bf16 units).
"""
from __future__ import annotations

import dataclasses
import sys
import time
from dataclasses import dataclass, field


from multihead.cost.counts.formulas import score_matrix_bytes
from multihead.cost.spec.units import dtype_bytes
from multihead.measure import limits as machine
from multihead.measure.memory import peak_extra_memory
from multihead.measure.shapes import TORCH_DTYPES, AttnShape
from multihead.measure.timing import time_calls

# Implementations compared: SDPA backends and multihead backends (through multihead.attention).
SDPA_IMPLS = ("sdpa-math", "sdpa-flash")
OURS = {"decode": ("decode", "fast_decode"), "prefill": ("tiled", "fast_prefill")}
# A decode over a short cache is judged per call, the way a generation loop makes it: torch SDPA
# with its default dispatch ("sdpa") against multihead.attention's default backend ("auto"), each
# timed CALLS_PER_SAMPLE calls at a time so that a sample is not dominated by the timer.
SHORT_DECODE_TK = 4096
SHORT_IMPLS = ("sdpa", "auto")
CALLS_PER_SAMPLE = 200
# The SDPA math backend materializes [B, H, T, T] scores (and its softmax copy); skip it beyond this.
MATH_MAX_SCORE_BYTES = 2 * 1024**3


def work(shape: AttnShape) -> float:
    """What one call is judged by: bytes of K+V (decode) or causal FLOPs (prefill)."""
    return shape.kv_bytes if shape.kind == "decode" else float(shape.flops)


def short_decode(shape: AttnShape) -> bool:
    return shape.kind == "decode" and shape.tk <= SHORT_DECODE_TK


@dataclass
class BenchConfig:
    """What to run. ``full()`` is the committed benchmark; ``quick()`` fits a CI test."""
    cases: list[AttnShape]
    repeats: int = 5              # best of 5: two runs of best-of-3 put MHA prefill at 0.95x and 0.98x
    bandwidth_bytes: int = 1 << 30
    gemm_n: dict[str, int] = field(default_factory=lambda: {"fp32": 2048, "bf16": 512, "fp16": 512})
    max_seconds: float = 60.0     # a predicted-slower call (SDPA in bf16) is measured on a reduced shape
    memory_T: int | None = 32768  # peak-memory check of the prefill kernels at this T (None: skip)
    memory_heads: tuple[int, int] = (32, 8)

    @staticmethod
    def full() -> "BenchConfig":
        # SmolLM2-135M's attention (9/3 heads, d=64) at the cache lengths of a chat: per call.
        cases = [AttnShape.decode(9, 3, 64, T, "fp32") for T in (16, 128, 1024)]
        for dt, tokens in (("fp32", (32768, 100000, 131072)), ("bf16", (65536, 262144))):
            for T in tokens:                       # 131072 fp32 / 262144 bf16 tokens = 1 GiB of K+V;
                cases.append(AttnShape.decode(32, 8, 128, T, dt))     # 100,000: not a power of two
            cases.append(AttnShape.decode(8, 8, 128, tokens[-1], dt))    # MHA, same bytes: no GQA reuse
        cases.append(AttnShape.decode(64, 8, 128, 131072, "fp32"))      # G = 8: twice the FMAs per byte
        for dt in ("fp32", "bf16"):
            for T in (1024, 4096, 16384):
                cases.append(AttnShape.prefill(32, 8, 128, T, dt))
        for T in (4096, 16384):
            cases.append(AttnShape.prefill(32, 32, 128, T, "fp32"))     # MHA: same FLOPs, 4x the K/V
        # Peak memory at T=32k with 8/2 heads: the ratio to q+k+v+out does not depend on H, and
        # 32/8 heads would take minutes per call on 2 cores.
        return BenchConfig(cases, memory_heads=(8, 2))

    @staticmethod
    def targets(max_prefill_t: int = 4096) -> "BenchConfig":
        """Only the cases of TARGETS (each once) with prefill up to ``max_prefill_t`` (a 16k
        prefill takes minutes per call on a busy machine), full size, no memory check: the
        acceptance rows of docs/performance.md in a fraction of the full grid's time."""
        cases = list(dict.fromkeys(shape for shape, _, _ in TARGETS
                                   if shape.kind == "decode" or shape.tq <= max_prefill_t))
        return BenchConfig(cases, memory_T=None)

    @staticmethod
    def quick() -> "BenchConfig":
        cases = [AttnShape.decode(9, 3, 64, 128, "fp32"),
                 AttnShape.decode(32, 8, 128, 8192, "fp32"), AttnShape.decode(32, 8, 128, 8192, "bf16"),
                 AttnShape.prefill(32, 8, 128, 512, "fp32"), AttnShape.prefill(32, 8, 128, 256, "bf16")]
        return BenchConfig(cases, repeats=2, bandwidth_bytes=128 << 20,
                           gemm_n={"fp32": 512, "bf16": 128, "fp16": 128}, max_seconds=2.0,
                           memory_T=1024, memory_heads=(8, 2))


def measure_limits(cfg: BenchConfig, dtypes: set[str], clock: str = "wall") -> dict:
    """GEMM peak per dtype (FLOP/s) and streaming-read bandwidth (bytes/s), best of a few runs."""
    out = {"read_bandwidth": {**machine.measure_read_bandwidth(cfg.bandwidth_bytes, 5, clock=clock),
                              "nbytes": cfg.bandwidth_bytes}}
    for dt in sorted(dtypes | {"fp32"}):
        n = cfg.gemm_n[dt]
        out[f"gemm_{dt}"] = {**machine.measure_matmul_flops(TORCH_DTYPES[dt], n, 3 if dt == "fp32" else 2,
                                                            clock=clock), "n": n}
    return out


def _call(impl: str, shape: AttnShape, q, k, v, short: bool | None = None):
    """The function to time for implementation ``impl`` on these inputs (for a short decode,
    CALLS_PER_SAMPLE calls of it). ``short``: whether the CASE is a short decode (default: this
    shape is); a long decode measured on a reduced shape stays a long-decode row (its SDPA
    backends named), however short the reduced cache is."""
    gqa = shape.heads != shape.kv_heads
    if short_decode(shape) if short is None else short:
        from torch.nn.functional import scaled_dot_product_attention
        from multihead.functional import attention
        calls = range(CALLS_PER_SAMPLE)
        if impl == "sdpa":
            return lambda: [scaled_dot_product_attention(q, k, v, enable_gqa=gqa) for _ in calls]
        return lambda: [attention(q, k, v, backend=impl) for _ in calls]
    if impl.startswith("sdpa-"):
        from torch.nn.attention import SDPBackend, sdpa_kernel
        from torch.nn.functional import scaled_dot_product_attention
        backend = SDPBackend.MATH if impl == "sdpa-math" else SDPBackend.FLASH_ATTENTION

        def run():
            with sdpa_kernel(backend):
                return scaled_dot_product_attention(q, k, v, is_causal=shape.causal, enable_gqa=gqa)
        return run
    from multihead.functional import attention
    return lambda: attention(q, k, v, is_causal=shape.causal, backend=impl)


def _predicted_seconds(impl: str, shape: AttnShape, limits: dict) -> float:
    """A pessimistic guess of one call's time, used only to size repeats and shrink hopeless runs."""
    if shape.kind == "decode":
        rate = 0.02 * limits["read_bandwidth"]["best"]
        if impl.startswith("sdpa") and shape.dtype != "fp32":
            rate /= 10                                       # SDPA's 16-bit decode is ~5x slower still
        return work(shape) / rate
    # Every prefill path here computes 16-bit inputs with fp32 arithmetic (SDPA's CPU kernels upcast
    # too: measured ~50 GFLOP/s in bf16 against ~1 GFLOP/s for a bf16 matmul), so the fp32 peak.
    return work(shape) / (0.3 * limits["gemm_fp32"]["best"]) * (4 if impl == "sdpa-math" else 1)


def _shrink(impl: str, shape: AttnShape, limits: dict, max_seconds: float) -> AttnShape:
    """A smaller shape of the same kind/dtype/d to measure a throughput that would take too long at
    full size: first one GQA group (H = G, H_kv = 1), then halve T. Throughput is per byte/FLOP, so
    the rate carries over (it usually grows with size, so the reduced rate flatters nobody)."""
    s = shape
    if _predicted_seconds(impl, s, limits) > max_seconds and s.kv_heads > 1:
        s = dataclasses.replace(s, heads=s.heads // s.kv_heads, kv_heads=1)
    while _predicted_seconds(impl, s, limits) > max_seconds and s.tk > 128:
        s = dataclasses.replace(s, tk=s.tk // 2, tq=s.tq if s.kind == "decode" else s.tq // 2)
    return s


def _skip_reason(impl: str, shape: AttnShape) -> str | None:
    if impl in ("sdpa-math", "reference"):
        need = 2 * score_matrix_bytes(shape.batch, shape.heads, shape.tq, shape.tk, 4)
        if need > MATH_MAX_SCORE_BYTES:
            return f"would materialize {need / 1e9:.1f} GB of scores"
    if impl == "sdpa-math" and shape.heads != shape.kv_heads:
        # SDPA's math path repeats K and V to H heads (and upcasts 16-bit inputs).
        need = 2 * shape.batch * shape.heads * shape.tk * shape.head_dim * 4
        if need > MATH_MAX_SCORE_BYTES:
            return f"would copy K/V to {shape.heads} heads: {need / 1e9:.1f} GB"
    return None


def measure_case(shape: AttnShape, impls: tuple[str, ...], limits: dict, cfg: BenchConfig,
                 clock: str = "wall") -> list[dict]:
    """Time every implementation on ``shape``, interleaved (``timing.time_calls``): a change in the
    machine's load during the case hits all of them alike; the best round counts. Returns one
    JSON-able row per implementation, with the shape it was measured on."""
    rows, plans, inputs = [], [], {}
    for impl in impls:
        row = {"impl": impl, "kind": shape.kind, "label": shape.label(), "shape": shape.to_dict(),
               "unit": "B/s" if shape.kind == "decode" else "FLOP/s"}
        rows.append(row)
        reason = _skip_reason(impl, shape)
        if reason:
            row["skipped"] = reason
            continue
        measured = _shrink(impl, shape, limits, cfg.max_seconds)
        if measured not in inputs:
            inputs[measured] = measured.inputs()
        guess = _predicted_seconds(impl, measured, limits)
        # Long calls: one warm-up is itself a sample of the same cost, so time fewer of them; but
        # never one sample alone (one 8 s call of a 16k prefill varied by 5% between runs).
        repeats, warmup = (cfg.repeats, 1) if guess < 5 else (2, 1) if guess < 20 else (2, 0)
        if short_decode(shape):                  # samples of CALLS_PER_SAMPLE calls, milliseconds each
            repeats = max(repeats, 20)
        elif guess < 0.5:                        # cheap calls: more samples, so one slow one (a
            repeats = max(repeats, 7)            # page-reclaim pause, say) cannot set the best
        plans.append((row, measured, _call(impl, measured, *inputs[measured], short=short_decode(shape)),
                      repeats, warmup))
    timings = time_calls([p[2] for p in plans], repeats=[p[3] for p in plans], warmup=[p[4] for p in plans],
                         clock=clock)
    per_sample = CALLS_PER_SAMPLE if short_decode(shape) else 1
    for (row, measured, _, repeats, _), t in zip(plans, timings):
        w = work(measured)
        best, median = t.best / per_sample, t.median / per_sample      # seconds per call
        row.update(seconds=best, seconds_median=median, repeats=len(t.samples), spread=t.spread,
                   rate=w / best, rate_median=w / median)
        if measured != shape:
            row["measured_on"] = measured.to_dict()
    return rows


def impls_for(shape: AttnShape) -> tuple[str, ...]:
    return SHORT_IMPLS if short_decode(shape) else SDPA_IMPLS + OURS[shape.kind]


def run_benchmark(cfg: BenchConfig, progress: bool = True, clock: str = "wall", command: str = "") -> dict:
    """Measure the limits, then every implementation on every case; returns the JSON report.
    Runs with torch's threads as the caller set them (``measure.calibrate.torch_threads``)."""
    from tqdm import tqdm

    from multihead.kernels import fast_native
    fast_native.library()          # built (and MULTIHEAD_CPU_PATH checked) before anything is timed
    t_start = time.time()
    load_before = machine.load_average()
    n_jobs = sum(len(impls_for(c)) for c in cfg.cases)
    n_mem = 2 if cfg.memory_T else 0
    bar = tqdm(total=1 + n_jobs + n_mem, desc="bench", unit="step", file=sys.stderr, disable=not progress)
    bar.set_postfix_str("limits")
    limits = measure_limits(cfg, {c.dtype for c in cfg.cases}, clock)
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
    from multihead.kernels import fast_native
    return {
        "command": command, "machine": machine.machine_description(), "cpu": fast_native.describe(), "clock": clock,
        "load_average_before": load_before, "load_average_after": machine.load_average(),
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t_start)),
        "seconds": time.time() - t_start, "limits": limits, "results": rows, "memory": memory,
        "targets": check_targets(rows, memory),
    }


def limit_of(row: dict, limits: dict, dtype: str | None = None) -> float:
    """The rate this row is judged against: read bandwidth (decode) or the GEMM peak of ``dtype``."""
    if row["kind"] == "decode":
        return limits["read_bandwidth"]["best"]
    return limits[f"gemm_{dtype or row['shape']['dtype']}"]["best"]


def add_ratios(rows: list[dict], limits: dict) -> None:
    """Add share of the limit and speed-up versus the best SDPA backend on the same case, in place."""
    def key(r):
        return tuple(sorted(r["shape"].items()))
    best_sdpa: dict = {}
    for r in rows:
        if r["impl"].startswith("sdpa") and "rate" in r and r["rate"] > best_sdpa.get(key(r), (0, ""))[0]:
            best_sdpa[key(r)] = (r["rate"], r["impl"])
    for r in rows:
        if "rate" not in r:
            continue
        s = AttnShape(**r["shape"])
        r["of_limit"] = r["rate"] / limit_of(r, limits)
        if r["kind"] == "decode":
            # Decode does 2 FLOPs per query head of a KV head's group (G of them) per K or V element:
            # 2*G / bytes-per-element FLOPs per byte. On a CPU without 16-bit matmul units those run
            # as fp32 FMAs, so the roofline is min(bandwidth, fp32 GEMM peak / intensity).
            intensity = 2 * (s.heads // s.kv_heads) / dtype_bytes(s.dtype)
            r["roofline"] = min(limits["read_bandwidth"]["best"], limits["gemm_fp32"]["best"] / intensity)
            r["of_roofline"] = r["rate"] / r["roofline"]
        if r["kind"] == "prefill" and s.dtype != "fp32":
            r["of_fp32_gemm"] = r["rate"] / limit_of(r, limits, "fp32")
        if key(r) in best_sdpa:
            r["best_sdpa"] = best_sdpa[key(r)][1]
            r["vs_sdpa"] = r["rate"] / best_sdpa[key(r)][0]


# The targets of docs/performance.md: (shape, implementation, minimum ratios). Issue 32's (set for
# an AVX2-only AMD EPYC) where it has one: SmolLM2's call >= 1.0x SDPA, fp32 decode 128k >= 85% and
# bf16 256k >= 75% of the read rate, fp32 prefill 4k >= 85% of the GEMM rate and >= 1.1x SDPA;
# issues 5 and 18's elsewhere.
TARGETS = [
    (AttnShape.decode(9, 3, 64, 128, "fp32"), "auto", {"vs_sdpa": 1.0}),
    (AttnShape.decode(32, 8, 128, 131072, "fp32"), "fast_decode", {"of_limit": 0.85, "vs_sdpa": 3.0}),
    (AttnShape.decode(32, 8, 128, 100000, "fp32"), "fast_decode", {"of_limit": 0.70, "vs_sdpa": 3.0}),
    (AttnShape.decode(32, 8, 128, 262144, "bf16"), "fast_decode", {"of_limit": 0.75, "vs_sdpa": 10.0}),
    (AttnShape.prefill(32, 8, 128, 4096, "fp32"), "fast_prefill", {"vs_sdpa": 1.1, "of_limit": 0.85}),
    (AttnShape.prefill(32, 8, 128, 16384, "fp32"), "fast_prefill", {"vs_sdpa": 0.9}),
    (AttnShape.prefill(32, 32, 128, 4096, "fp32"), "fast_prefill", {"vs_sdpa": 0.95}),
    (AttnShape.prefill(32, 32, 128, 16384, "fp32"), "fast_prefill", {"vs_sdpa": 0.95}),
    # 16-bit: this CPU has no bf16 matmul path; SDPA and we both compute in fp32 (docs/performance.md)
    (AttnShape.prefill(32, 8, 128, 4096, "bf16"), "fast_prefill", {"vs_sdpa": 0.95, "of_fp32_gemm": 0.75}),
    (AttnShape.prefill(32, 8, 128, 16384, "bf16"), "fast_prefill", {"vs_sdpa": 0.95, "of_fp32_gemm": 0.75}),
]
MEMORY_TARGET = 2.0      # peak extra memory of fast_prefill / bytes of q, k, v and out


def check_targets(rows: list[dict], memory: list[dict]) -> list[dict]:
    """Each target met or not, by the ratios of multihead's best backend in this run."""
    out = []
    for shape, impl, wants in TARGETS:
        row = next((r for r in rows if r["impl"] == impl and "rate" in r and r["shape"] == shape.to_dict()), None)
        for metric, target in wants.items():
            if row is not None and metric in row:
                out.append({"case": shape.label(), "kind": shape.kind, "impl": row["impl"], "metric": metric,
                            "target": target, "value": row[metric], "met": row[metric] >= target})
    for m in memory:
        if m["backend"] == "fast_prefill":
            out.append({"case": m["label"], "kind": "memory", "impl": m["backend"], "metric": "extra/qkvo",
                        "target": MEMORY_TARGET, "value": m["ratio"], "met": m["ratio"] <= MEMORY_TARGET})
    return out
