"""Session-15 rows, data helper (h15b): held-out set 19, entered from the source text BEFORE any prediction of them.

Re-runnable: it first removes what an earlier run of it added (the sources below and every row of split
'heldout-19'), then adds them again, so running it twice leaves the table as running it once.

The set is a set of documents, fixed before any prediction. This helper was sent for published serving results at a
stated concurrency with fixed lengths, most wanted for dense models' TTFT / TPOT above concurrency 1 and for MoE / MLA
models, on the angles the earlier helpers used least (AMD ROCm blogs, NIM pages of other models, papers' artifacts,
InferenceX-style sweep artifacts other than the table's, CJK community posts). After about seventy minutes of search
(see 'Turned down') TWO documents in two repositories met the requirements and are used by no earlier set:

  (a) a third party's re-run of two InferenceX single-node recipes on a rented two-node H200 cluster (Nebius
      'soperator', Slurm on Kubernetes), committed with, for every run, the benchmark client's result JSON, the
      server's log and a GPU-metrics file: repository heyram74/nebius_sopertors_inferencex_benchmark, pinned at
      4c8d50b. Two sweeps, entered as two sources with their own pinned folder urls: gpt-oss-120b (mxfp4) with vLLM
      0.22.1 at TP 2 / 4 / 8 and concurrency 4-64 (9 runs), and DeepSeek-R1-0528 (block FP8) with SGLang v0.5.12 at
      TP 8 and concurrency 4-64 (5 runs), 1024 / 1024 nominal tokens. 42 rows: output throughput, mean TTFT and mean
      TPOT of each run.
  (b) an experiment report of the cloudrift-ai/emmy repository (the 'golden-bench-2026' MPK lane), pinned at
      a0091e2: its stock-vLLM arm, Qwen3-8B (bf16) with vLLM 0.23.0 on one A100-SXM4-80GB and, in a rerun, on one
      A100-SXM4-40GB, `vllm bench serve` at concurrency 1 with fixed 128 / 512 tokens and ignore-eos. 2 rows: mean
      TPOT (the mean over five fresh-server repeats, as the report prints it).

44 rows from 3 sources in 2 repositories: 27 MoE rows (gpt-oss-120b), 15 MLA rows (DeepSeek-R1), 2 dense rows. It
is short of the brief's most wanted figure (dense TTFT / TPOT above concurrency 1: none) and its MoE / MLA rows are of
one harness (InferenceX's fixed-sequence-length recipes, whose random lengths are drawn between 0.8 and 1.0 of the
nominal ones, as the table's InferenceX sources are). Its judgement: MoE (mxfp4 experts, Marlin kernels) and MLA
(FP8, TP 8, Triton fused MoE) serving on H200 at concurrency 4-64, as measured by someone other than the harness's
owners on another provider's machines; and the batch-1 decode step of a dense 8B model on two A100 memory sizes. A
small clean set was preferred to padding.

- nebius-h200-gptoss120b-vllm0221 (a, the gpt-oss sweep): results/gptoss_h200_vllm22.0_sweep1/ at 4c8d50b (the JSONs
  and logs are those of the first results commit e529706, unchanged since). Quoted settings: the wrapper
  scripts/run_gpt.sh ('Slurm wrapper for InferenceX gptoss_fp4_h200.sh', '#SBATCH --gpus-per-node=8 # full H200 SXM5
  node', '#SBATCH --exclusive', IMAGE="vllm/vllm-openai:v0.22.1", 'export ISL=1024', 'export OSL=1024', 'export
  RANDOM_RANGE_RATIO=0.8', VLLM_MXFP4_USE_MARLIN="1", 'exec /bin/bash /inferencex/benchmarks/single_node/
  fixed_seq_len/gptoss_fp4_h200.sh', TP and CONC edited per run); the InferenceX recipe it runs (SemiAnalysisAI/
  InferenceX benchmarks/single_node/fixed_seq_len/gptoss_fp4_h200.sh, as stored: 'vllm serve $MODEL --config
  config.yaml --gpu-memory-utilization 0.9 --tensor-parallel-size $TP --max-num-seqs $CONC' with 'no-enable-prefix-
  caching: true', 'max-cudagraph-capture-size: 2048', 'max-num-batched-tokens: 8192', max-model-len ISL + OSL + 20,
  and 'run_benchmark_serving ... --backend vllm --input-len "$ISL" --output-len "$OSL" --random-range-ratio
  "$RANDOM_RANGE_RATIO" --num-prompts $(( $CONC * 10 )) --max-concurrency "$CONC"'); each run's server.log prints
  'version 0.22.1', the model /home/models/openai--gpt-oss-120b and "non-default args: {... 'max_model_len': 2068,
  'tensor_parallel_size': <TP>, 'gpu_memory_utilization': 0.9, 'enable_prefix_caching': False,
  'max_num_batched_tokens': 8192, 'max_num_seqs': <CONC>, 'max_cudagraph_capture_size': 2048}", 'kv_cache_dtype=auto',
  'quantization=gpt_oss_mxfp4', "Using 'MARLIN' Mxfp4 MoE backend", 'Using FlashAttention version 3', 'Chunked
  prefill is enabled with max_num_batched_tokens=8192', 'Asynchronous scheduling is enabled'; each run's JSON prints
  "max_concurrency", "num_prompts", "completed", "total_input_tokens", "total_output_tokens", "output_throughput",
  "mean_ttft_ms", "mean_tpot_ms" (copied below as printed, with the run's folder name). The README of the same
  commit: 'gpt_oss120B 8GPU showing very low throughput, interactivity and latency numbers - this might need another
  rerun of the experiments and deepdive'.
  Entered, per run: output_throughput -> output_tokens_per_s (the server's, all GPUs), mean_ttft_ms -> ttft_ms,
  mean_tpot_ms -> itl_ms (the table's mean-TPOT metric), batch = max_concurrency, TP from the log (2, 4 or 8), EP 1,
  DP 1, model gpt-oss-120b (the table's), weights mxfp4 (the native checkpoint), KV bf16 ('auto'), GPU H200-SXM,
  input 1024 / output 1024 (nominal: doubt 1), engine vLLM 0.22.1, mode 'serving'. 9 runs x 3 = 27 rows.
- nebius-h200-dsr1-sglang0512 (a, the DeepSeek-R1 sweep): results/deepseekr1_h200_sglang5.12_sweep1/ at 4c8d50b (its
  run folders keep the gpt-oss wrapper's file name, 'gptoss_fp4_h200_tp8_conc<N>_isl1024_osl1024', while their JSON
  prints "model_id": "/home/models/deepseek-r1" and their log loads DeepseekV3ForCausalLM). Quoted settings: the
  wrapper scripts/run_deepseekr1.sh ('Slurm wrapper for InferenceX gdsr1_fp8_h200.sh', IMAGE=
  "lmsysorg/sglang:v0.5.12-cu130", 'export TP=8', 'export ISL=1024', 'export OSL=1024', 'export
  RANDOM_RANGE_RATIO=0.8', 'export SGLANG_SKIP_WARMUP=true', 'export DEEP_GEMM_DISABLE=1', 'exec /bin/bash
  /inferencex/benchmarks/single_node/fixed_seq_len/dsr1_fp8_h200.sh'); README: 'hf download
  deepseek-ai/DeepSeek-R1-0528 --local-dir /home/models/deepseek-r1'; each run's server.log prints
  'server_args=ServerArgs(... kv_cache_dtype='auto', mem_fraction_static=0.82, max_running_requests=512,
  chunked_prefill_size=32768, tp_size=8, stream_interval=10, dp_size=1, attention_backend='flashinfer',
  speculative_algorithm=None, ep_size=1, moe_a2a_backend='none', disable_radix_cache=True, cuda_graph_max_bs=512,
  enable_dp_attention=False, enable_torch_compile=False ...)' and 'Load weight end. ... type=DeepseekV3ForCausalLM,
  quant=fp8, fmt=e4m3'; JSON fields as above. README: 'Deepseek R1 benchmark numbers closely follow the baseline
  pattern with throughput numbers around 10% lower' (against InferenceX's published results).
  Entered as for the gpt-oss sweep: TP 8, EP 1, DP 1 (no DP attention), model DeepSeek-R1 (the table's; R1-0528 has
  its shape), weights fp8 (the block-FP8 checkpoint, as the table enters it), KV bf16 ('auto'), GPU H200-SXM, 1024 /
  1024 nominal, engine SGLang 0.5.12. 5 runs x 3 = 15 rows.
  Doubts for (a), each written down before any prediction:
  (1) lengths are not fixed: the InferenceX recipes draw each request's input and output length at random between
      0.8 and 1.0 of the nominal 1024 (RANDOM_RANGE_RATIO 0.8). The nominal 1024 / 1024 is entered, as the table's
      InferenceX sources enter theirs; the printed totals are quoted only as a check (e.g. 80 prompts at
      concurrency 8: 'total_input_tokens' 73777, 'total_output_tokens' 74326, the same totals in both sweeps).
  (2) ignore-eos is not printed in the JSONs; the InferenceX client passes it (as this helper knows the harness, not
      re-read at the commit the author cloned in June 2026); that both models produced the same output totals for
      the same prompt sets is consistent with every request running to its drawn length.
  (3) the author flags the gpt-oss 8-GPU runs as suspect ('very low ... might need another rerun'); they are
      entered (their notes say 'author-flagged'), as the document's measurements, with this doubt: if they were
      hurt by a setup fault (the cluster, the NFS-held checkpoint, a node), their errors say little of the model.
  (4) the DeepSeek-R1 sweep is an independent measurement of a configuration the table already holds: InferenceX's
      own baseline of DeepSeek-R1-0528 FP8 on 8 H200 with SGLang v0.5.12, 1k/1k at concurrency 4-64 (source
      ix3288-dsr1-h200-sglang, 'seen-8', fitted). This source judges the same setup measured on other machines
      (the author reports ~10% lower throughput), not a new one.
  (5) the SGLang version is not printed in the logs; v0.5.12 is the wrapper's image tag. The wrapper's
      SGLANG_SKIP_WARMUP and DEEP_GEMM_DISABLE are not visible in the server arguments (skip_server_warmup=False),
      and the logs show a DeepGEMM JIT pre-compile session, so whether DeepGEMM ran the FP8 GEMMs is not known; the
      MoE ran SGLang's Triton fused-MoE kernels with tuning files of another Triton version ('Config file not found
      ... Fallback to triton version 3.5.1'). stream_interval=10 makes the server stream tokens ten at a time
      (the client's ITL is chunked); TTFT and mean TPOT are entered, ITL is not.
  (6) vLLM: the logs print 0.22.1 (the folder says 'vllm22.0' and the enroot image file 'vllm-v0.22.0.sqsh', while
      the wrapper pulls v0.22.1): 0.22.1 entered. MXFP4 MoE runs Marlin kernels (VLLM_MXFP4_USE_MARLIN=1), not the
      recipe-free default; max_num_seqs equals the concurrency; chunked prefill 8192; async scheduling; prefix
      caching off; CUDA graphs on (not fields of the rows beyond what the table carries).
  (7) the client runs 10 x concurrency prompts with no stated warm-up beyond the harness's; output throughput is
      generated tokens over the whole run (ramp-up and tail included); at concurrency 4 only 40 requests.
  (8) the H200 is stated only as 'full H200 SXM5 node' (the wrapper's comment) and by the cluster's topology
      files: H200-SXM entered. Two nodes; each run held one node (--exclusive), runs of the two sweeps overlapped in
      time on the two nodes (the logs' timestamps).
  (9) one author, one cluster, one week: the two sources are not independent in hardware or harness.
  Not entered: median / P99 figures, ITL, E2E latency, total-token throughput (summary.txt's 'Tok/sec' and its
  per-GPU and per-user columns are total-token rates or derived), the gpu_metrics.csv files, and the
  InferenceX_results_snapshot CSVs of the same repository (InferenceX's own published data, a reprint).

- emmy-mpk-a100-qwen3-8b-vllm0230 (b): cloudrift-ai/emmy, experiments/golden-bench-2026/serving_mpk_qwen3_8b_a100/
  RESULTS.md pinned at a0091e2 (with the 40GB rerun section). Quoted settings: 'stock vLLM used version 0.23.0 and
  model revision b968826d...'; 'The stock lane used the HTTP serving path with eight sequential requests per repeat,
  fixed 128-token inputs, fixed 512-token outputs, concurrency one, and EOS ignored. Each repeat started a fresh vLLM
  server.'; 'GPU: NVIDIA A100-SXM4-80GB'; 'The stock server log records enforce_eager=False and
  cudagraph_mode=FULL_AND_PIECEWISE'; 'vLLM reports Mean TPOT in a100x1_stock_r*.txt'; the table 'Measurements':
  '| Stock vLLM | 5 | 10.752 ms/token | 10.74–10.76 ms/token |'; the section 'The 40GB A100 rerun' ('rerun end to end
  on an NVIDIA A100-SXM4-40GB on 2026-09-11'): '| Stock vLLM 0.23.0 | 5 | 13.008 ms/token | 13.00-13.01 | 10.752 |'.
  The lane's recipe.yaml (same directory): 'vllm serve $MODEL --revision $REV --dtype bfloat16 --max-model-len 4096
  --no-enable-prefix-caching' and 'vllm bench serve --model $MODEL ... --dataset-name random --random-input-len 128
  --random-output-len 512 --max-concurrency 1 --num-prompts 8 --ignore-eos --temperature 0 --seed 0'.
  Entered: the two stock-vLLM means -> itl_ms at batch 1, TP 1, model Qwen3-8B (the table's), weights bf16 (stated),
  KV bf16 ('auto'), GPU A100-80GB and A100-40GB, 128 in / 512 out, engine vLLM 0.23.0, mode 'serving'. 2 rows.
  Doubts for (b), each written down before any prediction:
  (10) each value is the report's mean over five repeats of each repeat's mean TPOT (its arithmetic, printed; none
      here); the recipe's own grep prints the median TPOT while the report says the mean was read: entered as the
      mean TPOT the report names (at concurrency 1 with fixed lengths the two are close).
  (11) the same repository as set 13's source emmy822-qwen3-30b-h200-b1 (another experiment, model, GPU and
      document); one operator and harness.
  (12) the 40GB row is a rerun of 2026-09-11 on another host; the source's date is entered as 2026-08 (the 80GB
      run); vLLM 0.23.0 defaults otherwise (V1 engine, chunked prefill, CUDA graphs captured, prefix caching off);
      HTTP, tokenisation and streaming are in the client-side timing.
  Not entered: the Mirage lanes (not an engine of the table), the normalized ratios, the MPK paper's figures.

Turned down, before any prediction (each read as far as the stored copy allows; about 50 candidates):
- ROCm blogs: ROCm/rocm-blogs (the fetchable snapshot ends 2024-10 with no serving table; the file index lists
  newer blog folders, but searches found no post among them with a serving table at stated concurrency and fixed
  lengths), rocm.blogs.amd.com 'Best practices ... MI300X' and DeepSeekR1-Part2 (turned down before: offline runs,
  charts), chinmayhebbal.com gpt-oss-120b on MI300X (turned down before), Oracle / substratus Llama 3.1 405B MI300X
  (a source, or ShareGPT), amd.com developer 'vLLM x AMD' part 4 (no results table), dev.to Qwen2-VL-72B on MI300X
  (a vision model the table does not read), evokernel-specs cases (bot reprints), the Vultr ROCm / CUDA
  'Concurrency Tuning' pages (turned down before: MI325X lengths, Nemotron models), a gfx1151 Radeon
  Qwen3-30B-A3B report (a GPU the catalog lacks), ROCm documentation 'vLLM inference performance testing' copies
  in roboalchemist/llm-code-docs and steqeq/0000 (templated pages of AMD's docker benchmarks, near the reserved
  ROCm vLLM docker documentation: not read further).
- InferenceX-style artifacts: the InferenceX_results_snapshot CSVs in the repository used (InferenceX's own
  published data), leoshan/inferencex-scraper and biannan79/inferencex-scraper (scrapers of InferenceX and
  OpenRouter, GLM-5 reports), sskim-ai/InferenceX_analysis (AgentX trace analysis), ajith-sirra-amd/
  InferenceMAX_Rocm_Team (Kimi-K3 / DCP notes, models the table does not read), danielhua23/
  amdgpu_inferencemax_bounty (competition scripts, no results; its B200 baseline sits in a binary and a leaderboard),
  seungrokj/inferencemax_localrun (scripts only), flymj/InferenceMAX (a modelling dashboard), jyothisambolu/
  InferenceMAX (server commands, no results read), faradawn/InferenceMAX internal_cluster.md (one block, model and
  GPU not stated beside it), vngcloud/InferenceX (no results), InferenceX #1276 (MiniMax MI355X: total-token
  throughput per GPU only).
- cloudrift-ai/emmy's other reports: Meta-Llama-3.1-8B on V100 (a GPU the catalog lacks), Qwen3-30B-A3B serving
  (the run set 13 entered from #822), GLM-5.3-Flash / Ornith / Qwen3.8 / MiMo / Ministral-3 / gemma-4 (models the
  table does not read).
- result blocks found by exact-string search (no repository or path given, or settings not beside them): an
  InternVL3-8B ShareGPT block (a vision model, ShareGPT), 'monday-burst' / 'monday-peak' blocks (request rate 1.5,
  range ratio 0.9), an OpenVINO Qwen3.8 block (not a GPU), a DeepSeek-R1-Distill-Qwen-32B 'xxx' template, a
  sglang-oai nine-concurrency sweep (variable long inputs, model and GPU not stated), sgl-jax DeepSeek blocks (TPU),
  Ministral-3 / Qwen3-Coder-Next cookbook blocks (models the table does not read), a DeepSeek-R1-0528 block of a
  mintlify mirror of the SGLang cookbook (radixarkai.mintlify.app: pages the table uses), a Qwen3-235B-A22B cookbook
  block (not opened beyond the search excerpt, as a precaution against the reserved SGLang B200 runs of that model).
- pages: the Jetson Thor Qwen3 posts (a GPU the catalog lacks), cnblogs aibi1 (request rate), kvcached #331
  (request rates), johnmusgrave.com (stored copy still ends before its results; its result files were not found),
  Korean guides thakicloud / youngju.dev / wiki.loliot.net (no measurements), a Hugging Face dataset
  JunyanYang/test_Dataset (GPU not stated, provenance unknown), lhl's Llama 3.3 70B tokens-per-joule gist
  (ShareGPT, multi-step scheduling), the GPUStack mirrors on code.smartscf.cn (turned down before: ShareGPT or all
  prompts at once), NIM benchmarking 1.0.0 (the table's nim-bench) and the Nemotron safety-guard NIM page (a model
  the table does not read), dzhsurf's DeepSeek 8xH100 guide (as set 18: a precaution against the reserved
  QuixiAI card).
- threads: lmdeploy #2019 (ShareGPT at request rate 2, A800), tt-inference-server #248 (Tenstorrent n300), vLLM
  #42497 and #15322 (turned down before), bionemo-recipes #1689 (training).
No reserved document was opened or used: search results that were excerpts of the TensorRT-LLM perf-overview and of
summaries of the ROCm/vllm dev-docker README ('vllm FP8 Latency and Throughput benchmarks on AMD MI300x', 'vLLM
benchmarks on AMD Instinct MI300X quickstart ... summarized from .../docs/dev-docker/README.md') were not opened:
reserved. No dstack DeepSeek-R1 benchmark, no SGLang B200 gist or cookbook B200 page of Qwen3-235B / gpt-oss-120b
(the Qwen3-235B cookbook block above was not opened), no QuixiAI model card.

Every value is a number a document printed (copied below as the JSON fields and the report's table cells); no
arithmetic is done on any value, and no length is derived (the lengths are the recipes' nominal ISL / OSL and the
lane's fixed 128 / 512).

Run: python reports/gpu-time/add_session15_set19_rows.py
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from table_entry import enter  # noqa: E402

SPLIT = "heldout-19"
NEB = "https://github.com/heyram74/nebius_sopertors_inferencex_benchmark/tree/4c8d50bdd805b82b4358e2477dd0bb42e34f8d91"
GPTOSS = "nebius-h200-gptoss120b-vllm0221"
DSR1 = "nebius-h200-dsr1-sglang0512"
EMMY = "emmy-mpk-a100-qwen3-8b-vllm0230"

S = {
 GPTOSS: dict(url=f"{NEB}/results/gptoss_h200_vllm22.0_sweep1",
   what=("A third party's re-run of InferenceX's gptoss_fp4_h200 recipe on a rented Nebius H200 node (Slurm on "
         "Kubernetes), committed per run as the benchmark client's result JSON and the server log: gpt-oss-120b "
         "(mxfp4) with vLLM 0.22.1, TP 2 / 4 / 8, concurrency 4-64, 1024 / 1024 nominal tokens (InferenceX random "
         "lengths, range ratio 0.8); 9 runs, 27 figures (output throughput, mean TTFT, mean TPOT)"),
   setup=("vllm serve (vllm/vllm-openai:v0.22.1, the log prints version 0.22.1) --tensor-parallel-size TP "
          "--max-num-seqs CONC --gpu-memory-utilization 0.9, no prefix caching, max-num-batched-tokens 8192, "
          "max-model-len 2068, VLLM_MXFP4_USE_MARLIN=1 (Marlin MXFP4 MoE), FlashAttention 3, KV auto; client "
          "InferenceX run_benchmark_serving --backend vllm, random ISL 1024 / OSL 1024 with range ratio 0.8, "
          "10 x CONC prompts at --max-concurrency CONC. output_throughput -> output_tokens_per_s, mean_ttft_ms -> "
          "ttft_ms, mean_tpot_ms -> itl_ms; nominal lengths entered. The author flags the TP 8 runs as possibly "
          "faulty (README)."),
   engine="vLLM 0.22.1", engine_family="vllm", engine_version="0.22.1", klass="moe", date="2026-06"),
 DSR1: dict(url=f"{NEB}/results/deepseekr1_h200_sglang5.12_sweep1",
   what=("The same third party's re-run of InferenceX's dsr1_fp8_h200 recipe on the same Nebius H200 cluster: "
         "DeepSeek-R1-0528 (block FP8) with SGLang v0.5.12, TP 8, EP 1, concurrency 4-64, 1024 / 1024 nominal "
         "tokens (range ratio 0.8); 5 runs, 15 figures (output throughput, mean TTFT, mean TPOT)"),
   setup=("SGLang (lmsysorg/sglang:v0.5.12-cu130, the wrapper's image; version not printed in the log) with "
          "tp_size 8, ep_size 1, dp_size 1, no DP attention, flashinfer attention, radix cache off, "
          "mem_fraction_static 0.82, chunked_prefill_size 32768, stream_interval 10, KV auto, CUDA graphs to batch "
          "512; Triton fused MoE; client as for the gpt-oss sweep. output_throughput -> output_tokens_per_s, "
          "mean_ttft_ms -> ttft_ms, mean_tpot_ms -> itl_ms; nominal lengths entered. Same setup as InferenceX's own "
          "baseline (source ix3288-dsr1-h200-sglang), measured on other machines."),
   engine="SGLang v0.5.12", engine_family="sglang", engine_version="0.5.12", klass="mla", date="2026-06"),
 EMMY: dict(url=("https://github.com/cloudrift-ai/emmy/blob/a0091e22aa6500ab31b6450db5b79236258ac6f0/experiments/"
                 "golden-bench-2026/serving_mpk_qwen3_8b_a100/RESULTS.md"),
   what=("cloudrift-ai/emmy experiment report 'MPK Qwen3-8B on A100' (golden-bench-2026, a0091e2): its stock-vLLM "
         "arm, Qwen3-8B bf16 with vLLM 0.23.0 on one A100-SXM4-80GB (2026-08-14) and, in a rerun, one "
         "A100-SXM4-40GB (2026-09-11), vllm bench serve at concurrency 1, 128 / 512 fixed tokens, ignore-eos, "
         "8 requests per repeat, 5 fresh-server repeats; 2 figures (mean TPOT, mean of the repeats)"),
   setup=("vllm serve Qwen/Qwen3-8B --dtype bfloat16 --max-model-len 4096 --no-enable-prefix-caching (vLLM 0.23.0, "
          "CUDA graphs FULL_AND_PIECEWISE); vllm bench serve --dataset-name random --random-input-len 128 "
          "--random-output-len 512 --max-concurrency 1 --num-prompts 8 --ignore-eos --temperature 0 --seed 0. "
          "The report's 'Stock vLLM' mean ms/token (mean of five repeats' Mean TPOT) -> itl_ms at batch 1."),
   engine="vLLM 0.23.0", engine_family="vllm", engine_version="0.23.0", klass="dense", date="2026-08"),
}

# each run's result JSON, as printed: (run folder, "max_concurrency", "num_prompts", "completed",
# "total_input_tokens", "total_output_tokens", "output_throughput", "mean_ttft_ms", "mean_tpot_ms"); TP from the
# folder name and the run's server.log
RUNS = {
 GPTOSS: (
    ("gptoss_fp4_h200_tp2_conc64_isl1024_osl1024", 64, 640, 640, 590227, 589961, 4194.215645090736, 269.8182583396374, 14.62601398581715),
    ("gptoss_fp4_h200_tp4_conc4_isl1024_osl1024", 4, 40, 40, 37068, 36709, 532.6801497559001, 197.7313089344534, 7.072374212932666),
    ("gptoss_fp4_h200_tp4_conc64_isl1024_osl1024", 64, 640, 640, 590227, 589961, 4558.7024217017415, 338.23926388213295, 13.26849944984812),
    ("gptoss_fp4_h200_tp4_conc8_isl1024_osl1024", 8, 80, 80, 73777, 74326, 995.4631233236064, 244.8508606335963, 7.600451738803064),
    ("gptoss_fp4_h200_tp8_conc16_isl1024_osl1024", 16, 160, 160, 148103, 146543, 1108.9250981663968, 422.88456969254185, 13.638365671655624),
    ("gptoss_fp4_h200_tp8_conc32_isl1024_osl1024", 32, 320, 320, 294646, 295581, 1931.7654179607518, 493.8171083958878, 15.5568466631802),
    ("gptoss_fp4_h200_tp8_conc4_isl1024_osl1024", 4, 40, 40, 37068, 36709, 329.1403309135025, 156.89725432457635, 11.580102540185097),
    ("gptoss_fp4_h200_tp8_conc64_isl1024_osl1024", 64, 640, 640, 590227, 589961, 3020.600465529602, 595.484776516787, 19.88140895097574),
    ("gptoss_fp4_h200_tp8_conc8_isl1024_osl1024", 8, 80, 80, 73777, 74326, 613.4810795953898, 368.4875322978769, 12.344595722874303),
 ),
 DSR1: (
    ("gptoss_fp4_h200_tp8_conc16_isl1024_osl1024", 16, 160, 160, 148103, 146543, 864.9263061719121, 281.6915315305778, 17.824905996036524),
    ("gptoss_fp4_h200_tp8_conc32_isl1024_osl1024", 32, 320, 320, 294646, 295581, 1275.5621735649408, 416.47974656225415, 24.07479942497645),
    ("gptoss_fp4_h200_tp8_conc4_isl1024_osl1024", 4, 40, 40, 37068, 36709, 291.5045688221359, 259.59941659930337, 13.01493657941998),
    ("gptoss_fp4_h200_tp8_conc64_isl1024_osl1024", 64, 640, 640, 590227, 589961, 1854.9102169629273, 527.8128499261356, 33.13198301012264),
    ("gptoss_fp4_h200_tp8_conc8_isl1024_osl1024", 8, 80, 80, 73777, 74326, 518.5867989905205, 276.4784407816478, 14.803597475687996),
 ),
}
MODEL = {GPTOSS: ("gpt-oss-120b", "mxfp4", "vLLM 0.22.1"), DSR1: ("DeepSeek-R1", "fp8", "SGLang v0.5.12")}
METRICS = (("output_throughput", 6, "output_tokens_per_s", "tokens/s"), ("mean_ttft_ms", 7, "ttft_ms", "ms"),
           ("mean_tpot_ms", 8, "itl_ms", "ms"))

# RESULTS.md at a0091e2, the stock-vLLM lines as printed: (GPU, the report's line)
EMMY_LINES = (("A100-80GB", "| Stock vLLM | 5 | 10.752 ms/token | 10.74–10.76 ms/token |", 10.752),
              ("A100-40GB", "| Stock vLLM 0.23.0 | 5 | 13.008 ms/token | 13.00-13.01 | 10.752 |", 13.008))


def _row(src, model, gpu, tp, weights, c, inp, outl, metric, value, unit, note) -> dict:
    rid = f"{src}-{model}-{gpu}-tp{tp}-{weights}-c{c}-{inp}-{outl}-{metric}"
    return dict(id=rid, source=src, gpu=gpu, tp=tp, model=model, weights=weights, kv="bf16", batch=c, mode="serving",
                input_len=inp, output_len=outl, metric=metric, value=value, unit=unit, note=note,
                expert_parallel_size=1, data_parallel_size=1, enable_dp_attention=False, split=SPLIT)


def nebius_rows() -> list[dict]:
    out = []
    for src, runs in RUNS.items():
        model, weights, engine = MODEL[src]
        for run in runs:
            folder, conc = run[0], run[1]
            tp = int(folder.split("_tp")[1].split("_")[0])
            assert folder == f"gptoss_fp4_h200_tp{tp}_conc{conc}_isl1024_osl1024" and run[2] == run[3] == 10 * conc
            flag = ("; author-flagged: the README calls the 8-GPU gpt-oss runs 'very low' and possibly in need of a "
                    "rerun" if src == GPTOSS and tp == 8 else "")
            for field, i, metric, unit in METRICS:
                note = (f"run {folder}: \"{field}\": {run[i]!r} as printed ({model} {weights} on {tp} x H200, "
                        f"{engine}, TP {tp}, InferenceX fixed_seq_len recipe, max_concurrency {conc}, "
                        f"{run[2]} prompts, ISL / OSL 1024 nominal with range ratio 0.8; totals {run[4]} in / "
                        f"{run[5]} out{flag})")
                out.append(_row(src, model, "H200-SXM", tp, weights, conc, 1024, 1024, metric, run[i], unit, note))
    return out


def emmy_rows() -> list[dict]:
    out = []
    for gpu, line, value in EMMY_LINES:
        assert f"{value:.3f} ms/token" in line
        note = (f"'{line}' as printed (stock vLLM 0.23.0, Qwen3-8B bf16 on one {gpu}, vllm bench serve at "
                f"concurrency 1, 128 in / 512 out fixed with --ignore-eos, 8 requests per repeat, mean over 5 "
                f"fresh-server repeats of Mean TPOT)")
        out.append(_row(EMMY, "Qwen3-8B", gpu, 1, "bf16", 1, 128, 512, "itl_ms", value, "ms", note))
    return out


def rows() -> list[dict]:
    return nebius_rows() + emmy_rows()


def main() -> None:
    sentence = ("Rows with split 'heldout-19' were added in session 15 (a data helper) from documents no earlier "
                "session used (heyram74/nebius_sopertors_inferencex_benchmark: a third party's re-run of two "
                "InferenceX recipes on Nebius H200, gpt-oss-120b with vLLM 0.22.1 and DeepSeek-R1-0528 with SGLang "
                "v0.5.12 at concurrency 4-64; and cloudrift-ai/emmy's MPK experiment report: stock vLLM 0.23.0 with "
                "Qwen3-8B on A100 80GB / 40GB at concurrency 1; see reports/gpu-time/add_session15_set19_rows.py), "
                "chosen and entered before any prediction of them, and committed with the predictions of the model "
                "as it stood (reports/gpu-time/frozen/heldout-19_before.json): a sealed split, never fitted on, left "
                "out of every report until the final evaluation.")
    enter(SPLIT, S, rows(), 15, sentence)


if __name__ == "__main__":
    main()
