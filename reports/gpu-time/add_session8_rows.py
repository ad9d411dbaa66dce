"""Session-8 rows (h28d7): held-out set 7, entered from the source text BEFORE any prediction of them.

Re-runnable: it first removes what an earlier run of it added (the sources below and every row of split
'heldout-7'), then adds them again, so running it twice leaves the table as running it once.

The set is a set of documents, decided before predicting: every document this session's searches found whose
benchmark output could be read, that no earlier session used (no url of the table's sources, no reserved
document or edition of one), that states the GPU, its count, the parallelism and the concurrency of each run,
and whose model / weights the time model represents (one new config, GLM-4.6, and one, MiniMax-M2, under models):

- sgl-project/sgl-cookbook (the SGLang cookbook), three model pages no earlier session used, each a document:
  GLM-4.6 (8x B200), MiniMax-M2.5 (8x B200 and 8x H100: one document, two sources) and MiniMax-M2 (4x MI300X);
  SGLang bench_serving at max concurrency 1 / 16 / 64-100, the page's "Test Environment" stating GPU, model,
  TP (EP) and version; every run block read whole from the pinned file.
- NVIDIA/TensorRT-LLM pull requests #11559 and #11691 (GLM-4.7 FP8 recipe configs for the config database), each
  a document: the PR description's performance tables (concurrency, output tokens/s, TPOT, TTFT) of trtllm-serve
  on 8x H100 SXM (TP 8, EP 8) and 4x GB200 (TP 4, EP 4). Read from the stored copy of the PR thread, whose text
  ends inside #11559's 8k/1k table and after #11691's first table (4x GB200, 1k/1k): only the tables shown
  whole are entered. The TensorRT-LLM version is not stated (the source says so; no version is guessed).
- SemiAnalysisAI/InferenceX, three threads no earlier session used, each a document: PR #3317 (the baseline table
  of DeepSeek-R1-0528 FP8 on B200 with TensorRT-LLM 1.3.0rc14, per point TP / EP / concurrency / ISL-OSL), PR #3318
  (the baseline table of DeepSeek-R1-0528 FP8 on 8x MI325X with SGLang v0.5.19 ROCm, 8k/1k, TP 8 EP 1) and issue
  #890 (the 2026-03-08 comment: the same model and GPU with SGLang v0.5.9 ROCm, 1k/1k, concurrency 4 and 8). Read
  from the stored copies of the threads; #3317's table is cut off after its seventh point (the later points and
  the 'N/A' points are not entered).

Not used (decided before predicting, for the reason given): InferenceX threads whose tables show only 'N/A' or
whose table the stored copy cuts off before any point (#3048, #3010, #2949), threads of models the planner does not
read (DeepSeek-V4 / V4.1, Qwen3.5, Kimi-K3, GLM-5.x, MiniMax-M3) or of NVFP4 / MTP / disaggregated runs; vLLM
blog posts (results in figures; the FP8 KV-cache post's tables ran on "a single H100", variant not stated); the
SGLang cookbook's Llama 3.1 page (8x "A100", memory variant not stated: the catalog has A100-40GB and A100-80GB),
its MiniMax-M2.7 numbers (a model whose config this session did not read), Kimi-K2.5 (its H200 runs serve the INT4
checkpoint whose experts alone are int4 with bf16 group scales, a format the table cannot state; its MI350X runs
are on a GPU not in the catalog), Qwen3-VL (image inputs), Ernie-4.5 / Step-3.5 / Qwen3-Coder-Next (families the
planner does not read), Qwen3-Coder (no published config read this session); the vLLM recipes pages (their
"Expected Output" blocks name no GPU / precision of the printed run, or print placeholders, or send all prompts
at once with no stated concurrency); the GPUStack performance-lab pages no earlier session used (every run sends
all prompts at once: the number in flight is the engine's limit, not stated); SGLang cookbook DeepSeek-V4 /
GLM-5.x pages (sparse attention, refused by the planner).

Every value is a number the document printed. The only arithmetic here: a cookbook row's input_len / output_len
is the run's own 'Total input tokens' / 'Total generated tokens' over its 'Successful requests', rounded (the
random dataset draws lengths below the nominal --random-input-len / --random-output-len). Per cookbook run:
mean TTFT -> ttft_ms, mean TPOT -> itl_ms, output token throughput -> output_tokens_per_s, median ITL ->
decode_step_ms. Per TensorRT-LLM table line: TPS / Out TPS -> output_tokens_per_s (in #11559 the column 'TPS' is
the output rate: it equals concurrency x 'TPS/User', and 'TPS/User' is 1000 / TPOT), TPOT -> itl_ms, TTFT ->
ttft_ms; lengths are the table's ISL / OSL. Per InferenceX point: Output tok/s/GPU -> output_tokens_per_s_per_gpu,
TTFT (mean) -> ttft_ms, TPOT (mean) -> itl_ms; lengths are the nominal ISL / OSL (1k = 1024, 8k = 8192; InferenceX
draws random lengths with range ratio 0.8 of them, as the table's earlier InferenceX sources say).

Run: python reports/gpu-time/add_session8_rows.py
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from table_entry import IX_METRICS, enter, serving_row  # noqa: E402

SPLIT = "heldout-7"
COOKBOOK = "https://github.com/sgl-project/sgl-cookbook/blob/7b5bd9c05e3d86da5161ac2be9b91c19a34bf49d/"
COOKBOOK_GLM = "https://github.com/sgl-project/sgl-cookbook/blob/ec650cf19166a1cd5adf5bb7ca5015e8c10518dc/"
SG_BENCH = ("SGLang bench_serving (--backend sglang), random dataset (lengths drawn below the nominal --random-input-len "
            "/ --random-output-len; the row's lengths are the run's printed totals over its requests), "
            "--max-concurrency 1 (10 prompts), 16 (80 prompts), 64 or 100 (5 prompts per slot); ")
TRT_BENCH = ("trtllm-serve with the PR's recipe config per point (benchmark client, statistic of TTFT / TPOT and "
             "exact length distribution not stated in the PR text; the row's lengths are the table's ISL / OSL); "
             "checkpoint warnold-nv/glm-4.7-modelopt-fp8 (ModelOpt FP8); KV cache dtype not stated (entered as "
             "bf16); GLM-4.7 has the GLM-4.5 / GLM-4.6 architecture (glm4_moe, 355B total): the table's GLM-4.6 config. ")

S = {
 "sglcb-glm46-b200": dict(url=COOKBOOK_GLM + "docs/autoregressive/GLM/GLM-4.6.md",
   what="SGLang cookbook, GLM-4.6 page, section 5.1 Speed Benchmark: GLM-4.6 (bf16) on 8x B200, 9 runs",
   setup=SG_BENCH + "server `python -m sglang.launch_server --model zai-org/GLM-4.6 --tp 8` (bf16 checkpoint, SGLang "
         "defaults: EP 1, KV bf16); scenarios Chat 1K/1K, Reasoning 1K/8K, Summarization 8K/1K. Pinned at the "
         "edition whose Test Environment names 8x B200 alone; the later edition (7b5bd9c) adds AMD GPUs to that line "
         "and leaves every run block unchanged.",
   engine="SGLang 0.5.6.post1", engine_family="sglang", engine_version="0.5.6.post1", klass="moe", date="2026-01"),
 "sglcb-minimax-m25-b200": dict(url=COOKBOOK + "docs/autoregressive/MiniMax/MiniMax-M2.5.md",
   what="SGLang cookbook, MiniMax-M2.5 page, sections 5.1.1-5.1.2: MiniMax-M2.5 on 8x B200 (TP 8, EP 8), 6 runs",
   setup=SG_BENCH + "server `sglang serve --model-path MiniMaxAI/MiniMax-M2.5 --tp 8 --ep 8 --mem-fraction-static 0.85` "
         "(the published block-fp8 checkpoint; KV bf16); scenarios 1000/1000 and 8000/1000 nominal. MiniMax-M2.5 "
         "has the MiniMax-M2 architecture: the table's MiniMax-M2 config. The page's H100 runs are the source "
         "sglcb-minimax-m25-h100 (same document).",
   engine="SGLang 0.5.8", engine_family="sglang", engine_version="0.5.8", klass="moe", date="2026-02"),
 "sglcb-minimax-m25-h100": dict(url=COOKBOOK + "docs/autoregressive/MiniMax/MiniMax-M2.5.md",
   what="SGLang cookbook, MiniMax-M2.5 page, section 5.1.3 H100 Benchmark: MiniMax-M2.5 on 8x H100 80GB HBM3 (TP 8, EP 8), 3 runs",
   setup=SG_BENCH + "server as in sglcb-minimax-m25-b200 (same command); nominal 1000/1000.",
   engine="SGLang 0.5.9", engine_family="sglang", engine_version="0.5.9", klass="moe", date="2026-04"),
 "sglcb-minimax-m2-mi300x": dict(url=COOKBOOK + "docs/autoregressive/MiniMax/MiniMax-M2.md",
   what="SGLang cookbook, MiniMax-M2 page, section 5.1 Speed Benchmark: MiniMax-M2 on 4x MI300X (TP 4), 3 runs",
   setup=SG_BENCH + "server `sglang serve --model-path MiniMaxAI/MiniMax-M2 --tp-size 4 --mem-fraction-static 0.85` "
         "(block-fp8 checkpoint; EP 1, KV bf16); nominal 1000/1000. The concurrency-1 run's mean TTFT (4529 ms, 10 "
         "requests) is as printed: the page gives no warm-up.",
   engine="SGLang 0.5.7 (ROCm)", engine_family="sglang", engine_version="0.5.7", klass="moe", date="2026-03"),
 "trtllm11559-glm47-h100": dict(url="https://github.com/NVIDIA/TensorRT-LLM/pull/11559",
   what=("TensorRT-LLM PR #11559 'Add GLM-4.7 FP8 recipe configs for H100 to config db', description's Performance "
         "Summary: GLM-4.7 FP8 on 8x H100 SXM (TP 8, EP 8), tables 1k/1k (7 points) and 1k/8k (6 points)"),
   setup=TRT_BENCH + "8x H100 SXM, TP 8, EP 8. The 8k/1k table (6 points) is cut off in the stored copy: not entered.",
   engine="TensorRT-LLM (trtllm-serve; version not stated)", engine_family="tensorrt-llm", klass="moe", date="2026-02"),
 "trtllm11691-glm47-gb200": dict(url="https://github.com/NVIDIA/TensorRT-LLM/pull/11691",
   what=("TensorRT-LLM PR #11691 'Add GLM-4.7 FP8 recipe configs for GB200 to config db', description's Performance "
         "Summary: the table '4xGB200 - ISL=1024, OSL=1024' (8 points)"),
   setup=TRT_BENCH + "4x GB200, TP 4, EP 4; the point with ADP 'Yes' (concurrency 128) runs attention data-parallel "
         "over the 4 GPUs. The PR's other five tables (4x GB200 1k/8k and 8k/1k, 8x GB200) are not in the stored copy.",
   engine="TensorRT-LLM (trtllm-serve; version not stated)", engine_family="tensorrt-llm", klass="moe", date="2026-02"),
 "ix3317-dsr1-b200-trt": dict(url="https://github.com/SemiAnalysisAI/InferenceX/pull/3317",
   what=("InferenceX PR #3317 '[Klaud Cold] Update dsr1-fp8-b200-trt TensorRT-LLM image to 1.3.0rc27', description's "
         "baseline table (2026-05-18, image 1.3.0rc14): DeepSeek-R1-0528 FP8 on B200, 7 points"),
   setup=("InferenceX dsr1-fp8-b200-trt (aggregated, no speculative decoding), nvcr.io/nvidia/tensorrt-llm/release:"
          "1.3.0rc14; each point's TP / EP / concurrency / ISL-OSL as its label prints them (TP 4 or 8 B200 GPUs, EP 1; "
          "no attention-DP flag in the label); block-fp8 checkpoint, KV bf16 entered (not stated); mean latencies "
          "('Mean latency'); output tokens/s per GPU as printed."),
   engine="TensorRT-LLM 1.3.0rc14", engine_family="tensorrt-llm", engine_version="1.3.0rc14", klass="mla", date="2026-05"),
 "ix3318-dsr1-mi325x-sglang": dict(url="https://github.com/SemiAnalysisAI/InferenceX/pull/3318",
   what=("InferenceX PR #3318 '[Klaud Cold] Update dsr1-fp8-mi325x-sglang SGLang image to v0.5.20-rocm720-mi30x', "
         "description's baseline table (2026-09-10, image v0.5.19-rocm700-mi30x): DeepSeek-R1-0528 FP8 on 8x MI325X, "
         "8k/1k, TP 8 EP 1, concurrency 4-64"),
   setup=("InferenceX dsr1-fp8-mi325x-sglang (aggregated, no speculative decoding), lmsysorg/sglang:v0.5.19-rocm700-"
          "mi30x, TP 8, EP 1, no DP attention; block-fp8 checkpoint, KV bf16 entered (not stated); mean latencies; "
          "output tokens/s per GPU as printed."),
   engine="SGLang v0.5.19 (ROCm)", engine_family="sglang", engine_version="0.5.19", klass="mla", date="2026-09"),
 "ix890-dsr1-mi325x-sglang": dict(url="https://github.com/SemiAnalysisAI/InferenceX/issues/890",
   what=("InferenceX issue #890, comment of 2026-03-08 ('Running MI325 SGLang DeepSeek Benchmarks'): DeepSeek-R1-0528 "
         "FP8 on 8x MI325X, 1k/1k, concurrency 4 and 8"),
   setup=("InferenceX dsr1-fp8-mi325x-sglang, image sglang:v0.5.9-rocm700-mi30x, TP 8, EP 1, ISL = OSL = 1024; "
          "block-fp8 checkpoint, KV bf16 entered (not stated); TTFT mean, TPOT mean and output tput/gpu as printed "
          "(the comment's ITL mean and GPU metrics are not entered)."),
   engine="SGLang v0.5.9 (ROCm)", engine_family="sglang", engine_version="0.5.9", klass="mla", date="2026-03"),
}

# Cookbook runs: (concurrency, requests, total input tokens, total generated tokens, output tok/s, mean TTFT ms,
#  mean TPOT ms, median ITL ms, label) -- each run as printed
COOKBOOK_RUNS = {
 "sglcb-glm46-b200": ("GLM-4.6", "B200", 8, "bf16", {}, [
   (1, 10, 6101, 4210, 65.97, 155.57, 14.81, 14.82, "Chat 1K/1K low"),
   (16, 80, 39668, 40725, 565.14, 196.08, 24.24, 21.40, "Chat 1K/1K medium"),
   (100, 500, 249831, 252162, 1820.61, 337.77, 49.97, 35.05, "Chat 1K/1K high"),
   (1, 10, 6101, 44452, 66.68, 160.21, 14.92, 14.96, "Reasoning 1K/8K low"),
   (16, 80, 39668, 318226, 632.28, 228.54, 21.97, 21.80, "Reasoning 1K/8K medium"),
   (64, 320, 158939, 1300705, 1684.24, 232.45, 33.47, 32.63, "Reasoning 1K/8K high"),
   (1, 10, 41941, 4210, 64.66, 189.48, 15.02, 15.03, "Summarization 8K/1K low"),
   (16, 80, 300020, 41589, 544.15, 339.88, 25.37, 21.68, "Summarization 8K/1K medium"),
   (64, 320, 1273893, 169680, 1245.44, 355.82, 46.62, 32.46, "Summarization 8K/1K high")]),
 "sglcb-minimax-m25-b200": ("MiniMax-M2", "B200", 8, "fp8", dict(expert_parallel_size=8), [
   (1, 10, 6091, 4220, 98.17, 130.57, 9.89, 9.89, "5.1.1.1 1000/1000 low"),
   (16, 80, 39588, 40805, 842.49, 305.44, 16.20, 13.63, "5.1.1.2 1000/1000 medium"),
   (100, 500, 249331, 252662, 2737.02, 391.06, 33.04, 21.67, "5.1.1.3 1000/1000 high"),
   (1, 10, 41941, 4220, 97.04, 131.50, 10.00, 10.02, "5.1.2.1 8000/1000 low"),
   (16, 80, 300020, 41669, 831.38, 282.56, 16.60, 13.89, "5.1.2.2 8000/1000 medium"),
   (64, 320, 1273893, 170000, 1810.01, 692.26, 32.19, 21.59, "5.1.2.3 8000/1000 high")]),
 "sglcb-minimax-m25-h100": ("MiniMax-M2", "H100-SXM", 8, "fp8", dict(expert_parallel_size=8), [
   (1, 10, 6101, 4220, 119.08, 145.20, 8.05, 8.08, "5.1.3.1 1000/1000 low"),
   (16, 80, 39668, 40805, 934.22, 116.86, 14.81, 13.50, "5.1.3.2 1000/1000 medium"),
   (100, 500, 249831, 252662, 3133.56, 149.32, 28.92, 21.52, "5.1.3.3 1000/1000 high")]),
 "sglcb-minimax-m2-mi300x": ("MiniMax-M2", "MI300X", 4, "fp8", {}, [
   (1, 10, 6101, 4220, 30.38, 4528.94, 22.21, 22.24, "5.1.1 low"),
   (16, 80, 39668, 40805, 503.32, 532.32, 27.49, 23.47, "5.1.2 medium"),
   (100, 500, 249831, 252662, 1643.75, 387.41, 55.23, 39.01, "5.1.3 high")]),
}

# TensorRT-LLM table lines: (ISL, OSL, concurrency, output tok/s, TPOT ms, TTFT ms, ADP, label) -- as printed
TRT_RUNS = {
 "trtllm11559-glm47-h100": ("GLM-4.6", "H100-SXM", 8, "fp8", 8, [
   (1024, 1024, 4, 199, 19.8, 354, False, "1k/1k Min Latency"),
   (1024, 1024, 8, 351, 22.3, 353, False, "1k/1k Low Latency"),
   (1024, 1024, 16, 595, 26.1, 355, False, "1k/1k"),
   (1024, 1024, 32, 996, 31.2, 359, False, "1k/1k Balanced"),
   (1024, 1024, 64, 1752, 35.4, 412, False, "1k/1k"),
   (1024, 1024, 128, 3031, 39.3, 1578, False, "1k/1k"),
   (1024, 1024, 256, 4341, 55.8, 888, False, "1k/1k Max Throughput"),
   (1024, 8192, 4, 198, 20.2, 397, False, "1k/8k Min Latency"),
   (1024, 8192, 8, 341, 22.6, 599, False, "1k/8k"),
   (1024, 8192, 16, 562, 26.0, 762, False, "1k/8k Balanced"),
   (1024, 8192, 32, 884, 30.4, 1128, False, "1k/8k"),
   (1024, 8192, 64, 1454, 34.8, 1433, False, "1k/8k"),
   (1024, 8192, 128, 2461, 40.2, 2684, False, "1k/8k Max Throughput")]),
 "trtllm11691-glm47-gb200": ("GLM-4.6", "GB200", 4, "fp8", 4, [
   (1024, 1024, 4, 225.8, 17.2, 505.6, False, "4xGB200 1k/1k, MaxTokens 1152"),
   (1024, 1024, 8, 398.0, 19.6, 521.3, False, "4xGB200 1k/1k, MaxTokens 1152"),
   (1024, 1024, 16, 688.4, 22.7, 548.3, False, "4xGB200 1k/1k, MaxTokens 1152"),
   (1024, 1024, 32, 1079.7, 29.1, 560.4, False, "4xGB200 1k/1k, MaxTokens 2048"),
   (1024, 1024, 64, 2069.8, 30.3, 571.8, False, "4xGB200 1k/1k, MaxTokens 4096"),
   (1024, 1024, 128, 3569.8, 34.9, 800.6, True, "4xGB200 1k/1k, ADP Yes, MaxTokens 4096"),
   (1024, 1024, 256, 5039.3, 49.8, 639.6, False, "4xGB200 1k/1k, MaxTokens 4096"),
   (1024, 1024, 512, 6804.4, 71.5, 3343.8, False, "4xGB200 1k/1k, MaxTokens 4096")]),
}

# InferenceX points: (ISL, OSL, concurrency, TP, output tok/s/GPU, TTFT ms, TPOT ms, label) -- as printed
IX_RUNS = {
 "ix3317-dsr1-b200-trt": ("DeepSeek-R1", "B200", "fp8", [
   (1024, 1024, 4, 8, 54.45, 189.91, 8.69, "1k/1k c4 TP8 EP1 3bbdf9"),
   (1024, 1024, 8, 4, 147.77, 194.49, 13.06, "1k/1k c8 TP4 EP1 f3f420"),
   (1024, 1024, 8, 8, 88.59, 180.97, 10.86, "1k/1k c8 TP8 EP1 f65dd1"),
   (1024, 1024, 16, 4, 228.8, 218.01, 16.92, "1k/1k c16 TP4 EP1 c85941"),
   (1024, 1024, 64, 8, 374.64, 569.02, 20.06, "1k/1k c64 TP8 EP1 a14bb9"),
   (1024, 1024, 128, 8, 613.76, 591.66, 24.54, "1k/1k c128 TP8 EP1 b974b1"),
   (8192, 1024, 4, 8, 50.65, 322.69, 9.29, "8k/1k c4 TP8 EP1 0d4f86")]),
 "ix3318-dsr1-mi325x-sglang": ("DeepSeek-R1", "MI325X", "fp8", [
   (8192, 1024, 4, 8, 24.91, 1025.49, 18.53, "8k/1k c4"),
   (8192, 1024, 8, 8, 43.38, 1026.66, 21.56, "8k/1k c8"),
   (8192, 1024, 16, 8, 69.39, 1163.49, 26.75, "8k/1k c16"),
   (8192, 1024, 32, 8, 95.57, 1363.26, 39.45, "8k/1k c32"),
   (8192, 1024, 64, 8, 114.89, 1917.85, 66.55, "8k/1k c64")]),
 "ix890-dsr1-mi325x-sglang": ("DeepSeek-R1", "MI325X", "fp8", [
   (1024, 1024, 4, 8, 19.91, 290.9, 24.03, "1k/1k Conc 4"),
   (1024, 1024, 8, 8, 36.76, 418.1, 26.17, "1k/1k Conc 8")]),
}

MODELS = {
 "GLM-4.6": {"source": ("zai-org/GLM-4.6 config.json (https://huggingface.co/zai-org/GLM-4.6/blob/main/config.json): the "
                        "glm4_moe architecture of GLM-4.5 (fields as tests/test_model_families_28.py cites them from "
                        "zai-org/GLM-4.5's config.json: 92 layers, 96 query / 8 KV heads of 128, 160 routed experts "
                        "and 1 shared, 8 per token, 3 dense layers, partial rotary 0.5), which GLM-4.6 and GLM-4.7 keep "
                        "(355B total); 202,752-token context"),
             "config": {"model_type": "glm4_moe", "hidden_size": 5120, "intermediate_size": 12288,
                        "moe_intermediate_size": 1536, "num_hidden_layers": 92, "num_attention_heads": 96,
                        "num_key_value_heads": 8, "head_dim": 128, "n_routed_experts": 160, "n_shared_experts": 1,
                        "num_experts_per_tok": 8, "first_k_dense_replace": 3, "vocab_size": 151552,
                        "attention_bias": True, "partial_rotary_factor": 0.5, "max_position_embeddings": 202752,
                        "tie_word_embeddings": False, "torch_dtype": "bfloat16"}},
 "MiniMax-M2": {"source": ("MiniMaxAI/MiniMax-M2 config.json (https://huggingface.co/MiniMaxAI/MiniMax-M2/blob/main/"
                           "config.json), fields as tests/test_model_families_28.py cites them: 62 layers, 48 query / "
                           "8 KV heads of 128, 256 experts (8 per token, no shared), QK norm; MiniMax-M2.5 keeps the "
                           "architecture (230B total, 10B active); weights block-fp8 in the checkpoints (the row's "
                           "weights say fp8)"),
                "config": {"model_type": "minimax_m2", "hidden_size": 3072, "intermediate_size": 1536,
                           "num_hidden_layers": 62, "num_attention_heads": 48, "num_key_value_heads": 8,
                           "head_dim": 128, "num_local_experts": 256, "num_experts_per_tok": 8, "vocab_size": 200064,
                           "use_qk_norm": True, "max_position_embeddings": 196608, "tie_word_embeddings": False,
                           "torch_dtype": "bfloat16"}},
}

METRICS = (("ttft_ms", 5, "ms", "mean TTFT"), ("itl_ms", 6, "ms", "mean TPOT"),
           ("output_tokens_per_s", 4, "tokens/s", "output token throughput"),
           ("decode_step_ms", 7, "ms", "median ITL"))
TRT_METRICS = (("ttft_ms", 5, "ms", "TTFT"), ("itl_ms", 4, "ms", "TPOT"),
               ("output_tokens_per_s", 3, "tokens/s", "output TPS"))


def _row(src, i, model, gpu, tp, weights, c, inp, outl, metric, value, unit, note, ep=1, dp=1, dp_attn=False):
    return serving_row(SPLIT, src, i, model, gpu, tp, weights, c, inp, outl, metric, value, unit, note, ep, dp, dp_attn)


def rows_of(src: str) -> list[dict]:
    out = []
    if src in COOKBOOK_RUNS:
        model, gpu, tp, weights, par, runs = COOKBOOK_RUNS[src]
        for i, run in enumerate(runs, 1):
            c, n, tin, tout = run[:4]
            inp, outl = round(tin / n), round(tout / n)
            for metric, k, unit, what in METRICS:
                out.append(_row(src, i, model, gpu, tp, weights, c, inp, outl, metric, run[k], unit,
                                f"{run[8]}: {what} as printed; lengths {tin}/{n} and {tout}/{n} tokens "
                                f"(printed totals over the run's requests)",
                                ep=par.get("expert_parallel_size", 1)))
        return out
    if src in IX_RUNS:
        model, gpu, weights, runs = IX_RUNS[src]
        for i, run in enumerate(runs, 1):
            isl, osl, c, tp = run[:4]
            for metric, k, unit, what in IX_METRICS:
                out.append(_row(src, i, model, gpu, tp, weights, c, isl, osl, metric, run[k], unit,
                                f"{run[7]}: {what} as printed (ISL {isl}, OSL {osl}, concurrency {c}, TP {tp}, EP 1)"))
        return out
    model, gpu, tp, weights, ep, runs = TRT_RUNS[src]
    for i, run in enumerate(runs, 1):
        isl, osl, c, adp = run[0], run[1], run[2], run[6]
        for metric, k, unit, what in TRT_METRICS:
            out.append(_row(src, i, model, gpu, tp, weights, c, isl, osl, metric, run[k], unit,
                            f"{run[7]}: {what} as printed in the PR's table (ISL {isl}, OSL {osl}, concurrency {c})",
                            ep=ep, dp=tp if adp else 1, dp_attn=adp))
    return out


def main() -> None:
    sentence = ("Rows with split 'heldout-7' were added in session 8 (2026-12-03) from documents no earlier "
                "session used (three SGLang cookbook pages, two TensorRT-LLM pull requests, three InferenceX threads; see "
                "reports/gpu-time/add_session8_rows.py), chosen and entered before any prediction of them, and "
                "committed with the predictions of the model as it stood before session 8's changes "
                "(reports/gpu-time/frozen/heldout-7_before.json): a sealed split, never fitted on, left out of every "
                "report until the final evaluation.")
    enter(SPLIT, S, [r for src in S for r in rows_of(src)], 8, sentence, models=MODELS)


if __name__ == "__main__":
    main()
