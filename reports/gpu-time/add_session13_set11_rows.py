"""Session-13 rows, second data helper (h28e11): held-out set 11, entered from the source text BEFORE any prediction of them.

Re-runnable: it first removes what an earlier run of it added (the sources below and every row of split
'heldout-11'), then adds them again, so running it twice leaves the table as running it once.

The set is a set of documents, fixed before any prediction: documents this helper's searches found that no earlier
set uses (no url of the table's sources, no benchmark run another source reprints, no reserved document or edition of
one), that state for each figure the GPU, its count, the parallelism, the batch and the request lengths, and whose
model the table can read. It is far smaller than the brief's aim (at least 60 rows from at least 5 documents, half of
them dense, TTFT / TPOT / throughput at a concurrency above 1): TWO documents, 22 rows, 18 of them dense, every one a
batch-1 decode rate (metric decode_tokens_per_s, mode 'static'). In about 60 minutes of search this helper found no
document with TTFT / TPOT / throughput at a stated concurrency above 1 that met every requirement, was not used or
turned down by an earlier set, and could be read whole here (see 'Turned down' below); a small clean set was
preferred to padding. The set's judgement is therefore thin and one-sided: it says nothing of TTFT, of throughput or
of batching, only of the single-request decode rate of dense Qwen2.5 / Qwen3 models (and two Qwen3 MoE models).

Both documents are editions of the Qwen team's 'Speed Benchmark' page (qwen.readthedocs.io), read from the
QwenLM/Qwen3 repository (formerly QwenLM/Qwen2.5), each pinned at a commit: they are two different benchmarks (other
models, other GPU, other engine, other harness settings), neither used by the table, neither reprinting the other.

- qwen25-speed-a100-vllm: the Qwen2.5 edition, docs/source/benchmark/speed_benchmark.rst pinned at 2abc0f3
  (2025-04-22; unchanged since a912d23 of 2024-11-06, removed on 2025-04-28 when the page became the Qwen3 edition).
  'The environment of the evaluation with vLLM is: NVIDIA A100 80GB, CUDA 12.1, vLLM 0.6.3, Pytorch 2.4.0';
  'We use the batch size of 1 and the least number of GPUs as possible'; 'We test the speed and memory of generating
  2048 tokens with the input lengths of 1, 6144, 14336, 30720, 63488, and 129024 tokens'; 'For vLLM ... We use
  gpu_memory_utilization=0.9 max_model_len=32768 enforce_eager=False by default'. Entered: the BF16 lines of the
  '7B (vLLM)', '14B (vLLM)' and '72B (vLLM)' tables whose setting is the default (no note, or 'Default'): input 1,
  6144, 14336 and 30720 tokens, 2048 output tokens, batch 1, TP = the printed 'GPU Num' (1, 1, 4). Speed(tokens/s)
  -> decode_tokens_per_s. Not entered: the 63488 / 129024 lines (other settings: 'setting-64k', 'Setting 4 / 5',
  vllm 0.6.2 with another sampling config), the 72B 2-GPU line ('Setting 1': enforce_eager=True,
  gpu_memory_utilization 1.0), the GPTQ / AWQ lines (checkpoint schemes the table's weights do not state), the
  Transformers tables (not a serving engine of the table), the 32B tables (Qwen2.5-32B is not in the catalog) and
  the 0.5B-3B tables (not in the catalog). Models: Qwen2.5-7B-Instruct (the table's entry), Qwen2.5-14B-Instruct and
  Qwen2.5-72B-Instruct read as the catalog's Qwen2.5-14B / Qwen2.5-72B (the Instruct models share the base models'
  shapes). Doubts, each written down before any prediction:
  (1) the page does not define its Speed for this edition; the companion script (examples/speed-benchmark/
      speed_benchmark_vllm.py at the same commit) times one offline LLM.generate call of one prompt; the printed speed
      falls slowly as the input grows (7B: 84.28 at 1 token, 70.33 at 30720), which fits generated tokens over the
      call's whole time (prefill included) and not (prompt + generated) over time (which the Qwen3 edition uses and
      which rises steeply with the input). Entered as the decode rate, as session 3 entered Baseten's 'perceived
      tokens per second': the prefill of the longer prompts is in the time (at 30720 tokens on one A100 perhaps a few
      per cent of it), so these rows are a little slower than a pure decode rate.
  (2) the A100's form factor is not stated ('NVIDIA A100 80GB'): A100-80GB (SXM) entered, as earlier sets did.
  (3) the script samples (temperature 1.0, penalties set to keep it from stopping) with max_tokens = 2048 and counts
      the generated length; the page says 2048 tokens were generated: output_len 2048 entered.
  (4) offline engine (vLLM LLM class), not an OpenAI server: no HTTP or client cost, as for the table's other
      batch-1 'static' rows; KV cache bf16 (vLLM's default for a bf16 model); CUDA graphs on (enforce_eager=False).
- qwen3-speed-h20-sglang: the Qwen3 edition, docs/source/getting_started/speed_benchmark.md pinned at 7a2f61f
  (the repository's newest stored commit, 2026-01-09; the page unchanged since c7f51a1 of 2025-05-20). SGLang
  section: 'NVIDIA H20 96GB', 'SGLang 0.4.6.post1', 'Speed = (tokens_prompt + tokens_generation) / time', 'We use a
  batch size of 1 and the minimum number of GPUs possible', 'generating 2048 tokens', mem_fraction_static 0.85,
  context_length 140000, enable_mixed_chunk, input_ids given directly (skip_tokenizer_init). Entered: only the lines
  of input length 1, BF16 and FP8, of the Qwen3-8B / 14B / 32B / 30B-A3B / 235B-A22B (SGLang) tables, TP = the
  printed GPU Num (235B-A22B: BF16 TP=8, FP8 TP=4 as its Note prints; the others 1). At input length 1 the printed
  speed is (1 + 2048) / time, the one token of prompt changing it by 0.05%: entered as decode_tokens_per_s (the
  time includes the one-token prefill). Not entered: the longer inputs (their speed counts the prompt tokens, which
  is no metric of the table and could only be turned into one by arithmetic on the value), the AWQ / GPTQ lines, the
  Transformers tables, the 0.6B-4B models (not in the catalog). Doubts: FP8 is Qwen's block-wise FP8 checkpoint
  (entered 'fp8', as the table enters DeepSeek's block FP8); EP 1 (SGLang's default, no flag printed); KV cache
  bf16 (not stated); the SGLang engine is driven offline with input_ids (no HTTP cost); the H20's memory is printed
  as 96GB, which is the catalog's H20.

Turned down, before any prediction (each read as far as the stored copy allows):
- FreedomIntelligence/AccelMark result directories set 8 did not enter (pinned 5797fc4): suite C on A100 40GB
  with SGLang (651fefa6) and H100 suite C (a4a8716a) hold only the quantization 'offline' scenario (throughput the
  same at every client concurrency, the reason set 8 gave); suite E (offline only), suite F (Qwen2.5-0.5B, not in
  the catalog); A800, H20-3e (141 GB, not the catalog's H20), RTX 4090 D, RTX 6000 / 4000 Ada, V100 / V100S, T4,
  TPU, Apple, Ascend and Moore Threads directories (GPUs the catalog lacks).
- NVIDIA NIM benchmarking: the 1.0.0 performance page is the url of the table's source 'nim-bench' (its other
  tables, Llama-3.1-8B NIM 1.8.0 / 1.3.0 and Llama-3.1-70B NIM 1.3.0, share that url); its 'performance-tables'
  pages reprint those tables; the 2.0.0 edition has no performance page in the store; the per-model NIM pages
  found (Nemotron safety guard) are models the catalog lacks.
- GPUStack performance-lab pages: all already used or turned down by sets 7-10 (no concurrency); Qwen3.5 /
  GLM-5.2 / DeepSeek-V3.2 pages (models the table does not read).
- sgl-project/sglang benchmark/attention_backend/NVIDIA_H200.md (Llama-3.1-8B and DeepSeek-V3 at request rate 16,
  random lengths without a range ratio and without the token totals: no concurrency, lengths not derivable),
  benchmark/benchmark_v0.4.1.post4 (commands only, request rates), benchmark/benchmark_vllm_060 (request rates,
  ShareGPT).
- SemiAnalysisAI/InferenceX TRT_BENCH_NOTES.md (DeepSeek-V4 with MTP on GB300 / B300, models and GPUs the table
  does not read).
- tim-wang-tecg-blog.pages.dev 'vLLM vs sglang' (Llama-3.1-8B on one H100, evalscope with 'parallel' = 'number',
  prompts of 5000-10000 (units not stated) from LongAlpaca: input lengths not fixed; H100 form factor not stated).
- vllm #20710 (Llama-3.3-70B FP8 on 2x B200, two points, TTFT printed in seconds and a per-request 'output speed'
  that is no table metric), vllm #9722 / #7567 / #359, sglang #1639 / #1060 / #5360 (ShareGPT or request-rate runs,
  no stated concurrency, models or GPUs not stated beside the block, or blocks read only in part).
- johnmusgrave.com A100 sweep (the stored copy still ends before its results, as set 9 found), runinfra.ai (raw
  data not stored, as set 9 found), research.aimultiple.com (offline ShareGPT batch), codeintel.xyz (reprints the
  SGLang v0.3 blog), inferenceengineering.tech (turned down by set 9), ngkore/docs (turned down by set 9),
  dennislee22/vLLM-benchmarking (turned down by set 9), forums.developer.nvidia.com DGX Spark posts (GB10, not in
  the catalog), docs.vultr.com CUDA cookbook B200 tables (Nemotron / GLM-5 / DeepSeek-V3.2 / MiniMax M2.5 at fp8 or
  fp4: models the table does not read, or KV fp8), modal-labs/stopwatch (configs only, no results stored).
- the Qwen3 edition's longer inputs and the Qwen2.5 edition's non-default settings (see above).
No reserved document was opened or used: no TensorRT-LLM performance page (performance.md, perf-overview.md, any
version; two perf-overview search excerpts appeared and were passed over unopened) or blog named reserved, no ROCm/vllm
dev-docker README, no dstack DeepSeek-R1 benchmark, no SGLang B200 gist or cookbook B200 page of Qwen3-235B /
gpt-oss-120b, no QuixiAI model card.

Every value is a number the document printed; no arithmetic is done on any value, and no length is derived (the
lengths are the documents' stated input lengths and 2048 generated tokens).

Run: python reports/gpu-time/add_session13_set11_rows.py
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from table_entry import enter  # noqa: E402

SPLIT = "heldout-11"
REPO = "https://github.com/QwenLM/Qwen3/blob/"
Q25_COMMIT = "2abc0f3243e20cf45b6a3ab60308db701c0c3111"
Q3_COMMIT = "7a2f61ffc7a20d47efcd2bf97f6f2bf52729042e"

S = {
 "qwen25-speed-a100-vllm": dict(url=REPO + Q25_COMMIT + "/docs/source/benchmark/speed_benchmark.rst",
   what=("Qwen2.5 Speed Benchmark (the Qwen docs page's Qwen2.5 edition), vLLM tables: Qwen2.5-7B / 14B / 72B-Instruct "
         "BF16 on A100 80GB with vLLM 0.6.3, batch 1, 2048 generated tokens, inputs 1 / 6144 / 14336 / 30720 tokens, "
         "default setting; 12 speeds"),
   setup=("vLLM 0.6.3 offline engine (the page's companion script examples/speed-benchmark/speed_benchmark_vllm.py: "
          "one LLM.generate call of one prompt, timed whole), gpu_memory_utilization 0.9, max_model_len 32768, "
          "enforce_eager False (the page's default setting), TP = the printed GPU Num (7B and 14B: 1, 72B: 4), batch 1, "
          "2048 output tokens, BF16 weights, KV bf16 entered (vLLM's default for the model dtype). Speed(tokens/s) "
          "entered as decode_tokens_per_s: the page does not define it for this edition; the figures fall slowly with "
          "the input, which fits generated tokens over the whole call (the prefill is in the time: the rows are a "
          "little slower than a pure decode rate, a doubt). 'NVIDIA A100 80GB': A100-80GB (SXM) entered. Lines at "
          "63488 / 129024 tokens, the 72B 2-GPU 'Setting 1' line (enforce_eager True) and the GPTQ / AWQ lines not "
          "entered."),
   engine="vLLM 0.6.3", engine_family="vllm", engine_version="0.6.3", klass="dense", date="2024-11"),
 "qwen3-speed-h20-sglang": dict(url=REPO + Q3_COMMIT + "/docs/source/getting_started/speed_benchmark.md",
   what=("Qwen3 Speed Benchmark (the Qwen docs page's Qwen3 edition), SGLang tables: Qwen3-8B / 14B / 32B / 30B-A3B / "
         "235B-A22B, BF16 and FP8, on H20 96GB with SGLang 0.4.6.post1, batch 1, input length 1, 2048 generated "
         "tokens; 10 speeds"),
   setup=("SGLang 0.4.6.post1 engine driven with input_ids (skip_tokenizer_init), mem_fraction_static 0.85, "
          "context_length 140000, enable_mixed_chunk; batch 1, 2048 generated tokens, TP = the printed GPU Num "
          "(235B-A22B: BF16 TP=8, FP8 TP=4; the others 1), EP 1 (SGLang's default); FP8 = Qwen's block-wise FP8 "
          "checkpoints, entered 'fp8'; KV bf16 entered (not stated). The page's Speed = (prompt + generated tokens) / "
          "time: at input length 1 that is (1 + 2048) / time, entered as decode_tokens_per_s (the one-token prefill is "
          "in the time). Longer inputs (speed counting the prompt tokens), AWQ / GPTQ lines and Transformers tables "
          "not entered. 'NVIDIA H20 96GB': the catalog's H20."),
   engine="SGLang 0.4.6.post1", engine_family="sglang", engine_version="0.4.6.post1", klass="dense", date="2025-05"),
}
# the Qwen3 source mixes dense and MoE models; its class is the class of most of its rows (6 dense, 4 MoE) and each
# row's family comes from its model (timing_intervals.family), not from the source's class.

# Qwen2.5 edition, vLLM tables, default setting, BF16: (table model, GPU Num = TP, input length, Speed tokens/s)
Q25_RUNS = [
 ("Qwen2.5-7B-Instruct", 1, 1, 84.28), ("Qwen2.5-7B-Instruct", 1, 6144, 80.70),
 ("Qwen2.5-7B-Instruct", 1, 14336, 77.69), ("Qwen2.5-7B-Instruct", 1, 30720, 70.33),
 ("Qwen2.5-14B", 1, 1, 46.30), ("Qwen2.5-14B", 1, 6144, 43.83), ("Qwen2.5-14B", 1, 14336, 41.91),
 ("Qwen2.5-14B", 1, 30720, 37.18),
 ("Qwen2.5-72B", 4, 1, 31.37), ("Qwen2.5-72B", 4, 6144, 29.90), ("Qwen2.5-72B", 4, 14336, 30.10),
 ("Qwen2.5-72B", 4, 30720, 27.53),
]
Q25_NAME = {"Qwen2.5-7B-Instruct": "Qwen2.5-7B-Instruct", "Qwen2.5-14B": "Qwen2.5-14B-Instruct",
            "Qwen2.5-72B": "Qwen2.5-72B-Instruct"}
# Qwen3 edition, SGLang tables, input length 1: (table model, quantization -> weights, GPU Num = TP, Speed tokens/s)
Q3_RUNS = [
 ("Qwen3-8B", "bf16", 1, 81.73), ("Qwen3-8B", "fp8", 1, 150.25),
 ("Qwen3-14B", "bf16", 1, 47.10), ("Qwen3-14B", "fp8", 1, 97.11),
 ("Qwen3-32B", "bf16", 1, 20.72), ("Qwen3-32B", "fp8", 1, 46.17),
 ("Qwen3-30B-A3B", "bf16", 1, 137.18), ("Qwen3-30B-A3B", "fp8", 1, 155.55),
 ("Qwen3-235B-A22B", "bf16", 8, 74.50), ("Qwen3-235B-A22B", "fp8", 4, 71.65),
]
OUT = 2048


def _row(src, model, gpu, tp, weights, inp, value, note) -> dict:
    rid = f"{src}-{model}-{gpu}-tp{tp}-{weights}-b1-{inp}-{OUT}-decode_tokens_per_s"
    return dict(id=rid, source=src, gpu=gpu, tp=tp, model=model, weights=weights, kv="bf16", batch=1, mode="static",
                input_len=inp, output_len=OUT, metric="decode_tokens_per_s", value=value, unit="tok/s", note=note,
                expert_parallel_size=1, data_parallel_size=1, enable_dp_attention=False, split=SPLIT)


def rows() -> list[dict]:
    out = [_row("qwen25-speed-a100-vllm", m, "A100-80GB", tp, "bf16", inp, v,
                f"{Q25_NAME[m]} (vLLM) table, input length {inp}, BF16, GPU Num {tp}, default setting: Speed(tokens/s) "
                f"as printed, batch 1, 2048 generated tokens (taken as the decode rate; the prefill is in the time)")
           for m, tp, inp, v in Q25_RUNS]
    out += [_row("qwen3-speed-h20-sglang", m, "H20", tp, w, 1, v,
                 f"{m} (SGLang) table, input length 1, {w.upper()}, GPU Num {tp}: Speed (tokens/s) as printed, "
                 f"(1 + 2048 tokens) / time at batch 1, taken as the decode rate")
            for m, w, tp, v in Q3_RUNS]
    return out


def main() -> None:
    sentence = ("Rows with split 'heldout-11' were added in session 13 (the second data helper) from documents no earlier session used (the "
                "Qwen2.5 and Qwen3 editions of the Qwen docs' Speed Benchmark page; see "
                "reports/gpu-time/add_session13_set11_rows.py), chosen and entered before any prediction of them, and "
                "committed with the predictions of the model as it stood (reports/gpu-time/frozen/heldout-11_before.json): "
                "a sealed split, never fitted on, left out of every report until the final evaluation.")
    enter(SPLIT, S, rows(), 13, sentence)


if __name__ == "__main__":
    main()
