"""The held-out-17 result (documents never fitted, never looked at while modelling), for the frozen model
versions, with the 80% intervals each version had when frozen: writes reports/gpu-time/heldout17.{md,json}.
Run once, after the last freeze: PYTHONPATH=. python reports/gpu-time/heldout17_report.py

Set 17 is one web page (18 rows, one source; see reports/gpu-time/add_session14_set17_rows.py and its doubts):
ai.wmx.dev's 'Benchmark results' page (https://ai.wmx.dev/benchmarks): Qwen2.5-0.5B-Instruct BF16 on one NVIDIA L4,
vLLM v0.23.0 (V1), `vllm bench serve` closed loop at max-concurrency 1 / 2 / 4 / 8 / 16 / 32 with 256 input and 128
output tokens (--ignore-eos): output throughput, median TTFT (ttft_ms) and median ITL (decode_step_ms) at each
concurrency (dense, 6 + 6 + 6 rows). It judges a very small dense model, where fixed host and per-step costs dominate;
it says nothing of larger dense models, MoE, MLA, other GPUs, SGLang or TensorRT-LLM, and it is one page: far below
the brief's aim of 30 rows from two documents."""
from heldout_eval import report_set

VERSIONS = [("before", "the model main holds at ec386c8 (session 13's adopted model, kept by session 14), frozen by "
                       "the helper that entered set 17, before any later change"),
            ("after", "session 14's refit 's13' (the shipped terms refitted on 1,253 rows, sets 10 and 11 added), with "
                      "intervals from its folds times k 1.76, frozen on branch s15-after (session15/RULE.md)"),
            ("kerneff", "session 14's 's13+kerneff' (kernel efficiency per engine on), exploratory, not part of "
                        "the decision (session15/RULE.md)")]

report_set(17, VERSIONS)        # one document: no project group beyond the document's own
