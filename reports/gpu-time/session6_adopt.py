"""Session 6: adopt the variant chosen by out-of-document CV on the fitted documents: write its fit file
(the constants only; the validation reports, which list held-out rows, are written after the freeze),
choose the interval rule by leave-one-document-out coverage of the fitted documents' out-of-document
errors, and write the interval table. Prints nothing of held-out rows.
Usage: PYTHONPATH=. python reports/gpu-time/session6_adopt.py VARIANT DIR"""
import json, sys
from pathlib import Path
from multihead.cost.time import timing, timing_intervals as ti
from multihead.fits import timing_validation as tv
variant, d = sys.argv[1], Path(sys.argv[2])
const = json.load(open(d / f"fit_{variant}.json"))["constants"]
timing.FIT_FILE.write_text(json.dumps({"command": f"multihead gpu-time --fit (session 6, decode attention kernels '{variant}')",
                                       "split": tv.SPLIT_RULE, "measurements": "reports/gpu-time/measurements.json",
                                       "fitted_on": list(tv.FIT_SPLITS), "constants": const}, indent=1) + "\n")
errs = json.load(open(d / f"ood_{variant}.json"))
rule, scored = ti.choose_rule(errs)
here = Path("reports/gpu-time")
(here / "out_of_document_session6.json").write_text(json.dumps(errs) + "\n")
(here / "interval_rule_session6.json").write_text(json.dumps(
    {"chosen": rule, "criterion": "worst class's |leave-one-document-out document coverage - 80%| on the fitted documents",
     "candidates": [{"rule": r, "worst_gap": g, "summary": s} for r, g, s in scored]}, indent=1) + "\n")
t = ti.write(errs, "session 6: 5 folds of whole fitted documents (warm-started from the session-6 fit), "
             "rule chosen by leave-one-document-out coverage (reports/gpu-time/interval_rule_session6.json)", rule=rule)
print("rule", rule)
for r, g, s in sorted(scored, key=lambda x: x[1])[:6]:
    print(r, f"worst gap {g:.3f}", {k: (v["documents"], round(v["document_coverage"], 3), round(v["coverage"], 3)) for k, v in s.items()})
for k, v in t["families"].items():
    print(k, {a: (round(b, 3) if isinstance(b, float) else b) for a, b in v.items()})
