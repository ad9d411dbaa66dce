"""Session 14: the out-of-document table of the refits on all 1,253 fitted rows against the shipped constants, and the
decision's criterion (RULE.md), the mean of the six acceptance cells (dense and MoE/MLA x TTFT, TPOT, throughput at a
stated batch). Writes session14/TABLE.md and prints the criterion.
Run: PYTHONPATH=. python reports/gpu-time/session14/table.py

The shipped constants' errors on the 1,253 rows: session 13's 5 folds on the 1,207 rows it fitted
(out_of_document_session13.json) plus sets 10 and 11 as held out under that model (frozen/heldout-{10,11}_after.json:
constants never fitted on them), each error predicted / measured - 1."""
import json
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "session13"))
from table import fold_and_held_out_errors, write_table   # noqa: E402  (session 13's table and criterion)

VARIANTS = [("s13", "the shipped terms refitted"), ("s13+kerneff", "plus kernel efficiency per engine"),
            ("s13+kerneff2", "plus kernel efficiency per engine and phase")]
ROWS = 1253


def shipped_errors() -> list[dict]:
    return fold_and_held_out_errors("out_of_document_session13.json", [(10, "after"), (11, "after")])


if __name__ == "__main__":
    named = [("shipped", shipped_errors())]
    for v, _ in VARIANTS:
        f = HERE / f"ood_{v}.json"
        if f.exists():
            named.append((v, json.loads(f.read_text())))
    assert all(len(e) == ROWS for _, e in named), [(k, len(e)) for k, e in named]
    assert all({e["id"] for e in errs} == {e["id"] for e in named[0][1]} for _, errs in named)
    write_table(named, "Session 14: out-of-document median |predicted / measured - 1| on all 1,253 fitted rows",
                "'shipped': the constants main ships (session 13's part-2 fit): session 13's folds on 1,207 rows plus "
                "sets 10 and 11 as held out. The others: one warm descent of at most 15 evaluations on all 1,253 rows, "
                "then 5 folds of whole documents (`session8_cv.py VARIANT reports/gpu-time/session14 15`). Made by "
                "`reports/gpu-time/session14/table.py`.", HERE / "TABLE.md")
