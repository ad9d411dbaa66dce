"""The held-out-7 result (documents never fitted, never looked at while modelling), for the frozen model
versions, with the 80% intervals each version had when frozen: writes reports/gpu-time/heldout7.{md,json}.
Run once, after the last freeze: PYTHONPATH=. python reports/gpu-time/heldout7_report.py"""
from heldout_eval import report_set

VERSIONS = [("before", "the model as session 7 left it (main at 18d68dc: its fit and intervals), frozen by the helper that "
                       "entered set 7, before any session-8 change"),
            ("after", "sessions 8-10's model: the session-7 terms refitted on 787 rows including seen-6, per-class 80% interval "
                      "rules, prefill batching term kept off; frozen before this report was run, never chosen on set 7")]
report_set(7, VERSIONS)
