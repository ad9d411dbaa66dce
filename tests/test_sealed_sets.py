"""Every sealed held-out set (timing_validation.SEALED; sets 18 and 19 now, since session 15 judged sets 12 to 17):
marked held out, never fitted, left out of load_table, made of documents no other split uses, every row predictable, its
predictions frozen for every row, and its newest freeze ('after' where there is one, else 'before') still the model
main ships: a change to the model is frozen again before the set judges it.
Sets judged once and unsealed keep their checks in tests/test_judged_sets.py.

These tests never compare a prediction with its measurement: a set's errors are computed once, by its
reports/gpu-time/heldoutN_report.py at the final evaluation."""
import json
import math

import pytest

from multihead.cost.time import timing
from multihead.fits import timing_validation as tv

# (the table's mark, the split, the session that entered it, at least this many rows and sources)
# Sets 12 to 17 were listed here until session 15 judged them once and unsealed them (tests/test_judged_sets.py).
# A set a data helper enters next is listed here while it is sealed: set 18 (session 15, two EvalScope pages) and set
# 19 (session 15, a third party's InferenceX re-run on H200 and an emmy experiment report).
SETS: list[tuple] = [("heldout-18", "held-out-18", 15, 12, 3), ("heldout-19", "held-out-19", 15, 44, 3)]
FULL = tv.load_table(sealed=True)
FROZEN = tv.MEASUREMENTS.parent / "frozen"


def _rows(table, mark):
    return [r for r in table["rows"] if r.get("split") == mark]


def test_every_sealed_split_is_listed_here():
    assert {split for _, split, *_ in SETS} == set(tv.SEALED)


@pytest.mark.parametrize("mark,split,session,min_rows,min_sources", SETS)
def test_marked_held_out_and_never_fitted(mark, split, session, min_rows, min_sources):
    assert tv.MARKED[mark] == split and tv.split_of({"id": "x", "split": mark}) == split
    assert split in tv.SPLITS and split in tv.HELD_OUT_SPLITS
    assert split in tv.SEALED and split not in tv.FIT_SPLITS


@pytest.mark.parametrize("mark,split,session,min_rows,min_sources", SETS)
def test_load_table_leaves_it_out_and_sealed_true_has_it(mark, split, session, min_rows, min_sources):
    plain = tv.load_table()
    assert not _rows(plain, mark) and not any(tv.split_of(r) == split for r in plain["rows"])
    rows = _rows(FULL, mark)
    assert len(rows) >= min_rows and all(tv.split_of(r) == split for r in rows)
    assert len({r["id"] for r in rows}) == len(rows)
    assert {r["id"] for r in FULL["rows"]} - {r["id"] for r in plain["rows"]} >= {r["id"] for r in rows}


@pytest.mark.parametrize("mark,split,session,min_rows,min_sources", SETS)
def test_documents_used_by_no_other_split(mark, split, session, min_rows, min_sources):
    mine = {r["source"] for r in _rows(FULL, mark)}
    others = {r["source"] for r in FULL["rows"] if r.get("split") != mark}
    assert not mine & others and len(mine) >= min_sources
    urls = {s["url"] for k, s in FULL["sources"].items() if k not in mine}
    assert not {FULL["sources"][s]["url"] for s in mine} & urls
    for s in mine:
        src = FULL["sources"][s]
        assert src["url"].startswith("https://") and src["engine_family"] in timing.ENGINES
        assert src.get("session") == session and src["class"] in ("dense", "moe", "mla")


@pytest.mark.parametrize("mark,split,session,min_rows,min_sources", SETS)
def test_every_row_is_predicted_without_refusal(mark, split, session, min_rows, min_sources):
    """A prediction exists (finite, positive) for every row; nothing here looks at the measured value."""
    sub = {**FULL, "rows": _rows(FULL, mark)}
    pairs = tv.setups(sub, timing.load_constants())
    assert len(pairs) == len(sub["rows"])
    for row, setup in pairs:
        pred = tv.predict(row, setup)
        assert isinstance(pred, float) and math.isfinite(pred) and pred > 0, row["id"]


@pytest.mark.parametrize("mark,split,session,min_rows,min_sources", SETS)
def test_predictions_frozen_for_every_row_and_still_the_shipped_models(mark, split, session, min_rows, min_sources):
    """The 'before' freeze covers every row; the newest freeze of a sealed set is what main predicts now. After a
    change to the model: freeze the set again (frozen/freezeN.py after ...) before its report is run."""
    n = mark.split("-")[1]
    before = json.loads((FROZEN / f"heldout-{n}_before.json").read_text())
    rows = _rows(FULL, mark)
    assert {p["id"] for p in before["predictions"]} == {r["id"] for r in rows}
    assert all(p["predicted"] is not None for p in before["predictions"])
    assert before["label"] == "before" and len(before["model_commit"]) == 40
    after = FROZEN / f"heldout-{n}_after.json"       # frozen before the judgement, once a change is made
    newest = json.loads(after.read_text()) if after.exists() else before
    frozen = {p["id"]: p["predicted"] for p in newest["predictions"]}
    sub = {**FULL, "rows": rows}
    for row, setup in tv.setups(sub, timing.load_constants()):
        assert tv.predict(row, setup) == pytest.approx(frozen[row["id"]], rel=1e-9), row["id"]
