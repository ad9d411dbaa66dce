"""80% intervals from out-of-document errors by family (cost/timing_intervals.py): hand numbers."""
import math

import pytest

from multihead import cost
from multihead.cost import timing, timing_intervals as ti


def _errors(ratios, fam=("dense", "decode", "vllm"), metric="itl_ms", docs=("a", "b")):
    return [{"id": str(i), "source": docs[i % len(docs)], "metric": metric, "error": r - 1.0, "family": list(fam)}
            for i, r in enumerate(ratios)]


def test_quantile_is_numpy_linear():
    assert ti._quantile([1, 2, 3, 4, 5], 0.1) == pytest.approx(1.4)
    assert ti._quantile([5, 1, 3], 0.5) == 3


def test_interval_table_by_hand():
    # time ratios 0.8, 0.9, ..., 1.7 (10 rows, 2 documents): 10th pct 0.89, 90th 1.61
    table = ti.interval_table(_errors([0.8 + 0.1 * i for i in range(10)]))
    e = table["dense/decode/vllm"]
    assert e["r_low"] == pytest.approx(0.89) and e["r_high"] == pytest.approx(1.61) and e["n"] == 10
    assert set(table) == {"dense/decode/vllm", "dense/decode", "dense", "all"}
    # a predicted time of 1 s then lies in [1/1.61, 1/0.89] s
    lo, hi, key = ti.bounds(1.0, "dense", "decode", "vllm", False, {"families": table})
    assert (lo, hi, key) == (pytest.approx(1 / 1.61), pytest.approx(1 / 0.89), "dense/decode/vllm")
    # a rate: the reciprocal interval, [R * r_low, R * r_high]
    lo, hi, _ = ti.bounds(100.0, "dense", "decode", "vllm", True, {"families": table})
    assert (lo, hi) == (pytest.approx(89.0), pytest.approx(161.0))


def test_rates_are_read_as_times():
    # a rate predicted 25% high is a time 0.8 of the measured
    assert ti._ratio(0.25, "decode_tokens_per_s") == pytest.approx(0.8)
    assert ti._ratio(0.25, "ttft_ms") == pytest.approx(1.25)


def test_small_families_fall_back():
    errs = _errors([1.0] * 10) + _errors([2.0] * 3, fam=("mla", "prefill", "sglang"), metric="ttft_ms")
    table = ti.interval_table(errs)
    assert "mla/prefill/sglang" not in table and "mla" not in table      # 3 rows < MIN_ROWS
    key, _ = ti.lookup({"families": table}, "mla", "prefill", "sglang")
    assert key == "all"
    one_doc = ti.interval_table(_errors([1.0] * 10, docs=("a",)))
    assert one_doc == {}                                                 # one document is no evidence


def test_coverage_by_hand():
    table = {"families": {"all": {"r_low": 0.9, "r_high": 1.1}}}
    rows = [{"value": 1.0, "predicted": p, "metric": "itl_ms", "family": ["dense", "decode", "vllm"]}
            for p in (0.95, 1.05, 1.2, 0.5)]
    assert ti.coverage(rows, table)["all"] == {"n": 4, "coverage": 0.5}


def test_plan_keys_carry_intervals():
    table = ti.load_intervals()
    assert table is not None and "all" in table["families"] and table["level"] == 0.8
    gpu = timing.make_gpu("H100-SXM", cost.gpu_catalog()["H100-SXM"])
    s = timing.Setup(cost.catalog_model("Llama-3.1-8B"), gpu, timing.load_constants())
    keys = timing.serving_time_keys(s, 1024, 256, 8)
    for k in ("ttft_s", "tpot_s", "output_tokens_per_s", "request_latency_s"):
        assert keys[f"{k}_low"] <= keys[k] * (1 + 1e-9) or keys[f"{k}_high"] >= keys[k]
        assert keys[f"{k}_low"] < keys[f"{k}_high"]
    assert keys["interval"]["families"]["decode"].startswith("dense")


def test_nan_in_nan_out():
    lo, hi = ti.time_interval(float("nan"), "dense", "decode", "vllm")
    assert math.isnan(lo) and math.isnan(hi)
