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
out of the budget. Its scheduler defaults depend on the GPU (vllm/engine/arg_utils.py
``get_batch_defaults``, the A100 exception from vllm-project/vllm#17885): ``vllm serve`` on a GPU
of at least 70 GiB whose name has no "a100" profiles 8192 tokens / 1024 sequences, every other GPU
(A100s, L40S, A6000, 24 GB cards) 2048 tokens / 256 sequences (the offline LLM class: 16384 / 8192
tokens; not modelled: the account is the server's) -- ``v1_batch_defaults``.

Not modelled, refused by name: the V1 line before 0.19 (0.8-0.18), 0.20 (between 0.19 and 0.21's
CUDA-graph change; nothing about its account has been read) and 0.21 on; before 0.5. The early V1 worker
(vllm/v1/worker/gpu_worker.py ``determine_available_memory`` of the 0.8 line, commit 0012cf69 in
vllm-project/vllm) already has v0.19's budget, total x utilization - (torch peak, weights included,
+ non-torch allocations), but its non-torch term is every byte in use on the device outside this
process's torch allocator: other processes' memory (no longer counted after vllm-project/vllm#19312, of June 2025)
and a kv-transfer connector's buffers; the July-2025 log of vllm-project/vllm#21348, 41 % under this
account, ran an LMCache connector whose GPU buffers no source here sizes. What else changed between
0.8 and 0.19 (the profile run's own size) is not read, so those versions stay refused. From 0.21
on, "CUDA graph memory profiling is enabled (default since v0.21.0)" puts the captured graphs inside the --gpu-memory-utilization budget (the
engine's own start-up line, e.g. LMCache/LMCache#3430; VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0
turns it off); the graphs' size is not modelled here.
"""
from __future__ import annotations

import dataclasses

from multihead.cost.serving.vllm import FULL, EngineArgs, ServingShape

VLLM_VERSIONS = ("0.6", "0.19")        # oldest first; the last is the default (newest modelled)
DEFAULT_VLLM = VLLM_VERSIONS[-1]
KV_LINE = {"0.6": "# GPU blocks", "0.19": "GPU KV cache size"}
V0_LINE = ("0.5", "0.6", "0.7")     # modelled as one: the V0 worker's block count did not change
V0_LONG_CONTEXT = 32 * 1024            # chunked prefill on by default above this max_model_len
V0_CHUNK, V0_MIN_BATCHED, V0_MAX_SEQS = 512, 2048, 256
V1_LARGE_GPU_GIB = 70                  # get_batch_defaults: device_memory >= 70 GiB and not an A100
V1_LARGE, V1_COMPACT = (8192, 1024), (2048, 256)   # vllm serve: (max_num_batched_tokens, max_num_seqs)
GIB = 1 << 30


def v1_batch_defaults(gpu_name: str | None, total_bytes: float) -> tuple[int, int]:
    """(max_num_batched_tokens, max_num_seqs) that ``vllm serve`` (V1) picks when neither is given:
    the large defaults on GPUs of >= 70 GiB total memory whose name has no "a100", else the compact
    ones (vllm/engine/arg_utils.py get_batch_defaults)."""
    large = total_bytes >= V1_LARGE_GPU_GIB * GIB and "a100" not in str(gpu_name or "").lower()
    return V1_LARGE if large else V1_COMPACT


def batch_defaults(version: str, max_model_len: int, gpu: str | None, total_bytes: float) -> tuple[int, int]:
    """(max_num_batched_tokens, max_num_seqs) that ``vllm serve`` of ``version`` runs with when neither
    flag is given: V1 (0.19) by the GPU (v1_batch_defaults); V0 (0.6) by the length: chunked prefill
    of 512 tokens above 32K, else max(max_model_len, 2048), and 256 sequences."""
    if version == "0.19":
        return v1_batch_defaults(gpu, total_bytes)
    tokens = V0_CHUNK if max_model_len > V0_LONG_CONTEXT else max(max_model_len, V0_MIN_BATCHED)
    return tokens, V0_MAX_SEQS


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
                     f"{_why_not(v)})")


def _why_not(v: str) -> str:
    """What is known to differ in an unmodelled version (the module doc's sources)."""
    try:
        major, minor = (int(x) for x in v.split(".")[:2])
    except ValueError:
        return "not a version number of the form MAJOR.MINOR"
    if (major, minor) >= (0, 21):
        return ("from v0.21.0 CUDA graph memory profiling is on by default and puts the captured graphs inside "
                "the --gpu-memory-utilization budget; their size is not modelled "
                "(VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0 turns it off)")
    if (major, minor) == (0, 20):
        return ("v0.20 lies between the modelled v0.19 and v0.21's CUDA-graph change, and nothing about its "
                "start-up account has been read; it is not assumed to be v0.19's")
    if (major, minor) >= (0, 8):
        return ("the V1 engine before v0.19 is not modelled: its worker has v0.19's budget, but counts other "
                "processes' and kv-connector memory as non-torch before vllm-project/vllm#19312, and its "
                "profile run's size is not checked against v0.19")
    if (major, minor) < (0, 5):
        return "versions before v0.5 (older than the V0 line modelled as 0.6) have not been read"
    return "other versions account differently"


def apply(version: str, shape: ServingShape, args: EngineArgs, given: set[str] = frozenset(),
          gpu: str | None = None, total_bytes: float | None = None) -> tuple[ServingShape, EngineArgs]:
    """The shape and flags as ``version`` sizes them; ``given``: flags the user set (the others take
    that version's defaults); ``gpu`` / ``total_bytes``: the GPU, for V1's defaults by GPU (none
    given: the flags as they are)."""
    if version == "0.19" and total_bytes is None:
        return shape, args
    if version != "0.19":
        if shape.mla_latent:
            raise ValueError(f"engine-version: vLLM {version} has no MLA latent cache (added in v0.7.1); "
                             f"{shape.name} is not modelled on it")
        shape = dataclasses.replace(shape, layer_kinds=tuple((FULL, None) for _ in shape.layer_kinds))
    tokens, seqs = batch_defaults(version, args.max_model_len, gpu, total_bytes or 0.0)
    changes = {k: v for k, v in (("max_num_batched_tokens", tokens), ("max_num_seqs", seqs)) if k not in given}
    return shape, dataclasses.replace(args, **changes)
