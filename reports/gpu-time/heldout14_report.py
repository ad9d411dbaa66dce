"""The held-out-14 result (a document never fitted, never looked at while modelling), for the frozen model
versions, with the 80% intervals each version had when frozen: writes reports/gpu-time/heldout14.{md,json}.
Run once, after the last freeze: PYTHONPATH=. python reports/gpu-time/heldout14_report.py

Set 14 is one document (tkestack/tke-ai-playbook's vLLM baseline of DeepSeek-R1 on 2 x 8 H20 96GB, 72 rows, all MLA:
vLLM 0.9.0.1, TP 16 across two nodes, concurrency 1 to 128 at ISL:OSL 3000:150, 1000:1000 and 500:1000, mean TTFT,
mean TPOT and output throughput; see reports/gpu-time/add_session14_set14_rows.py and its doubts): it says nothing of
dense or GQA-MoE models, of other GPUs or of other engines, and its groups are those of one run."""
from heldout_eval import report_set

VERSIONS = [("before", "the model main holds at 59de9a1 (session 13's adopted model), frozen by the helper that "
                       "entered set 14, before any later change"),
            ("after", "session 14's refit 's13' (the shipped terms refitted on 1,253 rows, sets 10 and 11 added), with "
                      "intervals from its folds times k 1.76, frozen on branch s15-after (session15/RULE.md)"),
            ("kerneff", "session 14's 's13+kerneff' (kernel efficiency per engine on), exploratory, not part of "
                        "the decision (session15/RULE.md)")]

report_set(14, VERSIONS)        # one document: no project group beyond the document's own
