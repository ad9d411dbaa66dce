"""vLLM by version: what changes in the start-up KV account between the versions modelled.

The account in ``serving.py`` is vLLM v0.19's. Each other version is that account with the
differences below applied to the model's shape and the engine's flags, each named with the vLLM
source it comes from. Versions not listed are refused by name (``--engine-version``), never
silently treated as another.

v0.6 (the V0 engine, the default engine of 0.5.x-0.7.x, modelled as one: vllm/worker/worker.py
``determine_num_available_blocks``, https://github.com/vllm-project/vllm/blob/v0.6.0/vllm/worker/worker.py;
V1 became the default in 0.8.0):
- one KV cache for all layers: ``num_gpu_blocks = (total x gpu_memory_utilization - peak) //
  (block_size x every layer's bytes)`` (CacheEngine.get_cache_block_size,
  https://github.com/vllm-project/vllm/blob/v0.6.0/vllm/worker/cache_engine.py); sliding-window
  and chunked layers are sized as full (no hybrid KV-cache groups before the V1 engine's
  kv_cache_utils), logged as ``# GPU blocks: N, # CPU blocks: M``; tokens = N x block_size;
- the profile run (peak) forwards ``max_num_batched_tokens`` tokens, whose V0 default without
  chunked prefill is max(max_model_len, 2048), and with chunked prefill (turned on by default
  when max_model_len > 32K) 512 (vllm/config.py SchedulerConfig and vllm/engine/arg_utils.py,
  https://github.com/vllm-project/vllm/blob/v0.6.0/vllm/engine/arg_utils.py);
- max_num_seqs defaults to 256 (the same arg_utils.py);
- CUDA graphs are captured after the KV cache is allocated, outside the budget (as v0.19);
- MLA models have no latent cache before v0.7.1 (vLLM's MLA support), so they are refused here.
v0.19 (the V1 engine, vllm/v1/worker/gpu_worker.py, vllm/v1/core/kv_cache_utils.py): the
account in serving.py; its log prints "GPU KV cache size: N tokens" and leaves CUDA-graph memory
out of the budget.
"""
from __future__ import annotations

import dataclasses

from multihead.cost.serving import FULL, EngineArgs, ServingShape

VLLM_VERSIONS = ("0.6", "0.19")        # oldest first; the last is the default (newest modelled)
DEFAULT_VLLM = VLLM_VERSIONS[-1]
KV_LINE = {"0.6": "# GPU blocks", "0.19": "GPU KV cache size"}
V0_LINE = ("0.5", "0.6", "0.7")     # modelled as one: the V0 worker's block count did not change
V0_LONG_CONTEXT = 32 * 1024            # chunked prefill on by default above this max_model_len
V0_CHUNK, V0_MIN_BATCHED, V0_MAX_SEQS = 512, 2048, 256


def resolve(version: str | None) -> str:
    """The modelled version for ``--engine-version`` (None: the newest); a ValueError names the flag."""
    if version is None:
        return DEFAULT_VLLM
    v = str(version).removeprefix("v")
    for known in VLLM_VERSIONS:
        if v == known or v.startswith(known + "."):
            return known
    for line in V0_LINE:             # 0.5.x-0.7.x: V0 was the default engine until 0.8.0
        if v == line or v.startswith(line + "."):
            return "0.6"
    raise ValueError(f"engine-version: vLLM {version} is not modelled (modelled: {', '.join(VLLM_VERSIONS)}; "
                     "other versions account differently)")


def apply(version: str, shape: ServingShape, args: EngineArgs, given: set[str] = frozenset()
          ) -> tuple[ServingShape, EngineArgs]:
    """The shape and flags as ``version`` sizes them; ``given``: flags the user set (the others take
    that version's defaults)."""
    if version == "0.19":
        return shape, args
    if shape.mla_latent:
        raise ValueError(f"engine-version: vLLM {version} has no MLA latent cache (added in v0.7.1); "
                         f"{shape.name} is not modelled on it")
    shape = dataclasses.replace(shape, layer_kinds=tuple((FULL, None) for _ in shape.layer_kinds))
    changes = {}
    if "max_num_batched_tokens" not in given:
        changes["max_num_batched_tokens"] = (V0_CHUNK if args.max_model_len > V0_LONG_CONTEXT
                                             else max(args.max_model_len, V0_MIN_BATCHED))
    if "max_num_seqs" not in given:
        changes["max_num_seqs"] = V0_MAX_SEQS
    return shape, dataclasses.replace(args, **changes)
