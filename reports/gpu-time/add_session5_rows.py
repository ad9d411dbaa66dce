"""Session-5 rows (h28): published measurements from new documents, entered by hand from the source text."""
import json, hashlib
P = "reports/gpu-time/measurements.json"
d = json.load(open(P))

# -- the two sources that are other editions of documents issue 28 reserves for judging -------------
d["sources"]["trtllm-0.5"]["reserved_edition"] = (
    "docs/source/performance.md of TensorRT-LLM: issue 28 reserves its v0.9.0 edition and 'their other editions' "
    "tables' for judging; since session 5 these rows are neither fitted on nor reported")
d["sources"]["trtllm-h200-blog"]["reserved_edition"] = (
    "TensorRT-LLM H200 blog (Falcon180B-H200.md, v0.7a era): possibly another edition of the H200launch.md tables "
    "that issue 28 reserves; since session 5 these rows are neither fitted on nor reported")

d["models"]["DeepSeek-R1"] = {"source": "deepseek-ai/DeepSeek-R1 config.json (https://huggingface.co/deepseek-ai/DeepSeek-R1/blob/main/config.json); R1-0528 has the same shape",
  "config": {"model_type": "deepseek_v3", "hidden_size": 7168, "intermediate_size": 18432, "moe_intermediate_size": 2048,
             "num_hidden_layers": 61, "num_attention_heads": 128, "num_key_value_heads": 128, "n_shared_experts": 1,
             "n_routed_experts": 256, "num_experts_per_tok": 8, "first_k_dense_replace": 3, "moe_layer_freq": 1,
             "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
             "vocab_size": 129280, "max_position_embeddings": 163840, "tie_word_embeddings": False, "torch_dtype": "bfloat16"}}
oss20 = json.load(open("multihead/cost/catalog/configs/openai--gpt-oss-20b.json"))
oss120 = {k: v for k, v in oss20.items() if k not in ("quantization_config",)}
oss120.update({"num_hidden_layers": 36, "num_local_experts": 128,
               "layer_types": ["sliding_attention", "full_attention"] * 18})
d["models"]["gpt-oss-120b"] = {"source": "openai/gpt-oss-120b config.json (https://huggingface.co/openai/gpt-oss-120b/blob/main/config.json): gpt-oss-20b's shape with 36 layers and 128 experts", "config": oss120}
d["models"]["gpt-oss-20b"] = {"source": "openai/gpt-oss-20b config.json (catalog copy)", "config": {k: v for k, v in oss20.items() if k != "quantization_config"}}
d["models"]["Qwen3-14B"] = {"source": "Qwen/Qwen3-14B config.json (https://huggingface.co/Qwen/Qwen3-14B/blob/main/config.json)",
  "config": {"model_type": "qwen3", "hidden_size": 5120, "intermediate_size": 17408, "num_hidden_layers": 40,
             "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151936,
             "tie_word_embeddings": False, "max_position_embeddings": 40960, "torch_dtype": "bfloat16"}}

S = {
 "ix870-h200-dsr1": dict(url="https://github.com/SemiAnalysisAI/InferenceX/issues/870",
   what="InferenceX issue #870, comment of 2026-03-05: concurrency sweep of DeepSeek-R1-0528 FP8 on 8x H200 with SGLang",
   setup="SGLang v0.5.7, TP=8, EP=1 (no DP attention), block-fp8 weights, ISL=OSL=1024 (InferenceX random, range ratio 0.8), concurrency 8-64, means; output throughput per GPU.",
   engine="SGLang v0.5.7", engine_family="sglang", engine_version="0.5.7", klass="mla"),
 "ix1061-mi300x-gptoss": dict(url="https://github.com/SemiAnalysisAI/InferenceX/pull/1061",
   what="InferenceX PR #1061: gpt-oss-120b FP4 on one MI300X, concurrency 64-256",
   setup="vLLM v0.17.0 (ROCm), TP=1, MXFP4 experts, ISL=OSL=1024; output tokens/s of the server and median TPOT.",
   engine="vLLM v0.17.0", engine_family="vllm", engine_version="0.17.0", klass="moe"),
 "ix1092-mi300x-gptoss-tp8": dict(url="https://github.com/SemiAnalysisAI/InferenceX/pull/1092",
   what="InferenceX PR #1092: gpt-oss-120b FP4 on 8x MI300X, TP=8, conc 1 and 4",
   setup="vllm/vllm-openai-rocm:v0.17.0, TP=8, ISL=OSL=1024 (range ratio 0.8), interactivity (tokens/s/user = 1/TPOT) and tput/GPU (input+output tokens/s per GPU).",
   engine="vLLM v0.17.0", engine_family="vllm", engine_version="0.17.0", klass="moe"),
 "tt356-sglang-16xh100": dict(url="https://github.com/tenstorrent/tt-inference-server/issues/356",
   what="tt-inference-server issue #356, comment of 2025-07-09: DeepSeek-R1-0528 on 16 H100 (SGLang + InfiniBand), one request at a time",
   setup="SGLang (version not stated, mid-2025), 2 nodes of 8 H100 over InfiniBand, TP=16, fp8 weights, concurrency 1; TPOT means. TTFT of these tables is not used: it does not grow with the prompt (cached prefixes) and the project's own issue #190 reports its client adds TTFT.",
   engine="SGLang (mid-2025)", engine_family="sglang", engine_version=None, klass="mla"),
 "tt356-vllm-awq-8xh100": dict(url="https://github.com/tenstorrent/tt-inference-server/issues/356",
   what="tt-inference-server issue #356, comment of 2025-07-10: DeepSeek-R1-0528-AWQ on 8x H100 with vLLM, one request at a time",
   setup="vLLM (version not stated, mid-2025), TP=8, AWQ 4-bit weights, concurrency 1; TPOT means (TTFT not used, see tt356-sglang-16xh100).",
   engine="vLLM (mid-2025)", engine_family="vllm", engine_version=None, klass="mla"),
 "tt340-qwen3-30b-a100": dict(url="https://github.com/tenstorrent/tt-inference-server/issues/340",
   what="tt-inference-server issue #340, comment of 2025-07-18: Qwen3-30B-A3B on one A100, one request at a time",
   setup="GPU reference run of tt-inference-server (vLLM OpenAI server, version not stated, mid-2025), TP=1, bf16, concurrency 1; TPOT means (TTFT not used).",
   engine="vLLM (mid-2025)", engine_family="vllm", engine_version=None, klass="moe"),
 "tt143-qwen25-72b-2xh100": dict(url="https://github.com/tenstorrent/tt-inference-server/issues/143",
   what="tt-inference-server issue #143, comment of 2025-04-01: Qwen2.5-72B-Instruct on 2x H100, one request at a time",
   setup="GPU reference run (vLLM OpenAI server, version not stated, early 2025), TP=2, bf16, concurrency 1; TPOT means (TTFT not used).",
   engine="vLLM (early 2025)", engine_family="vllm", engine_version=None, klass="dense"),
 "achatbot183-gptoss20b-h100": dict(url="https://github.com/ai-bot-pro/achatbot/pull/183",
   what="achatbot PR #183, comment of 2025-08-10: gpt-oss-20b with SGLang on one H100 (Modal)",
   setup="SGLang (Aug 2025), TP=1, MXFP4 experts, 20 prompts of 512 random tokens, 1024 new tokens, max concurrency 4; mean TTFT, E2E latency, output tokens/s.",
   engine="SGLang (Aug 2025)", engine_family="sglang", engine_version=None, klass="moe"),
 "vllm20469-qwen3-14b-awq": dict(url="https://github.com/vllm-project/vllm/issues/20469",
   what="vLLM issue #20469: Qwen3-14B-AWQ on one A100 80GB, vLLM v0.9.1, concurrency 1",
   setup="vLLM v0.9.1, TP=1, AWQ, --enforce-eager (no CUDA graphs), 30 prompts of 16000 tokens, 200 new tokens, max concurrency 1; mean TTFT and TPOT.",
   engine="vLLM v0.9.1 (eager)", engine_family="vllm", engine_version="0.9.1", klass="dense"),
}
DATES = {'ix870-h200-dsr1': '2026-03', 'ix1061-mi300x-gptoss': '2026-04', 'ix1092-mi300x-gptoss-tp8': '2026-04', 'tt356-sglang-16xh100': '2025-07', 'tt356-vllm-awq-8xh100': '2025-07', 'tt340-qwen3-30b-a100': '2025-07', 'tt143-qwen25-72b-2xh100': '2025-04', 'achatbot183-gptoss20b-h100': '2025-08', 'vllm20469-qwen3-14b-awq': '2025-07'}
for k, v in S.items():
    v = dict(v); v["class"] = v.pop("klass"); v["session"] = 5; v["date"] = DATES[k]
    d["sources"][k] = v

rows = []
def R(src, model, gpu, tp, weights, batch, inp, out, metric, value, unit, note="", kv="bf16", ep=1, mode="serving"):
    rid = f"{src}-{model}-{gpu}-tp{tp}-c{batch}-{inp}-{out}-{metric}"
    rows.append(dict(id=rid, source=src, gpu=gpu, tp=tp, model=model, weights=weights, kv=kv, batch=batch, mode=mode,
                     input_len=inp, output_len=out, metric=metric, value=value, unit=unit, note=note,
                     expert_parallel_size=ep, data_parallel_size=1, enable_dp_attention=False))

for c, ttft, tpot, opg in [(8, 330.6, 12.8, 74.6), (16, 356.0, 17.2, 111.9), (32, 426.5, 25.6, 151.1), (64, 423.1, 34.6, 223.6)]:
    R("ix870-h200-dsr1", "DeepSeek-R1", "H200-SXM", 8, "fp8", c, 1024, 1024, "ttft_ms", ttft, "ms", "mean TTFT")
    R("ix870-h200-dsr1", "DeepSeek-R1", "H200-SXM", 8, "fp8", c, 1024, 1024, "itl_ms", tpot, "ms", "mean TPOT")
    R("ix870-h200-dsr1", "DeepSeek-R1", "H200-SXM", 8, "fp8", c, 1024, 1024, "output_tokens_per_s_per_gpu", opg, "tokens/s/GPU")
for c, tps, tpot in [(64, 2008, 31.4), (96, 2561, 36.6), (128, 2990, 41.3), (256, 4271, 58.3)]:
    R("ix1061-mi300x-gptoss", "gpt-oss-120b", "MI300X", 1, "mxfp4", c, 1024, 1024, "output_tokens_per_s", tps, "tokens/s")
    R("ix1061-mi300x-gptoss", "gpt-oss-120b", "MI300X", 1, "mxfp4", c, 1024, 1024, "itl_ms", tpot, "ms", "median TPOT")
R("ix1092-mi300x-gptoss-tp8", "gpt-oss-120b", "MI300X", 8, "mxfp4", 4, 1024, 1024, "itl_ms", round(1000 / 234, 3), "ms", "1000 / 234 tokens/s/user (the PR's 'about 234')")
R("ix1092-mi300x-gptoss-tp8", "gpt-oss-120b", "MI300X", 8, "mxfp4", 1, 1024, 1024, "itl_ms", round(1000 / 249, 3), "ms", "1000 / 249 tokens/s/user (the PR's 'about 249')")
for (i, o, tp_) in [(128, 128, 23.1), (128, 1024, 23.2), (1024, 128, 23.2), (2048, 128, 23.3), (3072, 128, 23.6), (4096, 128, 23.7), (8192, 128, 24.0)]:
    R("tt356-sglang-16xh100", "DeepSeek-R1", "H100-SXM", 16, "fp8", 1, i, o, "itl_ms", tp_, "ms", "mean TPOT")
for (i, o, tp_) in [(128, 128, 16.1), (128, 1024, 16.1), (1024, 128, 16.1), (2048, 128, 16.3), (3072, 128, 16.4), (4096, 128, 16.4), (8192, 128, 16.6)]:
    R("tt356-vllm-awq-8xh100", "DeepSeek-R1", "H100-SXM", 8, "awq", 1, i, o, "itl_ms", tp_, "ms", "mean TPOT")
for (i, o, tp_) in [(128, 128, 9.6), (128, 1024, 9.7), (1024, 128, 9.8), (2048, 128, 9.9), (3072, 128, 10.1), (4096, 128, 10.3), (8192, 128, 10.6)]:
    R("tt340-qwen3-30b-a100", "Qwen3-30B-A3B", "A100-80GB", 1, "bf16", 1, i, o, "itl_ms", tp_, "ms", "mean TPOT")
for (i, o, tp_) in [(128, 128, 30.9), (128, 1024, 30.9), (1024, 128, 31.0), (2048, 128, 31.0), (3072, 128, 31.1), (4096, 128, 31.1), (8192, 128, 31.3)]:
    R("tt143-qwen25-72b-2xh100", "Qwen2.5-72B", "H100-SXM", 2, "bf16", 1, i, o, "itl_ms", tp_, "ms", "mean TPOT")
R("achatbot183-gptoss20b-h100", "gpt-oss-20b", "H100-SXM", 1, "mxfp4", 4, 512, 1024, "ttft_ms", 2731.00, "ms", "mean TTFT (20 prompts, 5 waves of 4)")
R("achatbot183-gptoss20b-h100", "gpt-oss-20b", "H100-SXM", 1, "mxfp4", 4, 512, 1024, "request_latency_s", 8.43223, "s", "mean E2E latency")
R("achatbot183-gptoss20b-h100", "gpt-oss-20b", "H100-SXM", 1, "mxfp4", 4, 512, 1024, "output_tokens_per_s", 481.95, "tokens/s")
R("vllm20469-qwen3-14b-awq", "Qwen3-14B", "A100-80GB", 1, "awq", 1, 16000, 200, "ttft_ms", 3345.37, "ms", "mean TTFT, --enforce-eager")
R("vllm20469-qwen3-14b-awq", "Qwen3-14B", "A100-80GB", 1, "awq", 1, 16000, 200, "itl_ms", 20.63, "ms", "mean TPOT, --enforce-eager")

# -- split by document, fixed before any prediction: within each class (dense / MoE+MLA) the documents
# sorted by sha256(key); the first ceil(30%) are held out (set 4), the rest are training documents
import math
docs = {}
for k, v in S.items():
    docs.setdefault("dense" if v["klass" if "klass" in v else "class"] == "dense" else "moe/mla", []).append(k) if False else None
for k in S:
    cls = d["sources"][k]["class"]
    docs.setdefault("dense" if cls == "dense" else "moe/mla", []).append(k)
held = set()
for cls, keys in docs.items():
    keys.sort(key=lambda k: hashlib.sha256(k.encode()).hexdigest())
    held |= set(keys[:math.ceil(0.3 * len(keys))])
for r in rows:
    r["split"] = "heldout-4" if r["source"] in held else "train-5"
ids = {r["id"] for r in d["rows"]}
assert not ids & {r["id"] for r in rows}
assert len({r["id"] for r in rows}) == len(rows)
d["rows"] += rows
print("held out documents:", sorted(held))
print("train documents:", sorted(set(S) - held))
print(len(rows), "rows;", sum(r["split"] == "heldout-4" for r in rows), "held out")
json.dump(d, open(P, "w"), indent=1)
open(P, "a").write("\n")
