"""Session 15, part 2 (RULE.md), exploratory: the shipped terms refitted on all 1,656 fitted rows (sets 12-17 added
after their judgement; `session8_cv.py s13 reports/gpu-time/session15 15`, saved as fit_s15.json / ood_s15.json)
against the shipped constants' out-of-document errors on the same rows. Writes session15/TABLE.md.
The refit is not a candidate: by RULE.md part 2 it is adopted only if the judged refit ('after') had won, and it did
not (JUDGE.md). Run: PYTHONPATH=. python reports/gpu-time/session15/table.py

The shipped constants' errors on the 1,656 rows: session 13's 5 folds on the 1,207 rows it fitted
(out_of_document_session13.json), sets 10 and 11 as held out under that model (frozen 'after'), and sets 12-17 as
held out under it (frozen 'before'): every one predicted by constants never fitted on its document."""
import json
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "session13"))
from table import fold_and_held_out_errors, write_table   # noqa: E402  (session 13's table and criterion)

ROWS = 1656


def shipped_errors() -> list[dict]:
    return fold_and_held_out_errors("out_of_document_session13.json",
                                    [(10, "after"), (11, "after")] + [(n, "before") for n in range(12, 18)])


if __name__ == "__main__":
    named = [("shipped", shipped_errors()), ("s15 refit", json.loads((HERE / "ood_s15.json").read_text()))]
    assert all(len(e) == ROWS for _, e in named), [(k, len(e)) for k, e in named]
    assert {e["id"] for e in named[1][1]} == {e["id"] for e in named[0][1]}
    write_table(named, "Session 15 (exploratory): out-of-document median |predicted / measured - 1| on all 1,656 "
                "fitted rows", "'shipped': the constants main ships; 449 of its 1,656 errors are true held-out "
                "errors (sets 10-17, judged under it), the rest session 13's fold errors, so the comparison leans "
                "against it. 's15 "
                "refit': one warm descent of at most 15 evaluations on all 1,656 rows, then 5 folds of whole "
                "documents. Made by `reports/gpu-time/session15/table.py`.", HERE / "TABLE.md")
