"""Held-out set 8 (session 11, issue 28): documents no other split uses, sealed like sets 6 and 7 were, and
predictable.

These tests never compare a prediction with its measurement: set 8's errors are computed once, by
reports/gpu-time/heldout8_report.py at the final evaluation."""
import json
import math

from multihead.cost.time import timing
from multihead.fits import timing_validation as tv

MARK = "heldout-8"


def _eighth(table):
    return [r for r in table["rows"] if r.get("split") == MARK]


def test_eighth_set_is_marked_held_out_and_never_fitted():
    assert tv.MARKED[MARK] == "held-out-8"
    assert tv.split_of({"id": "x", "split": MARK}) == "held-out-8"
    assert "held-out-8" in tv.SPLITS and "held-out-8" in tv.HELD_OUT_SPLITS
    assert "held-out-8" in tv.SEALED and "held-out-8" not in tv.FIT_SPLITS


def test_load_table_leaves_set_8_out_and_sealed_true_has_it():
    plain, full = tv.load_table(), tv.load_table(sealed=True)
    assert not _eighth(plain) and not any(tv.split_of(r) == "held-out-8" for r in plain["rows"])
    eighth = _eighth(full)
    assert len(eighth) >= 100 and all(tv.split_of(r) == "held-out-8" for r in eighth)
    assert len({r["id"] for r in eighth}) == len(eighth)
    assert {r["id"] for r in full["rows"]} - {r["id"] for r in plain["rows"]} >= {r["id"] for r in eighth}


def test_set_8_documents_are_used_by_no_other_split():
    full = tv.load_table(sealed=True)
    eighth = _eighth(full)
    mine = {r["source"] for r in eighth}
    others = {r["source"] for r in full["rows"] if r.get("split") != MARK}
    assert not mine & others and len(mine) >= 6
    urls = {s["url"] for k, s in full["sources"].items() if k not in mine}
    assert not {full["sources"][s]["url"] for s in mine} & urls
    for s in mine:
        src = full["sources"][s]
        assert src["url"].startswith("https://") and src["engine_family"] in timing.ENGINES
        assert src.get("session") == 11 and src["class"] in ("dense", "moe", "mla")


def test_at_least_half_of_set_8_is_dense():
    full = tv.load_table(sealed=True)
    eighth = _eighth(full)
    dense = sum(full["sources"][r["source"]]["class"] == "dense" for r in eighth)
    assert 2 * dense >= len(eighth)


def test_every_set_8_row_is_predicted_without_refusal():
    """A prediction exists (finite, positive) for every row; nothing here looks at the measured value."""
    full = tv.load_table(sealed=True)
    sub = {**full, "rows": _eighth(full)}
    pairs = tv.setups(sub, timing.load_constants())
    assert len(pairs) == len(sub["rows"])
    for row, setup in pairs:
        pred = tv.predict(row, setup)
        assert isinstance(pred, float) and math.isfinite(pred) and pred > 0, row["id"]


def test_set_8_predictions_are_frozen_for_every_row():
    frozen = json.loads((tv.MEASUREMENTS.parent / "frozen" / "heldout-8_before.json").read_text())
    eighth = _eighth(tv.load_table(sealed=True))
    assert {p["id"] for p in frozen["predictions"]} == {r["id"] for r in eighth}
    assert all(p["predicted"] is not None for p in frozen["predictions"])
    assert frozen["label"] == "before" and len(frozen["model_commit"]) == 40
