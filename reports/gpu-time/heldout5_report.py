"""The held-out-5 result (documents never fitted, never looked at while modelling), for the frozen model
versions, with the 80% intervals each version had when frozen: writes reports/gpu-time/heldout5.{md,json}.
Run once, after the last freeze: PYTHONPATH=. python reports/gpu-time/heldout5_report.py"""
from heldout_eval import report
from multihead.fits import timing_validation as tv

VERSIONS = [("before", "the model as session 5 left it (h28's model B, its fit and intervals)"),
            ("after", "session 6: refit with held-out-4 as training (seen-4); decode-attention kernels merged as before "
                      "(the separate-kernel term lost the cross-validation on fitted documents); intervals by the rule "
                      "chosen on fitted documents")]
rows = {r["id"]: r for r in tv.load_table()["rows"] if r.get("split") == "heldout-5"}   # (seen since session 7)
TAIL = ["", "## Documents considered and not used (none of them enters any split)", "",
          "- SemiAnalysisAI/InferenceX #870, comment of 2026-03-06 (DeepSeek-R1 NVFP4 on 8x B200): NVFP4 weights, and the "
          "thread's other comment is the training document `ix870-h200-dsr1`.",
          "- sgl-project/sglang #12996, #13094, #13179, #13466 (piecewise CUDA graph PRs, TTFT/TPOT tables by concurrency) "
          "and #2643 (v0.4.1.post2): the GPU is not stated in the text read.",
          "- vllm-project/vllm #15322 (DeepSeek-R1 on L20): the L20 is not in the GPU catalog; #33743 (gemma-3-27b): GPU not stated; "
          "#13412 (Llama-3.3-70B on 8x H200): its results table could not be read.",
          "- datacrunch-research/h200-benchmarks (SGLang 0.4.1 on H200): request-rate runs, no stated batch.",
          "- sgl-project/sglang #31216 (Gemma 4 31B on MI300X), vllm-project/recipes #443/#476 (Ministral 3), "
          "tenstorrent/tt-inference-server #379 (Llama-3.2-90B-Vision), InferenceX #832 (MiniMax-M2.5): model types "
          "the time model does not read, or no config in the table.",
          "- NVIDIA NIM benchmarking page's Llama-3.3-70B tables: the same page as the training document `nim-bench`.",
          "- The other tables of InferenceX #828 (TP2/TP4 analyses, the MI300X comment): not readable whole through "
          "the search excerpts; not used anywhere."]
report(5, rows, VERSIONS, ("Documents held out (every one the session-6 searches found whose measured table could be read whole "
         "enough, that no earlier session used, and that the model represents; decided before any prediction): "),
       lambda cls, c2, m, src: ("all", c2, f"{c2} {m}", f"all {m}", f"doc {src}"),
       lambda cls, c2, m, src: ("all", cls, f"doc {src}"), tail=TAIL)
