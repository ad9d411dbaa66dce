"""TensorRT-LLM's memory account: the paged KV cache it allocates per GPU at start-up (torch-free).

How TensorRT-LLM sizes the cache, read from its code (github.com/NVIDIA/TensorRT-LLM, each file at
the commit named), per GPU of one tensor-parallel group and pipeline stage:

    free  = physical - CUDA context and communicators - weights - runtime workspace
    max_tokens = floor(free_gpu_memory_fraction x free / KV bytes per token)     (min with max_tokens)
    blocks = ceil(max_tokens / tokens_per_block);  KV-cache tokens = blocks x tokens_per_block

- ``free_gpu_memory_fraction`` is KvCacheConfig's (tensorrt_llm/llmapi/llm_args.py @fcd3f316:
  "If both `max_tokens` and `free_gpu_memory_fraction` are specified, memory corresponding to the
  minimum will be used"), trtllm-serve's ``--kv_cache_free_gpu_memory_fraction`` (alias
  ``--free_gpu_memory_fraction``, default 0.9: tensorrt_llm/commands/serve.py @00209af1). None given:
  ``kDefaultGpuMemFraction = 0.9f`` (cpp/include/tensorrt_llm/batch_manager/kvCacheConfig.h
  @d879430b); it must be < 1 (TLLM_CHECK in calculateMaxNumBlocks). Unlike vLLM's
  --gpu-memory-utilization (a fraction of the physical memory), it is a fraction of what is free
  once weights and buffers are in; unlike SGLang's --mem-fraction-static it excludes the weights.
- TRT engine path (the "0.x" family, the default of 0.x releases): the executor loads the engine
  (weights), creates the execution context, whose activation memory TensorRT fixed at build time
  from max_num_tokens / max_batch_size, and the runtime and decoder buffers (sized by
  max_batch_size and max_seq_len), then KVCacheManager::calculateMaxNumBlocks takes
  ``freeMemFraction x (cudaMemGetInfo free + memory-pool free) / bytes per token``, the min with
  maxTokens, the MIN over all ranks (an MPI allreduce), and ``ceilDiv(maxTokens, tokensPerBlock)``
  blocks (cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp; the user doc
  docs/source/reference/memory.md @7ff53023 gives the same rule and a log of it: "available:
  70.48 GiB" -> "Allocated 63.44 GiB for max tokens in paged KV cache (259840)", 4060 blocks of 64).
- PyTorch backend (the "1.x" family; trtllm-serve's default ``--backend pytorch`` since 1.0):
  KvCacheCreator.estimate_max_tokens (tensorrt_llm/_torch/pyexecutor/_util.py @d8ae02ca) runs dummy
  context requests of max_num_tokens tokens through the executor with a small temporary KV cache,
  then ``available_kv_mem = (total - peak + temporary KV) x fraction``, peak = torch's peak
  (weights + the forward's activations) + the memory in use outside torch ("e.g., NCCL and CUDA
  graphs"); ``max_tokens = available // kv size per token``, min with KvCacheConfig.max_tokens.
- KV bytes per token: 2 x KV heads per GPU x head_dim x bytes x the attention layers of this
  pipeline rank (MLA: kv_lora_rank + qk_rope_head_dim, once: ``_get_cache_size_per_token``); every
  layer is sized as full attention (kvCacheManager.cpp: the per-window split "is not used for
  BaseKVCacheManager::calculateMaxNumBlocks because we want to first achieve identical performance
  as assuming all layers as full attention"). ``tokens_per_block`` 32 (KvCacheConfig of the 1.x line;
  trtllm-build's --tokens_per_block default, tensorrt_llm/plugin/plugin.py @c20322ff; the earliest
  releases used 64, tensorrt_llm/builder.py @14e801da).

What this account approximates (named in its terms): the runtime workspace is not TensorRT's own
figure (``device_memory_size_v2`` of a built engine) nor a profiled peak, but the vLLM account's
fitted profile-run peak for a forward of max_num_tokens tokens and a sampler over max_batch_size
rows (cost/catalog/serving_fit.json, fitted on vLLM logs, never on a TensorRT-LLM log); the CUDA
context and communicator buffers are the same fit's non-torch term; CUDA graphs (PyTorch backend)
and the 0.x decoder buffers are not sized beyond that. Pipeline stages get vLLM's layer split.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from multihead.cost.serving.vllm import (GIB, EngineArgs, Fit, ServingAccount, ServingShape, activation_bytes,
                                         check_args, kv_bytes_per_token_layer, memory_keys, non_torch_bytes,
                                         stage_layers, stage_weight_bytes)

ENGINE = "tensorrt-llm"
TRTLLM_VERSIONS = ("0.x", "1.x")          # oldest first; the last is the default (newest modelled)
DEFAULT_FRACTION = 0.9                    # KvCacheConfig::kDefaultGpuMemFraction; trtllm-serve's default
TOKENS_PER_BLOCK = 32
TOKENS_PER_BLOCK_CHOICES = (8, 16, 32, 64, 128)
OLDEST_0X_MINOR = 7                       # 0.7+: the 0.9 default (an earlier kvCacheConfig.h had 0.85f)

# What differs by version family: the default backend and how its runtime workspace comes to be.
FAMILIES = {
    "0.x": {"backend": "tensorrt",
            "workspace": "the TensorRT engine's activation memory, fixed at build time by max_num_tokens / "
                         "max_batch_size, + runtime and decoder buffers",
            "how": "free memory after the engine, its execution context and the runtime buffers load "
                   "(KVCacheManager::calculateMaxNumBlocks)",
            "serve": "trtllm-serve without --backend: the TensorRT engine path (0.18.2's flags)"},
    "1.x": {"backend": "pytorch",
            "workspace": "the peak of the profiling forward of max_num_tokens tokens (dummy context requests)",
            "how": "total - peak of the profiling run, torch + non-torch (KvCacheCreator.estimate_max_tokens)",
            "serve": "trtllm-serve --backend pytorch (the default since 1.0)"},
}


@dataclass(frozen=True)
class TRTLLMArgs:
    """The TensorRT-LLM settings the account depends on, under trtllm-serve's / KvCacheConfig's names."""
    tp_size: int = 1
    pp_size: int = 1
    ep_size: int = 1
    max_batch_size: int = 1024                  # the planner's max_num_seqs default, stated on the command
    max_num_tokens: int = 8192
    max_seq_len: int = 8192
    free_gpu_memory_fraction: float | None = None   # None: 0.9
    tokens_per_block: int = TOKENS_PER_BLOCK
    max_tokens: int | None = None                # KvCacheConfig.max_tokens
    kv_cache_dtype_bytes: float = 2.0
    activation_dtype_bytes: float = 2.0
    pcie: bool = False
    version: str = TRTLLM_VERSIONS[-1]


def resolve(version: str | None) -> str:
    """The modelled version family for ``--engine-version`` (None: the newest); a ValueError names the flag."""
    if version is None:
        return TRTLLM_VERSIONS[-1]
    v = str(version).strip().removeprefix("v")
    if v in TRTLLM_VERSIONS:
        return v
    m = re.fullmatch(r"(\d+)(?:\.(\d+))?(?:[.\w+-]*)", v)
    major, minor = (int(m.group(1)), int(m.group(2) or 0)) if m else (None, None)
    if major == 1:
        return "1.x"
    if major == 0 and minor >= OLDEST_0X_MINOR:
        return "0.x"
    why = ("releases before 0.7 are not checked (an early KvCacheConfig defaulted to 0.85 of the free memory)"
           if major == 0 else "only the 0.x TensorRT-engine and 1.x PyTorch-backend lines are read")
    raise ValueError(f"engine-version: TensorRT-LLM {version} is not modelled (modelled: 0.7-0.x as '0.x', "
                     f"1.x as '1.x'; {why})")


def fraction(args: TRTLLMArgs) -> float:
    return DEFAULT_FRACTION if args.free_gpu_memory_fraction is None else args.free_gpu_memory_fraction


def _engine_args(args: TRTLLMArgs) -> EngineArgs:
    """The same quantities under the vLLM account's names (its weight split, workspace fit, checks)."""
    return EngineArgs(tensor_parallel_size=args.tp_size, pipeline_parallel_size=args.pp_size,
                      max_model_len=args.max_seq_len, max_num_batched_tokens=args.max_num_tokens,
                      max_num_seqs=args.max_batch_size, kv_cache_dtype_bytes=args.kv_cache_dtype_bytes,
                      activation_dtype_bytes=args.activation_dtype_bytes)


def check(shape: ServingShape, args: TRTLLMArgs) -> None:
    """TensorRT-LLM's own start-up checks the account needs; a ValueError names the flag."""
    check_args(shape, _engine_args(args))
    f = fraction(args)
    if not 0 < f < 1:
        raise ValueError(f"kv-cache-free-gpu-memory-fraction: expected a fraction in (0, 1) (TensorRT-LLM checks "
                         f"freeMemFraction < 1.0), got {f:g}")
    if args.tokens_per_block not in TOKENS_PER_BLOCK_CHOICES:
        raise ValueError(f"block-size: TensorRT-LLM's tokens_per_block, expected one of "
                         f"{', '.join(map(str, TOKENS_PER_BLOCK_CHOICES))}, got {args.tokens_per_block}")
    if args.max_tokens is not None and args.max_tokens < 1:
        raise ValueError(f"max-tokens: expected a positive integer, got {args.max_tokens}")
    if args.version not in FAMILIES:
        raise ValueError(f"engine-version: expected one of {', '.join(TRTLLM_VERSIONS)}, got {args.version!r}")


@dataclass(frozen=True)
class _Rank:
    index: int
    layers: range
    weights: float
    workspace: float
    non_torch: float
    free: float
    per_token: float
    max_tokens: int


def _rank(shape: ServingShape, args: TRTLLMArgs, fit: Fit, total: float, index: int, layers: range,
          per_token_layer: float) -> _Rank:
    e = _engine_args(args)
    weights = stage_weight_bytes(shape, e, layers, index)
    workspace = activation_bytes(shape, e, fit, last_stage=index == args.pp_size - 1)
    non_torch = non_torch_bytes(e, fit, args.pcie)
    free = total - weights - workspace - non_torch
    per_token = per_token_layer * max(1, len(layers))
    tokens = int(fraction(args) * free // per_token) if free > 0 else 0
    return _Rank(index, layers, weights, workspace, non_torch, free, per_token, max(tokens, 0))


def account(shape: ServingShape, args: TRTLLMArgs, fit: Fit, total_bytes: float,
            max_len_cap: int | None = None) -> ServingAccount:
    """TensorRT-LLM's paged KV cache for ``shape`` on GPUs of ``total_bytes`` physical memory (module
    doc); the vLLM account's result type: ``kv_cache_tokens`` is blocks x tokens_per_block,
    ``num_gpu_blocks`` the primary pool's blocks, ``page_bytes`` one block in one layer."""
    check(shape, args)
    per_token_layer = kv_bytes_per_token_layer(shape, args.tp_size, args.kv_cache_dtype_bytes)
    ranks = [_rank(shape, args, fit, total_bytes, i, layers, per_token_layer)
             for i, layers in enumerate(stage_layers(shape.num_layers, args.pp_size))]
    worst = min(ranks, key=lambda r: (r.max_tokens, r.free))      # every rank takes the MIN (MPI allreduce)
    max_tokens = worst.max_tokens if args.max_tokens is None else min(worst.max_tokens, args.max_tokens)
    tpb = args.tokens_per_block
    blocks = -(-max_tokens // tpb)
    tokens = blocks * tpb
    bpr = -(-args.max_seq_len // tpb)
    cap = max_len_cap or max(shape.max_position or 0, args.max_seq_len)
    f = fraction(args)
    kv_budget = max(worst.free, 0.0) * f
    reason = _reason(worst, args, total_bytes, tokens, f)
    return ServingAccount(
        kv_cache_tokens=tokens if reason is None else 0,
        max_concurrency=round(blocks / bpr, 4) if reason is None else 0.0,
        **memory_keys(kv_cache_gib=blocks * tpb * worst.per_token, weights_gib=worst.weights,
                      activation_gib=worst.workspace, non_torch_gib=worst.non_torch,
                      requested_gib=total_bytes - max(worst.free, 0.0) * (1 - f), total_gib=total_bytes),
        max_model_len_fit=min(tokens, cap), num_gpu_blocks=blocks, kv_cache_groups=1, layers_per_group=len(worst.layers),
        blocks_per_request=bpr, page_bytes=int(per_token_layer * tpb), max_model_len=args.max_seq_len,
        fits=reason is None, reason=reason, terms=_terms(args, worst, total_bytes, kv_budget, max_tokens, blocks))


def _reason(r: _Rank, args: TRTLLMArgs, total: float, tokens: int, f: float) -> str | None:
    """None when one request of max_seq_len fits; else what TensorRT-LLM would do, in its terms."""
    if r.weights > total:
        return (f"CUDA out of memory while loading the model: {r.weights / GIB:.2f} GiB of weights per GPU on a GPU "
                f"with {total / GIB:.2f} GiB. Use more GPUs (--tp_size / --pp_size) or a quantized checkpoint.")
    if r.free <= 0 or tokens == 0:
        return (f"no memory left for the KV cache: weights {r.weights / GIB:.2f} + workspace {r.workspace / GIB:.2f} + "
                f"CUDA context and communicators {r.non_torch / GIB:.2f} GiB leave {max(r.free, 0) / GIB:.2f} GiB free "
                f"of {total / GIB:.2f} GiB. Use more GPUs, a quantized checkpoint or a smaller --max_num_tokens.")
    if tokens < args.max_seq_len:
        return (f"the KV cache holds {tokens:,} tokens (--kv_cache_free_gpu_memory_fraction {f:g} of "
                f"{r.free / GIB:.2f} GiB free), fewer than one request of --max_seq_len {args.max_seq_len:,}: "
                f"TensorRT-LLM would shrink the attention window to fit (a sliding window, not full attention); "
                f"serve --max_seq_len {tokens:,} or less, or give more GPUs")
    return None


def _terms(args: TRTLLMArgs, r: _Rank, total: float, kv_budget: float, max_tokens: int, blocks: int) -> list[dict]:
    g = lambda x: round(x / GIB, 4)  # noqa: E731
    fam, f = FAMILIES[args.version], fraction(args)
    return [
        {"name": "physical memory", "gib": g(total), "source": "GPU catalog (what CUDA reports)"},
        {"name": "weights", "gib": -g(r.weights),
         "source": f"rank {r.index}: {len(r.layers)} layers, split over TP={args.tp_size}"},
        {"name": "runtime workspace", "gib": -g(r.workspace),
         "source": f"{fam['workspace']}: approximated by vLLM's fitted profile-run peak for {args.max_num_tokens} "
                   f"tokens / {args.max_batch_size} sequences (not fitted on TensorRT-LLM logs)"},
        {"name": "non-torch", "gib": -g(r.non_torch),
         "source": "CUDA context (+ NCCL with peers): vLLM's fitted term; CUDA graphs not sized"},
        {"name": "free after load", "gib": g(max(r.free, 0.0)), "source": fam["how"]},
        {"name": "KV cache", "gib": g(kv_budget),
         "source": f"free x --kv_cache_free_gpu_memory_fraction {f:g}: {max_tokens:,} tokens of "
                   f"{r.per_token:,.0f} B -> {blocks:,} blocks of {args.tokens_per_block}"
                   + ("" if args.max_tokens is None else f" (max_tokens {args.max_tokens:,})")},
        {"name": "outside fraction", "gib": g(max(r.free, 0.0) * (1 - f)),
         "source": "left free by the fraction (later allocations; not sized here)"},
    ]


def details(args: TRTLLMArgs, a: ServingAccount) -> dict:
    """The TensorRT-LLM-only keys of the serving object (``serving.tensorrt_llm``)."""
    fam = FAMILIES[args.version]
    return {"version_family": args.version, "backend": fam["backend"], "serve": fam["serve"],
            "free_gpu_memory_fraction": fraction(args), "tokens_per_block": args.tokens_per_block,
            "max_tokens": a.kv_cache_tokens, "max_batch_size": args.max_batch_size,
            "max_num_tokens": args.max_num_tokens, "max_seq_len": args.max_seq_len,
            "chunked_prefill": args.max_seq_len > args.max_num_tokens}


# -- a serving Request (cost/serving/answer.py) in TensorRT-LLM's terms ---------------------------
def args_of(req, kv_bytes: float = 2.0, act_bytes: float = 2.0, pcie: bool = False,
            given: set[str] = frozenset()) -> TRTLLMArgs:
    """The TensorRT-LLM settings of a serving Request: --max_batch_size = max_num_seqs, --max_num_tokens =
    max_num_batched_tokens, --max_seq_len = max_model_len, tokens_per_block = --block-size when given
    (``given``: the flags set away from the CLI defaults), the fraction = kv_cache_free_gpu_memory_fraction.
    Another engine's memory flag is refused by name: it would be silently ignored."""
    if getattr(req, "mem_fraction_static", None) is not None:
        raise ValueError("mem-fraction-static: SGLang's flag; TensorRT-LLM sizes its KV cache by "
                         "--kv-cache-free-gpu-memory-fraction (trtllm-serve's --kv_cache_free_gpu_memory_fraction)")
    return TRTLLMArgs(tp_size=req.tensor_parallel_size, pp_size=req.pipeline_parallel_size,
                      ep_size=getattr(req, "expert_parallel_size", 1) or 1, max_batch_size=req.max_num_seqs,
                      max_num_tokens=req.max_num_batched_tokens, max_seq_len=req.max_model_len,
                      free_gpu_memory_fraction=getattr(req, "kv_cache_free_gpu_memory_fraction", None),
                      tokens_per_block=req.block_size if "block_size" in given else TOKENS_PER_BLOCK,
                      kv_cache_dtype_bytes=kv_bytes, activation_dtype_bytes=act_bytes, pcie=pcie,
                      version=resolve(getattr(req, "engine_version", None)))


def verdict(a: ServingAccount, req, where: str) -> str:
    """The serving verdict in TensorRT-LLM's terms (``where``: the GPUs, as answer.verdict words them)."""
    if not a.fits:
        return f"does not fit on {where}: {a.reason}"
    chunk = ("chunked prefill of --max_num_tokens {t:,} tokens per step (--enable_chunked_prefill), full attention"
             if req.max_model_len > req.max_num_batched_tokens else
             "each prompt in one step of at most --max_num_tokens {t:,} tokens").format(t=req.max_num_batched_tokens)
    return (f"fits on {where}: {a.max_concurrency:.2f} requests of {req.max_model_len:,} tokens at once "
            f"({a.kv_cache_tokens:,} TensorRT-LLM KV-cache tokens in {a.num_gpu_blocks:,} blocks, "
            f"{a.kv_cache_gib:.2f} GiB KV per GPU); prefill: {chunk} (nothing is cut)")


def prefill_text(req) -> str:
    if req.max_model_len > req.max_num_batched_tokens:
        return "chunked prefill (--enable_chunked_prefill): full attention, max_num_tokens tokens per step"
    return "whole prompt per step: max_num_tokens covers max_seq_len, no chunking needed"

