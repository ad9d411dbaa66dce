"""``python -m sglang.launch_server ...`` from a LaunchPlan (SGLang's flag names).

SGLang's names differ from vLLM's: --tp-size / --pp-size, --context-length, --chunked-prefill-size,
--max-running-requests, --page-size. Its memory flag is --mem-fraction-static, the fraction for
weights and KV cache together (activations live outside it), so vLLM's utilization is carried
over as is and the note says so. fp8 KV caches are named fp8_e4m3 / fp8_e5m2.
"""
from __future__ import annotations

from multihead.engines import HEAD, Command, LaunchPlan

_KV = {"auto": "auto", "fp8": "fp8_e4m3", "fp8_e4m3": "fp8_e4m3", "fp8_e5m2": "fp8_e5m2"}


def flags(plan: LaunchPlan) -> list[str]:
    if plan.kv_cache_dtype not in _KV:
        raise ValueError(f"kv-cache-dtype: SGLang takes {', '.join(_KV)}, got {plan.kv_cache_dtype!r}")
    # --pp-size only when pipelining (1 is its default): not every modelled SGLang release (0.4.x) was
    # checked to accept the flag, and a command must be one the engine takes
    out = ["--tp-size", str(plan.tensor_parallel_size),
           *(["--pp-size", str(plan.pipeline_parallel_size)] if plan.pipeline_parallel_size > 1 else []),
           "--mem-fraction-static", f"{plan.gpu_memory_utilization:g}"]
    if plan.dp_attention_size > 1:        # attention groups inside the TP group (DP-attention)
        if plan.data_parallel_size > 1:
            raise ValueError("data-parallel-size: with DP attention --dp-size counts attention groups; replicas of a "
                             "DP-attention launch are not modelled")
        out += ["--dp-size", str(plan.dp_attention_size), "--enable-dp-attention"]
    elif plan.replicas_per_node > 1:
        out += ["--dp-size", str(plan.replicas_per_node)]
    if plan.max_model_len:
        out += ["--context-length", str(plan.max_model_len)]
    if plan.max_num_batched_tokens:
        out += ["--chunked-prefill-size", str(plan.max_num_batched_tokens)]
    if plan.max_num_seqs:
        out += ["--max-running-requests", str(plan.max_num_seqs)]
    out += ["--kv-cache-dtype", _KV[plan.kv_cache_dtype], "--dtype", plan.dtype]
    if plan.quantization:
        out += ["--quantization", plan.quantization]
    if plan.block_size:
        out += ["--page-size", str(plan.block_size)]
    if plan.hf_overrides:     # SGLang's name for the same config override
        out += ["--json-model-override-args", plan.overrides_json]
    if plan.trust_remote_code:
        out += ["--trust-remote-code"]
    return out


def command(plan: LaunchPlan) -> Command:
    argv = ["python", "-m", "sglang.launch_server", "--model-path", plan.model, *flags(plan)]
    note = ("--mem-fraction-static covers weights + KV cache only; SGLang's KV capacity differs from "
            "vLLM's at the same fraction")
    if plan.nodes == 1:
        return Command("sglang", argv, note=note)
    argv += ["--nnodes", str(plan.nodes), "--node-rank", "0", "--dist-init-addr", f"{HEAD}:5000"]
    setup = (f"# {plan.nodes} nodes x {plan.gpus_per_node} GPUs: run this on every node, "
             f"with --node-rank 0 on the head and 1..{plan.nodes - 1} on the others",)
    return Command("sglang", argv, setup, plan.nodes, note)
