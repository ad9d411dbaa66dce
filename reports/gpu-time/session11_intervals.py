"""Session 11: the 80% intervals from more documents. Set 7's rows (9 documents) were never fitted by the shipped
constants, so their errors under those constants are out-of-document errors exactly as the CV folds make them.
The pool: session 10's out-of-document errors of the 787 fitted rows (out_of_document_session10.json) plus the 189
seen-7 rows under the shipped fit. The rule per class is chosen again by leave-one-document-out coverage on this
pool (timing_intervals.choose_rule_by_class), and the interval table is written from it. Predictions are unchanged;
no held-out set is left to judge the new intervals (set 7 judged the old ones: reports/gpu-time/heldout7.md).
Run: PYTHONPATH=. python reports/gpu-time/session11_intervals.py"""
import json
from pathlib import Path
from multihead.cost.time import timing, timing_intervals as ti
from multihead.fits import timing_validation as tv

here = Path("reports/gpu-time")
errs = json.load(open(here / "out_of_document_session10.json"))
table = tv.load_table()
fit_on = json.loads(timing.FIT_FILE.read_text())["fitted_on"]
assert "seen-7" not in fit_on, "the shipped constants were fitted on set 7: its errors are not out of document"
c = timing.load_constants()
seven = {**table, "rows": [r for r in table["rows"] if tv.split_of(r) == "seen-7"]}
for row, setup in tv.setups(seven, c):
    pred = tv.predict(row, setup)
    errs.append({"id": row["id"], "source": row["source"], "metric": row["metric"],
                 "fold": ti.document_fold(row["source"], 5), "error": pred / row["value"] - 1.0,
                 "family": list(ti.family(row, setup)), "split": "seen-7"})
assert len(errs) == 787 + 189, len(errs)
rule, scored = ti.choose_rule_by_class(errs)
(here / "out_of_document_session11.json").write_text(json.dumps(errs) + "\n")
(here / "interval_rule_session11.json").write_text(json.dumps(
    {"chosen": rule, "criterion": "as session 10 (interval_rule_session10.json), on session 10's out-of-document errors "
     "plus the seen-7 rows' errors under the shipped constants (never fitted on them)",
     "candidates": {cls: [{"rule": r, "gap": g, "summary": s} for r, g, s in rows] for cls, rows in scored.items()}},
    indent=1) + "\n")
ti.write(errs, "session 11: session 10's out-of-document errors (5 folds of whole fitted documents) plus set 7's "
         "189 rows under the shipped constants (never fitted on them); a rule per class chosen by leave-one-document-out "
         "coverage (reports/gpu-time/interval_rule_session11.json)", rule=rule)
print("rule", json.dumps(rule))
for cls, rows in scored.items():
    best = min(rows, key=lambda x: x[1])
    print(cls, best[0], f"gap {best[1]:.3f}", {k: round(v, 3) if isinstance(v, float) else v for k, v in best[2].items()})
