"""``trtllm-serve MODEL ...`` from a LaunchPlan (TensorRT-LLM's flag names, underscores as it spells them).

Every flag below is a click option of trtllm-serve (tensorrt_llm/commands/serve.py @00209af1 of
NVIDIA/TensorRT-LLM; the 0.x line's own page, https://nvidia.github.io/TensorRT-LLM/0.18.2/commands/
trtllm-serve.html, lists --max_batch_size, --max_num_tokens, --max_seq_len, --tp_size, --pp_size,
--kv_cache_free_gpu_memory_fraction and a --backend that takes only ``pytorch``):

    --tp_size / --pp_size            parallelism (aliases of --tensor_parallel_size / --pipeline_parallel_size)
    --max_batch_size                 the plan's max_num_seqs, always stated (the account sized it)
    --max_num_tokens                 the plan's max_num_batched_tokens
    --max_seq_len                    the plan's max_model_len
    --kv_cache_free_gpu_memory_fraction   the fraction of the memory free after weights and buffers
    1.x only: --backend pytorch (the default, stated), --ep_size, --enable_chunked_prefill when
    max_seq_len > max_num_tokens, --trust_remote_code for a checkpoint with its own code (config.json auto_map),
    and --extra_llm_api_options FILE for what has no flag
    (kv_cache_config: dtype fp8 / tokens_per_block: KvCacheConfig's PyTorch-backend fields).

The 0.x command has no --backend (the TensorRT engine path was its default) and carries only the
0.18.2 flags: an fp8 KV cache, expert parallelism or another tokens_per_block are built into the
engine there (trtllm-build / a quantized checkpoint) and the note says so. TensorRT-LLM has no
runtime --quantization and no --dtype flag: it serves the checkpoint as quantized (a ModelOpt FP8
checkpoint for fp8) in its own dtype.
"""
from __future__ import annotations

from multihead.engines import HEAD, Command, LaunchPlan

DEFAULT_MAX_BATCH_SIZE = 1024      # the planner's max_num_seqs default (cost/serving/answer.ENGINE_DEFAULTS)
DEFAULT_MAX_NUM_TOKENS = 8192
EXTRA_FILE = "extra_llm_api_options.yaml"


def family(plan: LaunchPlan) -> str:
    from multihead.cost.serving.tensorrt_llm import resolve
    return resolve(plan.engine_version)


def _extra(plan: LaunchPlan, fam: str) -> tuple[list[str], list[str]]:
    """(YAML lines for --extra_llm_api_options, notes for what the 0.x command cannot carry)."""
    kv, notes = {}, []
    if plan.kv_cache_dtype not in ("auto", "fp8", "fp8_e4m3"):
        raise ValueError(f"kv-cache-dtype: TensorRT-LLM takes auto or fp8, got {plan.kv_cache_dtype!r}")
    if plan.kv_cache_dtype != "auto":
        kv["dtype"] = "fp8"
    if plan.block_size and plan.block_size != 32:
        kv["tokens_per_block"] = plan.block_size
    if fam == "0.x":
        if kv.get("dtype"):
            notes.append("an fp8 KV cache is built into the 0.x engine (a checkpoint quantized with FP8 KV cache)")
        if "tokens_per_block" in kv:
            notes.append(f"build the engine with trtllm-build --tokens_per_block {kv['tokens_per_block']}")
        if plan.expert_parallel_size > 1:
            notes.append(f"expert parallelism {plan.expert_parallel_size} is not a 0.x trtllm-serve flag "
                         "(moe_expert_parallel_size of the LLM API)")
        return [], notes
    lines = ["kv_cache_config:"] + [f"  {k}: {v}" for k, v in kv.items()] if kv else []
    return lines, notes


def flags(plan: LaunchPlan) -> list[str]:
    """Every choice of the plan as a trtllm-serve option (the YAML file's lines come from ``command``)."""
    if plan.hf_overrides:
        raise ValueError("max-model-len: past the config's positions the engine needs a rope-scaling override, "
                         "which trtllm-serve takes no flag for; serve the model's own length or edit its config.json")
    fam = family(plan)
    tokens = plan.max_num_batched_tokens or DEFAULT_MAX_NUM_TOKENS
    out = ["--tp_size", str(plan.tensor_parallel_size), "--pp_size", str(plan.pipeline_parallel_size),
           "--max_batch_size", str(plan.max_num_seqs or DEFAULT_MAX_BATCH_SIZE), "--max_num_tokens", str(tokens)]
    if plan.max_model_len:
        out += ["--max_seq_len", str(plan.max_model_len)]
    out += ["--kv_cache_free_gpu_memory_fraction", f"{plan.gpu_memory_utilization:g}"]
    if fam == "1.x":
        if plan.expert_parallel_size > 1:
            out += ["--ep_size", str(plan.expert_parallel_size)]
        if plan.max_model_len and plan.max_model_len > tokens:
            out += ["--enable_chunked_prefill"]
        out += ["--backend", "pytorch"]
        if plan.trust_remote_code:
            out += ["--trust_remote_code"]
        if _extra(plan, fam)[0]:
            out += ["--extra_llm_api_options", EXTRA_FILE]
    return out


def command(plan: LaunchPlan) -> Command:
    if not 0 < plan.gpu_memory_utilization < 1:
        raise ValueError(f"kv-cache-free-gpu-memory-fraction: TensorRT-LLM needs a fraction in (0, 1), "
                         f"got {plan.gpu_memory_utilization:g}")
    fam = family(plan)
    argv = ["trtllm-serve", plan.model, *flags(plan)]
    yaml, notes = _extra(plan, fam)
    notes.insert(0, "--kv_cache_free_gpu_memory_fraction is a fraction of the memory free after weights and "
                    "buffers, not of the GPU")
    if plan.quantization:
        notes.append(f"--quantization {plan.quantization}: TensorRT-LLM has no runtime quantization flag; serve a "
                     "checkpoint quantized so (e.g. a ModelOpt FP8 one)")
    if fam == "0.x" and plan.trust_remote_code:
        notes.append("the checkpoint ships its own code (config.json auto_map): the 0.x engine is built from a converted "
                     "checkpoint, so convert it with the model's code trusted")
    if fam == "0.x":
        notes.append("0.x: the TensorRT engine path (no --backend); releases before trtllm-serve serve the same engine "
                     "through Triton's tensorrtllm_backend (kv_cache_free_gpu_mem_fraction)")
    setup = ((f"cat > {EXTRA_FILE} <<'EOF'", *yaml, "EOF") if yaml else ())
    if plan.replicas_per_node > 1:
        setup = (f"# {plan.replicas_per_node} replicas on this node: run the trtllm-serve line once per replica, each on "
                 f"its own {plan.gpus} GPUs (CUDA_VISIBLE_DEVICES) with its own --port",) + setup
    note = "; ".join(notes)
    if plan.nodes == 1:
        return Command("tensorrt-llm", argv, setup, 1, note)
    # Multi-node: one MPI job over the nodes, each rank started by trtllm-llmapi-launch
    argv = ["mpirun", "--allow-run-as-root", "-np", str(plan.gpus), "-H",
            ",".join(f"{HEAD}:{plan.gpus_per_node}" if i == 0 else f"$NODE{i}_IP:{plan.gpus_per_node}"
                     for i in range(plan.nodes)), "trtllm-llmapi-launch", *argv]
    setup = (f"# {plan.nodes} nodes x {plan.gpus_per_node} GPUs: one MPI job from the head node; replace $HEAD_IP and "
             f"$NODE<i>_IP with the nodes' addresses",) + setup
    return Command("tensorrt-llm", argv, setup, plan.nodes, note)
