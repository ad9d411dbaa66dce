"""Session-14 rows, the threads helper (h14a): held-out set 13, entered from the source text BEFORE any prediction of
them.

Re-runnable: it first removes what an earlier run of it added (the sources below and every row of split
'heldout-13'), then adds them again, so running it twice leaves the table as running it once.

The set is a set of documents, fixed before any prediction: GitHub pull-request threads this helper's searches of
the stored issue / pull-request corpus found that no earlier set uses (no url of the table's sources, no benchmark run
another source reprints, no reserved document or edition of one, none of the documents earlier helpers turned down),
that print, beside the result, the model, the GPU and its count, the parallelism, the engine (or the thread's date),
the concurrency and fixed request lengths, and whose model the table can read. It is FAR smaller than the brief's aim
(at least 30 rows from at least 2 documents): FOUR documents, SEVEN rows, all MoE (no dense, no MLA), three output
throughputs, two TTFTs and two TPOTs, at concurrency 1, 10, 64 and 2560. In a long search of the stored threads (well
over a hundred look-ups; see 'Turned down' below) almost every thread with a full result block either reused a
document the table already holds (InferenceX, tt-inference-server GPU references), ran ShareGPT or request-rate
loads, drew random lengths without a fixed range, ran a GPU, model or engine the table cannot read (H20-3e, L20, A40,
MI100, V100, Ascend, ATOM, NVFP4 / W4A8 checkpoints, Qwen3-Next / Qwen3.5 / GLM-5 / DeepSeek-V3.2 / -V4), used
speculative decoding, or could only be read in part: the stored copy of a thread holds its first chunks, so a block
whose GPU, model or settings sit outside them was turned down rather than completed by guess. A small clean set was
preferred to padding. The set's judgement is therefore thin: it says something of MoE serving at a stated
concurrency (two vLLM runs, one SGLang run with data-parallel attention at a very large batch) and of one batch-1 MoE
TPOT, and nothing of dense or MLA models.

- vllm23151-qwen3-30b-h100: vllm-project/vllm pull request #23151 'Add tuned fused_moe configs for Qwen3-30B-A3B'
  (wenchen76, description of 2025-08-19). 'Server: VLLM_USE_DEEP_GEMM=1 vllm serve Qwen/Qwen3-30B-A3B'; 'Benchmark
  script: python benchmarks/benchmark_serving.py --backend vllm --model Qwen/Qwen3-30B-A3B --endpoint
  /v1/completions --dataset-name random --random-input 2048 --random-output 1024 --max-concurrency 10 --num-prompt
  100'; result block 'WO tuned configs (TP=1, EP=1, on H100)': 'Successful requests: 100', 'Maximum request
  concurrency: 10', 'Total input tokens: 204169', 'Total generated tokens: 101576', 'Output token throughput (tok/s):
  739.79', 'Mean TTFT (ms): 267.22', 'Mean TPOT (ms): 13.18'. Entered: the block without the PR's tuned configs
  (vLLM main of the thread's date, no PR code): output_tokens_per_s, ttft_ms, itl_ms (mean TPOT) at batch 10, TP 1,
  bf16 (the checkpoint's dtype, vLLM's default; not stated), 2048 in / 1024 out nominal. The block with the tuned
  configs is not in the stored copy (the copy ends inside this block, after the TPOT lines): not entered.
  Doubts, written before any prediction: (1) no --ignore-eos: 101576 tokens were generated where 100 x 1024 would be
  102400, so some requests stopped early (the mean output is a little under the nominal 1024 entered); the inputs
  total 204169, not 204800 (vLLM's random prompts re-tokenize to a little under the nominal length); nominal lengths
  entered, no arithmetic. (2) 'H100' without form factor: H100-SXM entered, as earlier sets did. (3) vLLM version not
  stated: main of 2025-08-19 (the v0.10.1 line); no version entered. (4) VLLM_USE_DEEP_GEMM=1 changes nothing for a
  bf16 model (DeepGEMM is an fp8 path).
- vllm43232-qwen3-235b-b200: vllm-project/vllm pull request #43232 'Xqa decode kernels', comment by DanBlanaru of
  2026-06-03: 'ran on b200 again to make sure we don't break sm100. Still within noise', with 'vllm serve
  Qwen/Qwen3-235B-A22B-Instruct-2507-FP8 --tensor-parallel-size 4 --kv-cache-dtype fp8 --max-model-len 32768
  --gpu-memory-utilization 0.85 --enable-prefix-caching --no-enable-log-requests' and 'vllm bench serve --backend
  vllm --model Qwen/Qwen3-235B-A22B-Instruct-2507-FP8 --dataset-name random --random-input-len 30000
  --random-output-len 1000 --num-prompts 128 --max-concurrency 64 --ignore-eos'; block: 'Successful requests: 128',
  'Maximum request concurrency: 64', 'Total input tokens: 3840000', 'Total generated tokens: 128000', 'Output token
  throughput (tok/s): 847.07', 'Mean TTFT (ms): 15725.91'. Entered: output_tokens_per_s and ttft_ms at batch 64, TP 4
  on 4 B200, fp8 weights (the FP8 checkpoint, block fp8), KV fp8 (stated), 30000 in / 1000 out (the totals are
  exactly 128 x 30000 and 128 x 1000). The stored copy ends before the block's TPOT lines: TPOT not entered.
  Doubts: (1) the build is the pull request's branch of 2026-06-03 (XQA decode kernels, a Hopper path; the comment
  checks that the B200 path is unchanged, 'within noise'), version not stated; (2) prefix caching is on (random
  prompts share no prefix, so no hits are expected); (3) with 64 requests of 30000 tokens the KV cache may not hold
  every request at once (32768-token max length, 0.85 memory; not stated): the TTFT includes queueing; (4) the
  model is the table's Qwen3-235B-A22B (the Instruct-2507 checkpoint, same shapes).
- sgl9359-gptoss120b-b200-dpattn: sgl-project/sglang pull request #9359 'Support DP attention with GPT-OSS'
  (nvcastet, description of 2025-08-19): 'Tested on 4x B200 with DP4 Attn + EP4 MoE'; 'python3 -m
  sglang.launch_server --model openai/gpt-oss-120b --disable-radix-cache --attention-backend trtllm_mha --tp 4 --ep 4
  --cuda-graph-max-bs 640 --enable-dp-attention --dp 4 --enable-dp-lm-head --stream-interval 10
  --mem-fraction-static 0.9 --cuda-graph-bs 1 2 4 ... 640 --max-running-requests 2560'; 'python3 -m
  sglang.bench_serving --backend sglang --dataset-name random --num-prompt 12800 --random-input 1024 --random-output
  2048 --random-range-ratio 1 --max-concurrency 2560'; block: 'Max request concurrency: 2560', 'Successful requests:
  12800', 'Total input tokens: 13107200', 'Total generated tokens: 26214400', 'Output token throughput (tok/s):
  66941.40'. Entered: output_tokens_per_s at batch 2560, TP 4, EP 4, DP 4 with DP attention, mxfp4 weights (the
  native checkpoint), 1024 in / 2048 out (exactly 12800 x 1024 and 12800 x 2048). The 'Total output per GPU:
  16,735.35 tok/s/gpu' the description prints is the same measurement divided by four: not entered a second time.
  The stored copy ends before the block's TTFT / TPOT lines: not entered. Doubts: (1) the build is the pull
  request's branch (DP attention for gpt-oss is what it adds), SGLang version not stated (2025-08-19, the v0.5.0
  line); (2) KV cache dtype not stated: bf16 entered (SGLang's default for this model); (3) batch 2560 at 1024 + 2048
  tokens is far beyond the table's usual batches, and whether every request was resident at once (not stated) is a
  doubt; (4) --stream-interval 10 batches the streamed tokens, which touches client-side timing, not the output
  throughput entered.
- emmy822-qwen3-30b-h200-b1: cloudrift-ai/emmy pull request #822 'Add qualified Qwen3 30B A3B H200 recipe'
  (yash-asvi, description of 2026-09-16): 'Qwen/Qwen3-30B-A3B-Instruct-2507 at revision 0d7cf239...', 'Stock
  vllm/vllm-openai:v0.17.0, TP1, PP1, 90% GPU memory, concurrency 1', 'Three 8-request repeats at 4,096 input and
  4,096 output tokens completed without failures', result table 'Mean TPOT | 4.62 ms' (one value for the three
  repeats; throughput and TTFT are printed as ranges over the repeats, '214.77-214.90 tok/s', '127.73-142.05 ms', and
  are not entered: a range is not one printed value). The thread's recipe report (recipes/Qwen3-30B-A3B-Instruct-2507/
  RESULTS.md at 29fa2768) prints the same table and adds 'temperature 0, ignored EOS, 2 warm-ups' and '1 x NVIDIA
  H200 141GB'. Entered: itl_ms 4.62 at batch 1, TP 1, bf16 (the checkpoint, stated 'The BF16 checkpoint'), 4096 in /
  4096 out, vLLM 0.17.0. Doubts: (1) 'H200 141GB' without form factor: H200-SXM entered (the H200 NVL also has 141
  GB); (2) the model is the table's Qwen3-30B-A3B (the Instruct-2507 checkpoint has the same shapes, a longer RoPE
  context only); (3) max-num-batched-tokens 4096 chunks the 4096-token prefill, which touches TTFT, not the TPOT
  entered.

Turned down, before any prediction (each read as far as the stored copy allows):
- documents the table already holds or earlier helpers turned down: InferenceX #828, #870 (both comments share its
  url), #832, #3173, #3175, #3183, #3288, #3317, #3318, #3363 and the other Klaud Cold image-update pull requests
  (fp4 / MTP / agentic / disaggregated families, all-N/A tables, or baselines another pull request prints: #2949's
  final sweep is #3318's baseline); tt-inference-server GPU reference issues (#125, #143, #340, #356, #379, #521);
  vllm #13412, #15322, #20469, #20710, #42497, #7567, #18566, #23867; sglang #5360, #9278, #21576, #32480;
  srt-slurm #132; achatbot #183; vllm-project/recipes #431 / #443 / #476.
- request-rate or ShareGPT loads (no stated concurrency or unfixed lengths): sglang #4918, #5571, #5611, #6220 (rate
  10), #5196, #5641 (rate 10, H20 TP16), the Qwen3 MoE tuning family referring to sglang #5740 (#5839, #5846, #5850,
  #5877: request rate 10), vllm #22478, #23369, #23696, #3297, #9722, #17788, vllm-ascend threads.
- lengths not fixed (random without a range ratio, so each run's lengths are drawn; arithmetic on totals would be
  needed): sglang #6885, #7631 (H20 DeepSeek-V3, 1024/512), #8047 (Kimi on H20), #8852, #9204, #11730 (also MTP
  accept length), vllm #36559, #36795, #37205 (xyang16's PRs: inputs 219140 / 960 requests), ROCm/ATOM #409 (range
  ratio 0.8, ATOM engine), srt-slurm recipes (ratio 0.8).
- GPU, model or engine the table cannot read: vllm #19205 / #19315 / #19401 and sglang #6835 / #8344 (H20-3e, 141 GB,
  not the catalog's H20), #15322 (L20), sglang #6121 (A40), vllm #23340 (PP 4 with max-num-seqs 1 on A100), ROCm/ATOM
  #466 / #750 / #2086 (ATOM engine, Qwen3-Next, DeepSeek-V3.2 / V4), sglang #7762 / #10027 (W4AFP8), #8552 / #8539 /
  vllm #25135 / #39897 / #48983 (NVFP4 / FP4), sglang #10404 / #10467 / #10631 / vllm-project/recipes #58 (Qwen3-
  Next), sglang #31044 (MiniMax-M2.7 MI300X, KV fp8; set 13 turned its cells down), #31216 (Gemma 4), #30812 (GLM-5.1),
  #30179 / #32323 / #32959 (Qwen3.5 / 3.6), #31363 (DeepSeek-V4), #31554 / #31609 (GLM-5.2), #33781 (MiniMax-M3), #14194
  (decode context parallel), cloudrift-ai/emmy V100 / RTX 5090 reports (V100 not in the catalog; Gemma 4), tenstorrent
  hardware threads.
- GPU or settings not stated beside the block in the stored copy: vllm #27058 (DeepSeek-R1-0528 TP8 on ROCm, GPU not
  named), #21716 / #22703 (model and GPU outside the stored chunk), #29346 (DeepSeek-R1 TP8, GPU not named for the
  reviewer's blocks), #47276 (DSv3 on MI300, KV dtype of the TP8 table unclear, P50 values only in the stored table),
  #28992 (DeepSeek-V3.1 decode sweep on 8x H200: the stored copy ends inside the first block), #16011, #42484 (RFC,
  model not in the stored part), sglang #7445 (Qwen3-235B-A22B-FP8 TP4, GPU not named), #7687 (DeepSeek-V3 TP16 on two
  H200 nodes, only the duration line of its before/after block stored), #9101 (GPU not named), #13480 (GPU not named),
  #14043 (results outside the stored part), #5159 (results 'TODO'), vllm #16488 (results in a screenshot),
  vllm-project/recipes #112 / #120 (MiniMax-M2 on H100/H20: lengths not in the stored part), ROCm/aiter #1930
  (median TPOT only, SGLang version and TP not stated).
- speculative decoding: vllm #29657, sglang #11730, #12002, #23682, InferenceX MTP families.
- not a serving benchmark of the table's kind: InferenceX #819 / #863 (profiles), ai-dynamo/aiconfigurator PRs
  (model estimates, not measurements), TensorRT-LLM #6294 (a reproduction of the reserved performance overview:
  turned down unread beyond its excerpt), #3058.
No reserved document was opened or used: no TensorRT-LLM performance page (performance.md, perf-overview.md, any
version) or blog named reserved (H200launch.md, H100vsA100.md), no ROCm/vllm dev-docker README, no dstack DeepSeek-R1
benchmark (dstack pull request #2425, its blog, appeared in a search list and was not opened), no SGLang B200 gist or
cookbook B200 page of Qwen3-235B / gpt-oss-120b, no QuixiAI model card.

Every value is a number the document printed; no arithmetic is done on any value, and no length is derived (the
lengths are the commands' --random-input / --random-output lengths; the printed token totals are quoted only as a
check).

Run: python reports/gpu-time/add_session14_set13_rows.py
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from table_entry import enter, serving_row  # noqa: E402

SPLIT = "heldout-13"

S = {
 "vllm23151-qwen3-30b-h100": dict(url="https://github.com/vllm-project/vllm/pull/23151",
   what=("vLLM pull request #23151 'Add tuned fused_moe configs for Qwen3-30B-A3B', description of 2025-08-19: the "
         "result block without the tuned configs (TP=1, EP=1, on H100), random 2048/1024 at max concurrency 10"),
   setup=("`VLLM_USE_DEEP_GEMM=1 vllm serve Qwen/Qwen3-30B-A3B` (TP 1, defaults; bf16 entered: the checkpoint's dtype, "
          "not stated); benchmarks/benchmark_serving.py --dataset-name random --random-input 2048 --random-output 1024 "
          "--max-concurrency 10 --num-prompt 100, no --ignore-eos (101576 of a nominal 102400 tokens generated: some "
          "requests stopped early; nominal lengths entered); 'H100' entered as H100-SXM (form factor not stated); "
          "vLLM main of the thread's date, version not stated; the block with the PR's tuned configs is not in the "
          "stored copy. KV bf16 entered (vLLM's default for a bf16 model)."),
   engine="vLLM (main of 2025-08-19, version not stated)", engine_family="vllm", klass="moe", date="2025-08"),
 "vllm43232-qwen3-235b-b200": dict(url="https://github.com/vllm-project/vllm/pull/43232",
   what=("vLLM pull request #43232 'Xqa decode kernels', comment of 2026-06-03 ('ran on b200 again ... Still within "
         "noise'): Qwen3-235B-A22B-Instruct-2507-FP8, TP 4 on B200, KV fp8, random 30000/1000 at max concurrency 64"),
   setup=("`vllm serve Qwen/Qwen3-235B-A22B-Instruct-2507-FP8 --tensor-parallel-size 4 --kv-cache-dtype fp8 "
          "--max-model-len 32768 --gpu-memory-utilization 0.85 --enable-prefix-caching`; `vllm bench serve --dataset-name "
          "random --random-input-len 30000 --random-output-len 1000 --num-prompts 128 --max-concurrency 64 --ignore-eos` "
          "(totals 3840000 / 128000: exact lengths). The pull request's branch of 2026-06-03, version not stated; the "
          "stored copy ends before the block's TPOT lines (output throughput and mean TTFT entered). Prefix caching on "
          "(random prompts: no shared prefix)."),
   engine="vLLM (pull-request branch of 2026-06-03, version not stated)", engine_family="vllm", klass="moe",
   date="2026-06"),
 "sgl9359-gptoss120b-b200-dpattn": dict(url="https://github.com/sgl-project/sglang/pull/9359",
   what=("SGLang pull request #9359 'Support DP attention with GPT-OSS', description of 2025-08-19: gpt-oss-120b on "
         "4x B200 with DP4 attention + EP4 MoE, random 1024/2048 (range ratio 1) at max concurrency 2560"),
   setup=("`sglang.launch_server --model openai/gpt-oss-120b --disable-radix-cache --attention-backend trtllm_mha --tp 4 "
          "--ep 4 --enable-dp-attention --dp 4 --enable-dp-lm-head --stream-interval 10 --mem-fraction-static 0.9 "
          "--cuda-graph-max-bs 640 --max-running-requests 2560`; `bench_serving --dataset-name random --num-prompt 12800 "
          "--random-input 1024 --random-output 2048 --random-range-ratio 1 --max-concurrency 2560` (totals 13107200 / "
          "26214400: exact lengths). The pull request's branch, SGLang version not stated; KV dtype not stated (bf16 "
          "entered); the stored copy ends before the block's TTFT / latency lines (output throughput entered)."),
   engine="SGLang (pull-request branch of 2025-08-19, version not stated)", engine_family="sglang", klass="moe",
   date="2025-08"),
 "emmy822-qwen3-30b-h200-b1": dict(url="https://github.com/cloudrift-ai/emmy/pull/822",
   what=("cloudrift-ai/emmy pull request #822 'Add qualified Qwen3 30B A3B H200 recipe', description of 2026-09-16: "
         "Qwen3-30B-A3B-Instruct-2507 on one H200 141GB with stock vLLM 0.17.0, TP 1, concurrency 1, three 8-request "
         "repeats at 4096 in / 4096 out; mean TPOT 4.62 ms"),
   setup=("vllm/vllm-openai:v0.17.0, TP1, PP1, gpu memory 0.90, max-num-batched-tokens 4096, concurrency 1; the "
          "thread's recipe report (recipes/Qwen3-30B-A3B-Instruct-2507/RESULTS.md at 29fa2768) adds temperature 0, "
          "ignored EOS, 2 warm-ups, BF16 checkpoint. Only the mean TPOT (one value for the three repeats) entered; "
          "throughput and TTFT are printed as ranges over the repeats and not entered. 'H200 141GB' entered as H200-SXM "
          "(form factor not stated). KV bf16 entered (vLLM's default for a bf16 model)."),
   engine="vLLM 0.17.0", engine_family="vllm", engine_version="0.17.0", klass="moe", date="2026-09"),
}


def rows() -> list[dict]:
    out = []
    src = "vllm23151-qwen3-30b-h100"
    base = "WO tuned configs (TP=1, EP=1, on H100), random 2048/1024, max concurrency 10, 100 prompts"
    for metric, value, unit, what in (("output_tokens_per_s", 739.79, "tokens/s", "Output token throughput (tok/s)"),
                                      ("ttft_ms", 267.22, "ms", "Mean TTFT (ms)"),
                                      ("itl_ms", 13.18, "ms", "Mean TPOT (ms)")):
        out.append(serving_row(SPLIT, src, 1, "Qwen3-30B-A3B", "H100-SXM", 1, "bf16", 10, 2048, 1024, metric, value,
                               unit, f"{base}: {what} as printed"))
    src = "vllm43232-qwen3-235b-b200"
    base = ("B200 comment of 2026-06-03, TP 4, KV fp8, random 30000/1000, max concurrency 64, 128 prompts, "
            "ignore-eos")
    for metric, value, unit, what in (("output_tokens_per_s", 847.07, "tokens/s", "Output token throughput (tok/s)"),
                                      ("ttft_ms", 15725.91, "ms", "Mean TTFT (ms)")):
        r = serving_row(SPLIT, src, 1, "Qwen3-235B-A22B", "B200", 4, "fp8", 64, 30000, 1000, metric, value, unit,
                        f"{base}: {what} as printed")
        r["kv"] = "fp8"
        out.append(r)
    src = "sgl9359-gptoss120b-b200-dpattn"
    r = serving_row(SPLIT, src, 1, "gpt-oss-120b", "B200", 4, "mxfp4", 2560, 1024, 2048, "output_tokens_per_s",
                    66941.40, "tokens/s",
                    "4x B200, TP 4, EP 4, DP 4 with DP attention, random 1024/2048 range ratio 1, max concurrency 2560, "
                    "12800 prompts: Output token throughput (tok/s) as printed", ep=4, dp=4, dp_attn=True)
    out.append(r)
    src = "emmy822-qwen3-30b-h200-b1"
    out.append(serving_row(SPLIT, src, 1, "Qwen3-30B-A3B", "H200-SXM", 1, "bf16", 1, 4096, 4096, "itl_ms", 4.62, "ms",
                           "one H200 141GB, vLLM 0.17.0, TP 1, concurrency 1, three 8-request repeats at 4096/4096: "
                           "Mean TPOT 4.62 ms as printed (one value for the three repeats)"))
    return out


def main() -> None:
    sentence = ("Rows with split 'heldout-13' were added in session 14 (the threads helper) from pull-request threads no "
                "earlier session used (see reports/gpu-time/add_session14_set13_rows.py), chosen and entered before any "
                "prediction of them, and committed with the predictions of the model as it stood (reports/gpu-time/"
                "frozen/heldout-13_before.json): a sealed split, never fitted on, left out of every report until the "
                "final evaluation.")
    enter(SPLIT, S, rows(), 14, sentence)


if __name__ == "__main__":
    main()
