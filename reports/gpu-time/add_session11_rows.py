"""Session-11 rows (h28d8): held-out set 8, entered from the source text BEFORE any prediction of them.

Re-runnable: it first removes what an earlier run of it added (the sources below and every row of split
'heldout-8'), then adds them again, so running it twice leaves the table as running it once.

The set is a set of documents, decided before predicting: documents this session's searches found whose numbers
could be read whole, that no earlier set uses (no url of the table's sources, no reserved document or edition of
one), that state the GPU, its count, the parallelism and the concurrency of each figure, and whose model the table
reads from the catalog (Llama-3-8B, Llama-3.1-8B, Llama-3-70B, Mixtral-8x7B, DeepSeek-R1). Set 7 had no dense
model; at least half of set 8's rows are dense.

- FreedomIntelligence/AccelMark, leaderboard result files (pinned at 5797fc4): every result directory of suites A
  (Meta-Llama-3-8B-Instruct), B (Meta-Llama-3-70B-Instruct), C (Llama-3.1-8B-Instruct, its bf16 and fp8 runs),
  D (Llama-3.1-8B-Instruct, ~28K-token prompts) and G (Mixtral-8x7B-Instruct) run on a GPU the catalog has (A100
  SXM4 40GB / 80GB, H100 80GB HBM3, H200, RTX 3090 / 4090 / 5090, RTX A6000, L4), each directory a document (its
  own file and url). Per directory, the figures whose concurrency the suite fixes: the 'interactive' scenario (one
  request at a time, loadgen/loadgen.py: "interactive - one request at a time"): ttft_ms_p50 -> ttft_ms and
  tpot_ms_p50 -> itl_ms at batch 1; the 'sustained' scenario (sustained_concurrency requests in flight for 30
  minutes): sustained_throughput_tokens_per_sec (output tokens: the samples' tokens_out over 60 s, tokens_in 0) ->
  output_tokens_per_s at batch = sustained_concurrency. Lengths are the suite's stated request distribution
  medians (suite.json request_distribution: A/B/C/G input_tokens_p50 280, output_tokens_p50 310; D input 28650,
  output 256), not the run's own means (not printed). Not entered: the 'offline' scenario (its throughput is the
  same at every client concurrency to 3 figures, e.g. H100 suite A 5128 / 5118 / 5113 tok/s at 8 / 32 / 128, and
  suite D 160.38 / 160.1 at 1 / 4: so the stated concurrency is evidently not the number in flight), 'online' (a request rate, not a concurrency), 'burst', 'speculative', suite C's int8 / int4 runs (w8a8,
  w8a16, w4a16: checkpoints whose scheme the table's weights do not state), the vLLM 0.20 runner's suite C result
  on A100 80GB (ffd81462: its bf16 result records no engine options while its other precisions record
  enforce_eager true, which that runner's README requires for suite C, so whether its bf16 run captured CUDA
  graphs is not stated), suite C's fp8 runs on Ampere GPUs (A100, RTX 3090, RTX A6000: FP8 weights without FP8
  compute, which the table's 'fp8' does not state), suite F (Qwen2.5-0.5B, not in the catalog), suite E (offline
  only), and GPUs the catalog does not have (A800, H20-3e, RTX 4090 D, RTX 6000 / 4000 Ada, V100, T4, Ascend,
  TPU, MTT, Apple).
- SemiAnalysisAI/InferenceX pull requests #3288 and #3175, each a document: the description's baseline table of
  DeepSeek-R1-0528 FP8 (aggregated, no speculative decoding) with SGLang v0.5.12 (lmsysorg/sglang:v0.5.12-cu130),
  #3288 on H200 (baseline 2026-05-17, TP 8 EP 1, 1k/1k and 8k/1k, concurrency 4-64: all 10 points) and #3175 on
  B300 (baseline 2026-05-22, TP 4 or 8, EP 1: the 12 points the table shows of 16). Read from the stored copies of
  the threads. PR #3173 prints #3288's baseline number for number (same image, date and points): not entered
  again. Per point: Output tok/s/GPU -> output_tokens_per_s_per_gpu, TTFT ms -> ttft_ms, TPOT ms -> itl_ms
  ("Mean latency"); lengths nominal (1k = 1024, 8k = 8192; InferenceX draws random lengths with range ratio 0.8).

Not used (decided before predicting): the GPUStack performance-lab pages of Qwen3-14B / Qwen3-32B (all prompts
sent at once, no concurrency stated, as set 7 found), the SGLang cookbook's Llama-3.3-70B page (commands only, no
results), tt-inference-server threads (Tenstorrent hardware, or threads earlier sets use), InferenceX threads of
NVFP4 / MTP / disaggregated / AgentX runs or whose tables print only N/A (#3183, #3160, #3034, #3082, #3076),
InferenceX #3363 (its table is cut off in the stored copy after its 13th line), and models the table does not read.

Every value is a number the document printed; no arithmetic is done on any value.

Run: python reports/gpu-time/add_session11_rows.py
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from table_entry import IX_METRICS, enter, serving_row  # noqa: E402

SPLIT = "heldout-8"
AM = "https://github.com/FreedomIntelligence/AccelMark/tree/5797fc42745be2494e6213938d9e5afa0c6c5bef/"
SUITE = {  # suite: (model of the table, class, input_len, output_len, what)
 "A": ("Llama-3-8B", "dense", 280, 310, "suite A, meta-llama/Meta-Llama-3-8B-Instruct bf16, dataset sharegpt_standard_v1"),
 "B": ("Llama-3-70B", "dense", 280, 310, "suite B, meta-llama/Meta-Llama-3-70B-Instruct bf16, dataset sharegpt_standard_v1"),
 "C": ("Llama-3.1-8B", "dense", 280, 310, "suite C (quantization), meta-llama/Llama-3.1-8B-Instruct bf16 and "
                                           "RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8, dataset sharegpt_standard_v1"),
 "D": ("Llama-3.1-8B", "dense", 28650, 256, "suite D (long context), meta-llama/Llama-3.1-8B-Instruct bf16, dataset "
                                            "sharegpt_longctx_v1 (~28K-token prompts, 256 new tokens)"),
 "G": ("Mixtral-8x7B", "moe", 280, 310, "suite G, mistralai/Mixtral-8x7B-Instruct-v0.1 bf16, dataset sharegpt_standard_v1"),
}
# AccelMark result directories: (directory, GPU, GPUs = TP, engine, version, date,
#   interactive (ttft_ms_p50, tpot_ms_p50) or None, [(precision, sustained_concurrency, sustained tok/s), ...])
AM_RUNS = [
 ("verified/nvidia_a100_sxm4_40gbx1_suite_A_nvidia_vllm_47f5d58e_b4a92b30", "A100-40GB", 1, "vllm", "0.7.3", "2026-04-15", (39.8, 14.27), [("bf16", 8, 484.0)]),
 ("verified/nvidia_a100_sxm4_80gbx1_suite_A_nvidia_vllm020_0f6c56e4_8f83bfab", "A100-80GB", 1, "vllm", "0.20.1", "2026-05-18", (27.78, 10.77), [("bf16", 8, 712.3)]),
 ("verified/nvidia_a100_sxm4_80gbx1_suite_A_nvidia_vllm_47f5d58e_ed4b0557", "A100-80GB", 1, "vllm", "0.7.3", "2026-04-15", (46.45, 13.19), [("bf16", 8, 551.9)]),
 ("verified/nvidia_geforce_rtx_3090x1_suite_A_nvidia_vllm_47f5d58e_e95e2caa", "RTX-3090", 1, "vllm", "0.7.3", "2026-04-16", (89.3, 21.47), [("bf16", 8, 309.9)]),
 ("verified/nvidia_geforce_rtx_4090x1_suite_A_nvidia_vllm_47f5d58e_675e325e", "RTX-4090", 1, "vllm", "0.7.3", "2026-04-17", (67.76, 20.13), [("bf16", 8, 339.8)]),
 ("verified/nvidia_geforce_rtx_5090x1_suite_A_nvidia_vllm_47f5d58e_b8f8ed0f", "RTX-5090", 1, "vllm", "0.19.1rc1.dev339+gedc364896", "2026-04-16", (30.3, 10.22), [("bf16", 8, 707.5)]),
 ("verified/nvidia_h100_80gb_hbm3x1_suite_A_nvidia_vllm_47f5d58e_831c95a7", "H100-SXM", 1, "vllm", "0.7.3", "2026-04-18", (20.08, 7.74), [("bf16", 8, 907.1)]),
 ("verified/nvidia_h200x1_suite_A_nvidia_vllm_47f5d58e_29b2ec38", "H200-SXM", 1, "vllm", "0.7.3", "2026-04-15", (27.89, 7.62), [("bf16", 8, 709.2)]),
 ("verified/nvidia_l4x1_suite_A_nvidia_vllm_47f5d58e_b991b4c1", "L4", 1, "vllm", "0.7.3", "2026-04-18", (161.63, 61.2), [("bf16", 8, 116.6)]),
 ("verified/nvidia_rtx_a6000x1_suite_A_nvidia_vllm_47f5d58e_7cd0b745", "RTX-A6000", 1, "vllm", "0.7.3", "2026-04-17", (76.75, 25.94), [("bf16", 8, 265.3)]),
 ("community/nvidia_a100_sxm4_40gbx1_suite_A_nvidia_sglang_c43a8309_958afbbd", "A100-40GB", 1, "sglang", "0.5.6", "2026-05-06", (32.52, 12.93), [("bf16", 8, 562.5)]),
 ("verified/nvidia_a100_sxm4_40gbx8_suite_B_nvidia_vllm_47f5d58e_14410aea", "A100-40GB", 8, "vllm", "0.7.3", "2026-04-17", (81.65, 20.93), [("bf16", 4, 164.3)]),
 ("verified/nvidia_geforce_rtx_4090x8_suite_B_nvidia_vllm_47f5d58e_cfd0bdc8", "RTX-4090", 8, "vllm", "0.7.3", "2026-04-21", (277.19, 29.79), [("bf16", 4, 104.5)]),
 ("verified/nvidia_h200x8_suite_B_nvidia_vllm_47f5d58e_b727568e", "H200-SXM", 8, "vllm", "0.7.3", "2026-04-09", (77.23, 12.29), [("bf16", 4, 241.2)]),
 ("verified/nvidia_rtx_a6000x8_suite_B_nvidia_vllm_47f5d58e_0981ecf7", "RTX-A6000", 8, "vllm", "0.7.3", "2026-04-17", (157.98, 34.41), [("bf16", 4, 105.3)]),
 ("verified/nvidia_a100_sxm4_40gbx1_suite_C_nvidia_vllm_47f5d58e_57cc3fdf", "A100-40GB", 1, "vllm", "0.7.3", "2026-04-15", None, [("bf16", 8, 491.9)]),
 ("verified/nvidia_a100_sxm4_80gbx1_suite_C_nvidia_vllm_47f5d58e_6940965a", "A100-80GB", 1, "vllm", "0.7.3", "2026-04-15", None, [("bf16", 8, 537.9)]),
 ("verified/nvidia_geforce_rtx_3090x1_suite_C_nvidia_vllm_47f5d58e_4955fbb1", "RTX-3090", 1, "vllm", "0.7.3", "2026-04-15", None, [("bf16", 8, 306.6)]),
 ("verified/nvidia_geforce_rtx_4090x1_suite_C_nvidia_vllm_47f5d58e_6d7e1d48", "RTX-4090", 1, "vllm", "0.7.3", "2026-04-17", None, [("bf16", 8, 334.4), ("fp8", 8, 472.1)]),
 ("verified/nvidia_geforce_rtx_5090x1_suite_C_nvidia_vllm_47f5d58e_d1baa050", "RTX-5090", 1, "vllm", "0.19.1rc1.dev339+gedc364896", "2026-04-16", None, [("bf16", 8, 676.2)]),
 ("verified/nvidia_h200x1_suite_C_nvidia_vllm_47f5d58e_f07c60f8", "H200-SXM", 1, "vllm", "0.7.3", "2026-04-14", None, [("bf16", 8, 709.4), ("fp8", 8, 713.4)]),
 ("verified/nvidia_rtx_a6000x1_suite_C_nvidia_vllm_47f5d58e_b87c1621", "RTX-A6000", 1, "vllm", "0.7.3", "2026-04-16", None, [("bf16", 8, 272.0)]),
 ("verified/nvidia_a100_sxm4_40gbx1_suite_D_nvidia_vllm_47f5d58e_8e114cbe", "A100-40GB", 1, "vllm", "0.7.3", "2026-04-15", (2822.72, 17.96), [("bf16", 8, 57.0)]),
 ("verified/nvidia_a100_sxm4_80gbx1_suite_D_nvidia_vllm020_0f6c56e4_43e96189", "A100-80GB", 1, "vllm", "0.20.1", "2026-05-18", (3178.55, 13.1), [("bf16", 8, 58.7)]),
 ("verified/nvidia_a100_sxm4_80gbx1_suite_D_nvidia_vllm_47f5d58e_7bef8eef", "A100-80GB", 1, "vllm", "0.7.3", "2026-04-15", (2838.69, 30.57), [("bf16", 8, 67.1)]),
 ("verified/nvidia_geforce_rtx_5090x1_suite_D_nvidia_vllm_47f5d58e_e87e6c36", "RTX-5090", 1, "vllm", "0.19.1rc1.dev339+gedc364896", "2026-04-16", (3483.1, 12.34), [("bf16", 8, 51.5)]),
 ("verified/nvidia_h100_80gb_hbm3x1_suite_D_nvidia_vllm_47f5d58e_02748da4", "H100-SXM", 1, "vllm", "0.7.3", "2026-04-18", (1076.72, 11.88), [("bf16", 8, 142.6)]),
 ("verified/nvidia_h200x1_suite_D_nvidia_vllm_47f5d58e_62a36028", "H200-SXM", 1, "vllm", "0.7.3", "2026-04-15", (1165.86, 16.06), [("bf16", 8, 132.9)]),
 ("verified/nvidia_rtx_a6000x1_suite_D_nvidia_vllm_47f5d58e_f2197473", "RTX-A6000", 1, "vllm", "0.7.3", "2026-04-17", (5820.97, 30.62), [("bf16", 8, 30.5)]),
 ("community/nvidia_a100_sxm4_40gbx1_suite_D_nvidia_sglang_c43a8309_99c43b97", "A100-40GB", 1, "sglang", "0.5.6", "2026-05-07", (2987.93, 15.65), [("bf16", 8, 54.9)]),
 ("verified/nvidia_a100_sxm4_40gbx8_suite_G_nvidia_vllm_47f5d58e_08de2dc2", "A100-40GB", 8, "vllm", "0.7.3", "2026-04-17", (50.45, 7.12), [("bf16", 8, 472.7)]),
 ("verified/nvidia_geforce_rtx_4090x8_suite_G_nvidia_vllm_47f5d58e_a4179ecc", "RTX-4090", 8, "vllm", "0.7.3", "2026-04-21", (108.91, 10.74), [("bf16", 8, 325.5)]),
 ("verified/nvidia_h200x8_suite_G_nvidia_vllm_47f5d58e_7f7a270e", "H200-SXM", 8, "vllm", "0.7.3", "2026-04-14", (53.26, 6.63), [("bf16", 8, 591.5)]),
 ("verified/nvidia_rtx_a6000x8_suite_G_nvidia_vllm_47f5d58e_a8cf2a0f", "RTX-A6000", 8, "vllm", "0.7.3", "2026-04-17", (88.17, 9.45), [("bf16", 8, 343.0)]),
]
RUNNER = {"vllm": "AccelMark runner runners/nvidia_vllm_47f5d58e (vLLM; the result's software.framework_version "
                  "names the version)",
          "sglang": "AccelMark runner runners/nvidia_sglang_c43a8309 (SGLang; community submission)"}

IX = {
 "ix3288-dsr1-h200-sglang": dict(url="https://github.com/SemiAnalysisAI/InferenceX/pull/3288",
   what=("InferenceX PR #3288 '[Klaud Cold] Update dsr1-fp8-h200-sglang SGLang image to v0.5.20-cu130', description's "
         "baseline table (2026-05-17, image lmsysorg/sglang:v0.5.12-cu130): DeepSeek-R1-0528 FP8 on 8x H200, TP 8 EP 1, "
         "1k/1k and 8k/1k, concurrency 4-64, 10 points"),
   setup=("InferenceX dsr1-fp8-h200-sglang (aggregated, no speculative decoding), lmsysorg/sglang:v0.5.12-cu130, TP 8, "
          "EP 1 as each point's label prints; block-fp8 checkpoint, KV bf16 entered (not stated); mean latencies ('Mean "
          "latency'); output tokens/s per GPU as printed. PR #3173 prints the same baseline number for number (not entered)."),
   engine="SGLang v0.5.12", engine_family="sglang", engine_version="0.5.12", klass="mla", date="2026-05"),
 "ix3175-dsr1-b300-sglang": dict(url="https://github.com/SemiAnalysisAI/InferenceX/pull/3175",
   what=("InferenceX PR #3175 '[Klaud Cold] Update dsr1-fp8-b300-sglang SGLang image to v0.5.19-cu130', description's "
         "baseline table (2026-05-22, image lmsysorg/sglang:v0.5.12-cu130): DeepSeek-R1-0528 FP8 on B300, TP 4 or 8, "
         "EP 1; the 12 points shown of 16"),
   setup=("InferenceX dsr1-fp8-b300-sglang (aggregated, no speculative decoding), lmsysorg/sglang:v0.5.12-cu130, each "
          "point's TP / EP / concurrency / ISL-OSL as its label prints them (TP 4 or 8 B300 GPUs, EP 1); block-fp8 "
          "checkpoint, KV bf16 entered (not stated); mean latencies; output tokens/s per GPU as printed. The table "
          "says '12/16 points shown': the other 4 are not in the document."),
   engine="SGLang v0.5.12", engine_family="sglang", engine_version="0.5.12", klass="mla", date="2026-05"),
}
# InferenceX points: (ISL, OSL, concurrency, TP, output tok/s/GPU, TTFT ms, TPOT ms, label) -- as printed
IX_RUNS = {
 "ix3288-dsr1-h200-sglang": ("DeepSeek-R1", "H200-SXM", "fp8", [
   (1024, 1024, 4, 8, 49.17, 157.77, 9.7, "1k/1k c4 TP8 EP1 48133a"),
   (1024, 1024, 8, 8, 82.37, 165.36, 11.73, "1k/1k c8 TP8 EP1 85bc51"),
   (1024, 1024, 16, 8, 126.62, 197.84, 15.28, "1k/1k c16 TP8 EP1 e9941e"),
   (1024, 1024, 32, 8, 177.14, 307.02, 21.8, "1k/1k c32 TP8 EP1 d4aede"),
   (1024, 1024, 64, 8, 259.8, 359.75, 29.77, "1k/1k c64 TP8 EP1 a70803"),
   (8192, 1024, 4, 8, 43.12, 373.26, 10.94, "8k/1k c4 TP8 EP1 4cf10c"),
   (8192, 1024, 8, 8, 68.33, 490.53, 13.88, "8k/1k c8 TP8 EP1 971fce"),
   (8192, 1024, 16, 8, 93.89, 688.2, 20.02, "8k/1k c16 TP8 EP1 5ce1a6"),
   (8192, 1024, 32, 8, 121.01, 979.34, 31.37, "8k/1k c32 TP8 EP1 b44470"),
   (8192, 1024, 64, 8, 150.98, 2245.58, 49.33, "8k/1k c64 TP8 EP1 c0064a")]),
 "ix3175-dsr1-b300-sglang": ("DeepSeek-R1", "B300", "fp8", [
   (1024, 1024, 1, 8, 17.58, 70.93, 7.04, "1k/1k c1 TP8 EP1 cd9458"),
   (1024, 1024, 2, 8, 32.14, 117.27, 7.64, "1k/1k c2 TP8 EP1 ee1c47"),
   (1024, 1024, 4, 8, 57.48, 128.94, 8.3, "1k/1k c4 TP8 EP1 628d4c"),
   (1024, 1024, 8, 8, 95.35, 146.08, 10.12, "1k/1k c8 TP8 EP1 7a4c92"),
   (1024, 1024, 16, 8, 154.31, 312.31, 12.35, "1k/1k c16 TP8 EP1 ea829e"),
   (1024, 1024, 32, 8, 245.81, 421.04, 15.46, "1k/1k c32 TP8 EP1 a02797"),
   (1024, 1024, 64, 8, 356.88, 623.66, 21.17, "1k/1k c64 TP8 EP1 189143"),
   (8192, 1024, 1, 4, 30.63, 380.89, 7.76, "8k/1k c1 TP4 EP1 2f509e"),
   (8192, 1024, 1, 8, 16.61, 288.06, 7.23, "8k/1k c1 TP8 EP1 9bc993"),
   (8192, 1024, 2, 4, 53.39, 443.66, 8.87, "8k/1k c2 TP4 EP1 4b99ef"),
   (8192, 1024, 2, 8, 29.52, 351.13, 8.08, "8k/1k c2 TP8 EP1 3b2c36"),
   (8192, 1024, 4, 4, 83.82, 525.77, 11.11, "8k/1k c4 TP4 EP1 96aded")]),
}


def _suite(d: str) -> str:
    return d.split("_suite_")[1][0]


def am_key(d: str) -> str:
    name = d.split("/")[1]
    gpu_part, rest = name.split("_suite_")
    return f"am-{gpu_part.replace('nvidia_', '').replace('geforce_', '').replace('_', '-')}-{rest[0]}-{rest.split('_')[-1]}"


def am_sources() -> dict:
    out = {}
    for d, gpu, n, fam, ver, date, inter, sus in AM_RUNS:
        model, klass, inp, outl, what = SUITE[_suite(d)]
        figures = (["interactive result.json: ttft_ms_p50, tpot_ms_p50 (one request at a time)"] if inter else []) + \
                  [f"sustained result.json ({p}): sustained_throughput_tokens_per_sec at sustained_concurrency {c}"
                   for p, c, _ in sus]
        out[am_key(d)] = dict(
            url=AM + "results/" + d,
            what=f"AccelMark result {d.split('/')[1]} ({d.split('/')[0]}): {what}, on {n}x {gpu}, TP {n}; figures: "
                 + "; ".join(figures),
            setup=(f"AccelMark loadgen (loadgen/loadgen.py) against the {RUNNER[fam]}; TP {n} (the result's task."
                   f"parallelism), EP 1, DP 1; CUDA graphs on (task.extra_config enforce_eager false, or no options recorded: "
                   f"the runner's default, false); bf16 KV cache entered (not stated); 3 runs, the result's figure is "
                   f"theirs; the row's lengths are the suite's stated medians ({inp} input / {outl} output tokens, "
                   f"suites/suite_{_suite(d)}/suite.json request_distribution), the run's own means are not printed."),
            engine=f"{'vLLM' if fam == 'vllm' else 'SGLang'} {ver} (AccelMark)", engine_family=fam,
            engine_version=ver.split("+")[0], klass=klass, date=date[:7])
    return out


def _row(src, i, model, gpu, tp, weights, c, inp, outl, metric, value, unit, note, ep=1):
    return serving_row(SPLIT, src, i, model, gpu, tp, weights, c, inp, outl, metric, value, unit, note, ep)


def am_rows() -> list[dict]:
    out = []
    for d, gpu, n, fam, ver, date, inter, sus in AM_RUNS:
        src = am_key(d)
        model, klass, inp, outl, _ = SUITE[_suite(d)]
        if inter:
            out.append(_row(src, 1, model, gpu, n, "bf16", 1, inp, outl, "ttft_ms", inter[0], "ms",
                            "interactive/result.json metrics.interactive.ttft_ms_p50 (median TTFT, one request at a time)"))
            out.append(_row(src, 1, model, gpu, n, "bf16", 1, inp, outl, "itl_ms", inter[1], "ms",
                            "interactive/result.json metrics.interactive.tpot_ms_p50 (median TPOT, one request at a time)"))
        for p, c, tps in sus:
            path = f"{p}/sustained/result.json" if _suite(d) == "C" else "sustained/result.json"
            out.append(_row(src, 2 if p == "bf16" else 3, model, gpu, n, p, c, inp, outl, "output_tokens_per_s", tps,
                            "tokens/s", f"{path} metrics.sustained.sustained_throughput_tokens_per_sec (output tokens/s, "
                            f"{c} requests in flight for 30 minutes after 2 warm-up minutes)"))
    return out


def ix_rows(src: str) -> list[dict]:
    out = []
    model, gpu, weights, runs = IX_RUNS[src]
    for i, run in enumerate(runs, 1):
        isl, osl, c, tp = run[:4]
        for metric, k, unit, what in IX_METRICS:
            out.append(_row(src, i, model, gpu, tp, weights, c, isl, osl, metric, run[k], unit,
                            f"{run[7]}: {what} as printed (ISL {isl}, OSL {osl}, concurrency {c}, TP {tp}, EP 1)"))
    return out


def main() -> None:
    S = {**am_sources(), **IX}
    sentence = ("Rows with split 'heldout-8' were added in session 11 (2026-12-04) from documents no earlier "
                "session used (AccelMark result files, two InferenceX pull requests; see "
                "reports/gpu-time/add_session11_rows.py), chosen and entered before any prediction of them, and "
                "committed with the predictions of the model as it stood (reports/gpu-time/frozen/"
                "heldout-8_before.json): a sealed split, never fitted on, left out of every report until the final "
                "evaluation.")
    enter(SPLIT, S, am_rows() + [r for src in IX for r in ix_rows(src)], 11, sentence)


if __name__ == "__main__":
    main()
