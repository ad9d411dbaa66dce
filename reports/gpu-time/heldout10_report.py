"""The held-out-10 result (a document never fitted, never looked at while modelling), for the frozen model
versions, with the 80% intervals each version had when frozen: writes reports/gpu-time/heldout10.{md,json}.
Run once, after the last freeze: PYTHONPATH=. python reports/gpu-time/heldout10_report.py

Set 10 is one document (the SGLang cookbook's Kimi-K2.5 page, 24 MLA rows on 8x H200; see
reports/gpu-time/add_session13_rows.py and its doubts): its groups are few and small, and it says nothing of dense
models."""
from heldout_eval import report_set

VERSIONS = [("before", "the model as main left it at d813e5d (session 10's fit, session 11's intervals: the shipped model, "
                       "unchanged since), frozen by the helper that entered set 10, before any later change"),
            ("after", "session 13's model, part 2: arrival waves on, TensorRT-LLM's 0.x / 1.x fixed costs apart, documents "
                      "weighted as the square root of their rows, refitted on all 1,207 rows (session13/RULE.md), "
                      "never chosen on set 10")]


def _project(src: str) -> set:
    """The Kimi-K2.5 page shares its harness (SGLang bench_serving, the cookbook's random runs) with the SGLang
    cookbook pages earlier sets entered: it is also reported as that project's group."""
    return {"project SGLang cookbook"} if src.startswith("sglcb") else set()


report_set(10, VERSIONS, _project)
