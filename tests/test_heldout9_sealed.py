"""Held-out set 9 (session 12, issue 28): its classes and its dense part. The checks every sealed set gets
(marked, never fitted, documents no other split uses, predicted, frozen) are in tests/test_sealed_sets.py.

Set 9 is smaller than set 8 (6 documents, 75 rows, 39 dense; see reports/gpu-time/add_session12_rows.py): the
thresholds below are what it has, not set 8's.

These tests never compare a prediction with its measurement: set 9's errors are computed once, by
reports/gpu-time/heldout9_report.py at the final evaluation."""
from multihead.fits import timing_validation as tv

MARK = "heldout-9"


def _ninth(table):
    return [r for r in table["rows"] if r.get("split") == MARK]


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
