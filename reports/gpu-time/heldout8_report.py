"""The held-out-8 result (documents never fitted, never looked at while modelling), for the frozen model
versions, with the 80% intervals each version had when frozen: writes reports/gpu-time/heldout8.{md,json}.
Run once, after the last freeze: PYTHONPATH=. python reports/gpu-time/heldout8_report.py"""
from heldout_eval import report_set

VERSIONS = [("before", "the model as session 11 left it (main at 002973c: its fit and intervals), frozen by the helper "
                       "that entered set 8, before any later change"),
            ("after", "session 13's model: arrival waves on, TensorRT-LLM's 0.x / 1.x fixed costs apart, documents weighted "
                      "as the square root of their rows in the fit (session 12's exploratory fit, adopted as it was: "
                      "session13/RULE.md), never chosen on set 8")]


def _project(src: str) -> set:
    """The AccelMark result files share one harness: also reported as one group; so is the later run of a fitted
    document's setting."""
    if src.startswith("am-"):
        return {"project AccelMark"}
    # the same InferenceX benchmark on the same GPU as the fitted ix870-h200-dsr1 (a later run of it)
    return {"later run of a fitted setting"} if src == "ix3288-dsr1-h200-sglang" else set()


report_set(8, VERSIONS, _project)
