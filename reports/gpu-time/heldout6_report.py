"""The held-out-6 result (documents never fitted, never looked at while modelling), for the frozen model
versions, with the 80% intervals each version had when frozen: writes reports/gpu-time/heldout6.{md,json}.
Run once, after the last freeze: PYTHONPATH=. python reports/gpu-time/heldout6_report.py"""
from heldout_eval import report
from multihead.fits import timing_validation as tv

VERSIONS = [("before", "the model as session 6 left it (main at 0c73a45: its fit and intervals), frozen by the helper that "
                       "entered set 6, before any session-7 change"),
            ("after", "session 7: every earlier set fitted (643 rows, 28 documents), the ROCm engines' matmul factor "
                      "(cost/time/rocm.py), 80% intervals by a rule per class; chosen by 5-fold cross-validation over "
                      "whole training documents, never on set 6")]
rows = {r["id"]: r for r in tv.load_table(sealed=True)["rows"] if tv.split_of(r) == "held-out-6"}
report(6, rows, VERSIONS, ("Documents held out (chosen and entered by a helper with no part in the modelling, from documents no earlier "
         "session used, decided before any prediction; the modelling helper never had them on its branch): "),
       lambda cls, c2, m, src: sorted({"all", c2, f"{c2} {m}", f"all {m}", cls, f"{cls} {m}", f"doc {src}"}),
       lambda cls, c2, m, src: sorted({"all", c2, cls, f"{cls} {m}", f"doc {src}"}))
