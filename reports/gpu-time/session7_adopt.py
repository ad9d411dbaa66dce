"""Session 7: adopt the variant chosen by out-of-document CV on the fitted documents: write its fit file, choose
the interval rule PER CLASS (dense / moe / mla) by leave-one-document-out coverage of the fitted documents'
out-of-document errors (timing_intervals.choose_rule_by_class), write the interval table, then the validation
reports. Every row on this branch is a fitted row (held-out-6 rows live on another branch and are never read).
Usage: PYTHONPATH=. python reports/gpu-time/session7_adopt.py VARIANT DIR [SESSION [CV_SCRIPT]]
(session 10 adopted session 8's refit this way: ... s7 reports/gpu-time/session8 10 session8_cv.py)"""
import json, sys
from pathlib import Path
from multihead.cost.time import timing, timing_intervals as ti
from multihead.fits import timing_validation as tv
variant, d = sys.argv[1], Path(sys.argv[2])
session = sys.argv[3] if len(sys.argv) > 3 else "7"
cv_script = sys.argv[4] if len(sys.argv) > 4 else "session7_cv.py"
const = json.load(open(d / f"fit_{variant}.json"))["constants"]
command = f"multihead gpu-time --fit (session {session}, variant '{variant}': reports/gpu-time/{cv_script})"
errs = json.load(open(d / f"ood_{variant}.json"))
rule, scored = ti.choose_rule_by_class(errs)
here = Path("reports/gpu-time")
(here / f"out_of_document_session{session}.json").write_text(json.dumps(errs) + "\n")
(here / f"interval_rule_session{session}.json").write_text(json.dumps(
    {"chosen": rule, "criterion": "per class: the larger of |leave-one-document-out coverage of the class - 80%| as the mean "
     "over documents and pooled over rows, on the fitted documents (ties: the narrower rule); families falling back to 'all' use the overall rule, the one whose "
     "worst class is nearest 80%",
     "candidates": {cls: [{"rule": r, "gap": g, "summary": s} for r, g, s in rows] for cls, rows in scored.items()}},
    indent=1) + "\n")
t = ti.write(errs, f"session {session}: 5 folds of whole fitted documents (warm-started from the committed fit), a rule "
             f"per class chosen by leave-one-document-out coverage (reports/gpu-time/interval_rule_session{session}.json)",
             rule=rule)
c = timing.Constants(**{k: (dict(v) if isinstance(v, dict) else v) for k, v in const.items()})
tv.write_reports(tv.load_table(), c, refit=True, command=command)
print("rule", json.dumps(rule))
for cls, rows in scored.items():
    best = min(rows, key=lambda x: x[1])
    print(cls, best[0], f"gap {best[1]:.3f}", best[2])
