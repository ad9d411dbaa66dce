"""The held-out-9 result (documents never fitted, never looked at while modelling), for the frozen model
versions, with the 80% intervals each version had when frozen: writes reports/gpu-time/heldout9.{md,json}.
Run once, after the last freeze: PYTHONPATH=. python reports/gpu-time/heldout9_report.py"""
from heldout_eval import report
from multihead.fits import timing_validation as tv

VERSIONS = [("before", "the model as main left it at d1f1454 (session 11's fit and intervals), frozen by the helpers "
                       "that entered set 9, before any later change"),
            ("after", "session 13's model: arrival waves on, TensorRT-LLM's 0.x / 1.x fixed costs apart, documents weighted "
                      "as the square root of their rows in the fit (session 12's exploratory fit, adopted as it was: "
                      "session13/RULE.md), never chosen on set 9")]
rows = {r["id"]: r for r in tv.load_table(sealed=True)["rows"] if r.get("split") == "heldout-9"}


def _project(src: str) -> set:
    """The two InferenceX pull requests share one harness with InferenceX documents earlier sets entered, and the two
    tt-inference-server GPU reference threads share one with the tt-inference-server threads session 5 entered (two
    of them fitted): each project is also reported as one group."""
    if src.startswith("ix"):
        return {"project InferenceX"}
    return {"project tt-inference-server"} if src.startswith("tt") else set()


report(9, rows, VERSIONS, ("Documents held out (chosen and entered by a helper with no part in the modelling, from documents no earlier "
         "session used, decided before any prediction; the modelling helper never had them on its branch): "),
       lambda cls, c2, m, src: sorted({"all", c2, f"{c2} {m}", f"all {m}", cls, f"{cls} {m}", f"doc {src}"} | _project(src)),
       lambda cls, c2, m, src: sorted({"all", c2, cls, f"{cls} {m}", f"doc {src}"} | _project(src)))
