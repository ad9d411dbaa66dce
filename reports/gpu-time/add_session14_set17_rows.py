"""Session-14 rows, data helper (h14e): held-out set 17, entered from the source text BEFORE any prediction of them.

Re-runnable: it first removes what an earlier run of it added (the source below and every row of split
'heldout-17'), then adds them again, so running it twice leaves the table as running it once.

The set is a set of documents, fixed before any prediction. This helper was sent to web pages (personal and company
blogs, tutorials, vendors' documentation) for published `vllm bench serve` / `benchmark_serving.py` / SGLang
`bench_serving` results at a stated concurrency with fixed random lengths, for dense and non-MLA MoE models, the kind
of figure the earlier sets lack (TTFT and TPOT / ITL at a concurrency above 1 on dense models). The stored copies of
web pages are read as search excerpts: a page can be used only where its settings and its whole result table come
back in the excerpts. After some thirty searches (English, Chinese, Japanese and Korean; blogs, Medium mirrors,
dev.to, Hashnode, Substack, Google Cloud / NVIDIA / AMD / Oracle pages) ONE page met every requirement and is not used
by the table (see 'Turned down' for the others). It is far below the brief's aim (at least 30 rows from at least 2
documents): 18 rows of one document, one small dense model on one GPU with one engine version. A small clean set was
preferred to padding. Its judgement is therefore narrow: it says something of TTFT, of the decode step (median ITL)
and of output throughput of a very small dense model (Qwen2.5-0.5B, 0.5B parameters) at concurrency 1 to 32 on an
L4 with vLLM 0.23.0, where fixed per-step and per-request costs (host overheads, kernel launches) rather than weights
or bandwidth dominate; nothing of larger dense models, MoE, MLA, other GPUs, SGLang or TensorRT-LLM.

- wmx-l4-qwen25-05b-vllm0230: the 'Benchmark results' page of the ai.wmx.dev documentation site
  (https://ai.wmx.dev/benchmarks; the same page is stored as Markdown at https://ai.wmx.dev/benchmarks.md).
  Quoted settings: 'Baseline serving benchmark for serving/raw-vllm: a concurrency sweep measuring latency (TTFT /
  ITL / end-to-end) and throughput ... Harness: vllm bench serve (the repo's benchmarks/ Job)'; the 'Run context'
  table: 'Commit 8e78aaa', 'GPU 1x NVIDIA L4 (23 GB), g2-standard-4, on-demand', 'Driver / CUDA 580.126.20 / 13.0
  (GKE-managed, COS)', 'Model Qwen/Qwen2.5-0.5B-Instruct (BF16)', 'vLLM v0.23.0 (V1 engine)', 'Server args
  --gpu-memory-utilization 0.6 --max-model-len 8192', 'Kubernetes GKE v1.36.0-gke.2684000', 'Request shape 256-token
  input / 128-token output, --ignore-eos, seed 42', 'Load pattern closed-loop (--request-rate inf) at fixed
  max-concurrency'; 'Latencies in milliseconds. TTFT = time to first token (prefill), ITL = inter-token latency
  (decode), E2E = end-to-end request latency'; the table 'Results: concurrency sweep' with the columns | concurrency |
  req/s | out tok/s | TTFT p50 | TTFT p95 | ITL p50 | ITL p95 | E2E p50 | E2E p95 | and the lines for concurrency 1,
  2, 4, 8, 16 and 32 (copied below as printed); below it the page prints peaks read from Prometheus ('KV-cache usage
  1.1 %', 'Requests running / waiting 31 / 0').
  Entered, for each of the 6 concurrency lines: out tok/s -> output_tokens_per_s, TTFT p50 -> ttft_ms, ITL p50 ->
  decode_step_ms (a median inter-token latency, the metric the table gives to median ITL since session 5). Model
  Qwen2.5-0.5B-Instruct (added to the table's models from its config.json, see below), weights bf16 (stated), KV
  bf16 (vLLM's 'auto' for a bf16 model; not stated), GPU L4 (the catalog's L4), TP 1 (one GPU), engine vLLM 0.23.0,
  mode 'serving', batch = the printed concurrency, input 256 / output 128 tokens (stated fixed, --ignore-eos).
  The model's shapes, from Qwen/Qwen2.5-0.5B-Instruct's config.json as this helper knows it (not re-read here: a
  doubt): qwen2, hidden 896, 24 layers, 14 attention heads, 2 KV heads (head dim 64), intermediate 4864, vocabulary
  151936, tied word embeddings, max_position_embeddings 32768, rope_theta 1000000, bfloat16.
  Doubts, each written down before any prediction:
  (1) TTFT and ITL are medians (p50), not means: the table's ttft_ms rows are mostly means (set 15 entered a median
      TTFT likewise, as a doubt); the median ITL is entered as decode_step_ms, the table's median-ITL metric, which
      the time model predicts as one decode step at the row's batch (no prefill in it), while in a closed loop at
      concurrency c some of the steps carry prefill chunks of arriving requests.
  (2) the page does not print its number of prompts, warm-up or repetitions, nor the `vllm bench serve` command
      line beyond the request shape; 'seed 42' and the fixed shape are stated. The concurrency-1 line has a TTFT p95
      of 115.5 ms against a p50 of 27.0 ms (a warm-up or first-request outlier in the tail, which the median avoids).
  (3) vLLM v0.23.0 (V1 engine): chunked prefill and prefix caching are on by default in V1 (random prompts share no
      prefix); CUDA graphs on (no --enforce-eager); --gpu-memory-utilization 0.6 and --max-model-len 8192 leave far
      more KV cache than 32 x 384 tokens need (the page prints a peak KV-cache usage of 1.1 %).
  (4) client-side timing through the OpenAI-compatible server inside GKE (the harness is a Kubernetes Job of the
      same cluster): HTTP, tokenisation, detokenisation and streaming are in every figure; for a 0.5B model these
      host costs are a large share of each step, which is what the set will judge.
  (5) the L4 runs on a g2-standard-4 (4 vCPUs): a small host, which may slow the engine's CPU side (scheduling,
      sampling, detokenisation) more than on the hosts most of the table's rows ran on; not a field of the rows.
  (6) the page's date is not printed beside the table; the run's versions are (vLLM v0.23.0, GKE v1.36.0, driver
      580.126.20); no date is entered. The figures are rounded as printed (out tok/s to integers, latencies to 0.1
      ms).
  Not entered: the req/s column (the same run's request rate, output throughput over 128 tokens), the p95 columns
  (the table takes no tail figures), E2E p50 / p95 (medians in ms of the request latency; the table's
  request_latency_s rows are means in seconds, a unit change on the value), the Prometheus peaks.

Turned down, before any prediction (each read as far as the stored copy allows):
- johnmusgrave.com 'vLLM throughput-latency sweep on NVIDIA A100' (Llama-3.1-8B-Instruct, A100 40GB, vLLM 0.23.0,
  1024 / 128 fixed, concurrency 1-64): the stored copy still ends after the command, before the results (as sets 9
  and 12 found).
- ld-singh.github.io 'Inference Benchmark Report' (Qwen2.5-7B-Instruct on an RTX A6000, vLLM v0.23.0): a custom
  stdlib load generator whose requests generate about 51-53 tokens of free length ('gen' column) with input lengths
  not stated: lengths not fixed.
- xdnf.cn / ewbang.com 'Vllm-0.10.1: vllm bench serve ... TTFT, TPOT, ITL, E2EL' (4 x RTX A6000, DeepSeek-R1-Distill-
  Qwen-32B): the stored copies end with the server command, before any result block; a chat template is also
  applied (non-thinking template).
- wangjunjian.com Jetson Thor Qwen3 benchmarks and the NVIDIA forum '6x Spark setup' blocks (Jetson Thor / GB10: GPUs
  the catalog lacks; the Spark blocks use ShareGPT); wangjunjian.com MXC500 page (MetaX, not in the catalog).
- cnblogs.com/aibi1 'vllm实战- 解决TTFT响应慢的问题' (request rate 20, no concurrency; GPU and model not in the stored
  excerpt beside the block).
- r/LocalLLaMA Qwen3 Coder on RTX 5090 / PRO 6000 (Medium article; the excerpt prints a framework comparison without
  the concurrency or lengths beside it; RTX PRO 6000 not in the catalog) and 'Qwen3 throughput benchmarks on 2x 3090'
  (4096 / 1024 per request, but the client's concurrency / request count is not in the excerpt; data-parallel runs).
- dev.to / blog.hexgrid.cloud Gemma-4 31B on RTX PRO 6000 (ShareGPT, a model and GPU the table lacks); callstack.com
  Gemma 4 31B (model and GPU the table lacks, MTP speculative decoding); on.valuecurve.ai RTX A5000 Qwen2.5-7B
  fine-tune (only the opening is stored, no settings or results); velqor / hashnode H100 gateway post (a custom
  gateway, ratios only).
- llm-bench.rituraj.info / ree2raz/inference-bench (template prompts, lengths not fixed, as set 15 found);
  qiulang/vllm-sglang-perf (only its table of contents is stored); ai-hpc / luzbetak / aionprem / morphllm /
  kargin-utkin / h1cloud / premai / hivenet (guides with estimates or reprinted figures, no run of their own with
  stated settings); evokernel-specs cases (numbers 'synthesized' or 'approximate from blog' by a bot: reprints).
- databasemart A40 / V100 pages (turned down by set 9: A40 / V100 not in the catalog, output lengths not fixed,
  requests sent at once); devforth.io GPT-OSS-20B on L4 / L40S / H100 (only the opening is stored; no settings or
  table read); millstoneai.com and luminal.com reports (charts, per-user speeds; engine settings not stated beside
  figures; luminal turned down by set 12); loginet.com Llama-3.1-8B on H100 with SGLang (variable 100-500-token user
  input on a 3000-token system prompt: lengths not fixed).
- Google Cloud blog 'Rightsizing LLM Serving on vLLM for GPUs and TPUs' and its reposts (cloudsteak, kurtseifried,
  devengoratela, hs-sites), the Medium 'Optimize Gemma 3 Inference: vLLM on GKE' and its mirrors, discuss.google.dev
  'Optimizing LLM Inference for Minimal Latency with vLLM': only their openings are stored (results as graphs, or not
  in the stored part).
- docs.gpustack.ai performance-lab pages (ShareGPT or prompts sent at once, no concurrency; Qwen3.5 pages: models the
  table does not read) and their mirrors (code.smartscf.cn, maas-base): as sets 7-13 found.
- NVIDIA NIM benchmarking 1.0.0 performance page (the table's 'nim-bench' source) and its llms.txt / .md copies (the
  same document); NVIDIA's Mixtral 8x7B H100 TensorRT-LLM blog (charts); Baseten Mixtral (already a source);
  Oracle / substratus / dstack Llama 3.1 405B MI300X posts, AMD's performance-results page and its zh-cn edition
  (sources or editions of sources of the table, offline or ShareGPT runs); rocm.blogs.amd.com 'Best practices'
  (turned down by set 9); chinmayhebbal.com gpt-oss-120b on MI300X (turned down by set 10); arXiv 2603.10031 mirror
  (turned down by set 13); the vLLM performance-benchmark Buildkite builds (ShareGPT serving tests; build 9515 is a
  source, others turned down by set 9); surajssd gists of the vLLM nightly benchmarks on Azure (ShareGPT at request
  rates); kvcached pull request #331 H100 results (Qwen3-0.6B at request rate inf with 500 prompts, no concurrency;
  means of 3 seeds); alauda-ai Qwen3-30B-A3B page (Ascend 910B); Arm learning path (ShareGPT, CPU); Qualcomm docs
  (a Qualcomm accelerator).
No reserved document was opened or used: no TensorRT-LLM performance page (performance.md, perf-overview.md, any
version) or blog named reserved (H200launch.md, H100vsA100.md), no ROCm/vllm dev-docker README, no dstack DeepSeek-R1
benchmark, no SGLang B200 gist or cookbook B200 page of Qwen3-235B / gpt-oss-120b, no QuixiAI model card.

Every value is a number the document printed (copied below as the page's table lines and split into columns); no
arithmetic is done on any value, and no length is derived (the lengths are the page's stated request shape).

Run: python reports/gpu-time/add_session14_set17_rows.py
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from table_entry import enter  # noqa: E402

SPLIT = "heldout-17"
SRC = "wmx-l4-qwen25-05b-vllm0230"
MODEL = "Qwen2.5-0.5B-Instruct"

S = {
 SRC: dict(url="https://ai.wmx.dev/benchmarks",
   what=("ai.wmx.dev 'Benchmark results' page (serving/raw-vllm baseline, commit 8e78aaa): Qwen/Qwen2.5-0.5B-Instruct "
         "BF16 on 1x NVIDIA L4 (GKE g2-standard-4), vLLM v0.23.0 (V1), vllm bench serve closed loop at fixed "
         "max-concurrency 1 / 2 / 4 / 8 / 16 / 32, 256-token input / 128-token output with --ignore-eos, seed 42; "
         "18 figures (out tok/s, TTFT p50, ITL p50)"),
   setup=("vllm serve Qwen/Qwen2.5-0.5B-Instruct --gpu-memory-utilization 0.6 --max-model-len 8192 (vLLM v0.23.0, V1 "
          "engine defaults: chunked prefill, prefix caching, CUDA graphs) on one L4 in GKE; client vllm bench serve "
          "from a Job in the same cluster, --request-rate inf at fixed --max-concurrency, random 256 / 128 with "
          "--ignore-eos, seed 42 (prompt count not printed). out tok/s -> output_tokens_per_s, TTFT p50 -> ttft_ms "
          "(a median), ITL p50 -> decode_step_ms (median ITL). KV bf16 entered (not stated). req/s, p95 and E2E "
          "columns not entered."),
   engine="vLLM 0.23.0", engine_family="vllm", engine_version="0.23.0", klass="dense", date=None),
}
MODELS = {
 MODEL: {
  "source": ("Qwen/Qwen2.5-0.5B-Instruct config.json (https://huggingface.co/Qwen/Qwen2.5-0.5B-Instruct/blob/main/"
             "config.json), as the set-17 helper knows it (not re-read: a doubt written in "
             "reports/gpu-time/add_session14_set17_rows.py)"),
  "config": {"model_type": "qwen2", "hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24,
             "num_attention_heads": 14, "num_key_value_heads": 2, "vocab_size": 151936,
             "tie_word_embeddings": True, "max_position_embeddings": 32768, "rope_theta": 1000000.0,
             "torch_dtype": "bfloat16"},
 },
}

# The page's table lines, as printed: | concurrency | req/s | out tok/s | TTFT p50 | TTFT p95 | ITL p50 | ITL p95 |
# E2E p50 | E2E p95 |
TABLE = """
| 1 | 1.3 | 168 | 27.0 | 115.5 | 5.1 | 6.1 | 679 | 765 |
| 2 | 2.9 | 367 | 37.8 | 48.2 | 5.2 | 6.3 | 698 | 705 |
| 4 | 5.4 | 698 | 50.1 | 85.4 | 5.3 | 6.4 | 722 | 760 |
| 8 | 10.2 | 1312 | 60.9 | 88.4 | 5.5 | 7.4 | 772 | 816 |
| 16 | 17.8 | 2277 | 103.8 | 135.7 | 6.0 | 8.9 | 880 | 947 |
| 32 | 29.5 | 3773 | 135.3 | 191.8 | 7.1 | 12.0 | 1082 | 1128 |
"""
# (column index in a table line, table metric, unit, the page's column name)
COLUMNS = ((2, "output_tokens_per_s", "tokens/s", "out tok/s"), (3, "ttft_ms", "ms", "TTFT p50"),
           (5, "decode_step_ms", "ms", "ITL p50"))
INPUT, OUTPUT = 256, 128


def rows() -> list[dict]:
    out = []
    for line in TABLE.strip().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        assert len(cells) == 9, line
        c = int(cells[0])
        for col, metric, unit, name in COLUMNS:
            note = (f"concurrency {c}: {name} as printed (vLLM v0.23.0, Qwen2.5-0.5B-Instruct BF16, 1x L4, vllm bench "
                    f"serve closed loop, {INPUT} in / {OUTPUT} out with --ignore-eos, seed 42)")
            rid = f"{SRC}-{MODEL}-L4-tp1-bf16-c{c}-{INPUT}-{OUTPUT}-{metric}"
            out.append(dict(id=rid, source=SRC, gpu="L4", tp=1, model=MODEL, weights="bf16", kv="bf16", batch=c,
                            mode="serving", input_len=INPUT, output_len=OUTPUT, metric=metric,
                            value=float(cells[col]), unit=unit, note=note, expert_parallel_size=1,
                            data_parallel_size=1, enable_dp_attention=False, split=SPLIT))
    return out


def main() -> None:
    sentence = ("Rows with split 'heldout-17' were added in session 14 (a data helper) from a document no earlier "
                "session used (ai.wmx.dev's 'Benchmark results' page: Qwen2.5-0.5B-Instruct on one L4, vLLM 0.23.0, "
                "concurrency 1-32; see reports/gpu-time/add_session14_set17_rows.py), chosen and entered before any "
                "prediction of them, and committed with the predictions of the model as it stood (reports/gpu-time/"
                "frozen/heldout-17_before.json): a sealed split, never fitted on, left out of every report until the "
                "final evaluation.")
    enter(SPLIT, S, rows(), 14, sentence, models=MODELS)


if __name__ == "__main__":
    main()
