"""Session-14 rows, data helper (h14c): held-out set 15, entered from the source text BEFORE any prediction of them.

Re-runnable: it first removes what an earlier run of it added (the sources below and every row of split
'heldout-15'), then adds them again, so running it twice leaves the table as running it once.

The set is a set of documents, fixed before any prediction: this helper was sent where the two other helpers of the
day did not go (papers with committed result files, benchmark-harness repositories, model cards, vendors' pages).
It found THREE documents in two repositories that meet the requirements, are not used by the table, and whose runs
no used document reprints:
  (a) a results file of the LLM-Inference-Bench paper's repository (Argonne; Chitty-Venkata et al., 'LLM-Inference-
      Bench: Inference Benchmarking of Large Language Models on AI Accelerators', arXiv:2411.00136), committed beside
      the benchmark scripts that wrote it: 135 rows, entered as three sources (one per GPU / engine version and model
      class, all with the document's url). These rows are static batches (a fixed batch of B prompts of N random
      tokens, N new tokens each, one offline generate call timed end to end), not a server at a stated concurrency:
      they judge prefill + decode of a whole batch (batch 16 to 64, 128 to 2048 tokens in and out, TP 1 to 8), on an
      AMD MI300X (vLLM 0.6.1, ROCm) and an NVIDIA GH200 (vLLM 0.5.3.post1);
  (b), (c) two reports of one engineer's A100 benchmark repository (cssnoeasy/a100-vllm-benchmark-blog, 2026): a
      vLLM 0.19.0 server on one A100 80GB PCIe under `vllm bench serve` at a stated --max-concurrency with fixed
      random lengths: (b) Qwen2.5-7B-Instruct fp16 (4 rows: output throughput and median TTFT at concurrency 16 and
      32), (c) Qwen3-32B in eager mode, BF16 / BF16 with FP8 KV cache / official AWQ (27 rows: output throughput at
      concurrency 4 to 32).
166 rows in all, dense and non-MLA MoE models, which is what the day's sets lacked (set 14 is all MLA). It is
smaller than the brief's aim in the kind of figure (TTFT / TPOT at a stated concurrency): most rows are batch
latencies (a) or output throughputs (c); the two A100 reports print their TPOT and most TTFTs only as p99, which the
table does not take. A small clean set was preferred to padding. The set says nothing of SGLang or TensorRT-LLM, or of
MLA, and little of TTFT (2 rows).

A note on 'documents the table has never used': three sources of the table (alcf-bench-trtllm, alcf-bench-ttft,
alcf-bench-ttft-trt; session 3's held-out-3, seen since session 7) come from the same study and repository, from
other files: InferenceGraphPlotter/data/Parallelism/All_results.csv at afdf070 (TensorRT-LLM runs on A100 only: 371
rows, every one 'Nvidia A100 GPU' / 'TensorRT-LLM', checked) and Plots/Fig_21/all_results_TTFT.csv at 4de4e87
(batch 16, input 1024, output 1). This set's file is another url, and its rows entered here (vLLM on MI300X and
GH200, output = input = 128 / 512 / 2048 tokens) are runs neither of those files prints. It is, however, the same
study and harness family as those sources: a doubt on novelty written down here, before any prediction.

- (a) alcf-allres-*: argonne-lcf/LLM-Inference-Bench, Plots/All_results.csv pinned at ae7e7a4 (2024-09-27 'Updated
  Plots', the file's last change; first added 2024-09-20 in 691ffab), 4,772 result lines with the header
  'Hardware,Num of Hardware,Framework,Model,Input Output Length,Batch Size,Latency,Throughput'.
  How the lines were made (the repository's scripts, same study, read here): vLLM/MI300X/benchmark_throughput.py and
  vLLM/H100/benchmark_throughput.py (the GH200 run script calls vLLM's benchmarks/benchmark_latency.py in the same
  way) build `LLM(model, tensor_parallel_size=TP, dtype=...)`, make `batch_size` prompts of `input_len` random token
  ids (np.random.randint(10000)), generate `output_len` tokens each with SamplingParams(temperature 1.0, top_p 1.0,
  ignore_eos=True, max_tokens=output_len), warm up, then time `llm.generate(all prompts)` (offline engine, no HTTP)
  and write 'Latency' = the mean of the timed iterations in seconds and 'Throughput' = batch_size x (input_len +
  output_len) / Latency; 'Input Output Length' N means N prompt tokens and N generated tokens, 'Num of Hardware' is
  the tensor-parallel size.
  * MI300X: vLLM/MI300X/README.md: 'git clone https://github.com/vllm-project/vllm.git ... git checkout v0.6.1',
    'DOCKER_BUILDKIT=1 docker build -f Dockerfile.rocm -t vllm-rocm .', then run-benchmark.sh, which runs
    `benchmark_throughput.py --device cuda --model=$model --tensor-parallel-size=$tensor_parallel
    --input-len=$input_output_length --output-len=$input_output_length --batch-size=$batch_size --dtype="float16"
    --trust-remote-code` over models Llama-2-7b, Meta-Llama-3-8B, Llama-2-70b, Meta-Llama-3-70B, Mistral-7B-v0.1,
    Mixtral-8x7B-v0.1, Qwen2-7B, Qwen2-72B, lengths 128 256 512 1024 2048, batches 1 16 32 64.
  * GH200: vLLM/GH200/run-throughput-bench.sh: 'pip install ... vllm==0.5.3.post1' (ARM64 wheels, in the
    vllm-gh200 apptainer from nvcr.io/nvidia/pytorch:24.06-py3), `python3 benchmark_latency.py ...
    --tensor-parallel-size=$tensor_parallel ... --dtype="float16"` with TP 1; vLLM/GH200/README.MD: 'GH200 systems at
    JLSE testbeds at ALCF'.
  Entered (the rule, fixed before any prediction, to keep one document from outweighing the set and to stay inside
  the settings the committed scripts name): the 'vLLM' lines of
    'AMD MI300X GPU' for Meta-Llama-3-8B, Meta-Llama-3-70B (dense) and Mixtral-8x7B-v0.1 (MoE) at TP 1, 2, 4 and 8,
    and of 'Nvidia GH200 GPU' for Llama-2-7b-hf, Meta-Llama-3-8B and Qwen2-7B (dense) at TP 1,
  with Input Output Length 128, 512 and 2048 and Batch Size 16, 32 and 64 (108 + 27 lines, every such line the file
  has; no configuration among them is printed twice). Per line: Latency -> request_latency_s (seconds, as printed,
  full precision), mode 'static', batch = Batch Size, input_len = output_len = Input Output Length, tp = Num of
  Hardware, weights fp16 and KV fp16 (--dtype float16; KV 'auto' follows the dtype). Models: Meta-Llama-3-8B ->
  Llama-3-8B, Meta-Llama-3-70B -> Llama-3-70B, Mixtral-8x7B-v0.1 -> Mixtral-8x7B, Llama-2-7b-hf -> Llama-2-7B (the
  table's entries), Qwen2-7B read as the catalog's Qwen2.5-7B (same shapes, as set 12 read Qwen2-7B-Instruct). GPUs:
  the catalog's MI300X (the one 192 GB part) and GH200 (the catalog's 96 GB HBM3 part).
  Sources: alcf-allres-mi300x-vllm061-dense (Llama-3-8B / Llama-3-70B, 72 rows), alcf-allres-mi300x-vllm061-moe
  (Mixtral-8x7B, 36 rows), alcf-allres-gh200-vllm0531-dense (27 rows).
  Doubts, each written down before any prediction:
  (1) novelty: same study and repository as three sources of the table (see above); other file, other runs.
  (2) engine versions come from the repository's setup files, not from the CSV: the MI300X README's 'git checkout
      v0.6.1' (a source build with Dockerfile.rocm) and the GH200 script's 'vllm==0.5.3.post1'. The committed MI300X
      script names TP 1 and batches 1-64 only, while the file holds MI300X lines at TP 1-8 and batches to 256 (the
      script was edited between runs), so that the TP 2 / 4 / 8 lines ran with the same build is inferred. Dates
      entered: 2024-09 (the file's first commit).
  (3) the Latency is one offline generate call for the whole batch (prefill of all B prompts, then decode, with
      vLLM's scheduler: max_num_seqs 256 by default, so every batch here runs at once; chunked prefill off for these
      models' context lengths in these versions, as this helper knows them, not re-read), mean of the timed
      iterations, sampling at temperature 1.0 (a sampler cost; ignore_eos fixes the lengths). It is entered as
      request_latency_s at a static batch B, as session 3 entered this study's batch latencies.
  (4) at the largest points (Llama-3-70B at TP 1 with 141 GB of fp16 weights on one 192 GB MI300X, batch 64 x 4096
      tokens) the KV cache may not hold the whole batch, so vLLM would run it in waves or preempt: not stated; the
      row's batch is the printed batch size.
  (5) MI300X with vLLM 0.6.1's ROCm build (its attention and MoE kernels on ROCm, fp16), TP over xGMI; GH200 with
      vLLM 0.5.3.post1's ARM64 wheels; the GH200 memory variant (96 GB HBM3 or 144 GB HBM3e) is not stated: the
      catalog's GH200 is entered.
  (6) the 'Throughput' column is not entered: it counts prompt tokens (batch x (input + output) / latency), which is
      no metric of the table without arithmetic on the value.
  (7) the random prompt ids and the repetition (mean of the timed iterations; the iteration count is not printed)
      are the scripts'; the MI300X file name in the script ('AMD MI300X') differs from the CSV's 'AMD MI300X GPU' (the
      CSV was compiled from the per-run files), the values are the CSV's.
  Not entered from the file: its other vLLM lines (batch 1: single-request rows, less wanted; batches 128 / 256 and
  lengths 256 / 1024: not in the committed scripts, or left out to keep the set's size in proportion; the other
  models on MI300X), the 'Nvidia H100 GPU' lines (JLSE's H100 form factor, SXM or PCIe, is not stated, and the two
  differ much in bandwidth), the 'Nvidia A100 GPU' vLLM lines (several configurations printed twice with different
  values, e.g. Mistral-7B and Mixtral-8x7B at TP 4; engine version not stated), TensorRT-LLM lines (the A100 ones are
  the runs of an already used file), llama.cpp, DeepSpeed-MII, SambaNova and Intel lines (engines or devices the
  table does not read).

- (b) cssnoeasy-a100pcie-qwen25-7b-vllm0190-tp1: cssnoeasy/a100-vllm-benchmark-blog, docs/reports/
  a100-tp1-vs-tp2-formal-baseline.md pinned at e4226b0 ('双 A100 PCIe 上的 vLLM TP1 vs TP2：正式基线', July 2026).
  Quoted settings: 'Qwen2.5-7B-Instruct · GPU：A100 80GB PCIe x2 · vLLM：0.19.0'; the table of settings: vLLM 0.19.0,
  PyTorch 2.10.0+cu128, '权重精度 float16', 'KV Cache dtype auto', 'TP / PP: TP=1、2；PP=1', gpu-memory-utilization
  0.75, max-model-len 4096, seed 0; `vllm serve "$MODEL" ... --tensor-parallel-size "$tp" --pipeline-parallel-size 1
  --dtype float16 --kv-cache-dtype auto --gpu-memory-utilization ... --max-model-len ... --seed ...` (TP1 on GPU0
  only); client `vllm bench serve --backend openai ... --dataset-name random --random-input-len "$input_len"
  --random-output-len "$output_len" --num-prompts "$NUM_PROMPTS" --max-concurrency "$concurrency" --seed "$SEED"
  --percentile-metrics ttft,tpot,e2el --metric-percentiles 50,95,99`; workloads short_short_low 512/256 c8,
  long_short_medium 2048/128 c16, long_long_high 2048/512 c32, 100 requests each, 3 repetitions; '同一负载中的每个
  成功请求固定生成相同数量的输出 token' (every successful request of a workload generates the same number of output
  tokens); the results table prints the mean of the 3 repetitions of each metric ('下表中的数值均为三次重复的算术平均').
  Entered: the TP 1 lines of long_short_medium and long_long_high: 输出吞吐 tok/s -> output_tokens_per_s, TTFT p50 ms
  -> ttft_ms (the mean over 3 runs of each run's median; the table's TTFT rows are mostly means: a doubt), batch = the
  --max-concurrency, input / output = the workload's lengths, weights fp16, KV fp16 ('auto' follows the dtype), TP 1,
  A100-80GB. Not entered: the TP 2 lines (two A100 PCIe without NVLink, 'SYS' topology across NUMA nodes: a
  tensor-parallel link the table's rows cannot state, so it would judge the model on a setup it is not given), the
  short_short_low lines (the document's own audit shows the first of its 3 runs anomalous for both TPs, ~8 s TTFT
  p99 and a lower request throughput, so the printed means mix a documented outlier run), p95 / p99 columns, E2E p99,
  GPU utilisation and KV-cache figures.
- (c) cssnoeasy-a100pcie-qwen3-32b-vllm0190-eager: the same repository, docs/reports/a100-quantization-capacity.md
  pinned at e4226b0 ('从 GB10 自行量化到 A100 部署：Qwen3-32B 四路径对比', August 2026). Quoted settings: 'A100 推理端:
  2 x A100 80GB PCIe，基准固定 GPU 0 单卡；vLLM 0.19.0、PyTorch 2.10.0+cu128'; the four paths: 'BF16 | Qwen3-32B 原模型
  | bfloat16 | auto', 'FP8 KV | Qwen3-32B 原模型 | bfloat16 | fp8', '官方 AWQ | Qwen3-32B-AWQ | float16 | auto', 'self W4A16
  GPTQ | ...'; '所有路径固定单张 A100 80GB、vLLM 0.19.0、eager mode、max_model_len=8192、gpu_memory_utilization=0.90、
  enable_thinking=false 和无限 request rate'; workloads '512x256：并发 c4、c8、c16、c24、c32' and '2048x512：并发 c4、c8、
  c12、c16', closed loop ('闭环并发矩阵'); tables '512x256：短负载结果' and '2048x512：长负载结果' with columns 'BF16
  tok/s | FP8 KV tok/s | AWQ tok/s | self tok/s | ... P99 TTFT ... P99 TPOT'; the c16 line is restated as 'output
  throughput'. Entered: the BF16, FP8 KV and AWQ tok/s of every printed line (9 lines x 3) -> output_tokens_per_s,
  batch = c, input / output = 512 / 256 or 2048 / 512, enforce_eager True, TP 1, A100-80GB, model Qwen3-32B; weights
  bf16 / bf16 / awq, KV bf16 / fp8 / fp16 (AWQ runs compute in float16; KV 'auto' follows it). Not entered: the self
  W4A16 GPTQ column (a self-built compressed-tensors checkpoint, no engine --quantization flag of the table), the
  P99 TTFT / TPOT columns, the official AWQ 2048x512 c24 point (no tok/s printed), the open-loop request-rate ladder
  (rates, not a concurrency), the quality tables.
  Doubts for (b) and (c), each written down before any prediction:
  (8) 'A100 80GB PCIe' is entered as the catalog's A100-80GB, whose figures are the SXM part's (2.039 TB/s; the PCIe
      part has 1.935 TB/s and a 300 W limit, so it may clock lower under load).
  (9) fixed lengths: vLLM 0.19.0's random dataset draws exactly the stated input length by default (range ratio 0),
      as this helper knows that version, not re-read here; (b) states that every request produced its full output
      length; (c) prints neither its client command nor ignore_eos (its runner's benchmark script,
      scripts/run_benchmark_once.sh, is not in the stored copy; the runner passes enable_thinking, so the requests
      are chat requests with Qwen3's chat template, which adds tokens to the prompt), and says only that the request
      lengths were aligned across the four paths: that every output reached 256 / 512 tokens is assumed.
  (10) (b) TTFT is the mean of three per-run medians (p50), not a mean TTFT; (b) and (c) include HTTP, tokenisation
      and detokenisation (client-side timing); (c) runs eager (no CUDA graphs), which the rows carry as
      enforce_eager.
  (11) (c) BF16 at 2048x512: the document prints 39,200 GPU KV tokens for BF16 (78,400 with FP8 KV), fewer than 16
      requests of 2,560 tokens need, so at c12 / c16 some requests wait for KV space (the document reports no
      preemption figure for this matrix); the row's batch is the printed concurrency.
  (12) the two reports are by one author on one machine; they are two documents (two urls, two studies: other
      models, other settings, other months), but not independent in hardware or harness.

Turned down, before any prediction (each read as far as the stored copy allows):
- vllm-project/vllm-project.github.io (the vLLM blog, newest stored snapshot c3a01c4): 2026-07-06-vllm-hpc-ops
  (Hy3, a model the catalog lacks), 2026-04-22-fp8-kvcache (Llama-3.1-8B / gpt-oss-20b at concurrency 8 with '~20k
  input tokens and ~2k output tokens (±15% variance)': lengths not fixed; the other figures are fits and charts),
  2026-02-27-rocm-attention-backend (relative slowdowns only; curves as charts), 2025-11-13-shm-ipc-cache (percentage
  comparisons of a multimodal workload), the other posts with TTFT / TPOT mentions (charts, models outside the
  catalog, DeepSeek / MLA, or no stated lengths).
- NVIDIA/TensorRT-LLM docs/source/blogs: XQA-kernel.md (per-GPU throughput without the batch size; ties to the
  H200 launch blog, a reserved document), tech_blog blog9 (gpt-oss deployment guide: commands and a sample request,
  no results table); the other tech blogs are DeepSeek / MLA, disaggregated, speculative or video. No performance page
  (performance.md, perf-overview.md, any version) or reserved blog was opened; perf-overview excerpts that appeared in
  search results were passed over unopened.
- FreedomIntelligence/AccelMark: the newest stored snapshot is 5797fc4, the commit set 8 pinned; no new result
  directory.
- a 'Qwen3-235B-FP8 Benchmark Report' (SGLang CI test on 8x H200 / B200): no repository or path given by the file
  index, output lengths 'variable per batch size', and B200 Qwen3-235B figures (the reserved SGLang B200 runs'
  model and GPU); a Kimi-K2.5 NVFP4 PD-disaggregated workload report on GB200 (disaggregated, speculative, MLA);
  a DeepEP MXFP4 kernel note (no model or GPU stated beside the table); a Kimi-K2.5 on 8x B200 table 'sourced from
  SemiAnalysis InferenceX' (a reprint); crazyguitar/pysheeet LLM benchmark page (commands only, no results).
- harness outputs seen as search excerpts without a repository or path (a Mistral-7B A100 40G vLLM v0.2.5 table whose
  throughput part sends the prompts at once and whose latency column is per token; vLLM pipeline-parallel test logs
  on Gaudi; a Jetson Thor Qwen3 page, a GPU the catalog lacks).
- pages: pavlokhmel.com and johnmusgrave.com (stored copies end before their results, as set 12 found),
  blog.desigeek.com 2026-04 'Benchmarking OSS LLMs' on 8x / 16x H200 (only the opening is stored; no table read),
  blog.ori.co Llama 3.1 8B H100 / A100 (opening only), Microsoft techcommunity Llama 3.1 8B across GPUs (ShareGPT-like
  profiles of the HF inference-benchmarker), artificialanalysis.ai hardware benchmarks (charts; methodology lengths
  not per point), metrum.ai Llama H200 vs B200 (ratios), spheron.network / runinfra.ai / bizrockman / jarvislabs /
  Vultr (turned down before), llm-bench.rituraj.info (template prompts, lengths not fixed), RedHatAI model cards
  (stored only as unreadable blame pages), a Red Hat RHAI Qwen3.6-27B report (a model the catalog lacks, 4x L4 with
  GuideLLM).
- Intel Gaudi docs and vLLM Gaudi plugin pages (installation and FAQ only; no performance table found).
No reserved document was opened or used: no TensorRT-LLM performance page (performance.md, perf-overview.md, any
version) or blog named reserved (H200launch.md, H100vsA100.md), no ROCm/vllm dev-docker README, no dstack DeepSeek-R1
benchmark, no SGLang B200 gist or cookbook B200 page of Qwen3-235B / gpt-oss-120b, no QuixiAI model card.

Every value is a number a document printed (copied below as the documents' CSV lines and table cells); no
arithmetic is done on any value, and no length is derived (the lengths are the printed Input Output Length, or the
reports' stated workload lengths).

Run: python reports/gpu-time/add_session14_set15_rows.py
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from table_entry import enter  # noqa: E402

SPLIT = "heldout-15"
COMMIT = "ae7e7a41173badc99f7b59da1657a0172813e5e5"
URL = "https://github.com/argonne-lcf/LLM-Inference-Bench/blob/" + COMMIT + "/Plots/All_results.csv"
A100_BLOB = "https://github.com/cssnoeasy/a100-vllm-benchmark-blog/blob/e4226b0fa0762a9c8d9ac4e8c1b9e8f2f53a3cc5"
A100_TP, A100_Q = "cssnoeasy-a100pcie-qwen25-7b-vllm0190-tp1", "cssnoeasy-a100pcie-qwen3-32b-vllm0190-eager"
MI_DENSE, MI_MOE, GH_DENSE = ("alcf-allres-mi300x-vllm061-dense", "alcf-allres-mi300x-vllm061-moe",
                              "alcf-allres-gh200-vllm0531-dense")

_WHAT = ("LLM-Inference-Bench (Argonne; arXiv:2411.00136), Plots/All_results.csv at ae7e7a4: offline vLLM batch "
         "latencies (one generate call of B prompts of N random tokens, N new tokens each, ignore_eos)")
_HOW = ("Latency -> request_latency_s (seconds as printed), mode 'static', batch = Batch Size, input = output = "
        "Input Output Length, TP = Num of Hardware; --dtype float16 (weights fp16, KV fp16). Throughput column not "
        "entered (it counts prompt tokens). Same study as the table's alcf-bench-* sources (other files, other runs).")
S = {
 MI_DENSE: dict(url=URL,
   what=_WHAT + "; 'AMD MI300X GPU' vLLM lines of Meta-Llama-3-8B and Meta-Llama-3-70B at TP 1/2/4/8, lengths 128 / "
                "512 / 2048, batches 16 / 32 / 64",
   setup=("vLLM v0.6.1 built with Dockerfile.rocm (vLLM/MI300X/README.md), vLLM/MI300X/benchmark_throughput.py; "
          + _HOW + " TP > 1 lines: build inferred (the committed script names TP 1)."),
   engine="vLLM 0.6.1 (ROCm)", engine_family="vllm", engine_version="0.6.1", klass="dense", date="2024-09"),
 MI_MOE: dict(url=URL,
   what=_WHAT + "; 'AMD MI300X GPU' vLLM lines of Mixtral-8x7B-v0.1 at TP 1/2/4/8, lengths 128 / 512 / 2048, "
                "batches 16 / 32 / 64",
   setup=("vLLM v0.6.1 built with Dockerfile.rocm (vLLM/MI300X/README.md), vLLM/MI300X/benchmark_throughput.py; "
          + _HOW + " Experts sharded by TP (no expert parallelism in vLLM 0.6.1). TP > 1 lines: build inferred."),
   engine="vLLM 0.6.1 (ROCm)", engine_family="vllm", engine_version="0.6.1", klass="moe", date="2024-09"),
 GH_DENSE: dict(url=URL,
   what=_WHAT + "; 'Nvidia GH200 GPU' vLLM lines of Llama-2-7b-hf, Meta-Llama-3-8B and Qwen2-7B at TP 1, lengths "
                "128 / 512 / 2048, batches 16 / 32 / 64",
   setup=("vllm==0.5.3.post1 ARM64 wheels in an apptainer from nvcr.io/nvidia/pytorch:24.06-py3 (vLLM/GH200/"
          "run-throughput-bench.sh), vLLM's benchmark_latency.py, JLSE GH200 (memory variant not stated: the "
          "catalog's GH200 entered); " + _HOW + " Qwen2-7B read as Qwen2.5-7B (same shapes)."),
   engine="vLLM 0.5.3.post1", engine_family="vllm", engine_version="0.5.3.post1", klass="dense", date="2024-09"),
 A100_TP: dict(url=A100_BLOB + "/docs/reports/a100-tp1-vs-tp2-formal-baseline.md",
   what=("cssnoeasy/a100-vllm-benchmark-blog, 'vLLM TP1 vs TP2 formal baseline' on A100 80GB PCIe: Qwen2.5-7B-Instruct "
         "fp16, vLLM 0.19.0, vllm bench serve random 2048/128 at --max-concurrency 16 and 2048/512 at 32, 100 "
         "requests, means of 3 runs; TP 1 lines: output throughput and TTFT p50"),
   setup=("vllm serve --tensor-parallel-size 1 --dtype float16 --kv-cache-dtype auto --gpu-memory-utilization 0.75 "
          "--max-model-len 4096 --seed 0 on GPU0 of 2 x A100 80GB PCIe (catalog A100-80GB entered: SXM figures); "
          "vllm bench serve --backend openai --dataset-name random, fixed lengths (every request its full output, "
          "as the report states), seed 0. Output throughput -> output_tokens_per_s, TTFT p50 (mean of 3 runs' "
          "medians) -> ttft_ms. TP 2 lines (PCIe, no NVLink, across NUMA) and the short_short_low lines (documented "
          "anomalous first run) not entered."),
   engine="vLLM 0.19.0", engine_family="vllm", engine_version="0.19.0", klass="dense", date="2026-07"),
 A100_Q: dict(url=A100_BLOB + "/docs/reports/a100-quantization-capacity.md",
   what=("cssnoeasy/a100-vllm-benchmark-blog, 'Qwen3-32B four paths' on one A100 80GB PCIe: vLLM 0.19.0 eager, "
         "BF16 / BF16 + FP8 KV / official AWQ, 512x256 at concurrency 4-32 and 2048x512 at 4-16; output tok/s"),
   setup=("vLLM 0.19.0 server on GPU 0 of 2 x A100 80GB PCIe (catalog A100-80GB entered: SXM figures), eager mode "
          "(enforce_eager), max_model_len 8192, gpu_memory_utilization 0.90, enable_thinking false (chat requests), "
          "request rate inf, closed loop at the printed concurrency; BF16 (KV auto), FP8 KV (--kv-cache-dtype fp8), "
          "Qwen3-32B-AWQ (float16 compute). tok/s -> output_tokens_per_s. Output lengths assumed full (client command "
          "not in the stored copy). Self-built W4A16 GPTQ column, P99 columns and open-loop ladder not entered."),
   engine="vLLM 0.19.0", engine_family="vllm", engine_version="0.19.0", klass="dense", date="2026-08"),
}

# The document's CSV lines, as printed: Hardware,Num of Hardware,Framework,Model,Input Output Length,Batch Size,
# Latency,Throughput
LINES = """
AMD MI300X GPU,2,vLLM,meta-llama/Meta-Llama-3-70B,128,16,6.577995624000323,622.6820803977779
AMD MI300X GPU,2,vLLM,meta-llama/Meta-Llama-3-70B,512,16,27.961406716000056,585.9504912041767
AMD MI300X GPU,2,vLLM,meta-llama/Meta-Llama-3-70B,2048,16,131.73108476400375,497.49837039152715
AMD MI300X GPU,2,vLLM,meta-llama/Meta-Llama-3-70B,128,32,10.522318711002299,778.5356274595939
AMD MI300X GPU,2,vLLM,meta-llama/Meta-Llama-3-70B,512,32,50.77375457799644,645.3727968780252
AMD MI300X GPU,2,vLLM,meta-llama/Meta-Llama-3-70B,2048,32,341.7560917640076,383.52498509524446
AMD MI300X GPU,2,vLLM,meta-llama/Meta-Llama-3-70B,128,64,18.69246931800444,876.502709260518
AMD MI300X GPU,2,vLLM,meta-llama/Meta-Llama-3-70B,512,64,90.51388672499161,724.0435956431533
AMD MI300X GPU,2,vLLM,meta-llama/Meta-Llama-3-70B,2048,64,611.6721099439892,428.5694831238987
AMD MI300X GPU,4,vLLM,meta-llama/Meta-Llama-3-70B,128,16,4.965085653006099,824.9605920735902
AMD MI300X GPU,4,vLLM,meta-llama/Meta-Llama-3-70B,512,16,21.08649476901337,776.9902100597728
AMD MI300X GPU,4,vLLM,meta-llama/Meta-Llama-3-70B,2048,16,90.33554969400575,725.472975168586
AMD MI300X GPU,4,vLLM,meta-llama/Meta-Llama-3-70B,128,32,7.412426951006637,1105.1710936439642
AMD MI300X GPU,4,vLLM,meta-llama/Meta-Llama-3-70B,512,32,30.37139342998853,1078.90999718324
AMD MI300X GPU,4,vLLM,meta-llama/Meta-Llama-3-70B,2048,32,140.92769706599938,930.065577802043
AMD MI300X GPU,4,vLLM,meta-llama/Meta-Llama-3-70B,128,64,12.707908774988027,1289.2758588452675
AMD MI300X GPU,4,vLLM,meta-llama/Meta-Llama-3-70B,512,64,59.818048746994464,1095.5890633810222
AMD MI300X GPU,4,vLLM,meta-llama/Meta-Llama-3-70B,2048,64,378.2227973929985,693.0941281353146
AMD MI300X GPU,8,vLLM,meta-llama/Meta-Llama-3-70B,128,16,3.9518721560016274,1036.4707759534904
AMD MI300X GPU,8,vLLM,meta-llama/Meta-Llama-3-70B,512,16,17.211803111000336,951.9049163145914
AMD MI300X GPU,8,vLLM,meta-llama/Meta-Llama-3-70B,2048,16,66.85799195499567,980.2268671801339
AMD MI300X GPU,8,vLLM,meta-llama/Meta-Llama-3-70B,128,32,5.474311388999922,1496.4439210493213
AMD MI300X GPU,8,vLLM,meta-llama/Meta-Llama-3-70B,512,32,22.153954749999684,1479.1038606775373
AMD MI300X GPU,8,vLLM,meta-llama/Meta-Llama-3-70B,2048,32,95.05125662499631,1378.9612536856357
AMD MI300X GPU,8,vLLM,meta-llama/Meta-Llama-3-70B,128,64,7.746414558991091,2115.0430144464003
AMD MI300X GPU,8,vLLM,meta-llama/Meta-Llama-3-70B,512,64,32.89789218999795,1992.1033123187485
AMD MI300X GPU,8,vLLM,meta-llama/Meta-Llama-3-70B,2048,64,150.02776706698933,1747.3032167635297
AMD MI300X GPU,1,vLLM,meta-llama/Meta-Llama-3-70B,128,16,11.310481474996777,362.14196619787725
AMD MI300X GPU,1,vLLM,meta-llama/Meta-Llama-3-70B,512,16,52.34730286500417,312.98651703702626
AMD MI300X GPU,1,vLLM,meta-llama/Meta-Llama-3-70B,2048,16,347.24002711000503,188.73400208334365
AMD MI300X GPU,1,vLLM,meta-llama/Meta-Llama-3-70B,128,32,19.34023608600546,423.5729059133723
AMD MI300X GPU,1,vLLM,meta-llama/Meta-Llama-3-70B,512,32,90.76099582700408,361.0361444519381
AMD MI300X GPU,1,vLLM,meta-llama/Meta-Llama-3-70B,2048,32,643.5282997479953,203.67713440314526
AMD MI300X GPU,1,vLLM,meta-llama/Meta-Llama-3-70B,128,64,36.519007401002455,448.6430811246599
AMD MI300X GPU,1,vLLM,meta-llama/Meta-Llama-3-70B,512,64,177.99854679399868,368.18278115408515
AMD MI300X GPU,1,vLLM,meta-llama/Meta-Llama-3-70B,2048,64,1495.9727140220057,175.2331426521887
AMD MI300X GPU,2,vLLM,meta-llama/Meta-Llama-3-8B,128,16,1.560404354997445,2624.96063080182
AMD MI300X GPU,2,vLLM,meta-llama/Meta-Llama-3-8B,512,16,7.010332632002246,2337.1216260419455
AMD MI300X GPU,2,vLLM,meta-llama/Meta-Llama-3-8B,2048,16,29.515460307004105,2220.3956610647238
AMD MI300X GPU,2,vLLM,meta-llama/Meta-Llama-3-8B,128,32,1.9804012029999285,4136.535560365591
AMD MI300X GPU,2,vLLM,meta-llama/Meta-Llama-3-8B,512,32,8.508378165002796,3851.262762953277
AMD MI300X GPU,2,vLLM,meta-llama/Meta-Llama-3-8B,2048,32,42.219039126997814,3104.570892902756
AMD MI300X GPU,2,vLLM,meta-llama/Meta-Llama-3-8B,128,64,3.1242910959990695,5244.069613417635
AMD MI300X GPU,2,vLLM,meta-llama/Meta-Llama-3-8B,512,64,16.098522475003847,4070.9326027750467
AMD MI300X GPU,2,vLLM,meta-llama/Meta-Llama-3-8B,2048,64,124.86529152099683,2099.4144714419613
AMD MI300X GPU,4,vLLM,meta-llama/Meta-Llama-3-8B,128,16,1.445069503999548,2834.4657393041775
AMD MI300X GPU,4,vLLM,meta-llama/Meta-Llama-3-8B,512,16,6.471996237996791,2531.521867057075
AMD MI300X GPU,4,vLLM,meta-llama/Meta-Llama-3-8B,2048,16,26.049278856000456,2515.84699761866
AMD MI300X GPU,4,vLLM,meta-llama/Meta-Llama-3-8B,128,32,2.033295960005489,4028.9265119957668
AMD MI300X GPU,4,vLLM,meta-llama/Meta-Llama-3-8B,512,32,7.6092999419997795,4306.309417392782
AMD MI300X GPU,4,vLLM,meta-llama/Meta-Llama-3-8B,2048,32,33.288081847000285,3937.505339071118
AMD MI300X GPU,4,vLLM,meta-llama/Meta-Llama-3-8B,128,64,2.7141660299967043,6036.476699997565
AMD MI300X GPU,4,vLLM,meta-llama/Meta-Llama-3-8B,512,64,10.279478859003575,6375.420475970766
AMD MI300X GPU,4,vLLM,meta-llama/Meta-Llama-3-8B,2048,64,49.744191651996516,5269.84138839612
AMD MI300X GPU,8,vLLM,meta-llama/Meta-Llama-3-8B,128,16,1.303811574995052,3141.558242428968
AMD MI300X GPU,8,vLLM,meta-llama/Meta-Llama-3-8B,512,16,6.122566641999583,2676.001905411537
AMD MI300X GPU,8,vLLM,meta-llama/Meta-Llama-3-8B,2048,16,23.597164442006033,2777.2828451937794
AMD MI300X GPU,8,vLLM,meta-llama/Meta-Llama-3-8B,128,32,1.588878582995676,5155.8376377348995
AMD MI300X GPU,8,vLLM,meta-llama/Meta-Llama-3-8B,512,32,7.044879713997943,4651.321432059523
AMD MI300X GPU,8,vLLM,meta-llama/Meta-Llama-3-8B,2048,32,28.909685589998844,4533.843842471385
AMD MI300X GPU,8,vLLM,meta-llama/Meta-Llama-3-8B,128,64,2.333325195002544,7021.738776528377
AMD MI300X GPU,8,vLLM,meta-llama/Meta-Llama-3-8B,512,64,9.564188636002655,6852.227877783757
AMD MI300X GPU,8,vLLM,meta-llama/Meta-Llama-3-8B,2048,64,41.23822738499439,6356.820276309645
AMD MI300X GPU,1,vLLM,meta-llama/Meta-Llama-3-8B,128,16,1.550575431996549,2641.5999605552347
AMD MI300X GPU,1,vLLM,meta-llama/Meta-Llama-3-8B,512,16,7.159167474004789,2288.534254784642
AMD MI300X GPU,1,vLLM,meta-llama/Meta-Llama-3-8B,2048,16,35.66083337600139,1837.7585097072815
AMD MI300X GPU,1,vLLM,meta-llama/Meta-Llama-3-8B,128,32,2.3598924109974178,3471.344694285287
AMD MI300X GPU,1,vLLM,meta-llama/Meta-Llama-3-8B,512,32,13.291628186998423,2465.3112123654596
AMD MI300X GPU,1,vLLM,meta-llama/Meta-Llama-3-8B,2048,32,110.49891284100158,1186.1836160198366
AMD MI300X GPU,1,vLLM,meta-llama/Meta-Llama-3-8B,128,64,3.914598791001481,4185.358672684933
AMD MI300X GPU,1,vLLM,meta-llama/Meta-Llama-3-8B,512,64,22.143679972999962,2959.580344365019
AMD MI300X GPU,1,vLLM,meta-llama/Meta-Llama-3-8B,2048,64,191.53525192400411,1368.6462276093775
AMD MI300X GPU,2,vLLM,mistralai/Mixtral-8x7B-v0.1,128,16,3.067650106997462,1335.2239848530382
AMD MI300X GPU,2,vLLM,mistralai/Mixtral-8x7B-v0.1,512,16,12.99451270600548,1260.8398922437507
AMD MI300X GPU,2,vLLM,mistralai/Mixtral-8x7B-v0.1,2048,16,54.382901236996986,1205.084659135756
AMD MI300X GPU,2,vLLM,mistralai/Mixtral-8x7B-v0.1,128,32,3.466434510992258,2363.2351841705677
AMD MI300X GPU,2,vLLM,mistralai/Mixtral-8x7B-v0.1,512,32,14.398338165992755,2275.8181966717734
AMD MI300X GPU,2,vLLM,mistralai/Mixtral-8x7B-v0.1,2048,32,65.89998473299784,1988.953419808136
AMD MI300X GPU,2,vLLM,mistralai/Mixtral-8x7B-v0.1,128,64,4.409766438009683,3715.3895178618127
AMD MI300X GPU,2,vLLM,mistralai/Mixtral-8x7B-v0.1,512,64,21.07574889100215,3109.545494156994
AMD MI300X GPU,2,vLLM,mistralai/Mixtral-8x7B-v0.1,2048,64,142.60816396400332,1838.2117314557777
AMD MI300X GPU,4,vLLM,mistralai/Mixtral-8x7B-v0.1,128,16,2.286651738002547,1791.265338716585
AMD MI300X GPU,4,vLLM,mistralai/Mixtral-8x7B-v0.1,512,16,9.82494379999116,1667.5922359998376
AMD MI300X GPU,4,vLLM,mistralai/Mixtral-8x7B-v0.1,2048,16,39.47225961899676,1660.3052531722703
AMD MI300X GPU,4,vLLM,mistralai/Mixtral-8x7B-v0.1,128,32,2.7048177079996094,3028.6699084274046
AMD MI300X GPU,4,vLLM,mistralai/Mixtral-8x7B-v0.1,512,32,11.294485912003438,2901.2387332455
AMD MI300X GPU,4,vLLM,mistralai/Mixtral-8x7B-v0.1,2048,32,47.54398420199868,2756.8577223801517
AMD MI300X GPU,4,vLLM,mistralai/Mixtral-8x7B-v0.1,128,64,3.3483053729869425,4893.2215478853495
AMD MI300X GPU,4,vLLM,mistralai/Mixtral-8x7B-v0.1,512,64,13.990382448988385,4684.36086282536
AMD MI300X GPU,4,vLLM,mistralai/Mixtral-8x7B-v0.1,2048,64,64.09500323300017,4089.9288053242763
AMD MI300X GPU,8,vLLM,mistralai/Mixtral-8x7B-v0.1,128,16,2.0017049750022124,2046.255592683169
AMD MI300X GPU,8,vLLM,mistralai/Mixtral-8x7B-v0.1,512,16,7.971693182000308,2055.2722772866205
AMD MI300X GPU,8,vLLM,mistralai/Mixtral-8x7B-v0.1,2048,16,31.799669713000185,2060.901908462524
AMD MI300X GPU,8,vLLM,mistralai/Mixtral-8x7B-v0.1,128,32,2.134958644004655,3837.076667974154
AMD MI300X GPU,8,vLLM,mistralai/Mixtral-8x7B-v0.1,512,32,8.995650980999926,3642.6491055745273
AMD MI300X GPU,8,vLLM,mistralai/Mixtral-8x7B-v0.1,2048,32,36.785386083007324,3563.154120612792
AMD MI300X GPU,8,vLLM,mistralai/Mixtral-8x7B-v0.1,128,64,2.854763349998393,5739.179746723742
AMD MI300X GPU,8,vLLM,mistralai/Mixtral-8x7B-v0.1,512,64,12.224107139991247,5361.209554978338
AMD MI300X GPU,8,vLLM,mistralai/Mixtral-8x7B-v0.1,2048,64,51.950558897995506,5046.028484789116
AMD MI300X GPU,1,vLLM,mistralai/Mixtral-8x7B-v0.1,128,16,4.432129045002512,924.1608171626868
AMD MI300X GPU,1,vLLM,mistralai/Mixtral-8x7B-v0.1,512,16,18.82261985099467,870.4420601223691
AMD MI300X GPU,1,vLLM,mistralai/Mixtral-8x7B-v0.1,2048,16,82.4900031890138,794.4720265052459
AMD MI300X GPU,1,vLLM,mistralai/Mixtral-8x7B-v0.1,128,32,5.149613519010018,1590.7989929261455
AMD MI300X GPU,1,vLLM,mistralai/Mixtral-8x7B-v0.1,512,32,24.002522866998333,1365.1898253184684
AMD MI300X GPU,1,vLLM,mistralai/Mixtral-8x7B-v0.1,2048,32,158.19374678299937,828.5536101486783
AMD MI300X GPU,1,vLLM,mistralai/Mixtral-8x7B-v0.1,128,64,6.026062581993756,2718.8565961721665
AMD MI300X GPU,1,vLLM,mistralai/Mixtral-8x7B-v0.1,512,64,30.095803877004073,2177.579315303668
AMD MI300X GPU,1,vLLM,mistralai/Mixtral-8x7B-v0.1,2048,64,223.1312780020089,1174.842013846395
Nvidia GH200 GPU,1,vLLM,meta-llama/Llama-2-7b-hf,128,16,1.079980981987319,3792.659378559404
Nvidia GH200 GPU,1,vLLM,meta-llama/Llama-2-7b-hf,512,16,5.080686409986811,3224.761120425563
Nvidia GH200 GPU,1,vLLM,meta-llama/Llama-2-7b-hf,2048,16,32.64236832199094,2007.6974609666677
Nvidia GH200 GPU,1,vLLM,meta-llama/Llama-2-7b-hf,128,32,1.3284674890019232,6166.503936166811
Nvidia GH200 GPU,1,vLLM,meta-llama/Llama-2-7b-hf,512,32,6.980479696998373,4694.233265099294
Nvidia GH200 GPU,1,vLLM,meta-llama/Llama-2-7b-hf,2048,32,52.236117521999404,2509.221707467034
Nvidia GH200 GPU,1,vLLM,meta-llama/Llama-2-7b-hf,128,64,1.9104164180025691,8576.14070189485
Nvidia GH200 GPU,1,vLLM,meta-llama/Llama-2-7b-hf,512,64,10.660265997008537,6147.688999354293
Nvidia GH200 GPU,1,vLLM,meta-llama/Llama-2-7b-hf,2048,64,109.83405997299997,2386.727760627639
Nvidia GH200 GPU,1,vLLM,meta-llama/Meta-Llama-3-8B,128,16,1.1057486339996103,3704.2776939134283
Nvidia GH200 GPU,1,vLLM,meta-llama/Meta-Llama-3-8B,512,16,4.905629998000222,3339.8360672694293
Nvidia GH200 GPU,1,vLLM,meta-llama/Meta-Llama-3-8B,2048,16,25.045473989011953,2616.68036423476
Nvidia GH200 GPU,1,vLLM,meta-llama/Meta-Llama-3-8B,128,32,1.2857674609986134,6371.292048126294
Nvidia GH200 GPU,1,vLLM,meta-llama/Meta-Llama-3-8B,512,32,5.787154457997531,5662.195512116739
Nvidia GH200 GPU,1,vLLM,meta-llama/Meta-Llama-3-8B,2048,32,31.81401367401122,4119.94542226127
Nvidia GH200 GPU,1,vLLM,meta-llama/Meta-Llama-3-8B,128,64,1.671736606003833,9800.586971152581
Nvidia GH200 GPU,1,vLLM,meta-llama/Meta-Llama-3-8B,512,64,7.97581343400816,8216.842149361257
Nvidia GH200 GPU,1,vLLM,meta-llama/Meta-Llama-3-8B,2048,64,50.57271672898787,5183.5063835860965
Nvidia GH200 GPU,1,vLLM,Qwen/Qwen2-7B,128,16,1.0727225830050884,3818.321777589137
Nvidia GH200 GPU,1,vLLM,Qwen/Qwen2-7B,512,16,4.611204101005569,3553.0849732778315
Nvidia GH200 GPU,1,vLLM,Qwen/Qwen2-7B,2048,16,22.0870276390051,2967.17154843711
Nvidia GH200 GPU,1,vLLM,Qwen/Qwen2-7B,128,32,1.2856430989922956,6371.908351875416
Nvidia GH200 GPU,1,vLLM,Qwen/Qwen2-7B,512,32,5.562570752997999,5890.801475619772
Nvidia GH200 GPU,1,vLLM,Qwen/Qwen2-7B,2048,32,29.708361608994892,4411.956530120965
Nvidia GH200 GPU,1,vLLM,Qwen/Qwen2-7B,128,64,1.6916473159944871,9685.233940366677
Nvidia GH200 GPU,1,vLLM,Qwen/Qwen2-7B,512,64,7.334878330992069,8934.844866218253
Nvidia GH200 GPU,1,vLLM,Qwen/Qwen2-7B,2048,64,42.19603859000199,6212.526311939456
"""
GPU = {"AMD MI300X GPU": "MI300X", "Nvidia GH200 GPU": "GH200"}
MODEL = {"meta-llama/Meta-Llama-3-8B": "Llama-3-8B", "meta-llama/Meta-Llama-3-70B": "Llama-3-70B",
         "mistralai/Mixtral-8x7B-v0.1": "Mixtral-8x7B", "meta-llama/Llama-2-7b-hf": "Llama-2-7B",
         "Qwen/Qwen2-7B": "Qwen2.5-7B"}


def _source(gpu: str, model: str) -> str:
    if gpu == "GH200":
        return GH_DENSE
    return MI_MOE if model == "Mixtral-8x7B" else MI_DENSE


def rows() -> list[dict]:
    out = []
    for line in LINES.strip().splitlines():
        cells = line.split(",")
        assert len(cells) == 8 and cells[2] == "vLLM", line
        hw, tp, _, hf_model, n, b, latency, _throughput = cells
        gpu, model, tp, n, b = GPU[hw], MODEL[hf_model], int(tp), int(n), int(b)
        src = _source(gpu, model)
        rid = f"{src}-{model}-{gpu}-tp{tp}-fp16-b{b}-{n}-{n}-request_latency_s"
        note = (f"'{hw}', Num of Hardware {tp}, vLLM, {hf_model}, Input Output Length {n}, Batch Size {b}: Latency "
                f"{latency} s as printed (one offline generate call of {b} prompts of {n} random tokens, {n} new "
                f"tokens each, ignore_eos; --dtype float16)")
        out.append(dict(id=rid, source=src, gpu=gpu, tp=tp, model=model, weights="fp16", kv="fp16", batch=b,
                        mode="static", input_len=n, output_len=n, metric="request_latency_s", value=float(latency),
                        unit="s", note=note, expert_parallel_size=1, data_parallel_size=1, enable_dp_attention=False,
                        split=SPLIT))
    return out


# (b): the results table's TP 1 lines, as printed: | TP | 负载 | 请求吞吐 req/s | 输入吞吐 tok/s | 输出吞吐 tok/s |
# TTFT p50 ms | TTFT p95 ms | TTFT p99 ms | TPOT p99 ms | E2E p99 ms | GPU 平均利用率 | KV Cache 峰值 |
TP_LINES = {  # workload -> (input, output, --max-concurrency, the table line)
 "long_short_medium": (2048, 128, 16, "| 1 | 长输入、短输出、中并发 | 7.08 | 14505.66 | 906.60 | 351.41 | 649.73 | 825.18 | "
                                      "16.80 | 2649.36 | 55.80% | 4.15% |"),
 "long_long_high": (2048, 512, 32, "| 1 | 长输入、长输出、高并发 | 3.43 | 7029.37 | 1757.34 | 228.90 | 572.04 | 638.80 | "
                                   "14.75 | 8108.90 | 72.96% | 9.62% |"),
}
# (c): the two results tables, as printed: | c | BF16 tok/s | FP8 KV tok/s | AWQ tok/s | self tok/s | (P99 columns) |
Q_TABLES = {
 (512, 256): """
| 4 | 79.43 | 79.45 | 99.60 | 95.91 | 778.10 | 778.96 | 1165.48 | 843.44 | 49.61 | 49.57 | 38.56 | 40.52 |
| 8 | 148.58 | 149.22 | 185.15 | 179.56 | 1367.38 | 1382.72 | 1914.60 | 1676.12 | 52.96 | 52.64 | 42.01 | 43.71 |
| 16 | 264.83 | 267.69 | 303.52 | 312.90 | 2636.58 | 2712.30 | 3573.17 | 3322.15 | 59.35 | 58.67 | 51.40 | 50.23 |
| 24 | 370.56 | 374.49 | 326.83 | 408.80 | 3910.03 | 3893.62 | 5231.99 | 4937.47 | 63.45 | 62.82 | 71.70 | 57.55 |
| 32 | 444.29 | 452.19 | 375.11 | 494.32 | 5178.57 | 5208.28 | 6886.52 | 6600.16 | 70.53 | 69.03 | 83.53 | 63.03 |
""",
 (2048, 512): """
| 4 | 74.15 | 74.84 | 92.89 | 90.24 | 2624.87 | 2715.00 | 3409.92 | 3266.04 | 52.29 | 51.87 | 40.99 | 41.14 |
| 8 | 131.14 | 133.04 | 161.10 | 158.82 | 5161.92 | 5269.38 | 6790.40 | 6567.97 | 58.42 | 57.47 | 46.43 | 47.13 |
| 12 | 178.42 | 181.77 | 201.97 | 190.85 | 7678.59 | 7872.75 | 10205.93 | 9919.23 | 65.34 | 63.27 | 56.09 | 56.35 |
| 16 | 186.08 | 217.52 | 229.13 | 243.84 | 10304.40 | 10593.13 | 13512.68 | 13158.82 | 86.85 | 70.69 | 67.08 | 62.31 |
""",
}
# (column index in a line, path name, weights, KV)
Q_PATHS = ((1, "BF16", "bf16", "bf16"), (2, "FP8 KV", "bf16", "fp8"), (3, "AWQ", "awq", "fp16"))


def _serving(src, model, weights, kv, c, inp, outl, metric, value, unit, note, eager=False) -> dict:
    rid = f"{src}-{model}-A100-80GB-tp1-{weights}-kv{kv}-c{c}-{inp}-{outl}-{metric}"
    r = dict(id=rid, source=src, gpu="A100-80GB", tp=1, model=model, weights=weights, kv=kv, batch=c, mode="serving",
             input_len=inp, output_len=outl, metric=metric, value=value, unit=unit, note=note,
             expert_parallel_size=1, data_parallel_size=1, enable_dp_attention=False, split=SPLIT)
    if eager:
        r["enforce_eager"] = True
    return r


def a100_rows() -> list[dict]:
    out = []
    for workload, (inp, outl, c, line) in TP_LINES.items():
        cells = [x.strip() for x in line.strip().strip("|").split("|")]
        assert len(cells) == 12 and cells[0] == "1", line
        for col, metric, unit, name in ((4, "output_tokens_per_s", "tokens/s", "输出吞吐 tok/s"),
                                        (5, "ttft_ms", "ms", "TTFT p50 ms")):
            note = (f"TP 1, {workload} ({inp} in / {outl} out, --max-concurrency {c}, 100 requests): {name} as printed "
                    f"(mean of 3 runs; vLLM 0.19.0, Qwen2.5-7B-Instruct fp16, one A100 80GB PCIe)")
            out.append(_serving(A100_TP, "Qwen2.5-7B-Instruct", "fp16", "fp16", c, inp, outl, metric,
                                float(cells[col]), unit, note))
    for (inp, outl), text in Q_TABLES.items():
        for line in text.strip().splitlines():
            cells = [x.strip() for x in line.strip().strip("|").split("|")]
            assert len(cells) == 13, line
            c = int(cells[0])
            for col, path, weights, kv in Q_PATHS:
                note = (f"{inp}x{outl} table, c {c}: {path} tok/s as printed (output throughput; vLLM 0.19.0 eager, "
                        f"Qwen3-32B, one A100 80GB PCIe, closed loop at concurrency {c})")
                out.append(_serving(A100_Q, "Qwen3-32B", weights, kv, c, inp, outl, "output_tokens_per_s",
                                    float(cells[col]), "tokens/s", note, eager=True))
    return out


def main() -> None:
    sentence = ("Rows with split 'heldout-15' were added in session 14 (a data helper) from documents no earlier "
                "session used (LLM-Inference-Bench's Plots/All_results.csv: offline vLLM batch latencies on MI300X and "
                "GH200; two A100 80GB PCIe vLLM 0.19.0 serving reports of cssnoeasy/a100-vllm-benchmark-blog; see "
                "reports/gpu-time/add_session14_set15_rows.py), chosen and entered before any prediction of "
                "them, and committed with the predictions of the model as it stood (reports/gpu-time/frozen/"
                "heldout-15_before.json): a sealed split, never fitted on, left out of every report until the final "
                "evaluation.")
    enter(SPLIT, S, rows() + a100_rows(), 14, sentence)


if __name__ == "__main__":
    main()
