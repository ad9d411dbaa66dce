"""The held-out-6 result (documents never fitted, never looked at while modelling), for the frozen model
versions, with the 80% intervals each version had when frozen: writes reports/gpu-time/heldout6.{md,json}.
Run once, after the last freeze: PYTHONPATH=. python reports/gpu-time/heldout6_report.py"""
from heldout_eval import report
from multihead.fits import timing_validation as tv
from multihead.fits.measurement_table import read_table

VERSIONS = [("before", "the model as session 6 left it (main at 0c73a45: its fit and intervals), frozen by the helper that "
                       "entered set 6, before any session-7 change"),
            ("after", "session 7: every earlier set fitted (643 rows, 28 documents), the ROCm engines' matmul factor "
                      "(cost/time/rocm.py), 80% intervals by a rule per class; chosen by 5-fold cross-validation over "
                      "whole training documents, never on set 6")]
# every row set 6 had when it was judged (session 7): the raw table's 'heldout-6' rows, the two SGLang 8x B200
# documents marked reserved editions in session 8 included, so the committed heldout6.{md,json} stay reproducible
rows = {r["id"]: r for r in read_table(tv.MEASUREMENTS)["rows"] if r.get("split") == "heldout-6"}
report(6, rows, VERSIONS, ("Documents held out (chosen and entered by a helper with no part in the modelling, from documents no earlier "
         "session used, decided before any prediction; the modelling helper never had them on its branch): "),
       lambda cls, c2, m, src: sorted({"all", c2, f"{c2} {m}", f"all {m}", cls, f"{cls} {m}", f"doc {src}"}),
       lambda cls, c2, m, src: sorted({"all", c2, cls, f"{cls} {m}", f"doc {src}"}))
