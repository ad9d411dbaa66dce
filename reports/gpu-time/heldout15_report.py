"""The held-out-15 result (documents never fitted, never looked at while modelling), for the frozen model
versions, with the 80% intervals each version had when frozen: writes reports/gpu-time/heldout15.{md,json}.
Run once, after the last freeze: PYTHONPATH=. python reports/gpu-time/heldout15_report.py

Set 15 is three documents (166 rows, five sources; see reports/gpu-time/add_session14_set15_rows.py and its doubts):
(a) LLM-Inference-Bench's Plots/All_results.csv (Argonne, arXiv:2411.00136, pinned at ae7e7a4), 135 rows: offline
vLLM batch latencies (one generate call of 16 / 32 / 64 prompts, input = output = 128 / 512 / 2048 tokens,
request_latency_s, mode 'static') on an MI300X with vLLM 0.6.1 (ROCm) for Llama-3-8B and Llama-3-70B (dense, 72 rows)
and Mixtral-8x7B (MoE, 36 rows) at TP 1 / 2 / 4 / 8, and on a GH200 with vLLM 0.5.3.post1 for Llama-2-7B, Llama-3-8B
and Qwen2-7B (dense, 27 rows) at TP 1 (same study as the table's alcf-bench-* sources: other file and runs);
(b) cssnoeasy/a100-vllm-benchmark-blog's TP1 vs TP2 baseline (4 rows: Qwen2.5-7B-Instruct fp16 on one A100 80GB PCIe,
vLLM 0.19.0, output throughput and median TTFT at concurrency 16 and 32); (c) the same repository's Qwen3-32B
quantization report (27 rows: output throughput at concurrency 4 to 32, eager, BF16 / FP8 KV / AWQ). It says nothing
of SGLang or TensorRT-LLM, or of MLA, little of TTFT (2 rows), and its groups are those of two repositories."""
from heldout_eval import report_set

VERSIONS = [("before", "the model main holds at f005e43 (session 13's adopted model; session 14's kernel-efficiency "
                       "term present but off), frozen by the helper that entered set 15, before any later change"),
            ("after", "session 14's refit 's13' (the shipped terms refitted on 1,253 rows, sets 10 and 11 added), with "
                      "intervals from its folds times k 1.76, frozen on branch s15-after (session15/RULE.md)"),
            ("kerneff", "session 14's 's13+kerneff' (kernel efficiency per engine on), exploratory, not part of "
                        "the decision (session15/RULE.md)")]

# a group per repository: the three LLM-Inference-Bench sources are one file, the two A100 reports one author's
report_set(15, VERSIONS, project=lambda src: {"repo LLM-Inference-Bench" if src.startswith("alcf-") else
                                              "repo a100-vllm-benchmark-blog"})
