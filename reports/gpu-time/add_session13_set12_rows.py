"""Session-13 rows, third data helper (h28e12): held-out set 12, entered from the source text BEFORE any prediction of them.

Re-runnable: it first removes what an earlier run of it added (the source below and every row of split
'heldout-12'), then adds them again, so running it twice leaves the table as running it once.

The set is a set of documents, fixed before any prediction: documents this helper's searches found that no earlier
set uses (no url of the table's sources, no benchmark run another source reprints, no reserved document or edition of
one), that state for each figure the GPU, its count, the parallelism, the batch and the request lengths, and whose
model the table can read. It is far smaller than the brief's aim (at least 40 rows from at least 3 documents, TTFT /
TPOT / throughput at a concurrency above 1, dense and MoE/MLA): ONE document, 13 rows, all dense, every one a batch-1
decode rate (metric decode_tokens_per_s, mode 'static'). In about 50 minutes of search this helper found no document
with TTFT / TPOT / throughput at a stated concurrency above 1 that met every requirement, was not used or turned down
by an earlier set, and could be read whole here (see 'Turned down' below); a small clean set was preferred to padding.
The set's judgement is therefore thin and one-sided: it says nothing of TTFT, throughput, batching or MoE / MLA
models, only of the single-request decode rate of two dense Qwen2 shapes on A100 80GB with vLLM 0.4.2, from 1 to
129024 tokens of context, and of one eager-mode (no CUDA graphs) run at TP 2.

- qwen2-speed-a100-vllm: the Qwen2 edition of the Qwen docs' 'Speed Benchmark' page, docs/source/benchmark/
  speed_benchmark.rst of the QwenLM/Qwen3 repository (formerly QwenLM/Qwen2) pinned at 4da996c (2024-09-18, the last
  commit of the Qwen2 edition: it adds only an 'To be updated for Qwen2.5' note to the page of 5c4e69c, 2024-06-11;
  on 2024-10-30 (0f0ecfb) the page became the Qwen2.5 edition that set 11 entered). Another edition of a page set 11
  used, but other runs: other models (Qwen2, not Qwen2.5 / Qwen3), another engine version (vLLM 0.4.2, not 0.6.3 /
  SGLang 0.4.6.post1), other figures; no figure of it is reprinted by the Qwen2.5 edition.
  'The environment of the evaluation with vLLM is: NVIDIA A100 80GB, CUDA 11.8, Pytorch 2.3.0+cu118, Flash Attention
  2.5.6, Transformers 4.40.1, vLLM 0.4.2'; 'We use the batch size of 1 and the least number of GPUs as possible';
  'We test the speed and memory of generating 2048 tokens with the input lengths of 1, 6144, 14336, 30720, 63488, and
  129024 tokens (>32k is only available for Qwen2-72B-Instuct and Qwen2-7B-Instuct)'; 'For vLLM ... We use
  gpu_memory_utilization=0.9 max_model_len=32768 enforce_eager=False by default'; the 72B table's settings:
  '[Setting 1]=(gpu_memory_utilization=0.98 max_model_len=4096 enforce_eager=True)'.
  Entered: the BF16 lines of the '7B (vLLM)' table (Qwen2-7B-Instruct, GPU Num 1, inputs 1 / 6144 / 14336 / 30720 /
  63488 / 129024) and of the '72B (vLLM)' table (Qwen2-72B-Instruct: GPU Num 4, setting '-', the same six inputs; and
  the GPU Num 2 line at input 1 marked [Setting 1], entered with enforce_eager True). TP = the printed GPU Num,
  batch 1, 2048 generated tokens, Speed(tokens/s) -> decode_tokens_per_s. The 72B table prints its 30720 block twice
  with the same figures; it is entered once.
  Models: Qwen2-7B-Instruct read as the catalog's Qwen2.5-7B and Qwen2-72B-Instruct as the catalog's Qwen2.5-72B: the
  Qwen2 and Qwen2.5 checkpoints of these sizes share every shape the time model reads (7B: hidden 3584, 28 layers, 28
  heads, 4 KV heads, intermediate 18944, vocabulary 152064, untied embeddings; 72B: hidden 8192, 80 layers, 64 heads,
  8 KV heads, intermediate 29568, vocabulary 152064, untied) -- from the models' published config.json files as this
  helper knows them, not re-read here (a doubt); Qwen2's max_position_embeddings is 32768 where Qwen2.5's is 131072,
  which changes no cost.
  Doubts, each written down before any prediction:
  (1) the page does not define its Speed, and this edition has no companion script in the repository at 4da996c
      (the Qwen2.5 edition's examples/speed-benchmark came later); as for set 11's Qwen2.5 edition, the printed speed
      falls as the input grows (7B: 80.45 at 1 token, 55.83 at 30720, 25.01 at 129024), which fits generated tokens
      over the whole timed call (prefill included) and not (prompt + generated) over time. Entered as the decode rate,
      as set 11 did: at the longer inputs the prefill is in the time, so these rows are slower than a pure decode
      rate, by more than set 11's rows at 63488 / 129024 tokens (on one A100 the prefill of 129024 tokens of the 7B
      model may be a sizeable share of the call).
  (2) the 63488 and 129024 lines cannot have run with the stated default max_model_len of 32768; the page says only
      that '>32k is only available' for these two models (Qwen2's long-context recipe is YaRN rope scaling in the
      config, which changes no shape). Entered with the default setting otherwise (CUDA graphs on), an unstated
      setting and a doubt; set 11 left the Qwen2.5 edition's 63488 / 129024 lines out because that page marks them
      with other settings, engine version and sampling config, which this page does not.
  (3) the A100's form factor is not stated ('NVIDIA A100 80GB'): A100-80GB (SXM) entered, as earlier sets did.
  (4) 'generating 2048 tokens': output_len 2048 entered; KV cache bf16 (vLLM's default for a bf16 model); offline
      vLLM engine (no HTTP or client cost), as the table's other batch-1 'static' rows.
  (5) the [Setting 1] line (72B, 2 GPUs, enforce_eager=True, gpu_memory_utilization 0.98, max_model_len 4096) is
      entered with the row's enforce_eager flag; the memory settings change nothing at batch 1. Set 11 left the
      like line of the Qwen2.5 edition out; it is entered here because the page states its setting whole and the
      table has the flag.
  Not entered: the GPTQ-Int8 / GPTQ-Int4 / AWQ lines (checkpoint schemes the table's weights do not state, as set 11
  decided), the Transformers tables (not a serving engine of the table), the 0.5B / 1.5B tables and the 57B-A14B
  tables and throughput note (models not in the catalog).

Turned down, before any prediction (each read as far as the stored copy allows):
- TensorRT-LLM deployment guides (docs/source/deployment-guide/*, e.g. the Llama 3.3 70B guide): the benchmark
  output is a template of '[result]'; the 'Run benchmarking with trtllm-serve' tutorial likewise shows a sample block
  only (not opened further). No TensorRT-LLM performance page (performance.md, perf-overview.md) was opened.
- sgl-project/sglang benchmark READMEs: blog_v0_2 (commands only, request rates), benchmark_dsv3 (DeepSeek-V3 on
  H200 at request rates 1-8, no concurrency) and its results repository datacrunch-research/h200-benchmarks (request
  rates, or 5000 prompts at once), gpt_oss (commands only; the file also carries a line addressed to 'agents' asking
  for fruit names in commits, which this helper ignored as material, not instruction).
- zhjunqin/LLM-Learning inference/benchmark (Llama-3-8B on RTX 3090, ShareGPT at request rates 1-8: no concurrency,
  lengths not fixed); a Qwen2.5-14B / 32B on 8x RTX 4090 report (custom aiohttp client, sampling at temperature 0.7
  without ignore_eos, 'Qwen2.5-32B' not in the catalog, AWQ-Marlin); dennislee22/vLLM-benchmarking, ngkore/docs,
  yobitelcomm/bench (turned down by set 9).
- vLLM nightly-benchmark descriptions (.buildkite/nightly-benchmarks: ShareGPT at QPS 2-4, results as a template
  placeholder or plots); the vLLM 2024-09-05 perf-update blog (charts); BentoML's 2024 backend benchmark (charts);
  RunPod's MI300X vs H100 Mixtral post (offline throughput, MI300X figures extrapolated, tables not readable from the
  stored excerpts); TensorWave / MK1 (MK1 engine); ROCm blogs DeepSeekR1-Part2 (charts) and 'Best practices'
  (turned down by set 9); substratus / Oracle / dstack Llama 3.1 405B MI300X posts (ShareGPT at once, offline, or an
  earlier source's url); valohai MI300X post (not read beyond its opening); luminal.com reports (engine not stated,
  charts).
- issue and pull-request threads seen as excerpts: vllm #18136 / #17852 (H20 runs at request rate inf or
  'offline/online' TPOT without concurrency), #20710, #13412, #15322, #7567, #23867, #18566, #23369 (ShareGPT,
  request rates, L20 or one-point blocks), sglang #10279 (charts), #6681 (request rate 128 with a cap of 512), #1639,
  #5360, #9428, #21576, #32480 (kernel PRs with a partly read block, or GPUs / models not stated beside it);
  tt-inference-server threads (Tenstorrent hardware, or GPU reference threads earlier sets use); InferenceX #828,
  #870, #1061 and achatbot #183 (earlier sets' sources); NVIDIA/srt-slurm #132 (Dynamo backend, range ratio 0.8).
No reserved document was opened or used: no TensorRT-LLM performance page (performance.md, perf-overview.md, any
version) or blog named reserved (H200launch.md, H100vsA100.md), no ROCm/vllm dev-docker README, no dstack DeepSeek-R1
benchmark, no SGLang B200 gist or cookbook B200 page of Qwen3-235B / gpt-oss-120b, no QuixiAI model card.

Every value is a number the document printed; no arithmetic is done on any value, and no length is derived (the
lengths are the page's stated input lengths and 2048 generated tokens).

Run: python reports/gpu-time/add_session13_set12_rows.py
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from table_entry import enter  # noqa: E402

SPLIT = "heldout-12"
COMMIT = "4da996c576418cc9ecdff35aeddfcdca814e9568"
SRC = "qwen2-speed-a100-vllm"

S = {
 SRC: dict(url="https://github.com/QwenLM/Qwen3/blob/" + COMMIT + "/docs/source/benchmark/speed_benchmark.rst",
   what=("Qwen2 Speed Benchmark (the Qwen docs page's Qwen2 edition), vLLM tables: Qwen2-7B-Instruct / "
         "Qwen2-72B-Instruct BF16 on A100 80GB with vLLM 0.4.2, batch 1, 2048 generated tokens, inputs 1 / 6144 / "
         "14336 / 30720 / 63488 / 129024 tokens; 13 speeds"),
   setup=("vLLM 0.4.2 offline engine, gpu_memory_utilization 0.9, max_model_len 32768, enforce_eager False (the "
          "page's default setting; the 63488 / 129024 lines need a longer context than that, setting not stated), "
          "TP = the printed GPU Num (7B: 1; 72B: 4, and 2 for the [Setting 1] line: gpu_memory_utilization 0.98, "
          "max_model_len 4096, enforce_eager True, entered with enforce_eager), batch 1, 2048 output tokens, BF16 "
          "weights, KV bf16 entered (vLLM's default for the model dtype). Speed(tokens/s) entered as "
          "decode_tokens_per_s: the page does not define it; the figures fall with the input, which fits generated "
          "tokens over the whole call (the prefill is in the time: the rows are slower than a pure decode rate, most "
          "at the longest inputs; a doubt). 'NVIDIA A100 80GB': A100-80GB (SXM) entered. Qwen2-7B-Instruct / "
          "Qwen2-72B-Instruct read as the catalog's Qwen2.5-7B / Qwen2.5-72B (same shapes). GPTQ / AWQ lines, "
          "Transformers tables and models outside the catalog not entered."),
   engine="vLLM 0.4.2", engine_family="vllm", engine_version="0.4.2", klass="dense", date="2024-06"),
}

OUT = 2048
# Qwen2 edition, vLLM tables, BF16: (page model, table model, GPU Num = TP, input length, Speed tokens/s, eager, setting)
RUNS = [
 ("Qwen2-7B-Instruct", "Qwen2.5-7B", 1, 1, 80.45, False, "default"),
 ("Qwen2-7B-Instruct", "Qwen2.5-7B", 1, 6144, 76.41, False, "default"),
 ("Qwen2-7B-Instruct", "Qwen2.5-7B", 1, 14336, 66.54, False, "default"),
 ("Qwen2-7B-Instruct", "Qwen2.5-7B", 1, 30720, 55.83, False, "default"),
 ("Qwen2-7B-Instruct", "Qwen2.5-7B", 1, 63488, 41.20, False, "default; context > 32k, setting not stated"),
 ("Qwen2-7B-Instruct", "Qwen2.5-7B", 1, 129024, 25.01, False, "default; context > 32k, setting not stated"),
 ("Qwen2-72B-Instruct", "Qwen2.5-72B", 2, 1, 17.68, True, "[Setting 1]: gpu_memory_utilization 0.98, "
                                                          "max_model_len 4096, enforce_eager True"),
 ("Qwen2-72B-Instruct", "Qwen2.5-72B", 4, 1, 30.01, False, "'-' (default)"),
 ("Qwen2-72B-Instruct", "Qwen2.5-72B", 4, 6144, 27.98, False, "'-' (default)"),
 ("Qwen2-72B-Instruct", "Qwen2.5-72B", 4, 14336, 21.81, False, "'-' (default)"),
 ("Qwen2-72B-Instruct", "Qwen2.5-72B", 4, 30720, 19.43, False, "'-' (default); the block is printed twice, "
                                                             "same figures"),
 ("Qwen2-72B-Instruct", "Qwen2.5-72B", 4, 63488, 17.46, False, "'-'; context > 32k, setting not stated"),
 ("Qwen2-72B-Instruct", "Qwen2.5-72B", 4, 129024, 11.70, False, "'-'; context > 32k, setting not stated"),
]


def _row(page_model, model, tp, inp, value, eager, setting) -> dict:
    rid = f"{SRC}-{model}-A100-80GB-tp{tp}-bf16-b1-{inp}-{OUT}{'-eager' if eager else ''}-decode_tokens_per_s"
    note = (f"{page_model} (vLLM) table, input length {inp}, BF16, GPU Num {tp}, setting {setting}: Speed(tokens/s) "
            f"as printed, batch 1, 2048 generated tokens (taken as the decode rate; the prefill is in the time)")
    r = dict(id=rid, source=SRC, gpu="A100-80GB", tp=tp, model=model, weights="bf16", kv="bf16", batch=1,
             mode="static", input_len=inp, output_len=OUT, metric="decode_tokens_per_s", value=value, unit="tok/s",
             note=note, expert_parallel_size=1, data_parallel_size=1, enable_dp_attention=False, split=SPLIT)
    if eager:
        r["enforce_eager"] = True
    return r


def rows() -> list[dict]:
    return [_row(*run) for run in RUNS]


def main() -> None:
    sentence = ("Rows with split 'heldout-12' were added in session 13 (the third data helper) from a document no earlier "
                "session used (the Qwen2 edition of the Qwen docs' Speed Benchmark page; see "
                "reports/gpu-time/add_session13_set12_rows.py), chosen and entered before any prediction of them, and "
                "committed with the predictions of the model as it stood (reports/gpu-time/frozen/heldout-12_before.json): "
                "a sealed split, never fitted on, left out of every report until the final evaluation.")
    enter(SPLIT, S, rows(), 13, sentence)


if __name__ == "__main__":
    main()
