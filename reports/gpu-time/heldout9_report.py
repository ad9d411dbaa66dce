"""The held-out-9 result (documents never fitted, never looked at while modelling), for the frozen model
versions, with the 80% intervals each version had when frozen: writes reports/gpu-time/heldout9.{md,json}.
Run once, after the last freeze: PYTHONPATH=. python reports/gpu-time/heldout9_report.py"""
from heldout_eval import report_set

VERSIONS = [("before", "the model as main left it at d1f1454 (session 11's fit and intervals), frozen by the helpers "
                       "that entered set 9, before any later change"),
            ("after", "session 13's model: arrival waves on, TensorRT-LLM's 0.x / 1.x fixed costs apart, documents weighted "
                      "as the square root of their rows in the fit (session 12's exploratory fit, adopted as it was: "
                      "session13/RULE.md), never chosen on set 9")]


def _project(src: str) -> set:
    """The two InferenceX pull requests share one harness with InferenceX documents earlier sets entered, and the two
    tt-inference-server GPU reference threads share one with the tt-inference-server threads session 5 entered (two
    of them fitted): each project is also reported as one group."""
    if src.startswith("ix"):
        return {"project InferenceX"}
    return {"project tt-inference-server"} if src.startswith("tt") else set()


report_set(9, VERSIONS, _project)
