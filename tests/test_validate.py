"""multihead validate: error arithmetic, the JSON it prints, and one tiny end-to-end run."""
from __future__ import annotations

import json
import math
import re

import pytest
import torch

from conftest import markdown_tables
from multihead.cost.time.cpu_profile import DecodeCosts, PrefillCosts, load_device, write_profile
from multihead.cost.time.device import DeviceSpec
from multihead.measure.calibrate import CalibrationPlan, calibrate, predict_seconds
from multihead.measure.fit import fit_points
from multihead.measure.plots import validation_figure
from multihead.measure.reports import validation_markdown
from multihead.measure.shapes import AttnShape
from multihead.measure.validate import (Row, ValidationPlan, build_result, interval_halfwidth, plan_prediction,
                                        prediction_interval, relative_error, summarize)


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
    r0 = res["rows"][0]                                                 # predicted 1.03 s, measured 1.0 s
    assert (r0["error"], r0["abs_error"], r0["inside_interval"]) == (pytest.approx(0.03), pytest.approx(0.03), True)
    assert res["rows"][1]["error"] == pytest.approx(-0.04)
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
    """plan --layers 1 --params 0 flows through multihead.cost.time.attention_time: the same seconds."""
    spec = DeviceSpec("d", 64e9, 20e9, {"fp32": 1e11}, 1.0, 1.0, kind="measured",
                      prefill={"fp32": PrefillCosts(80e9, 1e-9, 2e-8, 1e-4)},
                      decode={"fp32": DecodeCosts(10e9, 40e9, 5e-5)})
    for s in (AttnShape.prefill(8, 2, 128, 4096), AttnShape.decode(9, 3, 64, 32768)):
        assert plan_prediction(spec, s) == pytest.approx(predict_seconds(spec, s), rel=1e-9)


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
    finally:
        torch.set_num_threads(threads)
    png = tmp_path / "v.png"
    assert main(["validate", "--quick", "--profile", str(path), "--json", "--threads", "1", "--plot", str(png)]) == 0
    res = json.loads(capsys.readouterr().out)
    quick = ValidationPlan.quick()
    shapes = [AttnShape.prefill(h, hk, d, t) for h, hk, d, t in quick.prefill]
    shapes += [AttnShape.decode(h, hk, d, t) for h, hk, d, t in quick.decode]
    assert [r["shape"] for r in res["rows"]] == [s.to_dict() for s in shapes]      # every held-out shape, in order
    profile = load_device(str(path))
    for r, s in zip(res["rows"], shapes):
        assert r["group"] == s.kind and r["predicted_s"] == pytest.approx(plan_prediction(profile, s))
        assert 0 < r["measured_s"] <= r["measured_median_s"]
    assert res["predictor"] == "multihead.planner.plan" and res["threads"] == 1
    assert torch.get_num_threads() == threads                   # validate restored the caller's threads
    assert res["plot"] == str(png)
    import matplotlib.image                     # here, not at collection: ~0.4 s for every worker
    assert matplotlib.image.imread(png).ndim == 3              # a decodable image (its data: test below)
    bw = res["read_bandwidth"]                      # drift context: profile's rate vs this run's
    assert bw["calibration"] == pytest.approx(load_device(str(path)).bandwidth_bytes_per_s)
    assert bw["before"] > 0 and bw["after"] > 0 and bw["bytes"] == 1 << 20


def test_missing_profile_is_a_clear_error(tmp_path, capsys):
    from multihead.cli import main
    assert main(["validate", "--quick", "--profile", str(tmp_path / "none.json")]) == 2
    assert "multihead calibrate" in capsys.readouterr().err


def test_a_bad_profile_file_names_profile_not_gpu(tmp_path, capsys):
    """The profile reader's checks speak of the planner's --gpu; validate's message names --profile."""
    from multihead.cli import main
    (tmp_path / "code.py").write_text("x = 1\n")
    (tmp_path / "noname.json").write_text('{"x": 1}')
    for name, said in (("code.py", "is not valid JSON"), ("noname.json", "lacks the field 'name'")):
        assert main(["validate", "--quick", "--profile", str(tmp_path / name)]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("multihead validate: error: --profile: ") and said in err and "gpu:" not in err, err
        assert "\n" not in err


def _synthetic_result():
    spec = DeviceSpec("d", 1e9, 1e10, {"fp32": 1e11}, 1.0, 1.0, kind="measured")
    rows = [row(1.0, 1.1, band=(0.9, 1.1)), row(0.01, 0.012, "decode", band=(0.009, 0.011))]
    res = build_result(rows, rows, device=spec, kernel="k", predictor="p", plan=ValidationPlan.quick(),
                       notes=["n1"], load=(None, None))
    res["clock"] = "cpu"
    return res


def test_markdown_report_lists_every_row():
    res = _synthetic_result()
    md = validation_markdown(res, "multihead validate --quick")
    assert "multihead validate --quick" in md and "n1" in md
    groups, rows = [t for t in markdown_tables(md) if t[0][0] in ("group", "shape")]
    # errors, computed here from the rows' numbers: (1.0 - 1.1) / 1.1 and (0.01 - 0.012) / 0.012
    want = {"prefill": (1.0 - 1.1) / 1.1, "decode": (0.01 - 0.012) / 0.012}
    assert {g[0]: (int(g[1]), float(g[2].rstrip("%")) / 100) for g in groups[1:]} == \
        {g: (1, pytest.approx(abs(e), abs=5e-4)) for g, e in want.items()}
    assert [float(r[-1].rstrip("%")) / 100 for r in rows[1:]] == [pytest.approx(e, abs=5e-4) for e in want.values()]
    assert "streaming read" not in md                                           # no drift measured
    res["read_bandwidth"] = {"bytes": 1 << 20, "calibration": 20e9, "before": 18e9, "after": 15e9}
    line = next(x for x in validation_markdown(res).splitlines() if "streaming read" in x)
    assert [float(x) for x in re.findall(r"([-+]?\d+)%", line)] == [-10.0, -25.0]   # 18/20 - 1, 15/20 - 1


def test_plot_shows_each_group_against_the_diagonal():
    """The figure's data: one series per group, x = measured, y = predicted, error bars to the
    interval, the y = x line, log axes."""
    res = _synthetic_result()
    ax = validation_figure(res).axes[0]
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert ax.get_xlabel().startswith("measured") and ax.get_ylabel().startswith("predicted")
    containers = {c.get_label(): c for c in ax.containers}
    assert set(containers) == {"prefill", "decode"}
    for r in res["rows"]:
        line, caps, (bars,) = containers[r["group"]]
        assert list(line.get_xdata()) == [r["measured_s"]] and list(line.get_ydata()) == [r["predicted_s"]]
        (lo_hi,) = bars.get_segments()
        assert [y for _, y in lo_hi] == pytest.approx(list(r["interval_s"]))
    diagonal = next(l for l in ax.get_lines() if l.get_label() == "predicted = measured")
    assert list(diagonal.get_xdata()) == list(diagonal.get_ydata())


@pytest.mark.parametrize("noise_ratio,covered", [(1.0, True), (4.0, False)])
def test_intervals_cover_held_out_points_at_their_nominal_rate(noise_ratio, covered):
    """The interval is a claim about points calibration did not see: fitted on noisy calibration
    points, the +-2 sqrt(r^2 + s^2) band must hold about 95% of held-out points drawn with the same
    noise (we ask for >= 85% over 200), and must NOT when the held-out noise is 4x larger: the
    test can tell a calibrated interval from one that is too narrow."""
    import numpy as np
    rng = np.random.default_rng(0)
    truth = DeviceSpec("synthetic", 1e9, 1e10, {"fp32": 1e11}, 1.0, 1.0, kind="measured",
                       prefill={"fp32": PrefillCosts(90e9, 0.8e-9, 30e-9, 120e-6)})
    sigma = 0.03

    def noisy(s, scale):
        return predict_seconds(truth, s) * (1 + scale * sigma * rng.standard_normal())
    cal = CalibrationPlan().prefill_shapes("fp32")
    points = [{"shape": s.to_dict(), "best": noisy(s, 1.0), "spread": 0.01, "backend": "tiled"} for s in cal]
    prefill, _, residuals = fit_points(points, 0.0)
    fitted = DeviceSpec("fit", 1e9, 1e10, {"fp32": 1e11}, 1.0, 1.0, kind="measured", prefill=prefill,
                        extra={"fit_rms_relative_residual": residuals, "spread": {"median": 0.01}})
    u = interval_halfwidth(fitted, "prefill", "tiled", "fp32")
    assert 2 * sigma * 0.7 < u < 2 * sigma * 1.5                  # the fit's residual estimates the noise
    held_out = [AttnShape.prefill(h, hk, d, t) for h, hk, d, t in ValidationPlan().prefill] * 20
    rows = []
    for s in held_out:
        pred = predict_seconds(fitted, s)
        rows.append(Row("prefill", s.label(), pred, noisy(s, noise_ratio), 0.0, 0.0, prediction_interval(pred, u)))
    coverage = summarize(rows)["interval_coverage"]
    print(f"noise x{noise_ratio}: u = {u:.3f}, coverage {coverage:.0%}")
    assert (coverage >= 0.85) == covered, coverage
