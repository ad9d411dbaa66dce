"""Held-out set 7 (session 8, issue 28): documents no other split uses, sealed like set 6 and predictable.

These tests never compare a prediction with its measurement: set 7's errors are computed once, by
reports/gpu-time/heldout7_report.py at the final evaluation."""
import json
import math

from multihead.cost.time import timing
from multihead.fits import timing_validation as tv

MARK = "heldout-7"


def _seventh(table):
    return [r for r in table["rows"] if r.get("split") == MARK]


def test_seventh_set_is_marked_held_out_and_never_fitted():
    assert tv.MARKED[MARK] == "held-out-7"
    assert tv.split_of({"id": "x", "split": MARK}) == "held-out-7"
    assert "held-out-7" in tv.SPLITS and "held-out-7" in tv.HELD_OUT_SPLITS
    assert "held-out-7" in tv.SEALED and "held-out-7" not in tv.FIT_SPLITS
    assert "held-out-6" not in tv.SPLITS and "seen-6" not in tv.SEALED   # set 6, judged once, is fitted since session 8


def test_load_table_leaves_set_7_out_and_sealed_true_has_it():
    plain, full = tv.load_table(), tv.load_table(sealed=True)
    assert not _seventh(plain) and not any(tv.split_of(r) == "held-out-7" for r in plain["rows"])
    seventh = _seventh(full)
    assert len(seventh) >= 100 and all(tv.split_of(r) == "held-out-7" for r in seventh)
    assert len({r["id"] for r in seventh}) == len(seventh)
    assert {r["id"] for r in full["rows"]} - {r["id"] for r in plain["rows"]} >= {r["id"] for r in seventh}


def test_set_7_documents_are_used_by_no_other_split():
    full = tv.load_table(sealed=True)
    seventh = _seventh(full)
    mine = {r["source"] for r in seventh}
    others = {r["source"] for r in full["rows"] if r.get("split") != MARK}
    assert not mine & others
    urls = {full["sources"][s]["url"] for s in others}
    assert not {full["sources"][s]["url"] for s in mine} & urls
    for s in mine:
        src = full["sources"][s]
        assert src["url"].startswith("https://") and src["engine_family"] in timing.ENGINES
        assert src.get("session") == 8 and src["class"] in ("dense", "moe", "mla")


def test_every_set_7_row_is_predicted_without_refusal():
    """A prediction exists (finite, positive) for every row; nothing here looks at the measured value."""
    full = tv.load_table(sealed=True)
    sub = {**full, "rows": _seventh(full)}
    pairs = tv.setups(sub, timing.load_constants())
    assert len(pairs) == len(sub["rows"])
    for row, setup in pairs:
        pred = tv.predict(row, setup)
        assert isinstance(pred, float) and math.isfinite(pred) and pred > 0, row["id"]


def test_set_7_predictions_are_frozen_for_every_row():
    frozen = json.loads((tv.MEASUREMENTS.parent / "frozen" / "heldout-7_before.json").read_text())
    seventh = _seventh(tv.load_table(sealed=True))
    assert {p["id"] for p in frozen["predictions"]} == {r["id"] for r in seventh}
    assert all(p["predicted"] is not None for p in frozen["predictions"])
    assert frozen["label"] == "before" and len(frozen["model_commit"]) == 40
