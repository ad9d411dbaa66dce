"""multihead validate: error arithmetic, the JSON it prints, and one tiny end-to-end run."""
from __future__ import annotations

import json
import math

import pytest
import torch

from multihead.bench.calibrate import AttnShape, CalibrationPlan, calibrate, predict_seconds
from multihead.bench.validate import (Row, ValidationPlan, build_result, interval_halfwidth, plan_prediction,
                                      plot, relative_error, summarize)
from multihead.devices import DecodeCosts, DeviceSpec, PrefillCosts, load_device, write_profile


def row(pred, meas, group="prefill", band=(0.0, math.inf)):
    return Row(group, f"{group} {pred}/{meas}", pred, meas, meas * 1.01, 0.01, band)


def test_error_is_relative_to_the_measurement():
    assert relative_error(1.1, 1.0) == pytest.approx(0.1)
    assert relative_error(0.9, 1.0) == pytest.approx(-0.1)
    assert relative_error(2.0, 4.0) == pytest.approx(-0.5)
    with pytest.raises(ValueError, match="measured"):
        relative_error(1.0, 0.0)


def test_summary_statistics():
    rows = [row(1.02, 1.0), row(0.9, 1.0), row(1.3, 1.0, band=(0.9, 1.4)), row(1.0, 1.0, band=(2.0, 3.0))]
    s = summarize(rows)
    assert s["rows"] == 4
    assert s["median_abs_error"] == pytest.approx((0.02 + 0.1) / 2)      # |errors| 0, .02, .1, .3
    assert s["max_abs_error"] == pytest.approx(0.3)
    assert s["mean_error"] == pytest.approx((0.02 - 0.1 + 0.3 + 0.0) / 4)
    assert s["interval_coverage"] == pytest.approx(3 / 4)                # 1.0 lies outside [2, 3]
    assert summarize([])["median_abs_error"] is None


def test_result_json_shape_and_targets():
    spec = DeviceSpec("d", 1e9, 1e10, {"fp32": 1e11}, 1.0, 1.0, kind="measured")
    good = [row(1.03, 1.0), row(0.96, 1.0, "decode"), row(1.1, 1.0)]
    model = [row(2.0, 1.0, "smollm2 prefill")]
    res = build_result(good + model, good, device=spec, kernel="k", predictor="p",
                       plan=ValidationPlan.quick(), notes=["n"], load=([0.1, 0.2, 0.3], None))
    json.dumps(res)                                                     # serializable
    assert res["median_abs_error"] == pytest.approx(0.04) and res["max_abs_error"] == pytest.approx(0.1)
    assert res["targets"]["met"] is True
    assert set(res["by_group"]) == {"prefill", "decode", "smollm2 prefill"}
    assert res["by_group"]["smollm2 prefill"]["max_abs_error"] == pytest.approx(1.0)
    assert res["all_rows"]["max_abs_error"] == pytest.approx(1.0)
    assert len(res["rows"]) == 4
    r0 = res["rows"][0]
    for key in ("group", "label", "predicted_s", "measured_s", "error", "abs_error", "interval_s", "inside_interval"):
        assert key in r0
    assert r0["error"] == pytest.approx((r0["predicted_s"] - r0["measured_s"]) / r0["measured_s"])
    bad = build_result([row(1.2, 1.0)], [row(1.2, 1.0)], device=spec, kernel="k", predictor="p",
                       plan=ValidationPlan.quick(), notes=[], load=(None, None))
    assert bad["targets"]["met"] is False


def test_interval_from_fit_residual_and_spread():
    spec = DeviceSpec("d", 1e9, 1e10, {"fp32": 1e11}, 1.0, 1.0, kind="measured",
                      extra={"fit_rms_relative_residual": {"prefill fp32/tiled": 0.03, "decode fp32/decode": 0.0},
                             "spread": {"median": 0.04}})
    assert interval_halfwidth(spec, "prefill", "tiled", "fp32") == pytest.approx(2 * 0.05)
    assert interval_halfwidth(spec, "decode", "decode", "fp32") == pytest.approx(2 * 0.04)


def test_planner_prediction_is_the_devices_model():
    """plan --layers 1 --params 0 flows through multihead.devices: the same seconds."""
    spec = DeviceSpec("d", 64e9, 20e9, {"fp32": 1e11}, 1.0, 1.0, kind="measured",
                      prefill={"fp32": PrefillCosts(80e9, 1e-9, 2e-8, 1e-4)},
                      decode={"fp32": DecodeCosts(10e9, 40e9, 5e-5)})
    for s in (AttnShape(8, 2, 128, 4096, 4096, True), AttnShape(9, 3, 64, 1, 32768, False)):
        pred, who = plan_prediction(spec, s)
        assert who == "multihead.planner.plan"
        assert pred == pytest.approx(predict_seconds(spec, s), rel=1e-9)


def test_quick_validation_end_to_end(tmp_path, capsys):
    from multihead.cli import main
    plan = CalibrationPlan(prefill_heads=((2, 1, 16), (2, 1, 32)), prefill_tokens=(16, 48, 96, 160),
                           prefill_full_tokens=(96,), prefill_extra=(), decode_heads=((2, 1, 16), (2, 2, 16)),
                           decode_tokens=(1024, 1500, 2048), matmul_n={"fp32": 64},
                           bandwidth_bytes=1 << 20, repeats=2, min_seconds=0.0, name="test")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        path = write_profile(calibrate(plan, progress=False), tmp_path / "p.json")
        png = tmp_path / "v.png"
        assert main(["validate", "--quick", "--profile", str(path), "--json", "--threads", "1",
                     "--plot", str(png)]) == 0
    finally:
        torch.set_num_threads(threads)
    res = json.loads(capsys.readouterr().out)
    quick = ValidationPlan.quick()
    assert len(res["rows"]) == len(quick.prefill) + len(quick.decode)
    assert {r["group"] for r in res["rows"]} == {"prefill", "decode"}
    for r in res["rows"]:
        assert r["predicted_s"] > 0 and r["measured_s"] > 0
        assert r["abs_error"] == pytest.approx(abs(r["predicted_s"] - r["measured_s"]) / r["measured_s"])
        assert r["interval_s"][0] <= r["predicted_s"] <= r["interval_s"][1]
    errs = sorted(r["abs_error"] for r in res["rows"])
    assert res["max_abs_error"] == pytest.approx(errs[-1])
    assert res["median_abs_error"] == pytest.approx((errs[1] + errs[2]) / 2)
    assert res["predictor"] == "multihead.planner.plan" and res["threads"] == 1
    assert png.stat().st_size > 1000 and res["plot"] == str(png)
    bw = res["read_bandwidth"]                      # drift context: profile's rate vs this run's
    assert bw["calibration"] == pytest.approx(load_device(str(path)).bandwidth_bytes_per_s)
    assert bw["before"] > 0 and bw["after"] > 0 and bw["bytes"] == 1 << 20


def test_missing_profile_is_a_clear_error(tmp_path, capsys):
    from multihead.cli import main
    assert main(["validate", "--quick", "--profile", str(tmp_path / "none.json")]) == 2
    assert "multihead calibrate" in capsys.readouterr().err


def test_markdown_report_lists_every_row():
    from multihead.bench.validate import markdown
    spec = DeviceSpec("d", 1e9, 1e10, {"fp32": 1e11}, 1.0, 1.0, kind="measured")
    rows = [row(1.0, 1.1, band=(0.9, 1.1)), row(0.01, 0.012, "decode", band=(0.009, 0.011))]
    res = build_result(rows, rows, device=spec, kernel="k", predictor="p", plan=ValidationPlan.quick(),
                       notes=["n1"], load=(None, None))
    res["clock"] = "cpu"
    md = markdown(res, "multihead validate --quick")
    assert "multihead validate --quick" in md and "Note: n1" in md
    assert "| prefill | 1 | 9.1% |" in md and "| decode | 1 | 16.7% |" in md      # group table
    assert "-9.1%" in md and "-16.7%" in md                                     # each row's error
    assert "streaming read" not in md                                           # no drift measured
    res["read_bandwidth"] = {"bytes": 1 << 20, "calibration": 20e9, "before": 18e9, "after": 15e9}
    assert "20.0 GB/s at calibration, 18.0 at the start of this run, 15.0 at its end (-10% / -25%)" in markdown(res)


def test_plot_from_synthetic_result(tmp_path):
    spec = DeviceSpec("d", 1e9, 1e10, {"fp32": 1e11}, 1.0, 1.0, kind="measured")
    rows = [row(1.0, 1.1, band=(0.9, 1.1)), row(0.01, 0.012, "decode", band=(0.009, 0.011))]
    res = build_result(rows, rows, device=spec, kernel="k", predictor="p", plan=ValidationPlan.quick(),
                       notes=[], load=(None, None))
    out = plot(res, str(tmp_path / "p.png"))
    assert (tmp_path / "p.png").stat().st_size > 1000 and out.endswith("p.png")
