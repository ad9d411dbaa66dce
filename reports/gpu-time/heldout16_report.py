"""The held-out-16 result (documents never fitted, never looked at while modelling), for the frozen model
versions, with the 80% intervals each version had when frozen: writes reports/gpu-time/heldout16.{md,json}.
Run once, after the last freeze: PYTHONPATH=. python reports/gpu-time/heldout16_report.py

Set 16 is four Hugging Face model cards (128 rows, four sources; see reports/gpu-time/add_session14_set16_rows.py and
its doubts): neuralmagic / RedHatAI's DeepSeek-R1-Distill-Llama-70B-FP8-dynamic, -Llama-8B-quantized.w8a8,
-Qwen-7B-quantized.w4a16 and -Qwen-14B-quantized.w4a16 cards, whose 'Single-stream performance (measured with vLLM
version 0.7.2)' tables print GuideLLM's one-request-at-a-time request latency of eight fixed prompt / generation
lengths (256/128 to 10240/1536) for the bf16 base model on RTX A6000, A100 and H100 (TP 1, 2 or 4) and the
FP8-dynamic checkpoint on H100 (dense, 32 rows a card, all request_latency_s at batch 1). It judges whole-request
time at batch 1 for four dense models (Llama-3.1-8B / -70B, Qwen2.5-7B / -14B shapes); it says nothing of TTFT or
TPOT at a concurrency above 1, of MoE or MLA, or of SGLang / TensorRT-LLM, and its four documents share one harness
and one publisher."""
from heldout_eval import report_set

VERSIONS = [("before", "the model main holds at fe7c763 (session 13's adopted model, kept by session 14), frozen by "
                       "the helper that entered set 16, before any later change"),
            ("after", "session 14's refit 's13' (the shipped terms refitted on 1,253 rows, sets 10 and 11 added), with "
                      "intervals from its folds times k 1.76, frozen on branch s15-after (session15/RULE.md)"),
            ("kerneff", "session 14's 's13+kerneff' (kernel efficiency per engine on), exploratory, not part of "
                        "the decision (session15/RULE.md)")]

report_set(16, VERSIONS)
