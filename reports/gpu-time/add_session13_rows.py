"""Session-13 rows (h28e10): held-out set 10, entered from the source text BEFORE any prediction of them.

Re-runnable: it first removes what an earlier run of it added (the sources below and every row of split
'heldout-10'), then adds them again, so running it twice leaves the table as running it once.

The set is a set of documents, fixed before any prediction: documents this helper's searches found that no earlier
set uses (no url of the table's sources, no benchmark run another source reprints, no reserved document or edition of
one), that state for each figure the GPU, its count, the parallelism, the concurrency and the request lengths, and
whose model the table can read. It is far smaller than the brief's aim (60-200 rows from at least 5 documents, as
many dense rows as MoE/MLA rows): ONE document, 24 rows, all of them MLA (none dense). In about 80 minutes of search
this helper found no other document that met every requirement and could be read whole here; a small clean set was
preferred to padding it with the doubtful ones listed at the end. The set's judgement is therefore thin: 24 rows of
one document, one GPU, one engine version, one model.

- sgl-project/sgl-cookbook, the SGLang cookbook's Kimi-K2.5 page (docs/autoregressive/Moonshotai/Kimi-K2.5.md,
  pinned at 7b5bd9c, the commit sessions 7 and 12 pinned the other cookbook pages at; the page's section 5.2 blocks
  are unchanged since the page was added on 2026-01-30, commit 23ed4d5; the later commits add a speculative-decoding
  section 5.2.2 and an AMD MI350X section 5.3, neither used): section 5.2.1 'Latency Benchmark', Test Environment
  'NVIDIA H200 GPU (8x)', 'Tensor Parallelism: 8', 'SGLang Version: 0.5.6.post2'; server `sglang serve --model-path
  moonshotai/Kimi-K2.5 --tp 8 --trust-remote-code` (SGLang defaults otherwise: EP 1, no DP attention, KV cache in the
  model dtype, entered bf16); the served checkpoint is the page's 'INT4 (Initial Released): moonshotai/Kimi-K2.5'.
  Eight bench_serving result blocks (--backend sglang, random dataset, request rate inf): 1000/1000 nominal at max
  concurrency 1 / 16 / 100, 1000/8000 at 1 / 16 (the concurrency-64 block prints only 'Waiting for completion...':
  not entered), 8000/1000 at 1 / 16 / 64. Per block: Mean TTFT -> ttft_ms, Mean TPOT -> itl_ms, Output token
  throughput -> output_tokens_per_s (the server's, all 8 GPUs), batch = the max concurrency. The random dataset is run
  without --random-range-ratio, so each request's lengths are drawn below the nominal ones: the rows' lengths are
  derived as session 7 and session 12 derived them for the other cookbook pages, each run's printed 'Total input
  tokens' / 'Total generated tokens' over its 'Successful requests', rounded (the only arithmetic in this script; the
  measured values are as printed). The token totals equal those of the other cookbook pages' random runs at the same
  nominal lengths (the benchmark's fixed seed).
  Model: the table reads Kimi-K2.5 as 'Kimi-K2' (its models entry says K2-Instruct, K2-Thinking and K2.5's text model
  share the DeepSeek-V3-architecture fields); the vision encoder of K2.5 is not exercised by the text-only random
  dataset. Doubts, each written down before any prediction:
  (1) weights: the K2.5 checkpoint is Moonshot's INT4 QAT release (routed-expert weights int4 with a group size of
      32, the rest bf16 -- from the model's published quantization, not stated on the page beyond 'INT4'); the table
      has no form for int4 experts with bf16 attention, and 'int4-g32' (gpt-fast's int4 weight-only, group 32, every
      Linear and the LM head) is entered as the nearest form the table already uses. The routed experts are by far
      most of K2.5's weight bytes, so the difference is in the small dense part, but it is a difference.
  (2) the medium- and high-concurrency blocks print figures that look like a server far from its best: at 1000/1000
      the output throughput at concurrency 100 (253.51 tok/s) is no higher than at 16 (258.18 tok/s) while the mean
      TPOT rises from 53.25 to 364.70 ms, and the concurrency-16 TPOT is near six times the concurrency-1 TPOT (9.22
      ms). Entered as printed (the page gives no reason; the INT4 MoE kernels of that SGLang release on H200 are one
      possible cause, not checked): the set is to judge what was measured, and this note is here so that a large
      error on these rows is read with it.
  (3) the page names no memory size or form factor beyond 'NVIDIA H200 GPU (8x)': H200-SXM entered (the catalog's
      only H200 with eight GPUs a node).
  (4) the commands launch `sglang serve` without --ep or --dp: EP 1 and DP 1 entered from SGLang's defaults.

Turned down, before any prediction (each read as far as the stored copy allows):
- the SGLang cookbook's Kimi-K2.6 page (docs/autoregressive/Moonshotai/Kimi-K2.6.md): its H200 'Speed Benchmark'
  blocks are number for number the Kimi-K2.5 page's (a reprint) under a different stated SGLang version (0.5.9); its
  MI350X section is on a GPU the catalog lacks (the catalog has MI355X only). The Kimi-K2.5 page's MI350X section
  5.3 and speculative-decoding section 5.2.2 are not used for the same reasons (GPU not in the catalog; speculative
  decoding, which the time model does not take).
- other SGLang cookbook pages with result blocks at 7b5bd9c: MiniMax-M2.7 (2x GB300, a GPU the catalog lacks),
  Qwen3-Coder (Qwen3-Coder-480B-A35B, a model the catalog lacks), GLM-4.7 / GLM-4.5 (commands only, no result
  blocks), GLM-4.7-Flash, DeepSeek-V3.2 / DeepSeek-Math-V2 / DeepSeek-OCR, Ernie 4.5, Devstral-2, Ministral-3,
  Gemma 4, Qwen3-Next / Qwen3-Coder-Next / Qwen3.5 / Qwen3-VL, Step3.5, Kimi-Linear, Nemotron3, LLaDA (models the
  table does not read); the pages earlier sets use (DeepSeek-R1, DeepSeek-V3, DeepSeek-V3.1, Kimi-K2, GLM-4.6, Llama
  4, Llama 3.1, MiniMax-M2, MiniMax-M2.5; other sections of those pages share their url); the Qwen3 and GPT-OSS pages
  (reserved in their B200 editions, used by set 6 anyway) were not opened.
- sgl-project/sglang docs_new benchmark snippets (the config-driven cookbook): MiniMax-M2.7 MI300X cells (random
  1000/1000 without a range ratio and without the printed token totals, so the lengths cannot be derived; KV fp8;
  per-GPU throughput rounded), Kimi-K2.6 / Kimi-K3 / GLM-5.x / Qwen3.5 / Qwen3.6 / DeepSeek-V4 / MiniMax-M3 and others
  (models the table does not read); sglang #30179 (Qwen3.5-4B), #32323 / #32959 (Qwen3.5 / Qwen3.6).
- SemiAnalysisAI/InferenceX #3173 (dsr1-fp8-h200-sglang baseline of 2026-05-17: the same ten points, number for
  number, as #3288, which set 9 entered: a reprint); #3183 / #2951 (NVFP4), #3311 / #3285 / #3107 / #3222 / #3064 /
  #3061 (Qwen3.5), #3176 / #3258 / #3065 / #3033 / #3186 (DeepSeek-V4.x, AgentX), #2919 / #2956 / #3076 (Kimi-K3 /
  Kimi-K2.6 FP4, disaggregated or all N/A), #3327 / #2953 / #3063 / #3361 (MiniMax-M3, agentic traces, MTP),
  #3160 / #3082 / #2957 / #3034 (disaggregated, all N/A), #2844 (MTP); #756 / #831 / #836 / #837 (MiniMax-M2.5
  configs whose result tables could not be read whole here); the InferenceX threads earlier sets use.
- tt-inference-server threads: Tenstorrent hardware reports (#508, #707, #342, #344, #851, #1932, #1842, #314, #312,
  #634, #745, #1571, #1708, #1365, #1446, #2658, #2149, #406), #379 (Llama-3.2-90B-Vision, a model the catalog
  lacks), and the GPU reference threads earlier sets use (#143, #340, #356, #521, #125).
- GPUStack performance-lab pages not yet used (GLM-4.x / GLM-4.5-Air / Qwen3-14B / Qwen3-32B / Qwen3-235B-A22B /
  gpt-oss-20b throughput pages: 1000 ShareGPT or 500 random prompts sent at once, no stated concurrency, as sets 7-9
  found; Qwen3.5 pages: a model the table does not read; 910B pages: Ascend).
- vLLM / SGLang issue and pull-request result blocks seen only as search excerpts (vllm #15322 on L20, a GPU the
  catalog lacks; vllm #13412, #7567, #42497, #23867; sglang #5360, #6220, #21576, #9812, #18870 on RTX PRO 6000;
  ROCm/vllm #920 on gfx1151; vllm-ascend threads; intel/llm-scaler #285): ShareGPT or request-rate runs, GPUs or
  models the catalog lacks, or blocks that could not be read whole with their commands (a partly read thread risks
  figures put on the wrong setting).
- vllm-project/recipes #476 / #443 (Ministral-3 on MI300X, a model the table does not read).
- Vultr inference cookbook MI325X pages and the MI325X technical report arXiv 2603.10031 built on them (Llama-3.1-405B:
  the lengths of each sweep are not stated beside it, throughput not said to be output or total, KV fp8; set 9 turned
  the Vultr pages down for the same reasons).
- sariekr/gpu_conc (a concurrency study whose 'concurrency' is not shown to be the requests in flight; set 9 turned a
  GPU-concurrency study of this kind down), Oracle / substratus / dstack Llama 3.1 405B MI300X posts (offline
  benchmark_latency / benchmark_throughput, ShareGPT at once, or charts), runinfra.ai and spheron.network / cloudai.pt
  (turned down by set 9), the Cerebrium Llama 3.1 H100 blog (only a summary is stored), chinmayhebbal.com gpt-oss-120b
  on MI300X (one run, lengths not stated in the stored part), the ROCm 'Scaling AI Inference ... MI355X' blog (curves
  as charts), gonka-ai/gonka #730 (proof-of-compute workload, not a stated serving benchmark).
No reserved document was opened or used: no TensorRT-LLM performance page or blog named reserved, no ROCm/vllm
dev-docker README, no dstack DeepSeek-R1 benchmark, no SGLang B200 gist or cookbook B200 page of Qwen3-235B /
gpt-oss-120b, no QuixiAI model card.

Every value is a number the document printed; no arithmetic is done on any value. The one derived quantity is the
request lengths (printed token totals over the printed request count, rounded).

Run: python reports/gpu-time/add_session13_rows.py
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from table_entry import enter, serving_row  # noqa: E402

SPLIT = "heldout-10"
COOKBOOK = "https://github.com/sgl-project/sgl-cookbook/blob/7b5bd9c05e3d86da5161ac2be9b91c19a34bf49d/"

S = {
 "sglcb-kimi-k25-h200": dict(url=COOKBOOK + "docs/autoregressive/Moonshotai/Kimi-K2.5.md",
   what=("SGLang cookbook, Kimi-K2.5 page, section 5.2.1 Latency Benchmark: Kimi-K2.5 (INT4 release) on 8x H200, TP 8, "
         "SGLang 0.5.6.post2, 8 bench_serving runs (1000/1000 nominal at max concurrency 1 / 16 / 100, 1000/8000 at "
         "1 / 16, 8000/1000 at 1 / 16 / 64)"),
   setup=("SGLang bench_serving --backend sglang, random dataset, request rate inf, no --random-range-ratio (lengths "
          "drawn below the nominal --random-input-len / --random-output-len; the row's lengths are the run's printed "
          "totals over its requests, as sessions 7 and 12 entered the other cookbook pages); --num-prompts 10 / 80 / "
          "500 or 320 at --max-concurrency 1 / 16 / 100 or 64. Server `sglang serve --model-path moonshotai/Kimi-K2.5 "
          "--tp 8 --trust-remote-code` (SGLang defaults: EP 1, no DP attention, KV cache in the model dtype, bf16 "
          "entered). Kimi-K2.5 read as Kimi-K2 (the models entry: K2.5's text model shares the fields). Weights "
          "entered 'int4-g32': the checkpoint's routed experts are int4 with a group of 32 and the rest bf16, while the "
          "table's form quantizes every Linear (the nearest form the table uses; a doubt). 'NVIDIA H200 GPU (8x)': "
          "H200-SXM entered. The 1000/8000 concurrency-64 block prints no result (not entered); sections 5.2.2 "
          "(speculative decoding) and 5.3 (MI350X) not used. The medium / high concurrency blocks look far from the "
          "server's best (1000/1000: output throughput at concurrency 100 no higher than at 16, TPOT 53 -> 365 ms): "
          "entered as printed, a doubt."),
   engine="SGLang 0.5.6.post2", engine_family="sglang", engine_version="0.5.6.post2", klass="mla", date="2026-01"),
}

# Kimi-K2.5 page, section 5.2.1 (8x H200, TP 8): (concurrency, successful requests, total input tokens, total
# generated tokens, output token throughput tok/s, mean TTFT ms, mean TPOT ms, label) -- each block as printed
KIMI_RUNS = [
 (1, 10, 6101, 4220, 106.10, 176.89, 9.22, "Chat 1000/1000 low concurrency"),
 (16, 80, 39668, 40805, 258.18, 374.30, 53.25, "Chat 1000/1000 medium concurrency"),
 (100, 500, 249831, 252662, 253.51, 1289.59, 364.70, "Chat 1000/1000 high concurrency"),
 (1, 10, 6101, 44462, 65.36, 206.17, 14.36, "Reasoning 1000/8000 low concurrency"),
 (16, 80, 39668, 318306, 128.56, 359.38, 111.18, "Reasoning 1000/8000 medium concurrency"),
 (1, 10, 41941, 4220, 34.96, 1625.64, 24.95, "Summarization 8000/1000 low concurrency"),
 (16, 80, 300020, 41669, 106.86, 2460.45, 140.57, "Summarization 8000/1000 medium concurrency"),
 (64, 320, 1273893, 170000, 132.86, 2710.44, 443.84, "Summarization 8000/1000 high concurrency"),
]
METRICS = (("ttft_ms", 5, "ms", "mean TTFT"), ("itl_ms", 6, "ms", "mean TPOT"),
           ("output_tokens_per_s", 4, "tokens/s", "output token throughput"))


def kimi_rows() -> list[dict]:
    """The lengths are the only arithmetic: each run's printed token totals over its printed request count, rounded."""
    src, out = "sglcb-kimi-k25-h200", []
    for i, run in enumerate(KIMI_RUNS, 1):
        (c, n, tin, tout), label = run[:4], run[7]
        inp, outl = round(tin / n), round(tout / n)
        for metric, k, unit, what in METRICS:
            out.append(serving_row(SPLIT, src, i, "Kimi-K2", "H200-SXM", 8, "int4-g32", c, inp, outl, metric, run[k],
                                   unit, f"5.2.1 {label}: {what} as printed; lengths {tin}/{n} and {tout}/{n} tokens "
                                   f"(printed totals over the run's requests), max concurrency {c}, TP 8, EP 1"))
    return out


def main() -> None:
    sentence = ("Rows with split 'heldout-10' were added in session 13 from a document no earlier session used (the "
                "SGLang cookbook's Kimi-K2.5 page; see reports/gpu-time/add_session13_rows.py), chosen and entered "
                "before any prediction of them, and committed with the predictions of the model as it stood "
                "(reports/gpu-time/frozen/heldout-10_before.json): a sealed split, never fitted on, left out of every "
                "report until the final evaluation.")
    enter(SPLIT, S, kimi_rows(), 13, sentence)


if __name__ == "__main__":
    main()
