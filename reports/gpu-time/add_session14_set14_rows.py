"""Session-14 rows, data helper (h14b): held-out set 14, entered from the source text BEFORE any prediction of them.

Re-runnable: it first removes what an earlier run of it added (the source below and every row of split
'heldout-14'), then adds them again, so running it twice leaves the table as running it once.

The set is a set of documents, fixed before any prediction: documents this helper's searches (documentation, blogs,
cookbooks, papers, repository docs) found that no earlier set uses (no url of the table's sources, no benchmark run
another source reprints, no reserved document or edition of one), that state for each figure the GPU, its count, the
parallelism, the concurrency and the request lengths, and whose model the table can read. It is smaller than the
brief's aim in documents (aim: at least 30 rows from at least 2 documents): ONE document, 72 rows, all of one MLA model
(DeepSeek-R1) on one GPU type (H20 96GB, 2 nodes x 8, TP 16) with one engine (vLLM 0.9.0.1), TTFT / TPOT / output
throughput at concurrency 1 to 128 and three request shapes. A second document with a readable setup was found (a
vLLM 0.30.0 study of Qwen2.5-7B-Instruct on one L40S, fixed random lengths, concurrency 1-16), but its repository and
path could not be found in the store (the file index gave its text without them), so it could not be cited by url and
was left out (see 'Turned down'). A small clean set was preferred to padding. The set's judgement is therefore
one-sided: it says nothing of dense or GQA-MoE models, of other GPUs or of SGLang / TensorRT-LLM; it judges TP 16 across
two nodes (the time model's inter-node all-reduce) and an H20 (a GPU whose compute is low for its bandwidth) under load.

- tke-dsr1-h20x16-vllm0901-tp16: tkestack/tke-ai-playbook (Tencent Kubernetes Engine AI playbook), file
  helm-charts/deepseek-r1-lws/perf_deepseek-r1_vllm-baseline_tp16_dp1.md pinned at 083c07d (2025-06-12, 'feat: add
  deepseek-r1-lws', a commit of the repository's pull request #7 'feature/deepseek-r1-lws'; the file was removed
  from that branch on 2025-07-07 by a980594 'feat: refactor'; it never reached main).
  Quoted settings: '# vllm Benchmark Baseline', '1 nodes, use 2 * 8 * H20 96GB'; image 'FROM
  vllm/vllm-openai:v0.9.0.1'; command 'vllm serve /data/models/deepseek-ai/DeepSeek-R1 --served-model-name
  deepseek-ai/DeepSeek-R1 --block-size 128 --max-model-len 4096 --max-num-batched-tokens 4096
  --no-enable-prefix-caching --enable-chunked-prefill --compilation-config '{"cudagraph_capture_sizes": [1, 2, 4, 8,
  16, 24, ..., 248, 256]}' -tp 16 --disable-log-requests --enable-reasoning --reasoning-parser deepseek_r1'; three
  tables 'Benchmark Result (ISL:OSL=3000:150)', '(ISL:OSL=1000:1000)', '(ISL:OSL=500:1000)', each with Concurrency 1,
  2, 4, 8, 16, 32, 64, 128 and the columns Reqeuest Throughput (req/s) | Output Token Throughput (tok/s) | Mean E2E
  Lantency (ms) | P99 E2E Lantency (ms) | Mean TTFT (ms) | P99 TTFT (ms) | Mean TPOT (ms) | P99 TPOT (ms).
  Entered, for each of the 24 (shape, concurrency) points: Mean TTFT -> ttft_ms, Mean TPOT -> itl_ms (the table's
  mean-TPOT metric, as the InferenceX rows), Output Token Throughput -> output_tokens_per_s. Model DeepSeek-R1 (the
  table's entry), weights fp8 (the official block-FP8 checkpoint, as the table enters DeepSeek's block FP8), KV bf16
  (vLLM's 'auto' for this checkpoint), GPU H20 (the catalog's H20 is the 96 GB part), TP 16, EP 1 (no
  --enable-expert-parallel: vLLM shards the experts by TP), DP 1, engine vLLM 0.9.0.1 (V1 engine). Mode 'serving',
  batch = the printed concurrency, input / output lengths = the printed ISL / OSL.
  The same run is reprinted, number for number, in the same commit's perf_deepseek-r1.md ('# vllm Benchmark
  Baseline', '2 * 8 * H20 96GB', same command) and, for its 1000:1000 table, as the 'reference result' of the
  repository's dockerfiles/llmbench/README.md; it is entered once, from the dp1 file.
  How the tables were made (the file itself prints no benchmark command): the header, down to its typos
  ('Reqeuest', 'Lantency'), is the one the repository's llmbench harness writes
  (dockerfiles/llmbench/vllm-workspace/benchmark_serving_concurrency.sh, added on the same day in 4b20d61 'feature:
  add llmbench (#6)'), and its README says bench.sh runs concurrency 1, 2, 4, 8, 16, 32, 64, 128 at ISL:OSL 3000:150,
  1000:1000 and 500:1000 and reprints this 1000:1000 table as its reference result. That script runs vLLM v0.8.4's
  benchmarks/benchmark_serving.py (the llmbench Dockerfile clones vLLM at v0.8.4 for its benchmarks) with
  '--backend openai-chat --endpoint /v1/chat/completions --dataset-name random --random_input_len ${ISL}
  --random_output_len ${OSL} --max-concurrency ${concurrency} --num-prompts $((concurrency*10)) --percentile-metrics
  ttft,tpot,itl,e2el --ignore-eos' and rounds each figure to 2 decimals.
  Doubts, each written down before any prediction:
  (1) the link between the tables and the llmbench harness is inferred (same repository and week, identical table
      format, the README reprinting the 1000:1000 table), not stated in the file; the fixed lengths rest on vLLM
      v0.8.4's random dataset, whose --random-range-ratio defaults to 1.0 (every prompt exactly ISL tokens, every
      output OSL with --ignore-eos), as this helper knows that version, not re-read here.
  (2) openai-chat endpoint: each random prompt is sent as one chat message, so DeepSeek-R1's chat template adds a
      few tokens (BOS, user / assistant markers, '<think>') to the ISL, and the random token ids are detokenized and
      re-tokenized by the server; the printed ISL is entered. HTTP, detokenization and the reasoning parser are in
      every figure (client-side timing).
  (3) TP 16 across two nodes of 8 H20 (a LeaderWorkerSet of size 2, Ray, vLLM's multi-node-serving.sh), hostNetwork;
      the inter-node network is not stated (the Dynamo sections of the same repository use an EFA-enabled build; the
      vLLM baseline image is stock). The catalog's default inter-node link is what the time model will take.
  (4) '1 nodes, use 2 * 8 * H20 96GB' is read as one serving instance (one LWS group of 2 pods x 8 GPUs), which TP
      16 requires; the chart's values-vllm.yaml at this commit says 'replicas: 2', the setting of the separate dp2
      file (two instances), so the dp1 run used 1 replica, not stated beyond the file names.
  (5) --enable-chunked-prefill with --max-num-batched-tokens 4096 (one 3000-token prompt per step at most, longer
      batches chunked), block size 128, max-model-len 4096, CUDA graphs captured up to batch 256 (so every
      concurrency here decodes in a graph): settings the table's rows carry no field for.
  (6) Output Token Throughput is generated tokens over the benchmark's whole duration for 10 x concurrency prompts,
      ramp-up and tail included; Mean TPOT excludes the first token; Mean TTFT includes any queueing in the server
      (none is expected below max-num-seqs, but prefill chunks of 4096 tokens serialize the 3000-token prompts at
      high concurrency).
  (7) KV cache dtype not stated: bf16 entered (vLLM's 'auto'); vLLM 0.9.0.1 on Hopper runs DeepSeek's MLA with its
      own kernels (FlashMLA where the block size allows, else Triton), not stated.
  Not entered: the dp2 file (perf_deepseek-r1_vllm-baseline_tp16_dp2.md: '2 nodes, per node use 2 * 8 * H20 96GB',
  i.e. two TP-16 instances behind a Kubernetes service whose balancing is not stated: the table's rows have never
  carried independent replicas and its validation path times a row as one instance, so entering it would judge the
  model on a setup it is not given), the Dynamo 1P1D sections of perf_deepseek-r1.md and perf_deepseek-r1_pr1333.md
  (disaggregated prefill / decode with NIXL transfer, which the time model does not take), and the P99 columns.

Turned down, before any prediction (each read as far as the stored copy allows):
- the L40S study named above (Qwen2.5-7B-Instruct, vLLM 0.30.0, one L40S, fixed random lengths; E1 concurrency 1-16 at
  512/128, E2 / E3 lengths at concurrency 4, E4 prefix caching; medians only): its text came from the file index
  without a repository or path, and searches by its content did not find them, so no url could be given.
- vllm-project/recipes (newest snapshot 8959cf6 and its history): the model pages print at most one 'expected output'
  block each; DeepSeek-V3.md (one block of one request, GPU and TP not stated beside it), GLM.md (GLM-4.5-FP8, 16
  prompts at request rate 10000, GPU not stated), Kimi-K2.md (16xH800 / 16xH200 DP+EP, request rate 1.0 or 10000 with
  8 / 16 prompts: no concurrency), Kimi-K2-Think.md (8xH200 at request rates, prefill of 8 parallel contexts),
  MiniMax-M2 / M2.5 (one block on H20-3e, a GPU the catalog lacks), Kimi-K2.5 YAML (reprints SemiAnalysis
  InferenceX), Mistral-Medium-3.5 / Ministral-3 / GLM-5 / Hy3 / Step-3.5 / Nemotron (models the table does not
  read), Llama3.3-70B / Llama4-Scout / GPT-OSS (templates of 'xxx').
- sgl-project/sgl-cookbook: the store's newest snapshot is 7b5bd9c, the commit earlier sets read; the history of the
  pages of models the table reads holds no other edition with other runs except DeepSeek-V3_1.md at 9c0de67 (ShareGPT
  with EAGLE speculative decoding); the pages set 13 turned down stay turned down.
- LMSYS blog 2026-02-11 'Ultimate Latency Optimization of Qwen3 and Qwen3-VL on AMD MI300X Series' (single request on
  MI308, a GPU the catalog lacks); ROCm/rocm-blogs (the store's snapshot ends in 2024-10 and holds no serving table);
  the ROCm MI355X 'Scaling AI Inference' blog and DeepSeekR1-Part2 (charts; turned down before); llm-d/llm-d (snapshot
  of 2025-06, no benchmark table).
- GPUStack performance-lab GLM-4.6 H200 page and the other throughput pages (1000 ShareGPT or 500 random prompts sent
  at once: no concurrency, as earlier sets found).
- NVIDIA NIM benchmarking 1.0.0 performance page (the table's source 'nim-bench') and its 'performance-tables'
  reprints; per-model NIM pages found (Nemotron safety guard: a model the catalog lacks).
- TensorRT-LLM tech blog 20 (CUDA graph batch sizes on GB200: relative gains and charts only). No TensorRT-LLM
  performance page or reserved blog was opened.
- repository reports found by their tables: a MiMo-V2.5 8xH100 baseline (model not in the catalog), a North-Mini-Code
  TPU v7x vs H200 comparison (model not in the catalog), a GB200 cluster field report (gpt-oss-120b TP 4, three points,
  engine version and harness patches not stated beside them), a Kimi-K2.5 on 8xB200 table sourced from InferenceX (a
  reprint), a 4xMI100 vLLM page (GPU not in the catalog), tkestack's Qwen3-32B Dynamo page (disaggregated; its vLLM
  baselines are 4 x TP4 replicas), TPU / Ascend / MetaX / DGX Spark reports, and Chinese interview templates with
  made-up tables.
- bizrockman.github.io AIInferenceBenchmark (H200: 'server throughput' derived as user throughput x batch, read only
  as search excerpts), docs.vultr.com inference cookbook B200 pages (turned down by set 11), arXiv 2603.10031 (turned
  down by set 13), runinfra.ai / tim-wang-tecg-blog / inferenceengineering.tech (turned down before), jarvislabs.ai
  (ShareGPT and RULER datasets).
No reserved document was opened or used: no TensorRT-LLM performance page (performance.md, perf-overview.md, any
version; two perf-overview excerpts appeared in search results and were passed over unopened) or blog named reserved
(H200launch.md, H100vsA100.md), no ROCm/vllm dev-docker README (search excerpts titled 'vllm FP8 Latency and Throughput
benchmarks on AMD MI300x' were passed over unopened), no dstack DeepSeek-R1 benchmark, no SGLang B200 gist or cookbook
B200 page of Qwen3-235B / gpt-oss-120b, no QuixiAI model card.

Every value is a number the document printed (copied below as the document's table lines and split into columns); no
arithmetic is done on any value, and no length is derived (the lengths are the tables' printed ISL / OSL).

Run: python reports/gpu-time/add_session14_set14_rows.py
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from table_entry import enter, serving_row  # noqa: E402

SPLIT = "heldout-14"
COMMIT = "083c07dbcbd5d6a6810ea66ca2d5dc63d93611a1"
SRC = "tke-dsr1-h20x16-vllm0901-tp16"

S = {
 SRC: dict(url=("https://github.com/tkestack/tke-ai-playbook/blob/" + COMMIT
                + "/helm-charts/deepseek-r1-lws/perf_deepseek-r1_vllm-baseline_tp16_dp1.md"),
   what=("tkestack/tke-ai-playbook, 'vllm Benchmark Baseline' of DeepSeek-R1 on 2 x 8 H20 96GB (pull request #7, "
         "deepseek-r1-lws chart): vLLM v0.9.0.1, TP 16, concurrency 1-128 at ISL:OSL 3000:150, 1000:1000 and "
         "500:1000; 72 figures (mean TTFT, mean TPOT, output token throughput)"),
   setup=("vllm/vllm-openai:v0.9.0.1, 'vllm serve ... --block-size 128 --max-model-len 4096 "
          "--max-num-batched-tokens 4096 --no-enable-prefix-caching --enable-chunked-prefill (CUDA graphs up to 256) "
          "-tp 16 --enable-reasoning --reasoning-parser deepseek_r1', one instance over 2 nodes of 8 H20 96GB (LWS + "
          "Ray; inter-node network not stated). Client (inferred from the repository's llmbench harness, same table "
          "format): vLLM v0.8.4 benchmark_serving.py, openai-chat, random dataset with the printed ISL / OSL "
          "(range ratio default: fixed lengths), --max-concurrency c, 10 x c prompts, --ignore-eos. fp8 block "
          "weights (official checkpoint), KV bf16 entered (not stated), EP 1 (experts TP-sharded). Mean TTFT -> "
          "ttft_ms, Mean TPOT -> itl_ms, Output Token Throughput -> output_tokens_per_s. The same run is reprinted "
          "in perf_deepseek-r1.md and (1000:1000) in dockerfiles/llmbench/README.md; the dp2 file (two instances "
          "behind a service) and the Dynamo disaggregated sections are not entered."),
   engine="vLLM 0.9.0.1", engine_family="vllm", engine_version="0.9.0.1", klass="mla", date="2025-06"),
}

# The document's table lines, as printed: | Concurrency | Reqeuest Throughput (req/s) | Output Token Throughput (tok/s)
# | Mean E2E Lantency (ms) | P99 E2E Lantency (ms) | Mean TTFT (ms) | P99 TTFT (ms) | Mean TPOT (ms) | P99 TPOT (ms) |
TABLES = {
 (3000, 150): """
| 1 | 0.21 | 31.28 | 4794.41 | 4841.15 | 315.73 | 318.74 | 30.06 | 30.39 |
| 2 | 0.35 | 52.1 | 5756.44 | 5870.18 | 459.21 | 612.92 | 35.55 | 37.18 |
| 4 | 0.61 | 91.37 | 6561.53 | 7169.04 | 561.26 | 1171.5 | 40.27 | 45.18 |
| 8 | 1 | 150.35 | 7968.12 | 9226.66 | 675.11 | 2264.11 | 48.95 | 51.44 |
| 16 | 1.45 | 217.66 | 10997.11 | 14324.16 | 875.6 | 4363.43 | 67.93 | 71.48 |
| 32 | 1.94 | 290.69 | 16448.69 | 23940.38 | 1271.29 | 8635.51 | 101.86 | 107.46 |
| 64 | 2.39 | 358.77 | 26629.59 | 42937.18 | 1872.85 | 17588.34 | 166.15 | 175.1 |
| 128 | 2.77 | 416.2 | 45830.93 | 79375.69 | 2976.7 | 35364.6 | 287.61 | 302.65 |
""",
 (1000, 1000): """
| 1 | 0.03 | 33.32 | 30010.56 | 30202.48 | 158.64 | 167.93 | 29.88 | 30.07 |
| 2 | 0.06 | 57.96 | 34507.17 | 34743.53 | 233.92 | 305.74 | 34.31 | 34.59 |
| 4 | 0.11 | 110 | 36362.91 | 37012.77 | 370.24 | 453.67 | 36.03 | 36.76 |
| 8 | 0.2 | 204.05 | 39201.31 | 39719.73 | 486.31 | 846.82 | 38.75 | 39.37 |
| 16 | 0.35 | 352.11 | 45430.89 | 46466 | 615.43 | 1620.85 | 44.86 | 45.54 |
| 32 | 0.59 | 593.36 | 53908.9 | 56004.3 | 788.2 | 3114.6 | 53.17 | 54.67 |
| 64 | 0.93 | 932.26 | 68607.6 | 73112.96 | 1035.6 | 5904.52 | 67.64 | 68.83 |
| 128 | 1.44 | 1441.79 | 88679.14 | 98840.42 | 1426 | 11664.79 | 87.34 | 89.41 |
""",
 (500, 1000): """
| 1 | 0.03 | 33.3 | 30031.68 | 30295.86 | 151.6 | 158.35 | 29.91 | 30.18 |
| 2 | 0.06 | 58.08 | 34431.96 | 34660.79 | 239.67 | 462.21 | 34.23 | 34.52 |
| 4 | 0.11 | 111.58 | 35846.46 | 36235.7 | 235.6 | 314.28 | 35.65 | 36.09 |
| 8 | 0.21 | 207.91 | 38476.3 | 39121.09 | 370.98 | 470.8 | 38.14 | 38.98 |
| 16 | 0.36 | 363.93 | 43958.6 | 44262.81 | 550.2 | 886.11 | 43.45 | 43.9 |
| 32 | 0.62 | 620.9 | 51526.32 | 52619.08 | 644.86 | 1675 | 50.93 | 52.19 |
| 64 | 1.01 | 1008.83 | 63417.48 | 65812.21 | 818.42 | 3342.4 | 62.66 | 63.16 |
| 128 | 1.62 | 1620.67 | 78928.23 | 83811.97 | 1052.66 | 6221.44 | 77.95 | 80.24 |
""",
}
# (column index in a table line, table metric, unit, the document's column name)
COLUMNS = ((5, "ttft_ms", "ms", "Mean TTFT (ms)"), (7, "itl_ms", "ms", "Mean TPOT (ms)"),
           (2, "output_tokens_per_s", "tokens/s", "Output Token Throughput (tok/s)"))


def rows() -> list[dict]:
    out, i = [], 0
    for (isl, osl), text in TABLES.items():
        for line in text.strip().splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            assert len(cells) == 9, line
            c = int(cells[0])
            i += 1
            for col, metric, unit, name in COLUMNS:
                note = (f"ISL:OSL={isl}:{osl} table, Concurrency {c}: {name} as printed (vLLM v0.9.0.1, TP 16 over 2 x 8 "
                        f"H20, random dataset, openai-chat, 10 x concurrency prompts, --ignore-eos)")
                out.append(serving_row(SPLIT, SRC, i, "DeepSeek-R1", "H20", 16, "fp8", c, isl, osl, metric,
                                       float(cells[col]), unit, note))
    return out


def main() -> None:
    sentence = ("Rows with split 'heldout-14' were added in session 14 (a data helper) from a document no earlier "
                "session used (tkestack/tke-ai-playbook's vLLM baseline of DeepSeek-R1 on 2 x 8 H20; see "
                "reports/gpu-time/add_session14_set14_rows.py), chosen and entered before any prediction of them, and "
                "committed with the predictions of the model as it stood (reports/gpu-time/frozen/heldout-14_before.json): "
                "a sealed split, never fitted on, left out of every report until the final evaluation.")
    enter(SPLIT, S, rows(), 14, sentence)


if __name__ == "__main__":
    main()
