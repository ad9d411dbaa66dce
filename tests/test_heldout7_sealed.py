"""Held-out set 7 (session 8, issue 28): documents no other split uses, frozen before each change and judged
once in session 11 (reports/gpu-time/heldout7.md); since then 'seen-7', fitted on from the next refit."""
import json
import math

from multihead.cost.time import timing
from multihead.fits import timing_validation as tv

MARK = "heldout-7"


def _seventh(table):
    return [r for r in table["rows"] if r.get("split") == MARK]


def test_seventh_set_is_seen_since_it_was_judged():
    assert tv.MARKED[MARK] == "seen-7"
    assert tv.split_of({"id": "x", "split": MARK}) == "seen-7"
    assert "seen-7" in tv.SPLITS and "seen-7" in tv.FIT_SPLITS
    assert "held-out-7" not in tv.SPLITS and "held-out-7" not in tv.SEALED and "held-out-7" not in tv.HELD_OUT_SPLITS
    assert "seen-7" not in tv.SEALED and "seen-7" not in tv.HELD_OUT_SPLITS    # set 8 is the sealed one now
    assert (tv.MEASUREMENTS.parent / "heldout7.md").exists()       # judged once before it was unsealed


def test_load_table_has_set_7():
    plain = tv.load_table()
    seventh = _seventh(plain)
    assert len(seventh) >= 100 and all(tv.split_of(r) == "seen-7" for r in seventh)
    assert len({r["id"] for r in seventh}) == len(seventh)


def test_set_7_documents_are_used_by_no_other_split():
    full = tv.load_table()
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
    full = tv.load_table()
    sub = {**full, "rows": _seventh(full)}
    pairs = tv.setups(sub, timing.load_constants())
    assert len(pairs) == len(sub["rows"])
    for row, setup in pairs:
        pred = tv.predict(row, setup)
        assert isinstance(pred, float) and math.isfinite(pred) and pred > 0, row["id"]


def test_set_7_predictions_were_frozen_for_every_row_before_and_after():
    seventh = {r["id"] for r in _seventh(tv.load_table())}
    for label in ("before", "after"):
        frozen = json.loads((tv.MEASUREMENTS.parent / "frozen" / f"heldout-7_{label}.json").read_text())
        assert {p["id"] for p in frozen["predictions"]} == seventh
        assert all(p["predicted"] is not None for p in frozen["predictions"])
        assert frozen["label"] == label and len(frozen["model_commit"]) == 40


def test_interval_table_is_rebuilt_from_its_committed_errors():
    """Session 11's interval table was the interval rule applied to out_of_document_session11.json (session 10's
    out-of-document errors plus set 7's errors under constants never fitted on set 7); session 13's, fitted on sets 7
    to 9 too, is the rule applied to its own 5 folds of the 1,207 rows (out_of_document_session13.json)."""
    from multihead.cost.time import timing_intervals as ti
    here = tv.MEASUREMENTS.parent
    assert {"seen-7", "seen-8", "seen-9"} <= set(json.loads(timing.FIT_FILE.read_text())["fitted_on"])
    old = json.loads((here / "out_of_document_session11.json").read_text())
    assert len(old) == 787 + 189 and sum(e.get("split") == "seen-7" for e in old) == 189
    errs = json.loads((here / "out_of_document_session13.json").read_text())
    seventh = {r["id"] for r in _seventh(tv.load_table())}
    assert len(errs) == 1207 and len(seventh) == 189 and seventh <= {e["id"] for e in errs}
    shipped = ti.load_intervals()
    # the chosen rule, with session 13's held-out scale on top (session13/held_out_scale.py)
    assert {k: v for k, v in shipped["rule"].items() if k != "held_out_scale"} == \
        json.loads((here / "interval_rule_session13.json").read_text())["chosen"]
    assert shipped["families"] == ti.interval_table(errs, rule=shipped["rule"])
