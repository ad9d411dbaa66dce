"""The held-out-15 result (a document never fitted, never looked at while modelling), for the frozen model
versions, with the 80% intervals each version had when frozen: writes reports/gpu-time/heldout15.{md,json}.
Run once, after the last freeze: PYTHONPATH=. python reports/gpu-time/heldout15_report.py

Set 15 is one document (LLM-Inference-Bench's Plots/All_results.csv, Argonne, arXiv:2411.00136, pinned at ae7e7a4),
135 rows entered as three sources: offline vLLM batch latencies (one generate call of 16 / 32 / 64 prompts, input =
output = 128 / 512 / 2048 tokens, request_latency_s, mode 'static') on an MI300X with vLLM 0.6.1 (ROCm) for
Llama-3-8B and Llama-3-70B (dense, 72 rows) and Mixtral-8x7B (MoE, 36 rows) at TP 1 / 2 / 4 / 8, and on a GH200 with
vLLM 0.5.3.post1 for Llama-2-7B, Llama-3-8B and Qwen2-7B (dense, 27 rows) at TP 1; see
reports/gpu-time/add_session14_set15_rows.py and its doubts (same study as the table's alcf-bench-* sources, other
file and runs; engine versions from the repository's setup files). It says nothing of TTFT / TPOT under a server's
load, of SGLang or TensorRT-LLM, or of MLA, and its groups are those of one study."""
from heldout_eval import report_set

VERSIONS = [("before", "the model main holds at f005e43 (session 13's adopted model; session 14's kernel-efficiency "
                       "term present but off), frozen by the helper that entered set 15, before any later change"),
            ("after", "TO BE WRITTEN when the next change is frozen")]

report_set(15, VERSIONS)        # one document: no project group beyond the document's own
