"""Held-out set 9 (session 12, issue 28): documents no other split uses, sealed like set 8, and predictable.

Set 9 is smaller than set 8 (6 documents, 75 rows, 39 dense; see reports/gpu-time/add_session12_rows.py): the
thresholds below are what it has, not set 8's.

These tests never compare a prediction with its measurement: set 9's errors are computed once, by
reports/gpu-time/heldout9_report.py at the final evaluation."""
import json
import math

from multihead.cost.time import timing
from multihead.fits import timing_validation as tv

MARK = "heldout-9"


def _ninth(table):
    return [r for r in table["rows"] if r.get("split") == MARK]


def test_ninth_set_is_marked_held_out_and_never_fitted():
    assert tv.MARKED[MARK] == "held-out-9"
    assert tv.split_of({"id": "x", "split": MARK}) == "held-out-9"
    assert "held-out-9" in tv.SPLITS and "held-out-9" in tv.HELD_OUT_SPLITS
    assert "held-out-9" in tv.SEALED and "held-out-9" not in tv.FIT_SPLITS
    assert "held-out-8" in tv.SEALED   # set 8 stays sealed too


def test_load_table_leaves_set_9_out_and_sealed_true_has_it():
    plain, full = tv.load_table(), tv.load_table(sealed=True)
    assert not _ninth(plain) and not any(tv.split_of(r) == "held-out-9" for r in plain["rows"])
    ninth = _ninth(full)
    assert len(ninth) >= 75 and all(tv.split_of(r) == "held-out-9" for r in ninth)
    assert len({r["id"] for r in ninth}) == len(ninth)
    assert {r["id"] for r in full["rows"]} - {r["id"] for r in plain["rows"]} >= {r["id"] for r in ninth}


def test_set_9_documents_are_used_by_no_other_split():
    full = tv.load_table(sealed=True)
    ninth = _ninth(full)
    mine = {r["source"] for r in ninth}
    others = {r["source"] for r in full["rows"] if r.get("split") != MARK}
    assert not mine & others and len(mine) >= 6
    urls = {s["url"] for k, s in full["sources"].items() if k not in mine}
    assert not {full["sources"][s]["url"] for s in mine} & urls
    for s in mine:
        src = full["sources"][s]
        assert src["url"].startswith("https://") and src["engine_family"] in timing.ENGINES
        assert src.get("session") == 12 and src["class"] in ("dense", "moe", "mla")


def test_set_9_has_dense_moe_and_mla_rows_and_every_metric():
    full = tv.load_table(sealed=True)
    ninth = _ninth(full)
    classes = {full["sources"][r["source"]]["class"] for r in ninth}
    assert classes == {"dense", "moe", "mla"}
    metrics = {r["metric"] for r in ninth}
    assert {"ttft_ms", "itl_ms"} <= metrics and metrics & {"output_tokens_per_s", "output_tokens_per_s_per_gpu"}


def test_set_9_dense_rows_judge_ttft_tpot_and_throughput_at_a_stated_concurrency():
    """The dense part (39 rows): TTFT, TPOT and output throughput, several of them above one request in flight."""
    full = tv.load_table(sealed=True)
    dense = [r for r in _ninth(full) if full["sources"][r["source"]]["class"] == "dense"]
    assert len(dense) >= 39
    by_metric = {m: [r for r in dense if r["metric"] == m] for m in ("ttft_ms", "itl_ms", "output_tokens_per_s")}
    assert len(by_metric["ttft_ms"]) >= 11 and len(by_metric["itl_ms"]) >= 17
    assert len(by_metric["output_tokens_per_s"]) >= 11
    assert all(len({r["batch"] for r in rows if r["batch"] > 1}) >= 3 for rows in by_metric.values())


def test_every_set_9_row_is_predicted_without_refusal():
    """A prediction exists (finite, positive) for every row; nothing here looks at the measured value."""
    full = tv.load_table(sealed=True)
    sub = {**full, "rows": _ninth(full)}
    pairs = tv.setups(sub, timing.load_constants())
    assert len(pairs) == len(sub["rows"])
    for row, setup in pairs:
        pred = tv.predict(row, setup)
        assert isinstance(pred, float) and math.isfinite(pred) and pred > 0, row["id"]


def test_set_9_predictions_are_frozen_for_every_row():
    frozen = json.loads((tv.MEASUREMENTS.parent / "frozen" / "heldout-9_before.json").read_text())
    ninth = _ninth(tv.load_table(sealed=True))
    assert {p["id"] for p in frozen["predictions"]} == {r["id"] for r in ninth}
    assert all(p["predicted"] is not None for p in frozen["predictions"])
    assert frozen["label"] == "before" and len(frozen["model_commit"]) == 40
