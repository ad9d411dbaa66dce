"""The held-out-12 result (a document never fitted, never looked at while modelling), for the frozen model
versions, with the 80% intervals each version had when frozen: writes reports/gpu-time/heldout12.{md,json}.
Run once, after the last freeze: PYTHONPATH=. python reports/gpu-time/heldout12_report.py

Set 12 is one document (the Qwen2 edition of the Qwen docs' Speed Benchmark page, 13 rows, all dense: Qwen2-7B /
72B-Instruct read as Qwen2.5-7B / 72B on A100 80GB with vLLM 0.4.2; see reports/gpu-time/add_session13_set12_rows.py
and its doubts): every row is a batch-1 decode rate (decode_tokens_per_s), so it says nothing of TTFT, throughput,
batching or MoE / MLA models, and its groups are few and small."""
from heldout_eval import report_set

VERSIONS = [("before", "the model main holds at dc70169 (session 13's part-3 model, set 11 judged and unsealed), "
                       "frozen by the helper that entered set 12, before any later change"),
            ("after", "session 14's refit 's13' (the shipped terms refitted on 1,253 rows, sets 10 and 11 added), with "
                      "intervals from its folds times k 1.76, frozen on branch s15-after (session15/RULE.md)"),
            ("kerneff", "session 14's 's13+kerneff' (kernel efficiency per engine on), exploratory, not part of "
                        "the decision (session15/RULE.md)")]


def _project(src: str) -> set:
    """The document is an edition of one page (the Qwen docs' Speed Benchmark, whose other editions are set 11):
    also reported as that project's group."""
    return {"project Qwen speed benchmark"} if src.startswith("qwen2-speed") else set()


report_set(12, VERSIONS, _project)
