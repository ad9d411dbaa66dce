"""Session-6 rows (h28b): held-out set 5, entered by hand from the source text BEFORE any prediction of them.

The document list was decided before predicting: every document the session's searches found whose whole
measured table could be read, that no earlier session used, and whose model / GPU / weights the time model
represents. Two qualified in the time available (see reports/gpu-time/heldout5.md for the candidates
turned down and why)."""
import json
P = "reports/gpu-time/measurements.json"
d = json.load(open(P))

S = {
 "ix828-h100-gptoss-tp8": dict(url="https://github.com/SemiAnalysisAI/InferenceX/issues/828",
   what="InferenceX issue #828, comment of 2026-03-01 (turn 5, the TP8 concurrency-scaling table): gpt-oss-120b FP4 on 8x H100 with vLLM",
   setup=("vLLM (InferenceX gptoss-fp4-h100-vllm recipe, March 2026; version not stated in the comment), TP=8, MXFP4 experts, "
          "InferenceX random lengths (range ratio 0.8 of the nominal ISL/OSL 1k/1k, 1k/8k, 8k/1k), concurrency 4-64; "
          "'Tput/GPU' is InferenceX's total (input + output) tokens/s per GPU, entered as output tokens/s per GPU = "
          "Tput/GPU x OSL / (ISL + OSL); TPOT as printed."),
   engine="vLLM (Mar 2026)", engine_family="vllm", engine_version=None, klass="moe", date="2026-03"),
 "recipes431-mi300x-qwen3guard8b": dict(url="https://github.com/vllm-project/recipes/pull/431",
   what="vllm-project/recipes PR #431 (2026-04-30): Qwen3Guard-Gen-8B served by vLLM on MI300X, one vllm bench serve run",
   setup=("vLLM ROCm image (April 2026; version not stated), tensor parallel size not stated (vLLM's default, 1, assumed; "
          "the machine has 8 MI300X), bf16, 100 prompts of 1024 random tokens, 1024 new tokens, max concurrency 32; "
          "mean TTFT, mean TPOT, output token throughput. Qwen3Guard-Gen-8B is a Qwen3-8B fine-tune (same shape)."),
   engine="vLLM (Apr 2026, ROCm)", engine_family="vllm", engine_version=None, klass="dense", date="2026-04"),
}
for k, v in S.items():
    v = dict(v); v["class"] = v.pop("klass"); v["session"] = 6
    d["sources"][k] = v

rows = []
def R(src, model, gpu, tp, weights, batch, inp, out, metric, value, unit, note=""):
    rid = f"{src}-{model}-{gpu}-tp{tp}-c{batch}-{inp}-{out}-{metric}"
    rows.append(dict(id=rid, source=src, gpu=gpu, tp=tp, model=model, weights=weights, kv="bf16", batch=batch,
                     mode="serving", input_len=inp, output_len=out, metric=metric, value=value, unit=unit, note=note,
                     expert_parallel_size=1, data_parallel_size=1, enable_dp_attention=False, split="heldout-5"))

# (ISL, OSL, concurrency, Tput/GPU total tokens/s, TPOT ms) -- the TP8 table of the comment, every row
TABLE = [(1024, 1024, 4, 260.5, 3.72), (1024, 1024, 8, 475.0, 4.05), (1024, 1024, 16, 814.8, 4.83),
         (1024, 1024, 32, 1326.3, 5.82), (1024, 1024, 64, 2106.9, 7.36),
         (1024, 8192, 4, 150.7, 3.68), (1024, 8192, 8, 273.4, 4.00), (1024, 8192, 16, 479.1, 4.53),
         (1024, 8192, 32, 780.9, 5.65), (1024, 8192, 64, 552.9, 16.01),
         (8192, 1024, 4, 1080.5, 3.95), (8192, 1024, 8, 1851.2, 4.59)]
for i, o, c, tput, tpot in TABLE:
    R("ix828-h100-gptoss-tp8", "gpt-oss-120b", "H100-SXM", 8, "mxfp4", c, i, o, "itl_ms", tpot, "ms", "TPOT as printed")
    R("ix828-h100-gptoss-tp8", "gpt-oss-120b", "H100-SXM", 8, "mxfp4", c, i, o, "output_tokens_per_s_per_gpu",
      round(tput * o / (i + o), 2), "tokens/s/GPU", f"Tput/GPU {tput} (input+output) x OSL/(ISL+OSL)")

R("recipes431-mi300x-qwen3guard8b", "Qwen3-8B", "MI300X", 1, "bf16", 32, 1024, 1024, "ttft_ms", 645.02, "ms", "mean TTFT")
R("recipes431-mi300x-qwen3guard8b", "Qwen3-8B", "MI300X", 1, "bf16", 32, 1024, 1024, "itl_ms", 9.42, "ms", "mean TPOT")
R("recipes431-mi300x-qwen3guard8b", "Qwen3-8B", "MI300X", 1, "bf16", 32, 1024, 1024, "output_tokens_per_s", 2701.39, "tokens/s", "output token throughput")
d["models"]["Qwen3-8B"] = {"source": "Qwen/Qwen3-8B config.json (https://huggingface.co/Qwen/Qwen3-8B/blob/main/config.json); Qwen3Guard-Gen-8B has the same shape",
  "config": {"model_type": "qwen3", "hidden_size": 4096, "intermediate_size": 12288, "num_hidden_layers": 36,
             "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151936,
             "tie_word_embeddings": False, "max_position_embeddings": 40960, "torch_dtype": "bfloat16"}}

ids = {r["id"] for r in d["rows"]}
assert not ids & {r["id"] for r in rows}
d["rows"] += rows
print(len(rows), "rows added, split heldout-5")
json.dump(d, open(P, "w"), indent=1)
open(P, "a").write("\n")
