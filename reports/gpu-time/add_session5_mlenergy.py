"""Session-5 rows (h28), part 2: the ML.ENERGY Leaderboard v3 LLM tasks (vLLM, H100 SXM and B200), median ITL per
configuration, read from the repository's published data files (ml-energy/leaderboard public/data/tasks/*.json)."""
import json, hashlib, math, sys
P = "reports/gpu-time/measurements.json"
COMMIT = "0cd52da"   # ml-energy/leaderboard HEAD read (data last updated 2026-02-16)
d = json.load(open(P))
M = d["models"]
M["Qwen3-235B-A22B"] = {"source": "Qwen/Qwen3-235B-A22B(-Instruct/Thinking-2507) config.json (https://huggingface.co/Qwen/Qwen3-235B-A22B-Instruct-2507/blob/main/config.json)",
  "config": {"model_type": "qwen3_moe", "hidden_size": 4096, "intermediate_size": 12288, "moe_intermediate_size": 1536,
             "num_hidden_layers": 94, "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 128,
             "num_experts": 128, "num_experts_per_tok": 8, "decoder_sparse_step": 1, "mlp_only_layers": [],
             "vocab_size": 151936, "tie_word_embeddings": False, "max_position_embeddings": 262144, "torch_dtype": "bfloat16"}}
M["Qwen3-32B"] = {"source": "Qwen/Qwen3-32B config.json (https://huggingface.co/Qwen/Qwen3-32B/blob/main/config.json)",
  "config": {"model_type": "qwen3", "hidden_size": 5120, "intermediate_size": 25600, "num_hidden_layers": 64,
             "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151936,
             "tie_word_embeddings": False, "max_position_embeddings": 40960, "torch_dtype": "bfloat16"}}
MODEL = {"Qwen/Qwen3-14B": "Qwen3-14B", "Qwen/Qwen3-8B": "Qwen3-8B", "Qwen/Qwen3-32B": "Qwen3-32B",
         "Qwen/Qwen3-235B-A22B-Thinking-2507": "Qwen3-235B-A22B", "Qwen/Qwen3-235B-A22B-Thinking-2507-FP8": "Qwen3-235B-A22B",
         "Qwen/Qwen3-235B-A22B-Instruct-2507": "Qwen3-235B-A22B", "Qwen/Qwen3-235B-A22B-Instruct-2507-FP8": "Qwen3-235B-A22B",
         "Qwen/Qwen3-30B-A3B-Thinking-2507": "Qwen3-30B-A3B", "Qwen/Qwen3-30B-A3B-Instruct-2507": "Qwen3-30B-A3B",
         "deepseek-ai/DeepSeek-R1-0528": "DeepSeek-R1", "deepseek-ai/DeepSeek-V3.1": "DeepSeek-R1",
         "openai/gpt-oss-120b": "gpt-oss-120b", "openai/gpt-oss-20b": "gpt-oss-20b",
         "google/gemma-3-12b-it": "Gemma-3-12B", "google/gemma-3-27b-it": "Gemma-3-27B",
         "meta-llama/Llama-3.1-405B-Instruct": "Llama-3.1-405B", "meta-llama/Llama-3.1-405B-Instruct-FP8": "Llama-3.1-405B",
         "meta-llama/Llama-3.1-70B-Instruct": "Llama-3.1-70B", "meta-llama/Llama-3.3-70B-Instruct": "Llama-3.1-70B",
         "meta-llama/Llama-3.1-8B-Instruct": "Llama-3.1-8B", "meta-llama/Llama-4-Scout-17B-16E-Instruct": "Llama-4-Scout"}
SKIP = {"nvidia/NVIDIA-Nemotron-Nano-12B-v2": "nemotron_h (hybrid Mamba-2): refused by the reader",
        "nvidia/NVIDIA-Nemotron-Nano-9B-v2": "nemotron_h (hybrid Mamba-2): refused by the reader",
        "meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8": "no config in the table"}
GPU = {"H100": "H100-SXM", "B200": "B200"}
W = {"bfloat16": "bf16", "fp8": "fp8", "mxfp4": "mxfp4"}
INPUT = 256
TASK = {"gpqa": "GPQA Diamond (reasoning: short questions, outputs of several thousand tokens)",
        "lm-arena-chat": "LM Arena chat (short user turns, replies of a few paragraphs)"}
rows, seen = [], {}
for task, what in TASK.items():
    key = f"mlenergy-v3-{task}"
    d["sources"][key] = dict(
        url=f"https://github.com/ml-energy/leaderboard/blob/{COMMIT}/public/data/tasks/{task}.json",
        what=f"ML.ENERGY Leaderboard v3 (Dec 2025, data of 2026-02-16), task {task}: {what}",
        setup=("vLLM (v3 campaign, late 2025; version not stated per row), H100 80GB HBM3 700 W (SXM) and B200 1000 W; "
               "each configuration: max_num_seqs, the measured average batch, median inter-token latency (median ITL = one "
               "decode step of the running batch; prefill-interrupted steps are the tail). Input lengths are not published: "
               f"{INPUT} tokens taken (the site: short inputs); context of a step = input + average output / 2. "
               "MoE models run with expert parallelism over all GPUs (tensor_parallel 1, expert_parallel N, data_parallel 1 "
               "in the data: read as vLLM's --tensor-parallel-size N --enable-expert-parallel, attention tensor-parallel)."),
        engine="vLLM (ML.ENERGY v3)", engine_family="vllm", engine_version=None, date="2025-12", session=5,
        **{"class": "mixed"})
    for c in json.load(open(f"/tmp/h28/mle_{task}.json"))["configurations"]:
        mid = c["model_id"]
        if mid in SKIP:
            continue
        n, tp, ep, dp = c["num_gpus"], c["tensor_parallel"], c["expert_parallel"], c["data_parallel"]
        assert dp == 1 and (tp == n or ep == n), (mid, n, tp, ep, dp)
        b = c["avg_batch_size"]
        batch = max(1, round(b))
        out = round(c["avg_output_len"])
        rid = f"{key}-{mid.split('/')[1]}-{c['gpu_model']}-n{n}-ep{ep}-s{c['max_num_seqs']}"
        seen[rid] = seen.get(rid, 0) + 1
        if seen[rid] > 1:
            rid = f"{rid}-{seen[rid]}"
        rows.append(dict(id=rid, source=key, gpu=GPU[c["gpu_model"]], tp=n, model=MODEL[mid], weights=W[c["weight_precision"]],
                         kv="bf16", batch=batch, mode="serving", input_len=INPUT, output_len=out,
                         metric="decode_step_ms", value=round(c["median_itl_ms"], 4), unit="ms",
                         note=f"{mid}; max_num_seqs {c['max_num_seqs']}, average batch {b:.2f}, average output {c['avg_output_len']:.0f}",
                         expert_parallel_size=ep, data_parallel_size=1, enable_dp_attention=False))
# split: the two documents form their own stratum (mixed dense + MoE + MLA); ceil(30%) = 1 held out by sha256 order
keys = sorted((f"mlenergy-v3-{t}" for t in TASK), key=lambda k: hashlib.sha256(k.encode()).hexdigest())
held = set(keys[:math.ceil(0.3 * len(keys))])
for r in rows:
    r["split"] = "heldout-4" if r["source"] in held else "train-5"
ids = {r["id"] for r in d["rows"]}
assert not ids & {r["id"] for r in rows} and len({r["id"] for r in rows}) == len(rows)
d["rows"] += rows
print("held out:", held, "rows", len(rows), "held", sum(r["split"] == "heldout-4" for r in rows))
json.dump(d, open(P, "w"), indent=1)
open(P, "a").write("\n")
# (then: Gemma-3-12B, Gemma-3-27B and Llama-4-Scout entries of "models" copied from multihead/cost/catalog/configs/)
