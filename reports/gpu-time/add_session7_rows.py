"""Session-7 rows (h28d): held-out set 6, entered from the source text BEFORE any prediction of them.

Re-runnable: it first removes what an earlier run of it added (the sources below and every row of split
'heldout-6'), then adds them again, so running it twice leaves the table as running it once.

The set is a set of documents, decided before predicting: every document the session's searches found whose
benchmark output could be read whole from a pinned file, that no earlier session used, that states the GPU,
the parallelism, the engine and its version, and the concurrency of each run, and whose model / weights the
time model represents (models and GPUs of the table or the catalog; one new config, Kimi-K2, under models):

- sgl-project/sgl-cookbook (the SGLang cookbook), seven model pages, each a document: SGLang bench_serving on one
  node at max concurrency 1 / 16 / 64-100 (the page's "Test Environment" states GPU, model, TP and version);
- gpustack/gpustack docs/performance-lab, four pages, each a document: `vllm bench serve` at a stated max
  concurrency (the runs without a stated concurrency, all prompts at once, are not used: the number of
  requests in flight is then the engine's limit, which the page does not state).

Every value is a number the document printed. The only arithmetic here: a row's input_len / output_len is the
run's own 'Total input tokens' / 'Total generated tokens' over its 'Successful requests', rounded (the random
datasets draw lengths below the nominal --random-input-len / --random-output-len, and ShareGPT varies).
Per run: mean TTFT -> ttft_ms, mean TPOT -> itl_ms, output token throughput -> output_tokens_per_s,
median ITL -> decode_step_ms.

Run: python reports/gpu-time/add_session7_rows.py
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from table_entry import enter  # noqa: E402

SPLIT = "heldout-6"
COOKBOOK = "https://github.com/sgl-project/sgl-cookbook/blob/7b5bd9c05e3d86da5161ac2be9b91c19a34bf49d/"
GPUSTACK = "https://github.com/gpustack/gpustack/blob/47277d79f4a5bae12a2d25e9ecbed2a2177a5f2d/"
SG_BENCH = ("SGLang bench_serving (--backend sglang), random dataset (lengths drawn below the nominal --random-input-len "
            "/ --random-output-len; the row's lengths are the run's printed totals over its requests) unless said otherwise, "
            "--max-concurrency 1 (10 prompts), 16 (80 prompts), 64 or 100 (5 prompts per slot), request rate inf; ")
GS_BENCH = ("vLLM bench serve --backend openai-chat, ShareGPT (ShareGPT_V3_unfiltered_cleaned_split.json), 100 prompts "
            "at --max-concurrency as stated; the row's lengths are the run's printed totals over its 100 requests; ")

S = {
 "sglcb-qwen3-235b-b200": dict(url=COOKBOOK + "docs/autoregressive/Qwen/Qwen3.md",
   what="SGLang cookbook, Qwen3 page, section 5.1 Speed Benchmark: Qwen3-235B-A22B-Instruct-2507 on 8x B200, 9 runs",
   setup=SG_BENCH + "server `python -m sglang.launch_server --model Qwen/Qwen3-235B-A22B-Instruct-2507 --tp 8` (bf16 "
         "checkpoint, SGLang defaults: EP 1, KV cache in the model dtype); scenarios 1000/1000, 1000/8000, 8000/1000 nominal.",
   engine="SGLang 0.5.6", engine_family="sglang", engine_version="0.5.6", klass="moe", date="2026-01"),
 "sglcb-dsr1-b200": dict(url=COOKBOOK + "docs/autoregressive/DeepSeek/DeepSeek-R1.md",
   what="SGLang cookbook, DeepSeek-R1 page, section 5.1: DeepSeek-R1-0528 (FP8) on 8x B200, 9 runs",
   setup=SG_BENCH + "server `python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-R1-0528 --tp 8` (the "
         "block-fp8 checkpoint; SGLang defaults: EP 1, no DP attention, no MTP, KV cache bf16); scenarios Chat 1K/1K, "
         "Reasoning 1K/8K, Summarization 8K/1K.",
   engine="SGLang 0.5.6.post1", engine_family="sglang", engine_version="0.5.6.post1", klass="mla", date="2026-02"),
 "sglcb-dsv31-mi300x": dict(url=COOKBOOK + "docs/autoregressive/DeepSeek/DeepSeek-V3_1.md",
   what="SGLang cookbook, DeepSeek-V3.1 page, section 5.1: DeepSeek-V3.1-Terminus (FP8) on 8x MI300X, 9 runs",
   setup=SG_BENCH + "server `python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.1 --tp 8` (block-fp8 "
         "checkpoint; the page's Test Environment names DeepSeek-V3.1-Terminus, same architecture; defaults: EP 1, no "
         "DP attention, KV bf16). DeepSeek-V3.1 has the DeepSeek-V3 architecture: the table's DeepSeek-R1 config.",
   engine="SGLang 0.5.7 (ROCm)", engine_family="sglang", engine_version="0.5.7", klass="mla", date="2026-02"),
 "sglcb-llama4-scout-mi300x": dict(url=COOKBOOK + "docs/autoregressive/Llama/Llama4.md",
   what="SGLang cookbook, Llama 4 page, section 5.1 (Llama-4-Scout): Llama-4-Scout-17B-16E-Instruct on 8x MI300X, 3 runs",
   setup=SG_BENCH + "server `sglang serve --model-path meta-llama/Llama-4-Scout-17B-16E-Instruct --tp 8 --context-length "
         "1000000` (bf16; defaults: EP 1, KV bf16); nominal 1000/1000. Section 5.2 (Llama-4-Maverick) not used: no "
         "config of it in the table (128 experts on every other layer). The concurrency-1 run's mean TTFT (4247 ms, "
         "10 requests) is as printed: the page gives no warm-up.",
   engine="SGLang 0.5.9 (ROCm)", engine_family="sglang", engine_version="0.5.9", klass="moe", date="2026-03"),
 "sglcb-gptoss120b-b200": dict(url=COOKBOOK + "docs/autoregressive/OpenAI/GPT-OSS.md",
   what="SGLang cookbook, GPT-OSS page, section 5.1: gpt-oss-120b on 8x B200, 2 runs (latency- and throughput-sensitive)",
   setup=("SGLang bench_serving --backend sglang on the default ShareGPT dataset (lengths: the run's printed totals over "
          "its requests), --num-prompt 100 at --max-concurrency 1 and 1000 at 100; server `python -m "
          "sglang.launch_server --model openai/gpt-oss-120b --tp 8` (MXFP4 experts, defaults: EP 1, KV bf16)."),
   engine="SGLang 0.5.6", engine_family="sglang", engine_version="0.5.6", klass="moe", date="2026-01"),
 "sglcb-dsv3-mi300x": dict(url=COOKBOOK + "docs/autoregressive/DeepSeek/DeepSeek-V3.md",
   what="SGLang cookbook, DeepSeek-V3 page, section 5.1.2 Throughput-Sensitive Benchmark: DeepSeek-V3 (FP8) on 8x MI300X",
   setup=("SGLang bench_serving --backend sglang, ShareGPT (default dataset), 1000 prompts at --max-concurrency 100; "
          "server `python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp 8 --ep 8 --dp 8 "
          "--enable-dp-attention` (block-fp8; 8 GPUs: attention data-parallel 8, experts EP 8). Section 5.1.1 not used: "
          "EAGLE speculative decoding (MTP), which the time model does not represent."),
   engine="SGLang 0.5.7 (ROCm)", engine_family="sglang", engine_version="0.5.7", klass="mla", date="2026-02"),
 "sglcb-kimi-k2-b200": dict(url=COOKBOOK + "docs/autoregressive/Moonshotai/Kimi-K2.md",
   what="SGLang cookbook, Kimi-K2 page, section 5.1: Kimi-K2-Instruct (FP8) on 8x B200, 2 runs (latency- and throughput-sensitive)",
   setup=("SGLang bench_serving --backend sglang, ShareGPT (default dataset; lengths: the run's printed totals over its "
          "requests), 10 prompts at --max-concurrency 1 and 1000 at 100; servers `python3 -m sglang.launch_server "
          "--model-path moonshotai/Kimi-K2-Instruct --tp 8 --dp 4 --enable-dp-attention` (latency run: EP 1) and the same "
          "with `--ep 4` (throughput run); block-fp8 checkpoint, KV bf16. Kimi-K2 has the DeepSeek-V3 architecture "
          "(model_type kimi_k2): config under models."),
   engine="SGLang 0.5.6.post1", engine_family="sglang", engine_version="0.5.6.post1", klass="mla", date="2026-01"),
 "gpustack-qwen3-8b-h100-vllm": dict(url=GPUSTACK + "docs/performance-lab/qwen3-8b/h100-latency.md",
   what="GPUStack performance lab, 'Optimizing Qwen3-8B Latency on NVIDIA H100 GPUs': the vLLM runs (baseline, BS=1/2/4/8)",
   setup=GS_BENCH + "server `vllm serve Qwen/Qwen3-8B` (one H100 SXM, bf16, vLLM defaults). The BS=4 block of 'Other "
         "Benchmark Cases' repeats section 1's vLLM run number for number: entered once. The document's SGLang and "
         "TensorRT-LLM runs are the sources gpustack-qwen3-8b-h100-sglang / -trtllm (same document).",
   engine="vLLM v0.11.0", engine_family="vllm", engine_version="0.11.0", klass="dense", date="2026-03"),
 "gpustack-qwen3-8b-h100-sglang": dict(url=GPUSTACK + "docs/performance-lab/qwen3-8b/h100-latency.md",
   what="GPUStack performance lab, Qwen3-8B latency on H100: the SGLang runs without speculative decoding",
   setup=GS_BENCH + "max concurrency 4; servers `python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B` (bf16) and "
         "`... --model-path Qwen/Qwen3-8B-FP8` (Qwen's block-fp8 checkpoint), one H100 SXM. Not used: the "
         "--cuda-graph-max-bs 8 run and the triton / flashinfer attention-backend runs (settings the time model has no "
         "input for), and every EAGLE3 speculative-decoding run.",
   engine="SGLang v0.5.3.post3", engine_family="sglang", engine_version="0.5.3.post3", klass="dense", date="2026-03"),
 "gpustack-qwen3-8b-h100-trtllm": dict(url=GPUSTACK + "docs/performance-lab/qwen3-8b/h100-latency.md",
   what="GPUStack performance lab, Qwen3-8B latency on H100: the TensorRT-LLM run",
   setup=GS_BENCH + "max concurrency 4; server `trtllm-serve Qwen/Qwen3-8B` (one H100 SXM, bf16, defaults).",
   engine="TensorRT-LLM v1.2.0rc1", engine_family="tensorrt-llm", engine_version="1.2.0rc1", klass="dense", date="2026-03"),
 "gpustack-dsr1-h200-vllm": dict(url=GPUSTACK + "docs/performance-lab/deepseek-r1/h200.md",
   what="GPUStack performance lab, 'Optimizing DeepSeek-R1 Throughput on NVIDIA H200 GPUs': the 'ShareGPT batch size 4' run",
   setup=GS_BENCH + "max concurrency 4; server `vllm serve deepseek-ai/DeepSeek-R1-0528 -tp 8` (8x H200 SXM, block-fp8, "
         "vLLM defaults). Not used: every other run of the page (1000 ShareGPT or 500 random prompts sent at once, no "
         "stated concurrency: the number in flight is the engine's limit, not stated) and the MTP run.",
   engine="vLLM v0.11.0", engine_family="vllm", engine_version="0.11.0", klass="mla", date="2026-01"),
 "gpustack-gptoss120b-h100-vllm": dict(url=GPUSTACK + "docs/performance-lab/gpt-oss-120b/h100.md",
   what="GPUStack performance lab, gpt-oss-120b throughput on H100: the two 'ShareGPT batch size 4' runs",
   setup=GS_BENCH + "max concurrency 4; baseline `vllm serve openai/gpt-oss-120b --max-model-len 32768` (one H100 SXM) "
         "and optimized `vllm serve openai/gpt-oss-120b --async-scheduling -tp 2` (two H100 SXM); MXFP4 experts. Not "
         "used: the runs without a stated concurrency (prompts sent at once).",
   engine="vLLM v0.10.2", engine_family="vllm", engine_version="0.10.2", klass="moe", date="2026-01"),
 "gpustack-gptoss120b-a100-vllm": dict(url=GPUSTACK + "docs/performance-lab/gpt-oss-120b/a100.md",
   what="GPUStack performance lab, gpt-oss-120b throughput on A100: the two 'ShareGPT batch size 4' runs",
   setup=GS_BENCH + "max concurrency 4, one A100 SXM 80GB; baseline `vllm serve openai/gpt-oss-120b --max-model-len "
         "32768`, optimized `... --async-scheduling --max-num-batched-tokens 4096`; MXFP4 weights (no FP4 tensor cores "
         "on A100: vLLM's weight-only MXFP4 path). Not used: the runs without a stated concurrency.",
   engine="vLLM v0.11.0", engine_family="vllm", engine_version="0.11.0", klass="moe", date="2026-01"),
}

# (concurrency, requests, total input tokens, total generated tokens, output tok/s, mean TTFT ms, mean TPOT ms,
#  median ITL ms, label) -- each run as printed
COOKBOOK_RUNS = {
 "sglcb-qwen3-235b-b200": ("Qwen3-235B-A22B", "B200", 8, "bf16", {}, [
   (1, 10, 6101, 4210, 96.65, 99.03, 10.12, 10.12, "5.1.1.1 1000/1000 low"),
   (16, 80, 39668, 40725, 832.04, 215.7, 16.36, 14.52, "5.1.1.2 1000/1000 medium"),
   (100, 500, 249831, 252162, 2738.78, 260.55, 32.94, 23.54, "5.1.1.3 1000/1000 high"),
   (1, 10, 6101, 44452, 97.17, 110.6, 10.23, 10.26, "5.1.2.1 1000/8000 low"),
   (16, 80, 39668, 318226, 935.49, 169.71, 14.82, 14.63, "5.1.2.2 1000/8000 medium"),
   (64, 320, 158939, 1300705, 2387.34, 265.03, 23.66, 23.07, "5.1.2.3 1000/8000 high"),
   (1, 10, 41941, 4210, 93.94, 139.9, 10.31, 10.33, "5.1.3.1 8000/1000 low"),
   (16, 80, 300020, 41589, 820.69, 284.29, 16.81, 13.68, "5.1.3.2 8000/1000 medium"),
   (64, 320, 1273893, 169680, 1790.43, 238.22, 32.5, 22.5, "5.1.3.3 8000/1000 high")]),
 "sglcb-dsr1-b200": ("DeepSeek-R1", "B200", 8, "fp8", {}, [
   (1, 10, 6101, 4210, 105.24, 153.0, 9.16, 9.15, "Chat 1K/1K low"),
   (16, 80, 39668, 40725, 795.3, 273.51, 17.56, 14.7, "Chat 1K/1K medium"),
   (100, 500, 249831, 252162, 2282.9, 563.14, 40.11, 26.36, "Chat 1K/1K high"),
   (1, 10, 6101, 44452, 108.07, 125.76, 9.21, 9.22, "Reasoning 1K/8K low"),
   (16, 80, 39668, 318226, 912.02, 176.02, 15.42, 15.17, "Reasoning 1K/8K medium"),
   (64, 320, 158939, 1300705, 2207.16, 223.91, 25.94, 25.37, "Reasoning 1K/8K high"),
   (1, 10, 41941, 4210, 103.56, 165.91, 9.26, 9.28, "Summarization 8K/1K low"),
   (16, 80, 300020, 41589, 733.41, 486.8, 19.06, 15.63, "Summarization 8K/1K medium"),
   (64, 320, 1273893, 169680, 1468.5, 913.93, 39.93, 26.29, "Summarization 8K/1K high")]),
 "sglcb-dsv31-mi300x": ("DeepSeek-R1", "MI300X", 8, "fp8", {}, [
   (1, 10, 6101, 4220, 39.72, 557.85, 23.84, 23.92, "Chat 1K/1K low"),
   (16, 80, 39668, 40805, 378.84, 607.91, 35.5, 32.18, "Chat 1K/1K medium"),
   (100, 500, 249831, 252662, 1216.79, 835.15, 73.33, 50.82, "Chat 1K/1K high"),
   (1, 10, 6101, 44462, 40.52, 156.67, 24.41, 24.58, "Reasoning 1K/8K low"),
   (16, 80, 39668, 318306, 410.7, 214.35, 33.72, 33.71, "Reasoning 1K/8K medium"),
   (64, 320, 158939, 1301025, 1056.05, 317.68, 53.3, 52.95, "Reasoning 1K/8K high"),
   (1, 10, 41941, 4220, 36.87, 883.78, 24.93, 25.08, "Summarization 8K/1K low"),
   (16, 80, 300020, 41669, 256.7, 1784.3, 53.65, 34.52, "Summarization 8K/1K medium"),
   (64, 320, 1273893, 170000, 601.67, 786.69, 97.93, 55.7, "Summarization 8K/1K high")]),
 "sglcb-llama4-scout-mi300x": ("Llama-4-Scout", "MI300X", 8, "bf16", {}, [
   (1, 10, 6101, 4220, 57.42, 4246.98, 7.49, 7.49, "5.1.1 low"),
   (16, 80, 49668, 40805, 1152.47, 124.44, 11.88, 10.54, "5.1.2 medium"),
   (100, 500, 249841, 252662, 2944.82, 204.46, 41.56, 24.46, "5.1.3 high")]),
 "sglcb-gptoss120b-b200": ("gpt-oss-120b", "B200", 8, "mxfp4", {}, [
   (1, 100, 33178, 21251, 405.93, 33.71, 2.31, 2.31, "5.1.1 latency-sensitive"),
   (100, 1000, 297156, 192432, 7773.26, 102.94, 14.31, 5.75, "5.1.2 throughput-sensitive")]),
 "sglcb-dsv3-mi300x": ("DeepSeek-R1", "MI300X", 8, "fp8",
   dict(expert_parallel_size=8, data_parallel_size=8, enable_dp_attention=True), [
   (100, 1000, 301701, 188375, 463.8, 1521.51, 214.73, 79.18, "5.1.2 throughput-sensitive, DP attention 8, EP 8")]),
 "sglcb-kimi-k2-b200": ("Kimi-K2", "B200", 8, "fp8", None, [
   (1, 10, 1951, 2755, 61.32, 141.22, 18.4, 15.76, "5.1.1 latency-sensitive, --dp 4 --enable-dp-attention",
    dict(expert_parallel_size=1, data_parallel_size=4, enable_dp_attention=True)),
   (100, 1000, 296642, 193831, 1113.25, 457.42, 97.23, 43.66, "5.1.2 throughput-sensitive, --dp 4 --ep 4 --enable-dp-attention",
    dict(expert_parallel_size=4, data_parallel_size=4, enable_dp_attention=True))]),
 "gpustack-qwen3-8b-h100-vllm": ("Qwen3-8B", "H100-SXM", 1, "bf16", {}, [
   (4, 100, 23260, 22061, 496.88, 64.0, 7.38, 7.37, "section 1 vLLM (= Other Benchmark Cases BS=4)"),
   (1, 100, 23260, 22061, 132.86, 59.01, 7.28, 7.23, "Other Benchmark Cases baseline BS=1"),
   (2, 100, 23260, 22061, 257.19, 63.78, 7.37, 7.28, "Other Benchmark Cases baseline BS=2"),
   (8, 100, 23260, 22061, 917.28, 74.57, 7.71, 7.63, "Other Benchmark Cases baseline BS=8")]),
 "gpustack-qwen3-8b-h100-sglang": ("Qwen3-8B", "H100-SXM", 1, None, {}, [
   (4, 100, 23260, 22061, 525.59, 27.7, 7.19, 7.04, "section 1 SGLang, bf16", "bf16"),
   (4, 100, 23260, 22061, 657.83, 39.66, 5.65, 5.39, "section 3 Quantization, Qwen3-8B-FP8", "fp8")]),
 "gpustack-qwen3-8b-h100-trtllm": ("Qwen3-8B", "H100-SXM", 1, "bf16", {}, [
   (4, 100, 23260, 22061, 487.38, 51.61, 7.67, 7.41, "section 1 TensorRT-LLM")]),
 "gpustack-dsr1-h200-vllm": ("DeepSeek-R1", "H200-SXM", 8, "fp8", {}, [
   (4, 100, 22836, 21338, 196.81, 123.3, 19.36, 18.84, "Other Benchmark Cases baseline, ShareGPT batch size 4")]),
 "gpustack-gptoss120b-h100-vllm": ("gpt-oss-120b", "H100-SXM", None, "mxfp4", {}, [
   (4, 100, 22946, 21691, 453.04, 49.0, 8.31, 7.99, "baseline TP 1, ShareGPT batch size 4", 1),
   (4, 100, 22946, 21691, 645.55, 37.51, 5.75, 5.54, "optimized --async-scheduling -tp 2, ShareGPT batch size 4", 2)]),
 "gpustack-gptoss120b-a100-vllm": ("gpt-oss-120b", "A100-80GB", 1, "mxfp4", {}, [
   (4, 100, 22946, 21691, 326.09, 61.91, 11.67, 11.14, "baseline, ShareGPT batch size 4"),
   (4, 100, 22946, 21691, 344.39, 71.15, 11.03, 10.49,
    "optimized --async-scheduling --max-num-batched-tokens 4096, ShareGPT batch size 4")]),
}

MODELS = {
 "Kimi-K2": {"source": ("moonshotai/Kimi-K2-Instruct config.json (https://huggingface.co/moonshotai/Kimi-K2-Instruct/blob/main/"
                        "config.json): the DeepSeek-V3 architecture with 384 routed experts, 64 heads, one dense layer and a "
                        "163,840-token vocabulary; fields as published for the Kimi-K2 family (K2-Instruct, K2-Thinking and "
                        "K2.5's text model share them); weights block-fp8 in the checkpoint (the row's weights say fp8)"),
             "config": {"model_type": "kimi_k2", "hidden_size": 7168, "intermediate_size": 18432,
                        "moe_intermediate_size": 2048, "num_hidden_layers": 61, "num_attention_heads": 64,
                        "num_key_value_heads": 64, "n_shared_experts": 1, "n_routed_experts": 384,
                        "num_experts_per_tok": 8, "first_k_dense_replace": 1, "moe_layer_freq": 1, "kv_lora_rank": 512,
                        "q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
                        "vocab_size": 163840, "max_position_embeddings": 131072, "tie_word_embeddings": False,
                        "torch_dtype": "bfloat16"}},
}

METRICS = (("ttft_ms", 5, "ms", "mean TTFT"), ("itl_ms", 6, "ms", "mean TPOT"),
           ("output_tokens_per_s", 4, "tokens/s", "output token throughput"),
           ("decode_step_ms", 7, "ms", "median ITL"))


def rows_of(src: str) -> list[dict]:
    model, gpu, tp0, weights0, par, runs = COOKBOOK_RUNS[src]
    out = []
    for i, run in enumerate(runs, 1):
        c, n, tin, tout = run[:4]
        label, extra = run[8], run[9] if len(run) > 9 else None
        tp = extra if tp0 is None else tp0
        weights = extra if weights0 is None else weights0
        run_par = extra if par is None else par
        inp, outl = round(tin / n), round(tout / n)
        for metric, k, unit, what in METRICS:
            rid = f"{src}-run{i}-{model}-{gpu}-tp{tp}-{weights}-c{c}-{inp}-{outl}-{metric}"
            out.append(dict(id=rid, source=src, gpu=gpu, tp=tp, model=model, weights=weights, kv="bf16", batch=c,
                            mode="serving", input_len=inp, output_len=outl, metric=metric, value=run[k], unit=unit,
                            note=(f"{label}: {what} as printed; lengths {tin}/{n} and {tout}/{n} tokens "
                                  f"(printed totals over the run's requests)"),
                            expert_parallel_size=run_par.get("expert_parallel_size", 1),
                            data_parallel_size=run_par.get("data_parallel_size", 1),
                            enable_dp_attention=run_par.get("enable_dp_attention", False), split=SPLIT))
    return out


def main() -> None:
    sentence = ("Rows with split 'heldout-6' were added in session 7 (2026-12-01) from whole documents no earlier "
                "session used (seven SGLang cookbook pages, four GPUStack performance-lab pages; see "
                "reports/gpu-time/add_session7_rows.py), chosen and entered before any prediction of them, and "
                "committed with the predictions of the model as it stood before session 7's changes "
                "(reports/gpu-time/frozen/heldout-6_before.json): a sealed split, never fitted on, left out of every "
                "report until the final evaluation.")
    enter(SPLIT, S, [r for src in S for r in rows_of(src)], 7, sentence, models=MODELS)


if __name__ == "__main__":
    main()
