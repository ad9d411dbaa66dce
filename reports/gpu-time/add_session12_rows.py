"""Session-12 rows (h28d9): held-out set 9, entered from the source text BEFORE any prediction of them.

Re-runnable: it first removes what an earlier run of it added (the sources below and every row of split
'heldout-9'), then adds them again, so running it twice leaves the table as running it once.

The set is a set of documents, fixed before any prediction: documents this session's searches found that no
earlier set uses (no url of the table's sources, no benchmark run another source reprints, no reserved document or
edition of one), that state for each figure the GPU, its count, the parallelism, the concurrency and the request
lengths, and whose model the table can read (DeepSeek-R1, MiniMax-M2, Mistral-7B-Instruct-v0.3, gemma-3-4b-it,
Qwen2.5-7B-Instruct, Llama-3.1-70B from the catalog). It is smaller than the brief's aim (6 documents, 75 rows, 39 of
them dense): few documents found met every requirement; a small clean set was preferred to padding it with doubtful
ones. A second helper of session 12 extended the set with the two tt-inference-server GPU reference threads
below (dense TPOT at concurrency 1), again before any prediction of them; its search for dense documents with TTFT /
throughput at a stated concurrency found none that could be read whole (see 'Also turned down' at the end). A third
helper, briefed to enter the SGLang cookbook's Llama 3.1 page with its lengths derived as session 7 derived them,
added it (18 dense rows: TTFT, TPOT and output throughput at concurrency 1 to 100), again before any prediction;
its search for further dense documents found none it could read whole (see the last paragraph).

- SemiAnalysisAI/InferenceX pull request #3363 ('[Klaud Cold] Update dsr1-fp8-b200-sglang SGLang image to
  v0.5.20-cu130'): the description's baseline table (2026-05-22, image lmsysorg/sglang:v0.5.12-cu130) of
  DeepSeek-R1-0528 FP8 on B200, aggregated, no speculative decoding, TP 4 or 8, EP 1. The stored copy of the thread
  ends after the table's 13th line (set 8 turned the document down for that reason); entered here are the 10 of
  those 13 lines whose figures are all printed (3 lines print N/A), each an exact point of the baseline run. Per
  point: Output tok/s/GPU -> output_tokens_per_s_per_gpu, TTFT ms -> ttft_ms, TPOT ms -> itl_ms (mean latency);
  lengths nominal (1k = 1024, 8k = 8192), as set 8 entered InferenceX.
- SemiAnalysisAI/InferenceX pull request #832 (MiniMax-M2.5 FP8 on H100 with vLLM, image vllm/vllm-openai:v0.16.0
  as the description states): the bot's results comment of 2026-03-02 for 1k/1k at concurrency 4, two
  configurations, TP 8 / EP 8 and TP 4 / EP 4: output throughput per GPU, mean TTFT, mean TPOT. The table reads
  MiniMax-M2.5 as MiniMax-M2 (same architecture, as its models entry says).
- mushfiqrahman.dev, 'Benchmarking Mistral-7B on RTX 4090 with vLLM: concurrency, latency and capacity planning':
  mistralai/Mistral-7B-Instruct-v0.3 on one RTX 4090 served by vLLM, 256 input / 128 output tokens,
  300 prompts, maximum concurrency 4, 8, 16, 32, 48: output token throughput -> output_tokens_per_s and mean TTFT ->
  ttft_ms (the sweep sends the 300 prompts at an unbounded rate, capped by the maximum concurrency). Doubtful in
  two ways, entered anyway: the vLLM version is not stated (none entered, nor a date) and the weights precision is
  not stated (bf16 entered, the checkpoint's dtype and vLLM's default).
- tenstorrent/tt-inference-server issue #521 ('[Model Readiness Support]: gemma-3-4b-it'), comment of 2025-09-03:
  'Performance Benchmark Sweeps for gemma-3-4b-it on A100', a GPU reference run of the project's benchmark sweep
  (the harness and report format of the GPU reference tables session 5 entered from issues #143 / #340: vLLM OpenAI
  server, version not stated), one request at a time. Entered: the TPOT of the 6 lines whose figures the stored copy
  prints whole (ISL 128 / OSL 128 and 1024, ISL 1024-4096 / OSL 128) -> itl_ms at batch 1, TP 1. As for session 5's
  rows of this harness, TTFT is not used (the project's issue #190 reports its client adds latency to TTFT). Doubtful:
  the A100 variant is not stated (A100-80GB entered, as session 5 did for #340), nor the precision (bf16 entered).
- tenstorrent/tt-inference-server issue #125 ('Qwen2.5 7B eval runs'), comment of 2025-03-28: 'Performance
  Benchmarks for Qwen2.5-7B-Instruct on 4090', same harness, one request at a time: the TPOT of the 5 lines the stored
  copy prints whole (ISL 128 / OSL 128 and 1024, ISL 1024-3072 / OSL 128) -> itl_ms at batch 1 on one RTX 4090 (TP
  1). Doubtful: the comment's metadata block names the device 'n300' and Tenstorrent commits while its heading and
  table title say 4090 (entered as the 4090 run the headings name); precision not stated (bf16 entered); TTFT not used
  (as above).
- sgl-project/sgl-cookbook, the SGLang cookbook's Llama 3.1 page (docs/autoregressive/Llama/Llama3.1.md, pinned at
  7b5bd9c, the commit session 7 pinned the other cookbook pages at; the page's benchmark section is unchanged since it
  was added on 2026-01-14), entered by a third helper of session 12 before any prediction of it: section 5.1 'Speed
  Benchmark', Llama-3.1-70B (the base model, bf16) at TP 8 on 8 A100 with SGLang 0.5.6, six bench_serving result
  blocks, 1000/1000 nominal at max concurrency 1 / 16 / 100 and 8000/1000 nominal at 1 / 16 / 64: mean TTFT ->
  ttft_ms, mean TPOT -> itl_ms, output token throughput -> output_tokens_per_s (batch = the max concurrency). The
  random dataset is run without --random-range-ratio, so each request's lengths are drawn below the nominal ones:
  the rows' lengths are derived as session 7 derived them for the other cookbook pages, each run's printed 'Total
  input tokens' / 'Total generated tokens' over its 'Successful requests', rounded (the only arithmetic in this
  script; the measured values are as printed). No cookbook page of this model was a source before (the table's
  cookbook sources are the Qwen3, DeepSeek, Llama 4, GPT-OSS, Kimi-K2, GLM-4.6 and MiniMax pages). Doubts: the page
  says 'NVIDIA A100 GPU (8x)' without the memory size (A100-80GB entered: the cookbook repository's own hardware
  tables, its .claude/skills add-model and review-pr notes, give the A100 as 80GB; the 70B bf16 weights at TP 8,
  about 18 GB a GPU, fit the 40GB part too, so the page itself does not decide it); the prose names the ShareGPT
  dataset while every printed command and result block uses the random dataset (the blocks are entered as the random
  runs they print); the benchmark commands are printed as `sglang serve ...` with bench_serving flags (a slip of the
  page, taken as bench_serving, whose output the blocks are); the blocks' token totals equal those of the other
  cookbook pages' random runs at the same nominal lengths (the benchmark's fixed seed). Median ITL (which session 7
  entered as decode_step_ms) is not entered: set 9 is to judge TTFT, TPOT and throughput.

Not used (decided before predicting): AccelMark result files left over by set 8 (the H100 suite C directory holds
only offline results, and the harness is the one set 8 used); a GPU-concurrency study whose stated concurrency is
not the number of requests in flight; LambdaLabsML/vllm-benchmark (2024, all prompts sent at once, ShareGPT
lengths); systalyze benchmarks (request rates, no concurrency); a benchmark repository that states neither request
lengths nor TP; documentation pages that do not name the GPU; a blog whose stored copy lacks its results table;
ML.ENERGY leaderboard tasks other than plain chat (fill-in-the-middle, multimodal: lengths not published);
tt-inference-server threads (Tenstorrent or earlier sets' documents, or models the table does not read);
ROCm/ATOM #409 (ATOM engine, total throughput only); InferenceX #1531 (a metric without a label), #2949 and #3010
(baselines of runs earlier sets entered, or values not shown), InferenceX threads of NVFP4 / MTP / AgentX /
disaggregated runs or whose tables print only N/A, and the InferenceX threads earlier sets use (#828, #870, #890,
#1061, #1092, #3175, #3288, #3317, #3318); the SGLang cookbook benchmark pages (models the catalog does not have,
total throughput only); secondary pages that reprint or synthesize others' numbers; an earlier edition of a
reserved AMD dev-docker table; an issue that reprints TensorRT-LLM's performance tables (editions of reserved
documents); vLLM / SGLang pull-request result blocks with ShareGPT lengths (the row's lengths would need
arithmetic) or no GPU / model stated. Also turned down, before predicting: the Vultr inference cookbook's MI325X
pages (Llama-3.1-405B; the request lengths of each concurrency sweep are not stated beside it, a throughput column
is not said to be output or total, and the KV cache is fp8); dennislee22/vLLM-benchmarking (models the catalog does
not read, all prompts sent at once, prefix caching on, gpt-oss-120b only across nodes); the GPUStack gpt-oss pages
(as set 7 found: no concurrency); vLLM / SGLang kernel pull requests whose before / after blocks could only be read
in fragments here (#42497 on H800 and H200 without saying which block is which, sglang #7621 / #8731 / #9278 /
#32994, vllm #37646), where a partly read table risks figures put on the wrong setting; a single-configuration
note of Qwen3-30B-A3B on H200 with no engine version or author; an SGLang on Modal thread whose lengths are only
derivable from token totals (arithmetic). No reserved document was read or used (a TensorRT-LLM performance
overview appeared once as a search excerpt and was not opened).

Also turned down by the second helper, before predicting (each read as far as the stored copy allows): johnmusgrave.com
'vLLM throughput-latency sweep on NVIDIA A100' (Llama-3.1-8B, vLLM 0.23.0, 1024/128, C=1-64: the stored copy ends
before its results table); pavlokhmel.com 'LLM inferencing benchmark with vLLM benchmark script' (RTX 4090 / A100 /
H100 / H200, gemma-3-4b-it, Llama-3.1-8B, Mistral-7B: stored copy ends before the results); runinfra.ai's vLLM /
SGLang / TensorRT-LLM comparison (Llama-3.1-8B on H100 / L40S: only the summary is stored and its raw-data repository
is not in the store); spheron.network's Llama-3.3-70B FP8 single-H100 engine comparison and its reprint on cloudai.pt
(prompts of 'average' length, rounded figures, and a one-request throughput above what one H100's memory bandwidth
allows for 70 GB of weights: provenance doubtful); bizrockman.github.io AIInferenceBenchmark (server throughput
derived from per-request rates); inferenceengineering.tech / srawlin/vllm-vs-sglang-performance-benchmark
(DeepSeek-R1-Distill-Llama-8B, output lengths not stated, a prefix-caching server); staru09/llm_infra_bench and
Cloud-Linuxer/qwen-8b (ShareGPT or short free-form prompts, lengths not fixed); ngkore/docs 'Benchmarking LLModels
with vLLM' (GPU not named, all requests sent at once); yobitelcomm/bench envelopes (TP and lengths not stated);
diogoaav/vllm-benchmarking (concurrency and lengths blank in its summary, GPU not stated); databasemart A40 / RTX 4090
pages (A40 not in the catalog, output lengths not fixed); GPUStack's 'impact of quantization' reference page (1000
ShareGPT prompts at once, no concurrency); the Vultr CUDA cookbook's B200 concurrency tables (Nemotron models the
catalog does not have); NVIDIA NIM 'performance-tables' pages (reprints of the NIM performance page an earlier set
uses); a Kimi-K2.6 4-replica GKE report (load balanced over 4 replicas, fp8 KV); vLLM performance-benchmark CI builds
9513 / 9523 / 9555 (9513 repeats 9515's H200 setup; 9523 / 9555 print only end-to-end latency in ms, which the table
holds in seconds, a unit change on the value, and use 2024 vLLM); the vLLM recipes (their benchmark output is a
template of 'xxx'); the SGLang cookbook's Llama 3.1 page (sgl-cookbook docs/autoregressive/Llama/Llama3.1.md:
Llama-3.1-70B, TP 8 on 8 A100 of unstated memory, SGLang 0.5.6, six bench_serving blocks at concurrency 1 / 16 /
100 and 1 / 16 / 64: the random dataset is run without --random-range-ratio, so each request's lengths are drawn below
the nominal 1000 / 8000 in and 1000 out, and the printed totals show means far from them; the rows' lengths would be
the totals over the requests, arithmetic that set 7 did for other cookbook pages and this set did not; the third helper,
briefed to enter it with lengths derived that way, entered it: see above);
tt-inference-server threads of Tenstorrent hardware or of models the catalog lacks (Qwen3-4B,
Llama-3.2-90B-Vision).

Also turned down by the third helper, before predicting: the other SGLang cookbook pages with dense models (Llama
3.3-70B: commands only, no results; Ministral-3, Devstral-2, Gemma 4: models the table does not read; the Qwen3 and
GPT-OSS pages are reserved in their B200 editions and used by set 6 anyway, and were not opened); GPUStack's Qwen3-14B
/ Qwen3-32B pages (all prompts sent at once, no concurrency, as sets 7 and 8 found) and Qwen3.5 pages (a model the
table does not read); the vLLM recipes' dense pages (Llama 3.3-70B: a template of 'xxx'); ROCm/rocm-blogs 'Best
practices for competitive inference optimization on AMD Instinct MI300X' (offline throughput at unbounded load and
static-batch end-to-end latency only, serving curves as charts; its H100 columns are TensorRT-LLM runs measured 'with
the same method as TRT-LLM published throughput data', too near the reserved TensorRT-LLM performance pages); dstack's
Llama 3.1 405B MI300X posts (amd-mi300x-inference-benchmark, h100-mi300x-inference-benchmark: results as charts,
request rates or all prompts at once; dstack's DeepSeek-R1 benchmark is reserved and was not opened); a Moreh
technical report of Llama 3.3 70B on MI300X (the stored copy gives its opening only); Microsoft Azure HPC blogs of
Llama 3.1 8B with the Hugging Face inference-benchmarker (ShareGPT-like profiles, lengths not fixed) and Ori's
BeFOri blog (its own harness; only the opening could be read); vLLM issue #13412 (Llama-3.3-70B on 8 H200 with
--num-scheduler-steps 10 and chunked prefill off, 1-token outputs, settings the time model has no input for), vLLM
issue #42484 (an RFC whose figures were edited across providers and server states), QwenLM/Qwen3 #1536 (the run of
vLLM #20469 that set 4 uses, reprinted); the SGLang InstantTensor pull requests (#19830, #20335, #27450, #27800,
#28391, #28506: one Qwen2.5-7B on L40 block reprinted six times, SGLang version not stated, 32-token outputs); sglang
#7151 (Qwen3-32B FP8 on L20, a GPU the catalog lacks); intel/llm-scaler #285 (Intel B60); Tenstorrent-hardware
reports of tt-inference-server.

Every value is a number the document printed; no arithmetic is done on any value. The one derived quantity is the
request lengths of the cookbook Llama 3.1 rows (printed token totals over the printed request count, rounded).

Run: python reports/gpu-time/add_session12_rows.py
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from table_entry import IX_METRICS, enter, serving_row  # noqa: E402

SPLIT = "heldout-9"
COOKBOOK = "https://github.com/sgl-project/sgl-cookbook/blob/7b5bd9c05e3d86da5161ac2be9b91c19a34bf49d/"

S = {
 "ix3363-dsr1-b200-sglang": dict(url="https://github.com/SemiAnalysisAI/InferenceX/pull/3363",
   what=("InferenceX PR #3363 '[Klaud Cold] Update dsr1-fp8-b200-sglang SGLang image to v0.5.20-cu130', description's "
         "baseline table (2026-05-22, image lmsysorg/sglang:v0.5.12-cu130): DeepSeek-R1-0528 FP8 on B200, TP 4 or 8, "
         "EP 1; the 10 fully printed points of the 13 lines in the stored copy"),
   setup=("InferenceX dsr1-fp8-b200-sglang (aggregated, no speculative decoding), lmsysorg/sglang:v0.5.12-cu130, each "
          "point's TP / EP / concurrency / ISL-OSL as its label prints them; block-fp8 checkpoint, KV bf16 entered (not "
          "stated); mean latencies ('Mean latency'); output tokens/s per GPU as printed. The stored copy ends after "
          "the table's 13th line; 3 of those lines print N/A (not entered)."),
   engine="SGLang v0.5.12", engine_family="sglang", engine_version="0.5.12", klass="mla", date="2026-05"),
 "ix832-minimax-h100-vllm": dict(url="https://github.com/SemiAnalysisAI/InferenceX/pull/832",
   what=("InferenceX PR #832, MiniMax-M2.5 FP8 (MiniMaxAI/MiniMax-M2.5) on H100 with vLLM: the results comment of "
         "2026-03-02, 1k/1k at concurrency 4, TP 8 / EP 8 and TP 4 / EP 4"),
   setup=("InferenceX benchmark, image vllm/vllm-openai:v0.16.0 (as the PR description states), expert parallelism "
          "equal to TP as each configuration prints; fp8 checkpoint, KV bf16 entered (not stated); mean TTFT / mean "
          "TPOT; output throughput per GPU as printed; lengths nominal (1k = 1024)."),
   engine="vLLM v0.16.0", engine_family="vllm", engine_version="0.16.0", klass="moe", date="2026-03"),
 "mrahman-mistral7b-4090-vllm": dict(
   url=("https://mushfiqrahman.dev/benchmarking-mistral-7b-on-rtx-4090-vllm-concurrency-latency-and-capacity-"
        "planning/"),
   what=("Blog post benchmarking mistralai/Mistral-7B-Instruct-v0.3 on one RTX 4090 served by vLLM: "
         "256 input / 128 output tokens, 300 prompts, maximum concurrency 4 / 8 / 16 / 32 / 48; output token "
         "throughput and mean TTFT per concurrency"),
   setup=("vLLM OpenAI-compatible server (tokenizer-mode mistral), load client settings as printed (300 prompts, "
          "unbounded request rate, a maximum concurrency), one GPU (TP 1); vLLM version not stated; weights "
          "precision not stated (bf16 entered: the checkpoint's dtype, vLLM's default); KV bf16 entered (not stated); "
          "batch = the stated maximum concurrency."),
   engine="vLLM (version not stated)", engine_family="vllm", klass="dense"),  # no version or date printed
 "tt521-gemma3-4b-a100": dict(url="https://github.com/tenstorrent/tt-inference-server/issues/521",
   what=("tt-inference-server issue #521 ('[Model Readiness Support]: gemma-3-4b-it'), comment of 2025-09-03: "
         "'Performance Benchmark Sweeps for gemma-3-4b-it on A100', GPU reference run, one request at a time"),
   setup=("GPU reference run of tt-inference-server's benchmark sweep (the same report format and harness as the "
          "GPU reference tables session 5 entered from issues #143 / #340: vLLM OpenAI server; version not stated, "
          "nor the engine in the part read), one A100 (variant not stated; A100-80GB entered, as session 5 did for "
          "#340), TP 1 (one GPU), bf16 entered (not stated; the checkpoint's dtype), concurrency 1; TPOT means of the "
          "6 fully read lines (ISL 128-4096). TTFT not used, as for sessions 5's tt-inference-server rows (the "
          "harness's TTFT is not a clean first-token time). Lines after ISL 4096 not read whole: not entered."),
   engine="vLLM (version not stated, 2025)", engine_family="vllm", klass="dense", date="2025-09"),
 "tt125-qwen25-7b-4090": dict(url="https://github.com/tenstorrent/tt-inference-server/issues/125",
   what=("tt-inference-server issue #125 ('Qwen2.5 7B eval runs'), comment of 2025-03-28: 'Performance Benchmarks for "
         "Qwen2.5-7B-Instruct on 4090', GPU reference run, one request at a time"),
   setup=("GPU reference run of tt-inference-server's benchmark sweep (same report format and harness as the GPU "
          "reference tables of issues #143 / #340 that session 5 entered: vLLM OpenAI server, version not stated), one "
          "RTX 4090 (TP 1), bf16 entered (not stated; the checkpoint's dtype), concurrency 1; TPOT means of the 5 "
          "fully read lines (ISL 128-3072). The comment's metadata block says device 'n300' and carries Tenstorrent "
          "commits while its heading and table title say 4090 (entered as the RTX 4090 run the headings name; a "
          "doubt). TTFT not used, as for session 5's tt-inference-server rows. Lines after ISL 3072 not in the "
          "stored copy: not entered."),
   engine="vLLM (version not stated, early 2025)", engine_family="vllm", klass="dense", date="2025-03"),
 "sglcb-llama31-70b-a100": dict(url=COOKBOOK + "docs/autoregressive/Llama/Llama3.1.md",
   what=("SGLang cookbook, Llama 3.1 page, section 5.1 Speed Benchmark: Llama-3.1-70B on 8x A100, TP 8, SGLang 0.5.6, "
         "6 bench_serving runs (1000/1000 nominal at max concurrency 1 / 16 / 100, 8000/1000 nominal at 1 / 16 / 64)"),
   setup=("SGLang bench_serving, random dataset (the prose names ShareGPT_Vicuna_unfiltered but every printed command "
          "and result block is --dataset-name random; the commands are printed as `sglang serve` with benchmark "
          "flags: taken as bench_serving, whose result blocks they are), no --random-range-ratio, so each request's "
          "lengths are drawn below the nominal --random-input-len / --random-output-len: the row's lengths are the "
          "run's printed 'Total input tokens' / 'Total generated tokens' over its 'Successful requests', rounded (as "
          "session 7 entered the other cookbook pages); --num-prompts 10 / 80 / 500 or 320 at --max-concurrency 1 / 16 "
          "/ 100 or 64, request rate inf. Server `sglang serve --model-path Meta-Llama/Llama-3.1-70B --tp 8` (the base "
          "model, bf16 checkpoint; SGLang defaults, KV cache in the model dtype). The page says 'NVIDIA A100 GPU (8x)' "
          "without the memory size: A100-80GB entered (the cookbook repository's own hardware tables, in its "
          ".claude/skills add-model and review-pr notes, list the A100 as 80GB; the 70B bf16 weights at TP 8, about "
          "18 GB a GPU, fit the 40GB part too, so the page does not decide it: a doubt)."),
   engine="SGLang 0.5.6", engine_family="sglang", engine_version="0.5.6", klass="dense", date="2026-01"),
}
MODELS = {
 "Mistral-7B-Instruct-v0.3": {"source": ("mistralai/Mistral-7B-Instruct-v0.3 config.json (https://huggingface.co/"
                                         "mistralai/Mistral-7B-Instruct-v0.3/blob/main/config.json)"),
                              "catalog": "mistralai/Mistral-7B-Instruct-v0.3"},
 "Qwen2.5-7B-Instruct": {"source": ("Qwen/Qwen2.5-7B-Instruct config.json (https://huggingface.co/Qwen/"
                                    "Qwen2.5-7B-Instruct/blob/main/config.json)"), "catalog": "Qwen/Qwen2.5-7B-Instruct"},
 "Gemma-3-4B": {"source": ("google/gemma-3-4b-it config.json (https://huggingface.co/google/gemma-3-4b-it/blob/main/"
                           "config.json)"), "catalog": "google/gemma-3-4b-it"},
}
# InferenceX points: (ISL, OSL, concurrency, TP, output tok/s/GPU, TTFT ms, TPOT ms, label) -- as printed
IX_RUNS = {
 "ix3363-dsr1-b200-sglang": ("DeepSeek-R1", "B200", "fp8", 1, [
   (1024, 1024, 1, 8, 17.01, 160.36, 7.18, "1k/1k c1 TP8 EP1 5c7bfe"),
   (1024, 1024, 2, 8, 30.74, 177.91, 7.93, "1k/1k c2 TP8 EP1 49ee8c"),
   (1024, 1024, 4, 8, 53.72, 203.87, 8.82, "1k/1k c4 TP8 EP1 9fcf40"),
   (1024, 1024, 8, 8, 87.31, 248.74, 10.96, "1k/1k c8 TP8 EP1 565b6f"),
   (1024, 1024, 16, 8, 145.25, 368.49, 13.09, "1k/1k c16 TP8 EP1 daf140"),
   (1024, 1024, 32, 8, 234.01, 470.96, 16.21, "1k/1k c32 TP8 EP1 603745"),
   (1024, 1024, 64, 8, 338.97, 1170.32, 21.73, "1k/1k c64 TP8 EP1 71dbb5"),
   (8192, 1024, 1, 4, 29.78, 410.18, 7.96, "8k/1k c1 TP4 EP1 685589"),
   (8192, 1024, 1, 8, 16.18, 314.28, 7.39, "8k/1k c1 TP8 EP1 734c7e"),
   (8192, 1024, 2, 4, 51.72, 483.64, 9.13, "8k/1k c2 TP4 EP1 c25f6c")]),
 "ix832-minimax-h100-vllm": ("MiniMax-M2", "H100-SXM", "fp8", "tp", [
   (1024, 1024, 4, 8, 53.4, 83.9, 8.96, "1k1k conc 4, TP=8, EP=8"),
   (1024, 1024, 4, 4, 72.2, 129.8, 13.34, "1k1k conc 4, TP=4, EP=4")]),
}
# blog points: (max concurrency, output token throughput tok/s, mean TTFT ms) -- as printed
MR_POINTS = [(4, 210, 63), (8, 377, 79), (16, 644, 155), (32, 975, 362), (48, 1190, 667)]
# tt-inference-server #521 gemma-3-4b-it on A100, concurrency 1: (ISL, OSL, TPOT ms) -- as printed
TT521_POINTS = [(128, 128, 8.4), (128, 1024, 9.6), (1024, 128, 10.8), (2048, 128, 10.1), (3072, 128, 10.1),
                (4096, 128, 10.1)]
# tt-inference-server #125 Qwen2.5-7B-Instruct on RTX 4090, concurrency 1: (ISL, OSL, TPOT ms) -- as printed
TT125_POINTS = [(128, 128, 17.1), (128, 1024, 17.2), (1024, 128, 17.2), (2048, 128, 17.2), (3072, 128, 17.3)]


# SGLang cookbook Llama 3.1 page, section 5.1: (concurrency, successful requests, total input tokens, total generated
# tokens, output token throughput tok/s, mean TTFT ms, mean TPOT ms, label) -- each run as printed
SGLCB_L31_RUNS = [
 (1, 10, 6101, 4220, 52.88, 131.61, 18.63, "5.1.1.1 1000/1000 low concurrency"),
 (16, 80, 39668, 40805, 513.48, 264.84, 26.09, "5.1.1.2 1000/1000 medium concurrency"),
 (100, 500, 249831, 252662, 1919.38, 245.98, 47.19, "5.1.1.3 1000/1000 high concurrency"),
 (1, 10, 41941, 4220, 50.69, 395.25, 18.80, "5.1.2.1 8000/1000 low concurrency"),
 (16, 80, 300020, 41669, 389.00, 603.42, 36.94, "5.1.2.2 8000/1000 medium concurrency"),
 (64, 320, 1273893, 170000, 788.27, 633.32, 74.95, "5.1.2.3 8000/1000 high concurrency")]
SGLCB_METRICS = (("ttft_ms", 5, "ms", "mean TTFT"), ("itl_ms", 6, "ms", "mean TPOT"),
                 ("output_tokens_per_s", 4, "tokens/s", "output token throughput"))


def _row(src, i, model, gpu, tp, weights, c, inp, outl, metric, value, unit, note, ep=1):
    return serving_row(SPLIT, src, i, model, gpu, tp, weights, c, inp, outl, metric, value, unit, note, ep)


def ix_rows(src: str) -> list[dict]:
    out = []
    model, gpu, weights, ep_rule, runs = IX_RUNS[src]
    for i, run in enumerate(runs, 1):
        isl, osl, c, tp = run[:4]
        ep = tp if ep_rule == "tp" else ep_rule
        for metric, k, unit, what in IX_METRICS:
            out.append(_row(src, i, model, gpu, tp, weights, c, isl, osl, metric, run[k], unit,
                            f"{run[7]}: {what} as printed (ISL {isl}, OSL {osl}, concurrency {c}, TP {tp}, EP {ep})",
                            ep))
    return out


def mr_rows() -> list[dict]:
    src, out = "mrahman-mistral7b-4090-vllm", []
    for i, (c, tps, ttft) in enumerate(MR_POINTS, 1):
        out.append(_row(src, i, "Mistral-7B-Instruct-v0.3", "RTX-4090", 1, "bf16", c, 256, 128, "output_tokens_per_s",
                        tps, "tokens/s", f"max concurrency {c}: output token throughput as printed (256 in / 128 out)"))
        out.append(_row(src, i, "Mistral-7B-Instruct-v0.3", "RTX-4090", 1, "bf16", c, 256, 128, "ttft_ms", ttft, "ms",
                        f"max concurrency {c}: mean TTFT as printed (256 in / 128 out)"))
    return out


def tt521_rows() -> list[dict]:
    src = "tt521-gemma3-4b-a100"
    return [_row(src, i, "Gemma-3-4B", "A100-80GB", 1, "bf16", 1, isl, osl, "itl_ms", tpot, "ms",
                 f"ISL {isl} / OSL {osl}, concurrency 1: mean TPOT as printed")
            for i, (isl, osl, tpot) in enumerate(TT521_POINTS, 1)]


def tt125_rows() -> list[dict]:
    src = "tt125-qwen25-7b-4090"
    return [_row(src, i, "Qwen2.5-7B-Instruct", "RTX-4090", 1, "bf16", 1, isl, osl, "itl_ms", tpot, "ms",
                 f"ISL {isl} / OSL {osl}, concurrency 1: mean TPOT as printed")
            for i, (isl, osl, tpot) in enumerate(TT125_POINTS, 1)]


def sglcb_l31_rows() -> list[dict]:
    """The lengths are the only arithmetic: each run's printed token totals over its printed request count, rounded."""
    src, out = "sglcb-llama31-70b-a100", []
    for i, run in enumerate(SGLCB_L31_RUNS, 1):
        (c, n, tin, tout), label = run[:4], run[7]
        inp, outl = round(tin / n), round(tout / n)
        for metric, k, unit, what in SGLCB_METRICS:
            out.append(_row(src, i, "Llama-3.1-70B", "A100-80GB", 8, "bf16", c, inp, outl, metric, run[k], unit,
                            f"{label}: {what} as printed; lengths {tin}/{n} and {tout}/{n} tokens (printed totals "
                            f"over the run's requests), max concurrency {c}"))
    return out


def main() -> None:
    sentence = ("Rows with split 'heldout-9' were added in session 12 (2026-12-04) from documents no earlier "
                "session used (two InferenceX pull requests, a blog post, two tt-inference-server GPU reference threads and the "
                "SGLang cookbook's Llama 3.1 page; see "
                "reports/gpu-time/add_session12_rows.py), chosen and entered before any prediction of them, and "
                "committed with the predictions of the model as it stood (reports/gpu-time/frozen/"
                "heldout-9_before.json): a sealed split, never fitted on, left out of every report until the final "
                "evaluation.")
    rows = [r for src in IX_RUNS for r in ix_rows(src)] + mr_rows() + tt521_rows() + tt125_rows() + sglcb_l31_rows()
    enter(SPLIT, S, rows, 12, sentence, MODELS)


if __name__ == "__main__":
    main()
