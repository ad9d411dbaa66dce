"""`multihead bench` (multihead.measure.benchmark) and the measurement pieces it shares with
calibrate and validate: the timing loop, the peak-memory measurement, the figure.

No timing assertions: the benchmark is tested for what it computes, not for how fast it runs.
"""
from __future__ import annotations

import json

import pytest

from conftest import markdown_tables
from multihead.cli import main as cli_main
from multihead.kernels import fast_prefill
from multihead.measure import benchmark as bench
from multihead.measure import reports
from multihead.measure.memory import peak_extra_memory
from multihead.measure.plots import bench_figure
from multihead.measure.shapes import AttnShape
from multihead.measure.timing import Timing, time_calls


def tiny_config():
    return bench.BenchConfig([AttnShape.decode(8, 2, 64, 8192, "fp32"), AttnShape.decode(8, 2, 64, 4608, "bf16"),
                              AttnShape.prefill(4, 2, 32, 128, "fp32"), AttnShape.decode(9, 3, 64, 128, "fp32")],
                             repeats=1, bandwidth_bytes=8 << 20, gemm_n={"fp32": 128, "bf16": 32, "fp16": 32},
                             max_seconds=1.0, memory_T=None)


@pytest.fixture(scope="module")
def tiny_report():
    return bench.run_benchmark(tiny_config(), progress=False, command="multihead bench --test")


def test_benchmark_rows_measure_each_case_against_its_limit(tiny_report):
    report = tiny_report
    json.dumps(report)                                                 # JSON-able
    assert set(report["limits"]) == {"read_bandwidth", "gemm_fp32", "gemm_bf16"}
    rows = report["results"]
    assert {r["impl"] for r in rows} == {"sdpa-math", "sdpa-flash", "decode", "fast_decode", "tiled", "fast_prefill",
                                         "sdpa", "auto"}
    # a short decode is judged per call, as a generation loop makes it: default SDPA vs default multihead
    short = [r for r in rows if r["shape"]["tk"] <= bench.SHORT_DECODE_TK and r["kind"] == "decode"]
    assert {r["impl"] for r in short} == {"sdpa", "auto"} and all(r["repeats"] >= 20 for r in short)
    auto = next(r for r in short if r["impl"] == "auto")
    assert auto["rate"] == pytest.approx(2 * 3 * 128 * 64 * 4 / auto["seconds"])       # seconds per call
    # the rates are the work of the case over its best time: K+V bytes for decode, causal FLOPs for
    # prefill, counted here by hand (2 * H_kv * Tk * d * 4 bytes; 4 * H * d * T(T+1)/2 FLOPs)
    # (a busy machine may measure a case on a reduced shape, "measured_on": the work is that shape's)
    dec = next(r for r in rows if r["impl"] == "fast_decode" and r["shape"]["dtype"] == "fp32")
    on = dec.get("measured_on", dec["shape"])
    assert dec["rate"] == pytest.approx(2 * on["kv_heads"] * on["tk"] * 64 * 4 / dec["seconds"])
    pre = next(r for r in rows if r["impl"] == "fast_prefill")
    assert pre["rate"] == pytest.approx(4 * 4 * 32 * (128 * 129 // 2) / pre["seconds"])
    for r in rows:
        assert r["seconds"] <= r["seconds_median"]                     # best is the least of the samples
        assert r["shape"] == next(c for c in tiny_config().cases if c.label() == r["label"]).to_dict()
        if r["kind"] == "decode":      # the roofline is never above the bandwidth: its share is never lower
            assert r["roofline"] <= report["limits"]["read_bandwidth"]["best"]
            assert r["of_roofline"] >= r["of_limit"]
    for label in {r["label"] for r in rows}:       # vs SDPA: the best SDPA row of a case is 1 by definition
        sdpa = [r for r in rows if r["label"] == label and r["impl"].startswith("sdpa")]
        best = max(sdpa, key=lambda r: r["rate"])
        assert best["vs_sdpa"] == 1.0 and all(r["vs_sdpa"] <= 1.0 for r in sdpa)
        assert all(r["best_sdpa"] == best["impl"] for r in rows if r["label"] == label)


def test_benchmark_figure_shows_the_measured_rates(tiny_report):
    """The plot's data: one panel per (kind, dtype), one series per implementation with the
    measured rates in GB/s or GFLOP/s at its T, and the limit as a horizontal line."""
    fig = bench_figure(tiny_report)
    panels = {ax.get_title(): ax for ax in fig.axes}
    assert set(panels) == {"decode fp32", "decode bf16", "prefill fp32"}
    for ax in fig.axes:
        kind, dt = ax.get_title().split()
        rows = [r for r in tiny_report["results"] if r["kind"] == kind and r["shape"]["dtype"] == dt and "rate" in r
                and "measured_on" not in r]
        series = {line.get_label(): line for line in ax.get_lines()}
        for r in rows:
            line = series[f"{r['impl']} {r['shape']['heads']}/{r['shape']['kv_heads']}"]
            assert list(line.get_xdata()) == [r["shape"]["tk"]]
            assert list(line.get_ydata()) == pytest.approx([r["rate"] / 1e9])
        limit = "read bandwidth" if kind == "decode" else "fp32 GEMM peak"
        key = "read_bandwidth" if kind == "decode" else "gemm_fp32"
        assert list(series[limit].get_ydata()) == pytest.approx([tiny_report["limits"][key]["best"] / 1e9] * 2)
        assert ax.get_ylabel() == ("GB/s" if kind == "decode" else "GFLOP/s") and ax.get_xlabel() == "T (tokens)"


def test_benchmark_markdown_carries_every_row(tiny_report):
    md = reports.bench_markdown(tiny_report)
    assert tiny_report["command"] in md
    results = next(t for t in markdown_tables(md) if t[0][:2] == ["case", "implementation"])
    assert len(results) - 1 == len(tiny_report["results"])
    for cells, r in zip(results[1:], tiny_report["results"]):
        assert cells[1] == r["impl"]
        assert float(cells[4].rstrip("x")) == pytest.approx(r["vs_sdpa"], abs=0.005)
        value, unit = cells[2].split()                          # GB/s to 2 decimals, GFLOP/s to 1
        assert unit == ("GB/s" if r["kind"] == "decode" else "GFLOP/s")
        assert float(value.replace(",", "")) == pytest.approx(r["rate"] / 1e9, abs=0.051)


def test_ratios_and_targets_from_synthetic_rows():
    limits = {"read_bandwidth": {"best": 40e9}, "gemm_fp32": {"best": 100e9}, "gemm_bf16": {"best": 1e9}}
    dec = AttnShape.decode(32, 8, 128, 131072, "fp32")
    pre = AttnShape.prefill(32, 8, 128, 4096, "bf16")

    def row(shape, impl, rate):
        return {"impl": impl, "kind": shape.kind, "label": shape.label(), "shape": shape.to_dict(), "rate": rate}
    rows = [row(dec, "sdpa-flash", 5e9), row(dec, "sdpa-math", 1e9), row(dec, "fast_decode", 36e9),
            row(pre, "sdpa-flash", 0.5e9), row(pre, "fast_prefill", 60e9)]
    bench.add_ratios(rows, limits)
    assert rows[2]["vs_sdpa"] == pytest.approx(7.2) and rows[2]["best_sdpa"] == "sdpa-flash"
    assert rows[2]["of_limit"] == pytest.approx(0.9)
    assert rows[2]["roofline"] == 40e9          # fp32, G=4: 2 FLOP/B -> 100e9 / 2 = 50 GB/s > bandwidth
    assert rows[4]["of_limit"] == pytest.approx(60.0) and rows[4]["of_fp32_gemm"] == pytest.approx(0.6)
    got = {(t["case"], t["metric"]): t["met"] for t in bench.check_targets(rows, [])}
    assert got == {(dec.label(), "of_limit"): True, (dec.label(), "vs_sdpa"): True,
                   (pre.label(), "vs_sdpa"): True, (pre.label(), "of_fp32_gemm"): False}   # 60% < 75%
    rows[2]["rate"] = 20e9
    bench.add_ratios(rows, limits)
    assert not next(t for t in bench.check_targets(rows, []) if t["metric"] == "of_limit")["met"]   # 50% < 85%


def test_slow_cases_are_measured_on_a_reduced_shape():
    limits = {"read_bandwidth": {"best": 40e9}, "gemm_fp32": {"best": 1e9}, "gemm_bf16": {"best": 0.3e9}}
    case = AttnShape.prefill(32, 8, 128, 16384, "bf16")
    small = bench._shrink("sdpa-flash", case, limits, 5.0)
    assert (small.heads, small.kv_heads) == (4, 1) and small.tq == small.tk < 16384 and small.head_dim == 128
    assert bench._predicted_seconds("sdpa-flash", small, limits) <= 5.0
    tiny = AttnShape.prefill(32, 8, 128, 256, "bf16")
    assert bench._shrink("fast_prefill", tiny, limits, 5.0) == tiny
    assert "GB" in bench._skip_reason("sdpa-math", AttnShape.prefill(32, 8, 128, 16384, "fp32"))


def test_timing_loop_interleaves_and_defines_spread_once():
    """Each round times each function once (a load change hits all alike); warm-up calls are not
    samples; the spread of a rate is the spread of its times."""
    log = []
    fns = [lambda: log.append("a"), lambda: log.append("b")]
    ta, tb = time_calls(fns, repeats=[2, 3], warmup=[1, 0])
    assert log == ["a", "a", "b", "a", "b", "b"]          # warm-up a, then rounds (a b) (a b) (b)
    assert (len(ta.samples), len(tb.samples)) == (2, 3)
    t = Timing([2.0, 1.0, 4.0])
    assert (t.best, t.median, t.spread) == (1.0, 2.0, 1.0)
    rate = t.rate(8.0)
    assert rate["best"] == 8.0 and rate["median"] == 4.0 and rate["spread"] == t.spread


def test_peak_extra_memory_is_linear_not_quadratic():
    """fast_prefill's extra memory follows its documented model (kernels/fast_prefill.py): the
    output and lse, plus per worker thread one score block [nh, G*BLOCK_Q, BLOCK_K] and the block
    state (accumulator and scaled queries [nh, G*BLOCK_Q, d], three [nh, G*BLOCK_Q, 1] vectors),
    nh <= H_kv. On top of that an allowance of 8 MiB for the allocator (per-thread arenas, page
    rounding; 4-5 MiB measured here). The reference backend, by contrast, must show the score matrix."""
    H, H_kv, d, T, workers = 8, 2, 64, 4096, 2
    fast = peak_extra_memory("fast_prefill", T, H, H_kv, d=d, threads=workers)
    block_q, block_k = fast_prefill.block_shape(H // H_kv)
    rows = H * block_q                                         # nh * G * block_q with nh = H_kv at most
    per_worker = 4 * (rows * block_k + 2 * rows * d + 3 * rows)
    model = 4 * (H * T * d + H * T) + workers * per_worker       # out + lse + workers' blocks, fp32
    assert fast["finite"] and fast["threads"] == workers
    assert fast["extra_bytes"] <= model + (8 << 20), (fast["extra_bytes"] / 2**20, model / 2**20)
    assert fast["extra_bytes"] <= fast["score_matrix_bytes"] / 8
    ref = peak_extra_memory("reference", 1024, H, H_kv, d=d, threads=1)
    assert ref["extra_bytes"] >= ref["score_matrix_bytes"]    # the method sees a materialized [B, H, T, T]


def test_cli_checks_outputs_before_running(tmp_path, capsys):
    """A bad output path is refused before anything is measured (it would take minutes to learn)."""
    for argv, flag in ((["bench", "--quick", "--json", str(tmp_path / "no" / "b.json")], "--json"),
                       (["bench", "--quick", "--plot", str(tmp_path / "b")], "--plot"),
                       (["bench", "--quick", "--markdown", "/dev/full/x.md"], "--markdown"),
                       (["bench", "--clock", "cpu"], "--threads 1")):
        assert cli_main(argv) == 2
        err = capsys.readouterr().err
        assert flag in err and len(err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_a_long_decode_shrunk_below_the_short_length_keeps_its_backends():
    """On a slow (or busy) machine a long decode case is measured on a reduced cache; one shorter
    than SHORT_DECODE_TK used to be timed as a short decode, calling multihead.attention with
    backend='sdpa-math' (a ValueError that ended the whole bench)."""
    limits = {"read_bandwidth": {"best": 1e6}, "gemm_fp32": {"best": 1e9}}
    case = AttnShape.decode(8, 2, 64, 8192, "fp32")
    cfg = bench.BenchConfig([case], repeats=1, max_seconds=0.5)
    rows = bench.measure_case(case, bench.impls_for(case), limits, cfg)
    assert [r["impl"] for r in rows] == ["sdpa-math", "sdpa-flash", "decode", "fast_decode"]
    assert all(r["measured_on"]["tk"] <= bench.SHORT_DECODE_TK and r["rate"] > 0 for r in rows)


def test_targets_only_config_holds_the_target_cases_up_to_4k():
    cfg = bench.BenchConfig.targets()
    assert cfg.memory_T is None and len(set(cfg.cases)) == len(cfg.cases)
    want = {s for s, _, _ in bench.TARGETS if s.kind == "decode" or s.tq <= 4096}
    assert set(cfg.cases) == want and AttnShape.prefill(32, 8, 128, 4096, "bf16") in want
