"""Session-14 rows, data helper (h14f): held-out set 16, entered from the source text BEFORE any prediction of them.

Re-runnable: it first removes what an earlier run of it added (the sources below and every row of split
'heldout-16'), then adds them again, so running it twice leaves the table as running it once.

The set is a set of documents, fixed before any prediction. This helper was sent to Hugging Face model cards with
printed serving-performance tables, to NVIDIA NIM performance pages the table does not use, and to papers. The
stored copies of papers (arXiv HTML) did not come back from any search (the page store answered with blogs and
vendor pages other helpers had already turned down); the NIM pages found are the table's own 'nim-bench' page, its
reprints, or models the table cannot read (see 'Turned down'). What met every requirement are FOUR Hugging Face model
cards of Neural Magic / Red Hat AI quantized checkpoints of DeepSeek-R1's distilled dense models, each with an
'Inference Performance' section whose 'Single-stream performance (measured with vLLM version 0.7.2)' table prints,
for every GPU class, GPU count and checkpoint, the request latency of eight fixed prompt / generation lengths. Each
card's table is its own benchmark of its own base model (four base models, none the same run as another card's);
none is used by the table, and none reprints another used document.

The set is far from the brief's most wanted figures: every row is a request latency at ONE request in flight
(GuideLLM's synchronous, 'single-stream' mode), no TTFT, TPOT or throughput at a concurrency above 1 (the cards'
'Multi-stream asynchronous performance' tables print only a maximum query rate, without a concurrency: not usable).
It judges the time of a whole request (prefill of 256 to 10240 tokens plus 128 to 1536 decode steps) at batch 1 for
four dense models (Llama-3.1-8B / -70B shapes, Qwen2.5-7B / -14B shapes), bf16 and fp8 weights, on RTX A6000, A100
80GB and H100 (TP 1, 2, 4), through vLLM 0.7.2's OpenAI server; nothing of MoE or MLA, of batching, of SGLang or
TensorRT-LLM. 128 rows from 4 documents, all of one harness and one publisher: a doubt on their independence, written
here before any prediction.

The four documents (each the model card's README as stored; the url is the card's page on Hugging Face, where
'neuralmagic/...' now redirects to 'RedHatAI/...'):
- rh-r1llama70b-fp8dyn-card-vllm072: https://huggingface.co/RedHatAI/DeepSeek-R1-Distill-Llama-70B-FP8-dynamic
  (card 'DeepSeek-R1-Distill-Llama-70B-FP8-dynamic', 'Release Date: 2/1/2025', 'Model Developers: Neural Magic').
- rh-r1llama8b-w8a8-card-vllm072: https://huggingface.co/RedHatAI/DeepSeek-R1-Distill-Llama-8B-quantized.w8a8.
- rh-r1qwen7b-w4a16-card-vllm072: https://huggingface.co/RedHatAI/DeepSeek-R1-Distill-Qwen-7B-quantized.w4a16.
- rh-r1qwen14b-w4a16-card-vllm072: https://huggingface.co/RedHatAI/DeepSeek-R1-Distill-Qwen-14B-quantized.w4a16.
Quoted settings (the same words in all four cards): 'The following performance benchmarks were conducted with vLLM
version 0.7.2, and GuideLLM'; 'Benchmarking Command: guidellm --model neuralmagic/<this card's checkpoint> --target
"http://localhost:8000/v1" --data-type emulated --data "prompt_tokens=<prompt_tokens>,generated_tokens=
<generated_tokens>" --max seconds 360 --backend aiohttp_server'; the table 'Single-stream performance (measured with
vLLM version 0.7.2)' with the column groups 'Instruction Following 256 / 128', 'Multi-turn Chat 512 / 256',
'Docstring Generation 768 / 128', 'RAG 1024 / 128', 'Code Completion 256 / 1024', 'Code Fixing 1024 / 1024', 'Large
Summarization 4096 / 512', 'Large RAG 10240 / 1536' ('Use case profiles: prompt tokens / generation tokens'), each
with 'Latency (s)' and 'QPD' ('Queries per dollar, based on on-demand cost at Lambda Labs (observed on
2/18/2025)'); rows per GPU class ('A6000', 'A100', 'H100' with a 'Number of GPUs' column in the 70B card; 'A6000x1',
'A100x1', 'H100x1' in the others) and checkpoint: the base model (deepseek-ai/DeepSeek-R1-Distill-...), a w8a8 or
FP8-dynamic checkpoint and a w4a16 checkpoint.
Entered (the rule, fixed before any prediction): every 'Latency (s)' cell of the base-model lines (bf16) and of the
'-FP8-dynamic' lines (fp8), in all eight use cases -> request_latency_s (seconds, as printed), mode 'serving', batch
1, input_len / output_len = the use case's prompt / generation tokens, tp = the number of GPUs, KV bf16 (vLLM's
'auto'; no KV scheme in these checkpoints). Lines entered: 70B card: bf16 on 4x A6000, 2x A100, 2x H100 and fp8 on
2x H100; each of the three other cards: bf16 on 1x A6000, 1x A100, 1x H100 and fp8 on 1x H100. 4 x 4 x 8 = 128 rows.
Models (the catalog's entries, shapes as this helper knows the published config.json files, not re-read here: a
doubt): DeepSeek-R1-Distill-Llama-70B (fine-tuned from Llama-3.3-70B-Instruct: hidden 8192, 80 layers, 64 heads, 8
KV heads, intermediate 28672, vocabulary 128256) -> 'Llama-3.1-70B'; DeepSeek-R1-Distill-Llama-8B (from Llama-3.1-8B:
hidden 4096, 32 layers, 32 heads, 8 KV heads, intermediate 14336, vocabulary 128256) -> 'Llama-3.1-8B';
DeepSeek-R1-Distill-Qwen-7B (from Qwen2.5-Math-7B: hidden 3584, 28 layers, 28 heads, 4 KV heads, intermediate 18944,
vocabulary 152064, untied; its rope_theta 10000 and max_position_embeddings 131072 differ from Qwen2.5-7B's and
change no cost) -> 'Qwen2.5-7B'; DeepSeek-R1-Distill-Qwen-14B (from Qwen2.5-14B: hidden 5120, 48 layers, 40 heads, 8
KV heads, intermediate 13824, vocabulary 152064) -> 'Qwen2.5-14B'.
GPUs: 'A6000' -> RTX-A6000 (48 GB); 'A100' -> A100-80GB; 'H100' -> H100-SXM. The cards print neither memory nor
form factor. A check made before any prediction, on the printed QPD only (never on a latency against a model):
single-stream QPD = 3600 / latency / (hourly price of the GPUs), so the price per GPU-hour the cards used is
3600 / (latency x QPD x GPUs): 70B card A100 line 3600 / (6.4 x 157 x 2) = 1.79, H100 line 3600 / (3.8 x 149 x 2) =
3.18, A6000 line 3600 / (7.4 x 152 x 4) = 0.80; 8B card A100x1 3600 / (1.5 x 1308) = 1.83, H100x1 3600 / (1.0 x 1146)
= 3.14. Lambda's on-demand prices of early 2025 as this helper recalls them (not read from a stored page: a doubt):
A100 SXM4 80GB 1.79, A100 PCIe/SXM4 40GB 1.29, H100 PCIe 2.49, H100 SXM 2.99-3.29, RTX A6000 0.80. So the A100s are
the 80 GB part (a 70B bf16 model on 2 A100s also needs 2 x 80 GB) and the H100s are not PCIe; entered as A100-80GB and
H100-SXM. The prices are used for nothing else; no value is changed.
Doubts, each written down before any prediction:
(1) 'Latency (s)' is not defined on the cards: GuideLLM's synchronous ('single-stream') benchmark sends one request
    at a time for 360 s and reports the request latency (end to end, first token included); whether the printed
    figure is a mean or a median is not stated (entered as the table's request_latency_s, a mean elsewhere).
(2) 'emulated' data: GuideLLM builds each prompt from a text corpus to the stated token count with the model's
    tokenizer and asks for the stated number of generated tokens (max_tokens); whether EOS was ignored is not stated.
    The models are reasoning distills that write long chains of thought, so they are likely to reach max_tokens
    anyway; a request that stopped early would make a row faster than its stated length. Whether the request went
    through the chat endpoint (the chat template adds a few prompt tokens) is not stated. Nominal lengths entered.
(3) the figures are rounded to 0.1 s: at 0.7 s (the fp8 8B and 7B short cases on an H100) the rounding alone is
    up to +-7%.
(4) TP = the printed number of GPUs: the cards do not print the server command; vLLM serves a multi-GPU model with
    tensor parallelism by default (the cards' example code sets tensor_parallel_size = number_gpus). vLLM 0.7.2
    defaults (V0 engine; CUDA graphs on; chunked prefill on for these long-context models; prefix caching off) are
    assumed, not stated; max-model-len, gpu-memory-utilization and max-num-seqs not stated.
(5) fp8 = the 'FP8-dynamic' checkpoints (compressed-tensors: per-channel FP8 weights, dynamic per-token FP8
    activations, lm_head in bf16, per the 70B card's recipe 'scheme="FP8_DYNAMIC", ignore=["lm_head"]'); the table's
    other fp8 rows are mostly per-tensor or block FP8. The A6000 and A100 lines of the quantized checkpoints are
    w8a8 (int8) or w4a16 (GPTQ-style int4): not entered (the table's weights have no w8a8 int8 or w4a16 scheme;
    its 'int8' is gpt-fast's weight-only format).
(6) the printed figures have oddities seen while copying them (before any prediction): on the 8B card the
    FP8-dynamic Large RAG latency on an H100 (22.5 s) is longer than the bf16 one (16.3 s) while every other fp8
    case is shorter; the 14B card's fp8 Large RAG (23.9 s) is close to its bf16 one (25.2 s). Entered as printed.
(7) the four cards are one harness, one publisher and one date (vLLM 0.7.2, early 2025): their rows are not
    independent of each other (a shared server setting or client cost would move all 128). The host, driver, CUDA
    and the server's flags are not printed. The cards of the sibling checkpoints (e.g. DeepSeek-R1-Distill-Llama-
    70B-quantized.w8a8 / .w4a16) very likely print the same tables: each base model's table is entered once, from
    the one card named above, and the sibling cards are not used.
(8) the model card can be edited on Hugging Face; the figures were read from the stored copy of each README (no
    commit is pinned).
Not entered: the QPD columns (a cost, not a time), 'Average cost reduction', the w8a8 / w4a16 lines (doubt 5), the
multi-stream tables (maximum queries per second, no concurrency).

Turned down, before any prediction (each read as far as the stored copy allows):
- NVIDIA NIM benchmarking 1.0.0 performance page (https://docs.nvidia.com/nim/benchmarking/llm/1.0.0/performance,
  the table's 'nim-bench' source; the stored copy now holds Llama-3.3-70B NIM 1.8.0 / 1.5.0 and Llama-3.1-8B NIM
  1.8.0 / 1.3.0 tables, all under that url) and its .md / llms.txt copies and 'performance-tables' pages (reprints of
  the same tables); the 2.0.0 edition (overview, metrics and quickstart pages only, no performance page found); the
  NIM LLM 'benchmarking' reference page (a guide, no results); the Llama 3.1 Nemotron Safety Guard 8B NIM
  performance pages (a classifier model the table does not read; 'Throughput (inputs/s)'); Omniverse USD Code
  performance page (a service on 4 H100 whose model is not named).
- NVIDIA Dynamo recipe 'Llama-3.3-70B FP8' (docs.nvidia.com/dynamo): only its opening (topologies, a disaggregated
  recommended variant) came back; no result figure read.
- Vultr inference cookbook B200 concurrency tables (Nemotron Nano / Super, GLM-5, DeepSeek-V3.2, MiniMax M2.5:
  models the table does not read; turned down by set 11).
- Red Hat MLPerf Inference blog posts (MLPerf Offline / Server scenarios, no concurrency or fixed lengths); the
  wangzheng422 RHAI Qwen3.6-27B report (a model the catalog lacks; turned down by set 15).
- the RedHatAI / neuralmagic cards of granite-3.1 (2B / 8B) models (vLLM 0.6.6.post1 tables; models the table's
  rows do not read), of vision-language models (Qwen2-VL-72B, Qwen2.5-VL-7B, pixtral-12b: multimodal use cases with
  images) and the multi-stream tables of every card (no concurrency).
- pages: LambdaLabsML/vllm-benchmark (turned down by set 12), johnmusgrave.com A100 sweep (the stored copy still
  ends before its results), blog.ori.co (opening only, as set 15 found), jarvislabs.ai vLLM / SGLang / TRT-LLM
  comparison (ShareGPT and RULER datasets: lengths not fixed), morphllm.com (figures reprinted from others),
  forums.developer.nvidia.com '6x Spark setup' (GB10, ShareGPT), docs.gpustack.ai pages (ShareGPT / no
  concurrency, as sets 7-13 found), a DecodeBenchConnector note on an H200 (an excerpt with no repository, path or
  url to cite).
- papers: no arXiv / MLSys / OSDI / EuroSys paper came back from the stores with an absolute TTFT / TPOT / throughput
  table at stated settings (four searches).
No reserved document was opened or used: no TensorRT-LLM performance page (performance.md, perf-overview.md, any
version) or blog named reserved (H200launch.md, H100vsA100.md), no ROCm/vllm dev-docker README or AMD ROCm docker
performance page, no dstack DeepSeek-R1 benchmark, no SGLang B200 gist or cookbook B200 page of Qwen3-235B /
gpt-oss-120b, no QuixiAI model card. Two searches (one of the 'code' store, one of the 'docs' store) answered, among
their results, with excerpts of TensorRT-LLM perf-overview.md / performance.md editions; they were passed over
unopened and nothing from them is used.

Every value is a number a card printed (copied below as the cards' table lines: the latency and QPD cells of one
checkpoint on one GPU line, in the table's column order); no arithmetic is done on any value, and no length is
derived (the lengths are the cards' use-case profiles).

Run: python reports/gpu-time/add_session14_set16_rows.py
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from table_entry import enter  # noqa: E402

SPLIT = "heldout-16"
HF = "https://huggingface.co/RedHatAI/"
# the eight use cases in the tables' column order: (name, prompt tokens, generation tokens)
CASES = (("Instruction Following", 256, 128), ("Multi-turn Chat", 512, 256), ("Docstring Generation", 768, 128),
         ("RAG", 1024, 128), ("Code Completion", 256, 1024), ("Code Fixing", 1024, 1024),
         ("Large Summarization", 4096, 512), ("Large RAG", 10240, 1536))
HARNESS = ("GuideLLM single-stream (one request at a time, 360 s per case, emulated prompts of the stated token "
           "count, --backend aiohttp_server) against vLLM 0.7.2's OpenAI server")


def _src(card, base, model, what_lines):
    return dict(url=HF + card,
                what=(f"Hugging Face model card of neuralmagic/{card} (Neural Magic / Red Hat AI), 'Inference "
                      f"Performance': 'Single-stream performance (measured with vLLM version 0.7.2)', {HARNESS}; "
                      f"{what_lines}; 'Latency (s)' of 8 use cases (prompt / generation tokens 256/128, 512/256, "
                      f"768/128, 1024/128, 256/1024, 1024/1024, 4096/512, 10240/1536); base model {base} read as the "
                      f"catalog's {model}"),
                setup=("vLLM 0.7.2 OpenAI server (flags not printed; V0 defaults assumed), client GuideLLM "
                       "synchronous: batch 1; 'Latency (s)' -> request_latency_s; number of GPUs -> TP; KV bf16 "
                       "(not stated). A100 read as A100-80GB and H100 as H100-SXM (not printed; see the doubts of "
                       "reports/gpu-time/add_session14_set16_rows.py). QPD, w8a8 / w4a16 lines and the multi-stream "
                       "tables not entered."),
                engine="vLLM 0.7.2", engine_family="vllm", engine_version="0.7.2", klass="dense", date=None)


S = {
 "rh-r1llama70b-fp8dyn-card-vllm072": _src(
     "DeepSeek-R1-Distill-Llama-70B-FP8-dynamic", "deepseek-ai/DeepSeek-R1-Distill-Llama-70B", "Llama-3.1-70B",
     "bf16 base model on 4x A6000, 2x A100, 2x H100 and the FP8-dynamic checkpoint on 2x H100 (32 figures)"),
 "rh-r1llama8b-w8a8-card-vllm072": _src(
     "DeepSeek-R1-Distill-Llama-8B-quantized.w8a8", "deepseek-ai/DeepSeek-R1-Distill-Llama-8B", "Llama-3.1-8B",
     "bf16 base model on 1x A6000, 1x A100, 1x H100 and the FP8-dynamic checkpoint on 1x H100 (32 figures)"),
 "rh-r1qwen7b-w4a16-card-vllm072": _src(
     "DeepSeek-R1-Distill-Qwen-7B-quantized.w4a16", "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", "Qwen2.5-7B",
     "bf16 base model on 1x A6000, 1x A100, 1x H100 and the FP8-dynamic checkpoint on 1x H100 (32 figures)"),
 "rh-r1qwen14b-w4a16-card-vllm072": _src(
     "DeepSeek-R1-Distill-Qwen-14B-quantized.w4a16", "deepseek-ai/DeepSeek-R1-Distill-Qwen-14B", "Qwen2.5-14B",
     "bf16 base model on 1x A6000, 1x A100, 1x H100 and the FP8-dynamic checkpoint on 1x H100 (32 figures)"),
}

# (source, catalog model, the card's GPU class as printed, GPUs, catalog GPU, weights, the checkpoint's name as
#  printed, the line's 16 cells as printed: Latency (s), QPD for each of the 8 use cases)
LINES = (
 ("rh-r1llama70b-fp8dyn-card-vllm072", "Llama-3.1-70B", "A6000", 4, "RTX-A6000", "bf16",
  "deepseek-ai/DeepSeek-R1-Distill-Llama-70B", "7.4 152 14.9 76 7.5 149 7.7 146 57.2 20 58.9 19 31.9 35 98.4 11"),
 ("rh-r1llama70b-fp8dyn-card-vllm072", "Llama-3.1-70B", "A100", 2, "A100-80GB", "bf16",
  "deepseek-ai/DeepSeek-R1-Distill-Llama-70B", "6.4 157 12.8 79 6.6 153 6.7 151 50.4 20 50.8 20 27.0 37 85.4 12"),
 ("rh-r1llama70b-fp8dyn-card-vllm072", "Llama-3.1-70B", "H100", 2, "H100-SXM", "bf16",
  "deepseek-ai/DeepSeek-R1-Distill-Llama-70B", "3.8 149 7.6 74 3.9 146 3.9 144 30.0 19 30.4 19 16.1 35 56.5 10"),
 ("rh-r1llama70b-fp8dyn-card-vllm072", "Llama-3.1-70B", "H100", 2, "H100-SXM", "fp8",
  "neuralmagic/DeepSeek-R1-Distill-Llama-70B-FP8-dynamic",
  "2.7 210 5.3 106 2.7 207 2.8 203 21.1 27 21.4 26 11.5 49 47.2 12"),
 ("rh-r1llama8b-w8a8-card-vllm072", "Llama-3.1-8B", "A6000x1", 1, "RTX-A6000", "bf16",
  "deepseek-ai/DeepSeek-R1-Distill-Llama-8B", "3.0 1511 6.0 755 3.0 1483 3.1 1462 23.6 191 24.0 188 12.7 353 41.1 110"),
 ("rh-r1llama8b-w8a8-card-vllm072", "Llama-3.1-8B", "A100x1", 1, "A100-80GB", "bf16",
  "deepseek-ai/DeepSeek-R1-Distill-Llama-8B", "1.5 1308 3.1 657 1.6 1274 1.6 1263 12.1 166 12.4 162 6.5 308 25.6 78"),
 ("rh-r1llama8b-w8a8-card-vllm072", "Llama-3.1-8B", "H100x1", 1, "H100-SXM", "bf16",
  "deepseek-ai/DeepSeek-R1-Distill-Llama-8B", "1.0 1146 1.9 574 1.0 1128 1.0 1111 7.6 144 7.7 142 4.1 266 16.3 67"),
 ("rh-r1llama8b-w8a8-card-vllm072", "Llama-3.1-8B", "H100x1", 1, "H100-SXM", "fp8",
  "neuralmagic/DeepSeek-R1-Distill-Llama-8B-FP8-dynamic",
  "0.7 1567 1.4 758 0.7 1484 0.7 1462 5.7 191 5.8 189 3.2 347 22.5 49"),
 ("rh-r1qwen7b-w4a16-card-vllm072", "Qwen2.5-7B", "A6000x1", 1, "RTX-A6000", "bf16",
  "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", "2.9 1576 5.7 788 2.9 1535 3.0 1496 22.6 199 23.2 194 12.1 370 38.5 117"),
 ("rh-r1qwen7b-w4a16-card-vllm072", "Qwen2.5-7B", "A100x1", 1, "A100-80GB", "bf16",
  "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", "1.4 1389 2.9 691 1.5 1358 1.5 1329 11.5 175 11.6 174 6.2 326 21.5 93"),
 ("rh-r1qwen7b-w4a16-card-vllm072", "Qwen2.5-7B", "H100x1", 1, "H100-SXM", "bf16",
  "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", "0.9 1161 1.9 579 1.0 1138 1.0 1121 7.5 146 7.6 145 3.9 279 15.4 71"),
 ("rh-r1qwen7b-w4a16-card-vllm072", "Qwen2.5-7B", "H100x1", 1, "H100-SXM", "fp8",
  "neuralmagic/DeepSeek-R1-Distill-Qwen-7B-FP8-dynamic",
  "0.7 1585 1.4 786 0.7 1577 0.7 1524 5.3 207 5.5 197 2.9 382 14.3 77"),
 ("rh-r1qwen14b-w4a16-card-vllm072", "Qwen2.5-14B", "A6000x1", 1, "RTX-A6000", "bf16",
  "deepseek-ai/DeepSeek-R1-Distill-Qwen-14B", "5.4 837 10.7 419 5.5 813 5.6 805 42.2 107 42.8 105 22.9 197 71.7 63"),
 ("rh-r1qwen14b-w4a16-card-vllm072", "Qwen2.5-14B", "A100x1", 1, "A100-80GB", "bf16",
  "deepseek-ai/DeepSeek-R1-Distill-Qwen-14B", "2.6 765 5.2 383 2.7 746 2.7 732 20.8 97 21.2 95 11.3 179 36.7 55"),
 ("rh-r1qwen14b-w4a16-card-vllm072", "Qwen2.5-14B", "H100x1", 1, "H100-SXM", "bf16",
  "deepseek-ai/DeepSeek-R1-Distill-Qwen-14B", "1.6 672 3.3 334 1.7 662 1.7 652 12.8 85 13.0 84 7.0 155 25.2 43"),
 ("rh-r1qwen14b-w4a16-card-vllm072", "Qwen2.5-14B", "H100x1", 1, "H100-SXM", "fp8",
  "neuralmagic/DeepSeek-R1-Distill-Qwen-14B-FP8-dynamic",
  "1.2 925 2.3 467 1.2 908 1.2 896 9.3 118 9.5 115 5.2 210 23.9 46"),
)


def rows() -> list[dict]:
    out = []
    for src, model, printed_gpu, n, gpu, weights, ckpt, cells in LINES:
        vals = cells.split()
        assert len(vals) == 16, (src, ckpt, printed_gpu)
        for k, (case, inp, outl) in enumerate(CASES):
            note = (f"'{case}' ({inp} / {outl}): Latency (s) as printed for {ckpt} on {printed_gpu}"
                    f"{'' if 'x' in printed_gpu else f' (Number of GPUs {n})'}; single-stream GuideLLM, vLLM 0.7.2")
            rid = f"{src}-{model}-{gpu}-tp{n}-{weights}-b1-{inp}-{outl}-request_latency_s"
            out.append(dict(id=rid, source=src, gpu=gpu, tp=n, model=model, weights=weights, kv="bf16", batch=1,
                            mode="serving", input_len=inp, output_len=outl, metric="request_latency_s",
                            value=float(vals[2 * k]), unit="s", note=note, expert_parallel_size=1,
                            data_parallel_size=1, enable_dp_attention=False, split=SPLIT))
    return out


def main() -> None:
    sentence = ("Rows with split 'heldout-16' were added in session 14 (a data helper) from four documents no earlier "
                "session used (the Hugging Face model cards of neuralmagic / RedHatAI's DeepSeek-R1-Distill-Llama-70B-"
                "FP8-dynamic, -Llama-8B-quantized.w8a8, -Qwen-7B-quantized.w4a16 and -Qwen-14B-quantized.w4a16: "
                "single-stream request latencies under vLLM 0.7.2 and GuideLLM; see reports/gpu-time/"
                "add_session14_set16_rows.py), chosen and entered before any prediction of them, and committed with "
                "the predictions of the model as it stood (reports/gpu-time/frozen/heldout-16_before.json): a sealed "
                "split, never fitted on, left out of every report until the final evaluation.")
    enter(SPLIT, S, rows(), 14, sentence)


if __name__ == "__main__":
    main()
