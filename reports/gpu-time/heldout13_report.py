"""The held-out-13 result (four pull-request threads never fitted, never looked at while modelling), for the frozen
model versions, with the 80% intervals each version had when frozen: writes reports/gpu-time/heldout13.{md,json}.
Run once, after the last freeze: PYTHONPATH=. python reports/gpu-time/heldout13_report.py

Set 13 is four documents, seven rows, all MoE (see reports/gpu-time/add_session14_set13_rows.py and its doubts):
vLLM pull requests #23151 (Qwen3-30B-A3B on H100, concurrency 10) and #43232 (Qwen3-235B-A22B FP8 with fp8 KV on
4x B200, concurrency 64), SGLang pull request #9359 (gpt-oss-120b on 4x B200 with DP attention, concurrency 2560) and
cloudrift-ai/emmy pull request #822 (Qwen3-30B-A3B on one H200, batch-1 TPOT): three output throughputs, two TTFTs,
two TPOTs. It says nothing of dense or MLA models, and its groups are few and tiny."""
from heldout_eval import report_set

VERSIONS = [("before", "the model main holds at 59de9a1 (session 13's adopted model), frozen by the helper that "
                       "entered set 13, before any later change"),
            ("after", "session 14's refit 's13' (the shipped terms refitted on 1,253 rows, sets 10 and 11 added), with "
                      "intervals from its folds times k 1.76, frozen on branch s15-after (session15/RULE.md)"),
            ("kerneff", "session 14's 's13+kerneff' (kernel efficiency per engine on), exploratory, not part of "
                        "the decision (session15/RULE.md)")]


report_set(13, VERSIONS)
