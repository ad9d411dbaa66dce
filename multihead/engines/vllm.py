"""``vllm serve MODEL ...`` from a LaunchPlan (vLLM's CLI flag names; multi-node through Ray)."""
from __future__ import annotations

from multihead.engines import HEAD, Command, LaunchPlan


def flags(plan: LaunchPlan) -> list[str]:
    """Every choice of the plan as a vLLM engine argument."""
    out = ["--tensor-parallel-size", str(plan.tensor_parallel_size),
           "--pipeline-parallel-size", str(plan.pipeline_parallel_size),
           "--gpu-memory-utilization", f"{plan.gpu_memory_utilization:g}"]
    if plan.replicas_per_node > 1:
        out += ["--data-parallel-size", str(plan.replicas_per_node)]
    if plan.max_model_len:
        out += ["--max-model-len", str(plan.max_model_len)]
    if plan.max_num_batched_tokens:
        out += ["--max-num-batched-tokens", str(plan.max_num_batched_tokens)]
    if plan.max_num_seqs:
        out += ["--max-num-seqs", str(plan.max_num_seqs)]
    out += ["--kv-cache-dtype", plan.kv_cache_dtype, "--dtype", plan.dtype]
    if plan.quantization:
        out += ["--quantization", plan.quantization]
    if plan.block_size:
        out += ["--block-size", str(plan.block_size)]
    if plan.hf_overrides:     # vLLM refuses a --max-model-len past the config's derived length without it
        out += ["--hf-overrides", plan.overrides_json]
    if plan.trust_remote_code:
        out += ["--trust-remote-code"]
    return out


def command(plan: LaunchPlan) -> Command:
    argv = ["vllm", "serve", plan.model, *flags(plan)]
    if plan.nodes == 1:
        return Command("vllm", argv)
    # Multi-node: vLLM runs its workers on a Ray cluster spanning the nodes; the serve command
    # runs once, on the head node, and places TP inside a node and PP across nodes.
    argv += ["--distributed-executor-backend", "ray"]
    setup = (f"# {plan.nodes} nodes x {plan.gpus_per_node} GPUs: start Ray on each node first",
             "# on the head node:",
             "ray start --head --port=6379",
             f"# on each of the other {plan.nodes - 1} node(s):",
             f"ray start --address={HEAD}:6379",
             "# then, on the head node:")
    return Command("vllm", argv, setup, plan.nodes)
