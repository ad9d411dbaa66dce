"""Session-15 rows, data helper (h15a): held-out set 18, entered from the source text BEFORE any prediction of them.

Re-runnable: it first removes what an earlier run of it added (the sources below and every row of split
'heldout-18'), then adds them again, so running it twice leaves the table as running it once.

The set is a set of documents, fixed before any prediction. This helper was sent for published serving results at a
stated concurrency with fixed lengths, most wanted for dense models' TTFT / TPOT above concurrency 1 and for MoE / MLA
models. After about seventy minutes of search (pull-request and issue threads of vLLM / SGLang, repositories' result
files, web pages in English and Chinese; see 'Turned down') TWO documents met every requirement and are used by no
earlier set: two pages of the EvalScope documentation (the ModelScope team's evaluation and load-testing tool,
repository modelscope/evalscope), each read from the repository's history and pinned at a commit. One of them exists in
two editions that print two different runs (another vLLM version, another prompt count, other figures), entered as two
sources with their own pinned urls. 12 rows in all, far below the brief's aim (at least 30 rows from at least 2
documents): 4 MoE rows (gpt-oss-20b output throughput on one H20 at concurrency 1 / 10 / 50 / 100, 1024 in / 1024 out)
and 8 dense rows (Qwen2.5-0.5B-Instruct on one A100 80GB at concurrency 50, 100 in / 100 out: output throughput, mean
TTFT and mean TPOT of `vllm bench serve`, and the output throughput of an EvalScope run of the same shape). A small
clean set was preferred to padding. Its judgement is narrow: it says something of a small MoE model's output
throughput as concurrency grows on an H20 (mxfp4 weights, vLLM's pre-release gpt-oss build), and of a very small dense
model's TTFT, TPOT and throughput at concurrency 50 on an A100 with two vLLM versions; nothing of TTFT / TPOT of MoE
models, of MLA, of larger dense models, of SGLang or TensorRT-LLM.

- evalscope-h20-gptoss20b-vllm0101: modelscope/evalscope, docs/zh/best_practice/gpt_oss.md pinned at bf351ed
  (2025-08-06 'add gpt oss doc', the page's first edition; the English page docs/en/best_practice/gpt_oss.md of the
  same commit prints the same table). Quoted settings: the server command 'VLLM_ATTENTION_BACKEND=TRITON_ATTN_VLLM_V1
  VLLM_USE_MODELSCOPE=true vllm serve openai-mirror/gpt-oss-20b --served-model-name gpt-oss-20b --trust_remote_code
  --port 8801' ('我们在 H20 GPU上成功启动gpt-oss-20b模型服务'); the test environment '显卡: H20-96GB * 1', 'vLLM版本:
  0.10.1+gptoss', 'prompt 长度: 1024 tokens', '输出长度: 1024 tokens' (installed as 'pip install --pre
  vllm==0.10.1+gptoss --extra-index-url https://wheels.vllm.ai/gpt-oss/ ...'); the client command 'evalscope perf
  --parallel 1 10 50 100 --number 5 20 100 200 --model gpt-oss-20b --url http://127.0.0.1:8801/v1/completions --api
  openai --dataset random --max-tokens 1024 --min-tokens 1024 --prefix-length 0 --min-prompt-length 1024
  --max-prompt-length 1024 --log-every-n-query 20 --tokenizer-path openai-mirror/gpt-oss-20b --extra-args
  '{"ignore_eos": true}''; the output 'Total Generated 332,800.0 tokens' (quoted only as a check: the 325 requests of
  1024 tokens each) and the table 'Detailed Performance Metrics' with the columns Conc. | RPS | Avg Lat.(s) | P99
  Lat.(s) | Gen. toks/s | Avg TTFT(s) | P99 TTFT(s) | Avg TPOT(s) | P99 TPOT(s) | Success Rate, one line per
  concurrency 1, 10, 50, 100 (copied below as printed).
  Entered, for each of the 4 lines: Gen. toks/s -> output_tokens_per_s, batch = Conc., input 1024 / output 1024
  (stated fixed: min = max prompt length, min = max tokens, ignore_eos), model gpt-oss-20b (the catalog's), weights
  mxfp4 (the native checkpoint), KV bf16 (vLLM's 'auto'; not stated), GPU H20 (the catalog's 96 GB part), TP 1, EP 1,
  engine vLLM 0.10.1, mode 'serving'.
  Doubts, each written down before any prediction:
  (1) '0.10.1+gptoss' is a pre-release wheel vLLM built for the gpt-oss launch (the page says 0.10.1 was not yet
      released on 2025-08-06); entered as vLLM 0.10.1, date 2025-08.
  (2) the attention backend is forced to vLLM V1's Triton backend (TRITON_ATTN_VLLM_V1), not the default, and the
      MXFP4 MoE path on a Hopper H20 (Triton / Marlin kernels, weights dequantized in the kernel) is not stated;
      neither is a field of the rows.
  (3) the client is EvalScope over HTTP on the completions endpoint (no chat template: the 1024 random tokens are the
      whole prompt, counted with the model's tokenizer); the number of requests is small at low concurrency (5 at
      concurrency 1, 20 at concurrency 10: two waves), so ramp-up and tail are a large share of the timed window in
      which 'Gen. toks/s' (generated tokens over the run's time) is measured; no warm-up is stated.
  (4) TTFT and TPOT are printed in seconds to three decimals (e.g. an Avg TPOT of 0.007 s at concurrency 1): not
      entered, as a unit change on the value and too coarse; the latencies and RPS are not entered either.
  (5) the server runs vLLM's defaults otherwise (V1 engine: chunked prefill, prefix caching, CUDA graphs,
      gpu-memory-utilization 0.9, the model's full context length); at concurrency 100 x 2048 tokens the KV cache
      of one H20 holds every request (not stated).
  (6) a later edition of the page (d0c69cb, 2026-05-27) reprints the Gen/s column of the same run in a shorter
      'Performance Overview' table; the run is entered once, from bf351ed.
- evalscope-a100-qwen25-05b-vllm0110 and evalscope-a100-qwen25-05b-vllm0170: modelscope/evalscope,
  docs/zh/user_guides/stress_test/vs_vllm_bench.md ('vLLM Bench vs Evalscope Perf 压测对比', a page comparing the two
  clients on one vLLM server), two editions: 9057a00 (2025-10-24 'update doc'; its figures are those of the page's
  first edition 970aa72 of 2025-10-20) and 591a5da (2026-03-16 'update doc', a re-run). Quoted settings (both
  editions): server 'VLLM_USE_MODELSCOPE=True CUDA_VISIBLE_DEVICES=0 python -m vllm.entrypoints.openai.api_server
  --model Qwen/Qwen2.5-0.5B-Instruct --gpu-memory-utilization 0.5 --served-model-name Qwen2.5-0.5B-Instruct
  --trust-remote-code --port 8801 --no-enable-prefix-caching'; '硬件：A100 80G'; client 'vllm bench serve
  --max-concurrency 50 --num-prompts 500 [1000 in 591a5da] --host 127.0.0.1 --port 8801 --backend openai-chat --model
  Qwen2.5-0.5B-Instruct --dataset-name random --random-input-len 100 --random-output-len 100 --tokenizer ...
  --endpoint /v1/chat/completions --ignore-eos' and 'evalscope perf --parallel 50 --number 500 [1000] ... --api openai
  --dataset random --max-tokens 100 --prefix-length 0 --min-prompt-length 100 --max-prompt-length 100 ... --extra-args
  '{"ignore_eos": true}''. 9057a00: 'vLLM: v0.11.0', 'evalscope: main 分支（2025-10-20）', section '规模压测：50 并发 /
  500 请求'; 591a5da: 'vLLM: v0.17.0', 'evalscope: v1.5.0', section '规模压测：50 并发 / 1000 请求'. Each edition prints a
  `vllm bench serve` result block and an EvalScope 'Benchmarking summary' of the same shape against the same server.
  Entered, per edition: from the vLLM block 'Output token throughput (tok/s)' -> output_tokens_per_s, 'Mean TTFT
  (ms)' -> ttft_ms, 'Mean TPOT (ms)' -> itl_ms (the table's mean-TPOT metric); from the EvalScope summary 'Output token
  throughput (tok/s)' -> output_tokens_per_s (a second run, row id marked 'evalscope'). Batch 50, input 100 / output
  100 (stated fixed, ignore_eos; the vLLM blocks print 'Total generated tokens' 50000 / 100000, i.e. every output at
  100), model Qwen2.5-0.5B-Instruct (the table's entry, added by set 17), weights bf16 (the checkpoint's dtype, vLLM's
  default; not stated), KV bf16, GPU A100-80GB, TP 1, engine vLLM 0.11.0 / 0.17.0, mode 'serving'.
  Doubts, each written down before any prediction:
  (7) a very small dense model (0.5B) again, as set 17: per-step host costs (scheduling, sampling, detokenisation,
      HTTP streaming of 50 requests) dominate; the judgement of this source is mostly of those costs.
  (8) the 2025-10-20 edition printed the server command without --no-enable-prefix-caching; the 2025-10-24 edition
      added the flag with the figures unchanged, so whether the v0.11.0 run had prefix caching off is not known. The
      chat endpoint wraps each random prompt in Qwen2.5's chat template (its default system prompt is some 20-30
      tokens shared by every request), so with caching on that shared prefix could be reused (a shorter TTFT); the
      template's tokens are also on top of the 100 entered as the input length.
  (9) the server applies the model's generation config (the page's log shows repetition_penalty 1.1, temperature 0),
      a sampler cost the rows carry no field for; --gpu-memory-utilization 0.5 leaves far more KV cache than 50 x
      ~230 tokens need.
  (10) the v0.11.0 vLLM block prints 'Total input tokens: 49932' for 500 prompts (the random prompts re-tokenize to a
      little under 100 tokens) and both blocks print a 'Peak concurrent requests' above 50 (154 / 176: the client's
      own count of overlapping requests, not the server's batch); the entered batch is the stated --max-concurrency.
  (11) the EvalScope rows are separate runs against the same server just after the vLLM run (the page says the two
      clients agree within about 3%); their TTFT / TPOT are printed in seconds to four decimals: not entered (a unit
      change on the value). The vLLM blocks' medians, P99s and mean ITL are not entered.
  (12) 'A100 80G' without form factor: A100-80GB (SXM) entered, as earlier sets did; the host is not stated.
  (13) the two editions are one author's page, harness and (likely) machine; they are entered as two sources (two
      pinned urls, two runs) but are not independent of each other.

Turned down, before any prediction (each read as far as the stored copy allows):
- EvalScope's other pages: quick_start.md (Qwen2.5-0.5B-Instruct on A100, 1024 / 1024 at concurrency 1-200: only
  the concurrency-200 summary is text, the sweep is an image, the vLLM version is not stated), best_practice/
  qwen3_next.md (Qwen3-Next, a model the table does not read; results as an image), qwen3.md (no results table),
  deepseek_r1_distill.md (a 1.5B distilled model the catalog lacks; LMDeploy), the English editions of the pages used
  (the same runs).
- a Kimi-K2.6 on 4 x 8 B200 GKE report (a file-index text without repository or path; Kimi-K2.6 not in the table; four
  replicas behind a load balancer, FP8 KV cache, no ignore-eos); an MI355 Llama-3.3-70B-FP8-KV 'sample output' of a
  ROCm vLLM guide (FP8 KV; as a possible edition of the reserved ROCm vLLM docker documentation it was not read
  further); TPU outputs (Qwen3.8-27B on tpu7x / v6e, Llama-3.3-70B on TPU: devices the catalog lacks); Qwen3.6-27B
  eager logs (a model the table does not read); a NIXL / LMCache disaggregated block; two anonymous 'Benchmark
  results' files (concurrency 16, 100 prompts, model and GPU not stated in the file, no repository or path).
- shaamil101-etched/trtllm-benchmarks (trtllm-bench offline throughput with every request sent at once, maximum batch
  2048: no concurrency; its ISL / OSL / request-count grid follows the reserved TensorRT-LLM performance overview,
  which was not opened); surajssd/llm-k8s results_serving_* (the vLLM nightly suite on Azure: ShareGPT at QPS 1-16,
  as set 9 found for the same author's gists; its latency tests are the nightly suite's fixed batch-8 runs of those
  documents); wyzzhe/python-practice Qwen3-32B-FP8 concurrency notes (a custom client, lengths not fixed, GPU not
  stated); swayam8624 SGLang notes (A40); xinyuwei-david MI300X DeepSeek-R1 (a custom client with length ranges);
  coco-alen InternVL commands (no results); seungrokj/ootb_vllm (an empty latency table); yiliu30/vllm-fork
  pp_local_test_res.sh, dennislee22/vLLM-benchmarking, the 4 x MI100 page, the DecodeBenchConnector H200 note (turned
  down by earlier sets).
- threads: vllm #36795, #36559, #27058, #15322, #13412, #18566, #42497, #23151 (earlier sets' sources or turn-downs),
  #26887 (Qwen3-Next), #17788, #14431 (ShareGPT), #17202 (MT-Bench), #10847, #5857, #14020, #28780 (no result of the
  kind), #28227 (DeepSeek-R1 at concurrency 32, GPU not stated beside the block), #33743 (Gemma-3-27B, no concurrency,
  GPU not in the stored excerpt); sglang #9812 (a VL model), #12389 (model and GPU outside the stored excerpt), #8285
  (request rate 330, model and GPU outside the stored excerpt), #8699 (Step3-VL), #7631, #5360 (turned down before),
  #14254 (pipeline parallel, range ratio 0.9), #35120 (NVFP4); ROCm/ATOM #688 (ATOM engine, GLM-5); tenstorrent
  tt-inference-server #379, #1571, #384, #248, #1932, #1842, #190, #508, #717, #1365 (Tenstorrent devices, or GPU
  reference threads earlier sets used or turned down); mlcommons/inference_policies #295, InternLM/lmdeploy #1515,
  optimum-habana #739, FlagPerf #541, basetenlabs/truss-examples #243 (no serving result of the kind).
- pages: juejin.cn 'H200部署DeepSeek 671B ... vLLM与SGLang性能压测' (only the opening is stored: no result table
  read), ruibaoantu.com / xfz.ruibaoantu.com reworks of it (generated articles whose facts contradict each other, e.g.
  'H200 80GB'), tanjunchen.github.io H20 DeepSeek-R1 (only the opening is stored), dragonfive.github.io DeepSeek-R1
  (request rate 4, or 500 requests at once with free-length outputs), yangwenbo.com L40S Qwen3-FP8 (a self-built
  kernel, batch 1), jishuzhan.net Qwen3-30B-A3B on 2 x A6000 (HC3 dataset: lengths not fixed), coolbeevip.github.io
  (wrk on an A40), volcengine xLLM (disaggregated, its own engine), dzhsurf 'deepseek-v3-r1-deploy-and-benchmarks'
  (DeepSeek-V3 / R1 AWQ checkpoints of cognitivecomputations: as a precaution against the reserved QuixiAI model card
  it was not read beyond its opening), evalscope.readthedocs.io (the rendered editions of the pages used), the
  GPUStack performance-lab pages and mirrors, luminal.com, wangjunjian.com Jetson Thor, alauda Ascend (turned down
  by earlier sets).
No reserved document was opened or used: no TensorRT-LLM performance page (performance.md, perf-overview.md, any
version; perf-overview excerpts that appeared among code-search results were passed over unopened) or blog named
reserved (H200launch.md, H100vsA100.md), no ROCm/vllm dev-docker README (the MI355 'sample output' excerpt above was
not read further), no dstack DeepSeek-R1 benchmark, no SGLang B200 gist or cookbook B200 page of Qwen3-235B /
gpt-oss-120b, no QuixiAI model card.

Every value is a number a document printed (copied below as the pages' table lines and result lines); no arithmetic
is done on any value, and no length is derived (the lengths are the commands' fixed prompt and output lengths).

Run: python reports/gpu-time/add_session15_set18_rows.py
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from table_entry import enter  # noqa: E402

SPLIT = "heldout-18"
REPO = "https://github.com/modelscope/evalscope/blob"
GPTOSS = "evalscope-h20-gptoss20b-vllm0101"
Q011 = "evalscope-a100-qwen25-05b-vllm0110"
Q017 = "evalscope-a100-qwen25-05b-vllm0170"

S = {
 GPTOSS: dict(url=f"{REPO}/bf351ed031bad13946e205641928109c28d76260/docs/zh/best_practice/gpt_oss.md",
   what=("EvalScope documentation, best practice 'gpt-oss' page (first edition, bf351ed, 2025-08-06): gpt-oss-20b on "
         "one H20-96GB with vLLM 0.10.1+gptoss (Triton attention backend), evalscope perf closed loop at concurrency "
         "1 / 10 / 50 / 100 (5 / 20 / 100 / 200 requests), random 1024-token prompts, 1024 output tokens with "
         "ignore_eos, completions endpoint; 4 figures (Gen. toks/s)"),
   setup=("VLLM_ATTENTION_BACKEND=TRITON_ATTN_VLLM_V1 vllm serve openai-mirror/gpt-oss-20b (vLLM 0.10.1+gptoss "
          "pre-release wheel, defaults otherwise) on one H20-96GB; client evalscope perf --parallel 1 10 50 100 "
          "--number 5 20 100 200 --api openai --url .../v1/completions --dataset random --min-prompt-length 1024 "
          "--max-prompt-length 1024 --min-tokens 1024 --max-tokens 1024 --prefix-length 0 --extra-args "
          "'{\"ignore_eos\": true}'. Gen. toks/s -> output_tokens_per_s. Weights mxfp4 (native checkpoint), KV bf16 "
          "entered (not stated). TTFT / TPOT (printed in seconds, 3 decimals), latencies and RPS not entered."),
   engine="vLLM 0.10.1+gptoss", engine_family="vllm", engine_version="0.10.1", klass="moe", date="2025-08"),
 Q011: dict(url=f"{REPO}/9057a00bb66b3f68bf635c7e8f4ba9dbb5eda8c0/docs/zh/user_guides/stress_test/vs_vllm_bench.md",
   what=("EvalScope documentation 'vLLM Bench vs Evalscope Perf 压测对比' (edition 9057a00, 2025-10-24, figures of "
         "the 2025-10-20 edition): Qwen2.5-0.5B-Instruct on one A100 80G, vLLM v0.11.0 OpenAI server, vllm bench "
         "serve and evalscope perf at concurrency 50 with 500 requests, random 100 / 100 with ignore_eos, chat "
         "endpoint; 4 figures (vLLM output throughput, mean TTFT, mean TPOT; EvalScope output throughput)"),
   setup=("python -m vllm.entrypoints.openai.api_server --model Qwen/Qwen2.5-0.5B-Instruct --gpu-memory-utilization "
          "0.5 --no-enable-prefix-caching (the flag added to the page after the run: doubt) on one A100 80G, vLLM "
          "v0.11.0; clients on the same host: vllm bench serve --backend openai-chat --endpoint /v1/chat/completions "
          "--dataset-name random --random-input-len 100 --random-output-len 100 --ignore-eos --max-concurrency 50 "
          "--num-prompts 500, and evalscope perf --parallel 50 --number 500 (min = max prompt length 100, max tokens "
          "100, ignore_eos). Output token throughput -> output_tokens_per_s, Mean TTFT -> ttft_ms, Mean TPOT -> "
          "itl_ms; EvalScope's output throughput -> output_tokens_per_s (row marked evalscope). bf16 weights and KV "
          "entered (not stated). A100 80G entered as A100-80GB."),
   engine="vLLM 0.11.0", engine_family="vllm", engine_version="0.11.0", klass="dense", date="2025-10"),
 Q017: dict(url=f"{REPO}/591a5da8d5e1a171ef18e1528539eed2deb123a6/docs/zh/user_guides/stress_test/vs_vllm_bench.md",
   what=("EvalScope documentation 'vLLM Bench vs Evalscope Perf 压测对比' (edition 591a5da, 2026-03-16, a re-run): "
         "Qwen2.5-0.5B-Instruct on one A100 80G, vLLM v0.17.0 OpenAI server, vllm bench serve and evalscope perf at "
         "concurrency 50 with 1000 requests, random 100 / 100 with ignore_eos, chat endpoint; 4 figures (vLLM "
         "output throughput, mean TTFT, mean TPOT; EvalScope output throughput)"),
   setup=("python -m vllm.entrypoints.openai.api_server --model Qwen/Qwen2.5-0.5B-Instruct --gpu-memory-utilization "
          "0.5 --no-enable-prefix-caching on one A100 80G, vLLM v0.17.0; clients on the same host: vllm bench serve "
          "--backend openai-chat --endpoint /v1/chat/completions --dataset-name random --random-input-len 100 "
          "--random-output-len 100 --ignore-eos --max-concurrency 50 --num-prompts 1000, and evalscope perf (v1.5.0) "
          "--parallel 50 --number 1000 (min = max prompt length 100, max tokens 100, ignore_eos). Output token "
          "throughput -> output_tokens_per_s, Mean TTFT -> ttft_ms, Mean TPOT -> itl_ms; EvalScope's output "
          "throughput -> output_tokens_per_s (row marked evalscope). bf16 weights and KV entered (not stated). A100 "
          "80G entered as A100-80GB."),
   engine="vLLM 0.17.0", engine_family="vllm", engine_version="0.17.0", klass="dense", date="2026-03"),
}

# gpt_oss.md at bf351ed, 'Detailed Performance Metrics', as printed: Conc. | RPS | Avg Lat.(s) | P99 Lat.(s) |
# Gen. toks/s | Avg TTFT(s) | P99 TTFT(s) | Avg TPOT(s) | P99 TPOT(s) | Success Rate
GPTOSS_TABLE = """
│    1 │ 0.15 │    6.811 │    6.854 │  150.34 │    0.094 │   0.096 │    0.007 │   0.007 │    100.0%│
│   10 │ 0.96 │   10.374 │   10.708 │  986.63 │    0.865 │   1.278 │    0.009 │   0.010 │    100.0%│
│   50 │ 2.47 │   20.222 │   22.612 │ 2529.14 │    2.051 │   5.446 │    0.018 │   0.020 │    100.0%│
│  100 │ 3.37 │   29.570 │   35.594 │ 3455.61 │    2.354 │   6.936 │    0.027 │   0.028 │    100.0%│
"""

# vs_vllm_bench.md, the '规模压测' section of each edition, the lines entered as printed
# (client, the page's line, table metric, unit)
QWEN_LINES = {
 Q011: (("vllm-bench", "Output token throughput (tok/s):         9802.05", "output_tokens_per_s", "tokens/s"),
        ("vllm-bench", "Mean TTFT (ms):                          33.14", "ttft_ms", "ms"),
        ("vllm-bench", "Mean TPOT (ms):                          4.73", "itl_ms", "ms"),
        ("evalscope", "| Output token throughput (tok/s)   |  8757.5    |", "output_tokens_per_s", "tokens/s")),
 Q017: (("vllm-bench", "Output token throughput (tok/s):         10808.22", "output_tokens_per_s", "tokens/s"),
        ("vllm-bench", "Mean TTFT (ms):                          73.18", "ttft_ms", "ms"),
        ("vllm-bench", "Mean TPOT (ms):                          3.85", "itl_ms", "ms"),
        ("evalscope", "| Output token throughput (tok/s)   | 10530.7    |", "output_tokens_per_s", "tokens/s")),
}
QWEN_PROMPTS = {Q011: 500, Q017: 1000}
QWEN_VLLM = {Q011: "v0.11.0", Q017: "v0.17.0"}


def _row(src, client, model, gpu, weights, c, inp, outl, metric, value, unit, note) -> dict:
    rid = f"{src}-{client}-{model}-{gpu}-tp1-{weights}-c{c}-{inp}-{outl}-{metric}"
    return dict(id=rid, source=src, gpu=gpu, tp=1, model=model, weights=weights, kv="bf16", batch=c, mode="serving",
                input_len=inp, output_len=outl, metric=metric, value=value, unit=unit, note=note,
                expert_parallel_size=1, data_parallel_size=1, enable_dp_attention=False, split=SPLIT)


def gptoss_rows() -> list[dict]:
    out = []
    for line in GPTOSS_TABLE.strip().splitlines():
        cells = [c.strip() for c in line.strip().strip("│").split("│")]
        assert len(cells) == 10 and cells[9] == "100.0%", line
        c = int(cells[0])
        note = (f"Conc. {c}: Gen. toks/s as printed (gpt-oss-20b on one H20-96GB, vLLM 0.10.1+gptoss with "
                f"TRITON_ATTN_VLLM_V1, evalscope perf closed loop, 1024 in / 1024 out with ignore_eos, completions "
                f"endpoint)")
        out.append(_row(GPTOSS, "evalscope", "gpt-oss-20b", "H20", "mxfp4", c, 1024, 1024, "output_tokens_per_s",
                        float(cells[4]), "tokens/s", note))
    return out


def qwen_rows() -> list[dict]:
    out = []
    for src, lines in QWEN_LINES.items():
        for client, line, metric, unit in lines:
            value = float(line.strip().strip("|").split(":" if client == "vllm-bench" else "|")[-1].strip())
            note = (f"{client} at concurrency 50, {QWEN_PROMPTS[src]} requests: '{line.strip()}' as printed "
                    f"(Qwen2.5-0.5B-Instruct on one A100 80G, vLLM {QWEN_VLLM[src]} OpenAI server, chat endpoint, "
                    f"random 100 in / 100 out with ignore_eos)")
            out.append(_row(src, client, "Qwen2.5-0.5B-Instruct", "A100-80GB", "bf16", 50, 100, 100, metric, value,
                            unit, note))
    return out


def rows() -> list[dict]:
    return gptoss_rows() + qwen_rows()


def main() -> None:
    sentence = ("Rows with split 'heldout-18' were added in session 15 (a data helper) from documents no earlier "
                "session used (two pages of the EvalScope documentation, modelscope/evalscope: gpt-oss-20b on one "
                "H20 with vLLM 0.10.1 at concurrency 1-100, and Qwen2.5-0.5B-Instruct on one A100 80G with vLLM "
                "0.11.0 and 0.17.0 at concurrency 50; see reports/gpu-time/add_session15_set18_rows.py), chosen and "
                "entered before any prediction of them, and committed with the predictions of the model as it stood "
                "(reports/gpu-time/frozen/heldout-18_before.json): a sealed split, never fitted on, left out of every "
                "report until the final evaluation.")
    enter(SPLIT, S, rows(), 15, sentence)


if __name__ == "__main__":
    main()
