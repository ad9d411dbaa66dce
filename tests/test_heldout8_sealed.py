"""Held-out set 8 (session 11, issue 28): at least half dense. The checks every sealed set gets (marked,
never fitted, documents no other split uses, predicted, frozen) are in tests/test_sealed_sets.py.

These tests never compare a prediction with its measurement: set 8's errors are computed once, by
reports/gpu-time/heldout8_report.py at the final evaluation."""
from multihead.fits import timing_validation as tv

MARK = "heldout-8"


def _eighth(table):
    return [r for r in table["rows"] if r.get("split") == MARK]


def test_at_least_half_of_set_8_is_dense():
    full = tv.load_table(sealed=True)
    eighth = _eighth(full)
    dense = sum(full["sources"][r["source"]]["class"] == "dense" for r in eighth)
    assert 2 * dense >= len(eighth)
