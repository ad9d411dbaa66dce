"""multihead calibrate: the fit recovers the model's terms; the profile it writes loads back."""
from __future__ import annotations

import json

import pytest
import torch

from multihead.measure.calibrate import CalibrationPlan, calibrate, predict_seconds
from multihead.measure.fit import fit_decode, fit_nonnegative, fit_points, fit_prefill, skips_masked
from multihead.measure.shapes import AttnShape
from multihead.measure.validate import ValidationPlan
from multihead.cost.time.cpu_profile import DecodeCosts, PrefillCosts, load_device, write_profile
from multihead.cost.time.device import DeviceSpec

TRUE = PrefillCosts(flops_per_s=90e9, seconds_per_score=0.8e-9, seconds_per_row=30e-9, overhead_s=120e-6)


def synthetic(costs: PrefillCosts, shapes: list[AttnShape]) -> list[tuple[AttnShape, float]]:
    spec = DeviceSpec("synthetic", 1e9, 1e10, {"fp32": 1e11}, 1.0, 1.0, kind="measured",
                      prefill={"fp32": costs}, decode={"fp32": DecodeCosts(12e9, 60e9, 80e-6)})
    return [(s, predict_seconds(spec, s)) for s in shapes]


def test_nonnegative_fit_is_exact_on_noiseless_data():
    x1 = [1.0, 2.0, 3.0, 5.0, 8.0]
    x2 = [v * v for v in x1]
    t = [0.5 + 2.0 * a + 0.25 * b for a, b in zip(x1, x2)]
    (c0, c1, c2), res = fit_nonnegative([[1.0] * 5, x1, x2], t)
    assert (c0, c1, c2) == pytest.approx((0.5, 2.0, 0.25)) and res < 1e-9
    # a term the data does not support is dropped rather than made negative
    t2 = [3.0 * a for a in x1]
    (c0, c1, c2), _ = fit_nonnegative([[1.0] * 5, x1, x2], t2)
    assert c0 == pytest.approx(0, abs=1e-12) and c1 == pytest.approx(3.0) and c2 == pytest.approx(0, abs=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_nonnegative_fit_is_the_constrained_optimum(seed):
    """On noisy data the fit satisfies the optimality (KKT) conditions of its problem: the
    gradient of the weighted relative-error loss vanishes along every positive coefficient and
    points outward (>= 0) at every coefficient held at zero. A wrong sign, a lost weight or a
    missing constraint breaks one of them."""
    import numpy as np
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.1, 10.0, size=(12, 4))
    X[:, 0] = 1.0
    true = np.array([0.5, 1.0, 0.0, 0.3])
    t = X @ true * (1 + 0.05 * rng.standard_normal(12))
    noise = rng.uniform(0.0, 0.2, 12)
    coef, res = fit_nonnegative(X.T.tolist(), t.tolist(), noise=noise.tolist())
    c = np.array(coef)
    w = 1 / (noise + 0.02)
    w = w / w.mean()
    A = X / t[:, None]
    grad = 2 * (w[:, None] * A).T @ (w * (A @ c - 1))          # d/dc of sum (w (A c - 1))^2
    assert (c >= 0).all()
    scale = np.abs(w[:, None] * A).sum()
    for j in range(4):
        if c[j] > 0:
            assert abs(grad[j]) <= 1e-8 * scale, (j, grad)
        else:
            assert grad[j] >= -1e-8 * scale, (j, grad)
    assert res == pytest.approx(float(np.sqrt(np.mean((A @ c - 1) ** 2))))


def test_decode_fit_with_one_head_grouping_charges_the_reads():
    """With one FLOP-per-byte ratio, compute and reads cannot be told apart: the fit charges the
    time to the reads (no compute rate) and still predicts that grouping exactly."""
    true = DecodeCosts(bytes_per_s=12e9, flops_per_s=40e9, overhead_s=60e-6)
    spec = DeviceSpec("synthetic", 1e9, 1e10, {"fp32": 1e11}, 1.0, 1.0, kind="measured",
                      prefill={"fp32": TRUE}, decode={"fp32": true})
    shapes = [AttnShape.decode(6, 2, 64, t) for t in (1500, 6000, 24000, 50000)]
    fitted, res = fit_decode([(s, predict_seconds(spec, s)) for s in shapes])
    assert fitted.flops_per_s is None and res < 1e-9
    back = DeviceSpec("fit", 1e9, 1e10, {"fp32": 1e11}, 1.0, 1.0, kind="measured", decode={"fp32": fitted})
    for s in shapes + [AttnShape.decode(6, 2, 64, 77777)]:
        assert predict_seconds(back, s) == pytest.approx(predict_seconds(spec, s), rel=1e-9)


def test_prefill_fit_recovers_the_terms():
    """Two head dims separate the matmul (4 d FLOPs per score) from the per-score softmax cost."""
    plan = CalibrationPlan()
    pts = synthetic(TRUE, plan.prefill_shapes("fp32"))
    fitted, res = fit_prefill(pts, skips_masked(pts))
    assert res < 1e-9
    assert fitted.flops_per_s == pytest.approx(TRUE.flops_per_s, rel=1e-6)
    assert fitted.seconds_per_score == pytest.approx(TRUE.seconds_per_score, rel=1e-6)
    assert fitted.seconds_per_row == pytest.approx(TRUE.seconds_per_row, rel=1e-6)
    assert fitted.overhead_s == pytest.approx(TRUE.overhead_s, rel=1e-6)


def test_masked_scores_detected_from_causal_versus_full():
    plan = CalibrationPlan()
    shapes = plan.prefill_shapes("fp32")
    assert skips_masked(synthetic(TRUE, shapes))
    computes_all = PrefillCosts(TRUE.flops_per_s, TRUE.seconds_per_score, TRUE.seconds_per_row,
                                TRUE.overhead_s, skips_masked=False)
    pts = synthetic(computes_all, shapes)
    assert not skips_masked(pts)
    fitted, res = fit_prefill(pts, skips_masked=False)
    assert res < 1e-9 and fitted.flops_per_s == pytest.approx(TRUE.flops_per_s, rel=1e-6)


def test_spilled_and_masked_terms_recovered_for_a_materializing_kernel():
    """A kernel that materializes the scores pays more per score once a call's scores leave the
    cache, and a masking pass when causal; with points on both sides the fit finds both terms."""
    spec = DeviceSpec("synthetic", 1e9, 1e10, {"fp32": 1e11}, 1.0, 1.0, kind="measured",
                      prefill={"fp32": PrefillCosts(70e9, 1e-9, 0.0, 1e-4, skips_masked=False,
                                                    materializes=True, seconds_per_spilled_score=3e-9,
                                                    seconds_per_masked_score=1.5e-9)},
                      extra={"cache_bytes": 32 << 20})
    shapes = [AttnShape(4, 1, d, t, t, c) for d in (64, 128) for t in (300, 900, 1500, 1800, 2000)
              for c in (True, False)]
    pts = [(s, predict_seconds(spec, s)) for s in shapes]
    assert not skips_masked(pts)
    fitted, res = fit_prefill(pts, False, materializes=True, cache_bytes=32 << 20)
    assert res < 1e-9
    assert fitted.seconds_per_spilled_score == pytest.approx(3e-9, rel=1e-6)
    assert fitted.seconds_per_masked_score == pytest.approx(1.5e-9, rel=1e-6)
    assert fitted.seconds_per_score == pytest.approx(1e-9, rel=1e-6)


def test_decode_fit_recovers_bandwidth_compute_and_overhead():
    plan = CalibrationPlan()
    pts = synthetic(TRUE, plan.decode_shapes("fp32"))
    fitted, res = fit_decode(pts)
    assert res < 1e-9
    assert fitted.bytes_per_s == pytest.approx(12e9, rel=1e-6)
    assert fitted.flops_per_s == pytest.approx(60e9, rel=1e-6)
    assert fitted.overhead_s == pytest.approx(80e-6, rel=1e-6)


@pytest.mark.parametrize("overlapped", [False, True])
def test_decode_fit_tells_added_from_overlapped_terms(overlapped):
    """Which form the kernel follows is measured: points made with reads and compute overlapped
    (max) are fitted by the max form, points made with the sum by the sum, each exactly. The
    grid has a read-bound grouping (G=1) and, at this compute rate, a compute-bound one (G=4)."""
    true = DecodeCosts(bytes_per_s=12e9, flops_per_s=20e9, overhead_s=80e-6, overlapped=overlapped)
    spec = DeviceSpec("synthetic", 1e9, 1e10, {"fp32": 1e11}, 1.0, 1.0, kind="measured",
                      prefill={"fp32": TRUE}, decode={"fp32": true})
    pts = [(s, predict_seconds(spec, s)) for s in CalibrationPlan().decode_shapes("fp32")]
    fitted, res = fit_decode(pts)
    assert res < 1e-6 and fitted.overlapped == overlapped
    assert fitted.bytes_per_s == pytest.approx(12e9, rel=1e-4)
    assert fitted.flops_per_s == pytest.approx(20e9, rel=1e-4)
    assert fitted.overhead_s == pytest.approx(80e-6, rel=1e-3)


def test_decode_terms_per_row_grouping_are_fitted_and_used():
    """A kernel whose read rate depends on how it groups query rows (one row; groups of 4; some
    rows alone) gets terms per grouping, and predictions use the shape's grouping."""
    from multihead.cost.time.cpu_profile import decode_rows_class
    rates = {"r1": 20e9, "r4": 12e9, "rmix": 14e9}
    by_class = {f"fp32/{c}": DecodeCosts(bytes_per_s=bw, flops_per_s=None, overhead_s=50e-6) for c, bw in rates.items()}
    truth = DeviceSpec("synthetic", 1e9, 1e10, {"fp32": 1e11}, 1.0, 1.0, kind="measured",
                       prefill={"fp32": TRUE}, decode={"fp32": DecodeCosts(10e9, None, 50e-6), **by_class})
    shapes = CalibrationPlan().decode_shapes("fp32")
    assert {decode_rows_class(s.heads // s.kv_heads) for s in shapes} == set(rates)
    points = [{"shape": s.__dict__, "best": predict_seconds(truth, s), "spread": 0.01, "backend": None} for s in shapes]
    _, decode, residuals = fit_points(points, 0.0)
    for cls, bw in rates.items():
        assert decode[f"fp32/{cls}"].bytes_per_s == pytest.approx(bw, rel=1e-4)
        assert residuals[f"decode fp32 {cls}"] < 1e-6
    fitted = DeviceSpec("fit", 1e9, 1e10, {"fp32": 1e11}, 1.0, 1.0, kind="measured", decode=decode)
    for s in shapes + [AttnShape(32, 8, 128, 1, 65536, False, "fp32"), AttnShape(9, 3, 64, 1, 4096, False, "fp32")]:
        assert predict_seconds(fitted, s) == pytest.approx(predict_seconds(truth, s), rel=1e-4)


def test_calibration_grid_is_disjoint_from_validation():
    """Held out: validation uses other sizes and other head counts than calibration."""
    cal, val = CalibrationPlan(), ValidationPlan()
    cal_pre = {(h, hk, d, t) for h, hk, d in cal.prefill_heads for t in cal.prefill_tokens + cal.prefill_full_tokens}
    cal_pre |= set(cal.prefill_extra)
    cal_dec = {(h, hk, d, t) for h, hk, d in cal.decode_heads for t in cal.decode_tokens}
    assert not cal_pre & set(val.prefill) and not cal_dec & set(val.decode)
    assert not {t for *_, t in val.prefill} & set(cal.prefill_tokens)
    assert not {t for *_, t in val.decode} & set(cal.decode_tokens)
    assert not {h for h, *_ in val.prefill} & {h for h, *_ in cal.prefill_heads + cal.prefill_extra}
    assert not {t for *_, t in val.prefill} & {t for *_, t in cal.prefill_extra}
    assert {t for *_, t in val.prefill} >= {1024, 16384} and {t for *_, t in val.decode} >= {4096, 131072}


@pytest.fixture(scope="module")
def tiny_profile(tmp_path_factory):
    """A real (tiny, one-thread) calibration: the machinery, not the accuracy."""
    plan = CalibrationPlan(prefill_heads=((2, 1, 16), (2, 1, 32)), prefill_tokens=(16, 48, 96, 160),
                           prefill_full_tokens=(96,), prefill_extra=(), decode_heads=((2, 1, 16), (2, 2, 16)),
                           decode_tokens=(1024, 1500, 2048), matmul_n={"fp32": 64, "bf16": 16},
                           bandwidth_bytes=1 << 20, repeats=2, min_seconds=0.0, name="test")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        spec = calibrate(plan, progress=False)
    finally:
        torch.set_num_threads(threads)
    return spec, write_profile(spec, tmp_path_factory.mktemp("cal") / "profile.json")


def test_calibrate_writes_a_profile_that_loads_back(tiny_profile):
    spec, path = tiny_profile
    raw = json.loads(path.read_text())
    for key in ("name", "memory_bytes", "bandwidth_bytes_per_s", "matmul_flops", "source", "date",
                "machine", "kernel", "spread", "load_average", "points", "attention"):
        assert key in raw, key
    assert set(raw["matmul_flops"]) == {"fp32", "bf16"} and raw["kind"] == "measured"
    assert raw["spread"]["median"] >= 0 and raw["machine"]["threads"] == 1
    assert len(raw["points"]) == 2 * 4 + 2 * 1 + 2 * 3
    assert all(p["best"] <= p["median"] and p["fitted_s"] > 0 for p in raw["points"])
    back = load_device(str(path))
    assert back.prefill == spec.prefill and back.decode == spec.decode
    assert "fp32" in back.prefill and "fp32" in back.decode
    s = AttnShape(3, 1, 32, 1, 4096, False)
    assert predict_seconds(back, s) == predict_seconds(spec, s) > 0


def test_cli_calibrate_rejects_bad_dtypes(capsys):
    from multihead.cli import main
    assert main(["calibrate", "--dtypes", "fp64", "--out", "/nonexistent/x.json"]) == 2
    assert "--dtypes" in capsys.readouterr().err
    assert main(["calibrate", "--threads", "0", "--out", "/nonexistent/x.json"]) == 2


def test_prefill_grid_too_small_to_show_flops_uses_the_measured_matmul_rate():
    """Tiny shapes whose time is all overhead and per-row cost give no matmul rate; the fit then
    takes F from the machine's measured matmul rate and fits the rest exactly."""
    costs = PrefillCosts(flops_per_s=1e30, seconds_per_score=0.0, seconds_per_row=40e-9, overhead_s=150e-6)
    spec = DeviceSpec("synthetic", 1e9, 1e10, {"fp32": 1e11}, 1.0, 1.0, kind="measured", prefill={"fp32": costs})
    shapes = [AttnShape.prefill(2, 1, d, t) for d in (16, 32) for t in (16, 48, 96, 160)]
    pts = [(s, predict_seconds(spec, s)) for s in shapes]
    with pytest.raises(RuntimeError, match="no positive matmul rate"):
        fit_prefill(pts)
    fitted, res = fit_prefill(pts, matmul_flops=1e13)
    assert fitted.flops_per_s == 1e13 and res < 0.01
    assert fitted.overhead_s == pytest.approx(150e-6, rel=0.01)


def test_decode_fit_keeps_a_read_rate_when_compute_would_take_all_the_time():
    """Points whose time is all compute (made by hand: overhead + flops / F) would let the
    compute term take the reads' share; a decode step must read its cache, so the compute term
    is the one these points cannot identify: it is dropped and the reads keep a positive rate."""
    shapes = [AttnShape.decode(h, hk, 32, t) for h, hk in ((4, 1), (8, 1)) for t in (1100, 2048, 4096)]
    pts = [(s, 50e-6 + s.flops / 20e9) for s in shapes]
    full, res = fit_decode(pts)
    assert full.flops_per_s is None and full.bytes_per_s > 0 and full.overhead_s >= 0
    assert res < 0.5                       # reads alone describe compute-bound points only roughly
