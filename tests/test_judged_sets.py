"""Held-out sets judged once and unsealed (sets 8 to 11, session 13; set 7 has tests/test_heldout7_sealed.py):
marked seen and fitted from the next refit, their documents used by no other split, both frozen versions
covering every row, and the report each produced from those freezes reproducible from the committed files.

Before session 13 these sets were sealed (tests/test_sealed_sets.py); their reports, reports/gpu-time/heldout8.md
and heldout9.md, were run once, after the 'after' freeze (reports/gpu-time/session13/RULE.md)."""
import json
import statistics

import pytest

from multihead.fits import timing_validation as tv

# (mark, split, session that entered it, rows, documents)
SETS = [("heldout-8", "seen-8", 11, 156, 36), ("heldout-9", "seen-9", 12, 75, 6), ("heldout-10", "seen-10", 13, 24, 1),
        ("heldout-11", "seen-11", 13, 22, 2)]
TABLE = tv.load_table()
HERE = tv.MEASUREMENTS.parent


def _rows(mark):
    return [r for r in TABLE["rows"] if r.get("split") == mark]


@pytest.mark.parametrize("mark,split,session,n_rows,n_docs", SETS)
def test_seen_and_fitted_from_the_next_refit(mark, split, session, n_rows, n_docs):
    assert tv.MARKED[mark] == split and split in tv.FIT_SPLITS and split not in tv.SEALED
    rows = _rows(mark)
    assert len(rows) == n_rows and len({r["source"] for r in rows}) == n_docs
    assert all(tv.split_of(r) == split for r in rows)
    assert all(TABLE["sources"][r["source"]].get("session") == session for r in rows)
    others = {r["source"] for r in TABLE["rows"] if r.get("split") != mark}
    assert not {r["source"] for r in rows} & others


@pytest.mark.parametrize("mark,split,session,n_rows,n_docs", SETS)
def test_both_versions_frozen_for_every_row_and_the_report_reproduces(mark, split, session, n_rows, n_docs):
    n = mark.split("-")[1]
    rows = {r["id"]: r for r in _rows(mark)}
    report = json.loads((HERE / f"heldout{n}.json").read_text())
    assert report["rows"] == n_rows and set(report["versions"]) == {"before", "after"}
    for label in ("before", "after"):
        frozen = json.loads((HERE / "frozen" / f"heldout-{n}_{label}.json").read_text())
        preds = {p["id"]: p["predicted"] for p in frozen["predictions"]}
        assert set(preds) == set(rows) and all(v is not None for v in preds.values())
        med = statistics.median(abs(preds[i] / rows[i]["value"] - 1) for i in rows)
        assert report["versions"][label]["groups"]["all"]["median_abs"] == pytest.approx(med, rel=1e-9)
