"""Session 15, part 1 (RULE.md): install a session-14 refit as the model of this checkout, for freezing the sealed
sets under it: its fit file (catalog/gpu_time_fit.json) and its 80% interval table (catalog/gpu_time_intervals.json),
made as session 13's: a rule per class by leave-one-document-out coverage of its out-of-document fold errors
(timing_intervals.choose_rule_by_class), times session 13's held-out scale k (session13/held_out_scale.json). Prints
the rule only; reads no sealed row. Run in a worktree made for the freeze, never on main:
    PYTHONPATH=. python reports/gpu-time/session15/install_version.py s13 [--kernel-efficiency]"""
import json
import sys
from pathlib import Path

from multihead.cost.time import timing, timing_intervals as ti
from multihead.fits import timing_validation as tv

GT = Path(__file__).parents[1]
variant = sys.argv[1]
fit = json.loads((GT / "session14" / f"fit_{variant}.json").read_text())
errs = json.loads((GT / "session14" / f"ood_{variant}.json").read_text())
k = json.loads((GT / "session13" / "held_out_scale.json").read_text())["held_out_scale"]
rule, _ = ti.choose_rule_by_class(errs)
rule = {**rule, "held_out_scale": k}
shipped = json.loads(timing.FIT_FILE.read_text())
timing.FIT_FILE.write_text(json.dumps({"command": f"multihead gpu-time --fit (session 14, variant '{variant}': "
                                                  "reports/gpu-time/session8_cv.py), installed for session 15's "
                                                  "judgement (session15/RULE.md)",
                                       "split": shipped["split"], "measurements": shipped["measurements"],
                                       "fitted_on": list(tv.FIT_SPLITS), "constants": fit["constants"]}, indent=1) + "\n")
ti.write(errs, f"session 15 judgement: session 14's '{variant}' folds (reports/gpu-time/session14/ood_{variant}.json), "
         f"a rule per class chosen by leave-one-document-out coverage, log-widths scaled by session 13's held-out "
         f"scale {k:.3f}", rule=rule)
print("installed", variant, "rule", json.dumps(rule))
assert not any(tv.split_of(r) in tv.SEALED for r in tv.load_table()["rows"])   # nothing sealed was read
