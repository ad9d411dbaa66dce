"""SGLang's memory account: the token pool it allocates per GPU at start-up (torch-free).

Modelled on SGLang 0.5 (python/sglang/srt/model_executor/model_runner.py ``profile_max_num_token``
and ``init_memory_pool``; python/sglang/srt/server_args.py ``_handle_gpu_memory_settings``;
https://github.com/sgl-project/sglang), per GPU of one tensor-parallel group:

    free_start = free memory once the distributed groups exist, before the weights load
               = physical - CUDA context - communicator buffers          (the vLLM fit's non-torch term)
    rest       = free_after_weights - free_start * (1 - mem_fraction_static)
               = free_start * mem_fraction_static - weights
    max_total_num_tokens = rest // cell_size, rounded down to --page-size

so ``--mem-fraction-static`` covers weights + KV pool only, as a fraction of the memory free at
start-up (not of the physical memory: that is vLLM's --gpu-memory-utilization); activations,
CUDA graphs and the communicators live in the remaining (1 - fraction). SGLang measures and logs
in GiB but prints "GB" (``get_available_gpu_memory`` divides by 1 << 30).

- cell_size: one token in every layer: 2 x KV heads per GPU (max(1, H_kv / TP)) x head_dim x
  bytes; MLA: (kv_lora_rank + qk_rope_head_dim) x bytes, the latent on every GPU. Page size 1
  (a token pool: no blocks).
- sliding-window layers: SGLang's hybrid SWA pool gives the window layers
  ``--swa-full-tokens-ratio`` (0.8) of the full layers' tokens (``set_num_token_hybrid``:
  full = total x L / (ratio x L_swa + L_full)), and max_total_num_tokens is the full layers';
  gpt-oss and Gemma-2/3 turn the hybrid pool off (``_handle_model_specific_adjustments``:
  ``disable_hybrid_swa_memory = True``), so every layer is sized as full. Llama-4's chunked
  layers: the same split with ratio chunk / context length.
- ``--context-length`` is the longest request; a request longer than the pool is refused, so
  max concurrency = max_total_num_tokens / context length (SGLang prints no such line).
- the request-slot pool: min(max(tokens / context x 512, 2048), 4096) unless
  ``--max-running-requests`` is given.
- default ``--mem-fraction-static`` (none given): ``default_mem_fraction`` below.
- ``--enable-dp-attention --dp-size D`` (with ``--tp-size T``, D dividing T): the attention runs
  data-parallel in D groups of T / D GPUs (python/sglang/srt/layers/dp_attention.py
  ``compute_dp_attention_world_info``: attn_tp_size = tp_size // dp_size). Per GPU: the attention
  projections split over T / D GPUs only (each group holds a whole copy), the token embedding whole
  (``VocabParallelEmbedding(enable_tp=not is_dp_attention_enabled())``), the MLPs / experts and the LM
  head over all T (``--moe-dense-tp-size`` and ``--enable-dp-lm-head`` unset); the KV heads split over
  T / D (MLA: the latent on every GPU, as without it). Each of the D attention groups has its own
  scheduler and token pool of ``max_total_num_tokens``, so D x that many tokens are held in all.
  server_args.py ``_handle_data_parallelism`` divides ``--chunked-prefill-size`` and
  ``--max-running-requests`` by D (per group) after the memory settings were chosen with the whole.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from multihead.cost.serving.vllm import (CHUNKED, GIB, SLIDING, Fit, ServingAccount, ServingShape, check_args,
                                    kv_bytes_per_token_layer, memory_keys, non_torch_bytes, EngineArgs)

SGLANG_VERSIONS = ("0.4", "0.5")    # newest last; the default
SWA_FULL_TOKENS_RATIO = 0.8         # server_args.py: swa_full_tokens_ratio default
NO_HYBRID_SWA = ("gpt_oss", "gemma2", "gemma3", "gemma3_text", "olmo2")   # disable_hybrid_swa_memory
MIB = 1 << 20
# SGLang's "weights" are the free-memory drop over the weight load ("Load weight end ... mem usage="),
# which holds more than the tensors: the CUDA kernels loaded on first use and the allocator's rounding.
# One log states both figures: QwQ-32B on 4x L4 logs 15.54 GB where the cost model's bf16 weights
# per GPU are 15.27 GiB (the same thread as PCIE_COMM_GIB: listed as fitted).
LOAD_OVERHEAD_GIB = 0.27


@dataclass(frozen=True)
class SGLangArgs:
    """The SGLang flags the account depends on, under SGLang's names."""
    tp_size: int = 1
    mem_fraction_static: float | None = None     # None: SGLang's default (default_mem_fraction)
    context_length: int = 8192
    chunked_prefill_size: int | None = None      # None: SGLang's default by GPU memory
    max_running_requests: int | None = None
    page_size: int = 1
    kv_cache_dtype_bytes: float = 2.0
    max_total_tokens: int | None = None
    model_type: str = ""
    pcie: bool = False                           # GPUs talk over PCIe (no NVLink switch)
    version: str = SGLANG_VERSIONS[-1]
    vision: tuple[int, int] | None = None        # (layers, hidden) of a multimodal model's vision tower
    dp_size: int = 1                             # --dp-size: with enable_dp_attention, attention groups in the TP group
    enable_dp_attention: bool = False            # --enable-dp-attention

    @property
    def attn_tp_size(self) -> int:
        """GPUs one attention group spans: tp_size // dp_size with DP attention, else tp_size."""
        return self.tp_size // self.dp_size if self.enable_dp_attention else self.tp_size

    @property
    def attention_groups(self) -> int:
        """Token pools (schedulers) in the TP group: dp_size with DP attention, else one."""
        return self.dp_size if self.enable_dp_attention else 1


def resolve(version: str | None) -> str:
    """The modelled SGLang version for ``--engine-version`` (None: the newest)."""
    if version is None:
        return SGLANG_VERSIONS[-1]
    v = str(version).removeprefix("v")
    for known in SGLANG_VERSIONS:
        if v == known or v.startswith(known + "."):
            return known
    raise ValueError(f"engine-version: SGLang {version} is not modelled (modelled: {', '.join(SGLANG_VERSIONS)}; "
                     f"{_why_not(v)})")


def _why_not(v: str) -> str:
    """Why an unmodelled SGLang version is refused: older or newer than the modelled lines."""
    try:
        key = tuple(int(x) for x in v.split(".")[:2])
    except ValueError:
        return "not a version number of the form MAJOR.MINOR"
    oldest, newest = (tuple(int(x) for x in s.split(".")) for s in (SGLANG_VERSIONS[0], SGLANG_VERSIONS[-1]))
    if key > newest:
        return (f"newer than the newest modelled, {SGLANG_VERSIONS[-1]}: its start-up account has not been read, "
                "so it is not assumed to be the same")
    if key < oldest:
        return (f"older than the oldest modelled, {SGLANG_VERSIONS[0]}: its start-up account "
                "(e.g. the default --mem-fraction-static) has not been read")
    return "its start-up account has not been read"


def default_chunk_and_graph_bs(gpu_mib: float, tp: int) -> tuple[int, int]:
    """SGLang 0.5's chunked_prefill_size and cuda_graph_max_bs by GPU memory (MiB) and TP
    (server_args.py _handle_gpu_memory_settings, the buckets its comments name: T4/4080, A10/4090,
    A100-40G/L40, H100/A100-80G, H20/H200, B200/MI300)."""
    if gpu_mib < 20 * 1024:
        return 2048, 8
    if gpu_mib < 35 * 1024:
        return 2048, 24 if tp < 4 else 80
    if gpu_mib < 60 * 1024:
        return 4096, 32 if tp < 4 else 160
    if gpu_mib < 160 * 1024:
        return 8192, 256 if tp < 4 else 512
    return 16384, 512


def default_mem_fraction(gpu_mib: float, tp: int, pp: int = 1, chunk: int | None = None,
                         version: str = SGLANG_VERSIONS[-1]) -> float:
    """SGLang's --mem-fraction-static when none is given.

    0.5 (server_args.py _handle_gpu_memory_settings, after sgl-project/sglang#10975): reserve (MiB)
    512 + 1.5 x max(chunk, 2048) + 2 x cuda_graph_max_bs + TP x PP / 8 x 1024, at least 10 GiB on
    GPUs over 60 GiB; fraction = round((memory - reserve) / memory, 3).
    0.4 (server_args.py __post_init__ of the 0.4 line, e.g. 0.4.3): by TP alone, 0.88 at TP 1, 0.87
    at 2, 0.85 at 4 (the QwQ-32B 4x L4 log of reports/serving/logs/ runs 0.4.3 with no fraction given
    and logs mem_fraction_static=0.85), 0.81 at 8, 0.79 from 16. Both versions size the pool itself
    the same way (profile_max_num_token)."""
    if version == "0.4":
        return 0.79 if tp >= 16 else 0.81 if tp >= 8 else 0.85 if tp >= 4 else 0.87 if tp >= 2 else 0.88
    dchunk, graph_bs = default_chunk_and_graph_bs(gpu_mib, tp)
    chunk = dchunk if chunk is None else chunk
    reserved = 512 + max(chunk, 2048) * 1.5 + graph_bs * 2 + tp * pp / 8 * 1024
    if gpu_mib > 60 * 1024:
        reserved = max(reserved, 10 * 1024)
    return round((gpu_mib - reserved) / gpu_mib, 3)


def vlm_factor(layers: int, hidden: int) -> float:
    """SGLang's cut of its default fraction for a multimodal model (server_args.py
    adjust_mem_fraction_for_vlm): 0.95 x clamp(1 - 0.1 x (L h^2 / (24 x 1024^2) - 1), 0.8, 1.05),
    the tower's size against a ViT-L/14."""
    ratio = layers * hidden ** 2 / (24 * 1024 ** 2)
    return 0.95 * max(0.8, min(1.05, 1.0 - 0.1 * (ratio - 1.0)))


def mem_fraction(args: SGLangArgs, gpu_mib: float) -> float:
    """The fraction the account uses: the given one, else SGLang's default (cut for a vision tower)."""
    if args.mem_fraction_static is not None:
        return args.mem_fraction_static
    frac = default_mem_fraction(gpu_mib, args.tp_size, 1, args.chunked_prefill_size, args.version)
    return frac * vlm_factor(*args.vision) if args.vision else frac


def cell_bytes(shape: ServingShape, tp: int, kv_bytes: float) -> float:
    """One token in one layer on one GPU (the vLLM account's per-layer figure: one formula)."""
    return kv_bytes_per_token_layer(shape, tp, kv_bytes)


def _startup_free(total_bytes: float, args: SGLangArgs, fit: Fit) -> float:
    """Free memory SGLang measures before loading weights: physical - CUDA context - communicators."""
    return total_bytes - non_torch_bytes(EngineArgs(tensor_parallel_size=args.tp_size), fit, pcie=args.pcie)


def _hybrid_split(shape: ServingShape, args: SGLangArgs, tokens: int) -> tuple[int, int | None, str]:
    """(tokens of the full layers, tokens of the window layers or None, how): SGLang's hybrid pool."""
    kinds = [k for k, _ in shape.layer_kinds]
    n_swa = sum(k in (SLIDING, CHUNKED) for k in kinds)
    n_full = len(kinds) - n_swa
    if n_swa == 0 or n_full == 0 or shape.mla_latent or args.model_type in NO_HYBRID_SWA:
        return tokens, None, "one pool, every layer full"
    if CHUNKED in kinds:
        chunk = next(w for k, w in shape.layer_kinds if k == CHUNKED)
        ratio = min(1.0, chunk / args.context_length)
    else:
        ratio = SWA_FULL_TOKENS_RATIO
    full = int(tokens * len(kinds) / (ratio * n_swa + n_full))
    full = full // args.page_size * args.page_size
    return full, int(full * ratio), f"hybrid pool: window layers get {ratio:g} x the full layers' tokens"


def check_dp_attention(args: SGLangArgs) -> None:
    """SGLang's own start-up checks of DP attention (server_args.py): a ValueError names the flag."""
    if not args.enable_dp_attention:
        return
    if args.dp_size < 2:
        raise ValueError(f"enable-dp-attention: needs --data-parallel-size (SGLang's --dp-size) > 1, got {args.dp_size}")
    if args.tp_size % args.dp_size:
        raise ValueError(f"enable-dp-attention: --data-parallel-size {args.dp_size} must divide --tensor-parallel-size "
                         f"{args.tp_size} (SGLang asserts tp_size % dp_size == 0)")


def weights_per_gpu(shape: ServingShape, args: SGLangArgs) -> float:
    """Weight bytes one GPU holds (the tensors; the load's overhead apart): everything split over TP but the
    buffers every GPU holds whole; with DP attention the attention projections split over the attention
    group only and the token embedding whole (module doc)."""
    tp = args.tp_size
    split = shape.weight_bytes - shape.replicated_bytes
    if not args.enable_dp_attention:
        return split / tp + shape.replicated_bytes
    rest = split - shape.attention_bytes - shape.embedding_bytes
    return (shape.attention_bytes / args.attn_tp_size + shape.embedding_bytes + rest / tp
            + shape.replicated_bytes)


def account(shape: ServingShape, args: SGLangArgs, fit: Fit, total_bytes: float,
            max_len_cap: int | None = None) -> ServingAccount:
    """SGLang's token pool for ``shape`` on GPUs of ``total_bytes`` physical memory (module doc).
    The same result type as the vLLM account: ``kv_cache_tokens`` is max_total_num_tokens,
    ``num_gpu_blocks`` its pages, ``page_bytes`` one page in one layer."""
    check_dp_attention(args)
    check_args(shape, EngineArgs(tensor_parallel_size=args.attn_tp_size, max_model_len=args.context_length))
    if args.page_size < 1:
        raise ValueError(f"page-size: expected a positive integer, got {args.page_size}")
    gpu_mib = total_bytes / MIB
    frac = mem_fraction(args, gpu_mib)
    if not 0 < frac < 1:
        raise ValueError(f"mem-fraction-static: expected a fraction in (0, 1), got {frac:g}")
    tp = args.tp_size
    weights = weights_per_gpu(shape, args) + LOAD_OVERHEAD_GIB * GIB
    free = _startup_free(total_bytes, args, fit)
    rest = free * frac - weights
    per_layer = cell_bytes(shape, args.attn_tp_size, args.kv_cache_dtype_bytes)
    groups = args.attention_groups
    cell = per_layer * shape.num_layers
    raw = max(0, int(rest // cell)) if rest > 0 else 0
    if args.max_total_tokens is not None:
        raw = min(raw, args.max_total_tokens)
    raw = raw // args.page_size * args.page_size
    tokens, swa_tokens, pool = _hybrid_split(shape, args, raw)
    cap = max_len_cap or max(shape.max_position or 0, args.context_length)
    reason = None
    if weights > total_bytes:
        reason = (f"CUDA out of memory while loading the model: {weights / GIB:.2f} GiB of weights per GPU on a "
                  f"GPU with {total_bytes / GIB:.2f} GiB. Use more GPUs (--tp-size) or a quantized checkpoint.")
    elif tokens <= 0:
        reason = (f"Not enough memory. Please try to increase --mem-fraction-static. Current value: "
                  f"mem_fraction_static={frac:g} (weights {weights / GIB:.2f} GB of "
                  f"{free * frac / GIB:.2f} GB = {frac:g} x {free / GIB:.2f} GB free at start-up)")
    elif tokens < args.context_length:
        reason = (f"a request of --context-length {args.context_length} does not fit the token pool "
                  f"(max_total_num_tokens={tokens}): SGLang refuses longer inputs ('Input length ... exceeds "
                  f"the maximum allowed length'); the longest is {min(tokens, cap)}")
    kv_gib = max(rest, 0.0) / GIB
    g = lambda x: round(x / GIB, 4)  # noqa: E731
    terms = [
        {"name": "physical memory", "gib": g(total_bytes), "source": "GPU catalog (what CUDA reports)"},
        {"name": "free at start-up", "gib": g(free),
         "source": "physical - CUDA context - communicator buffers (fitted non-torch term)"},
        {"name": "static budget", "gib": g(free * frac),
         "source": f"free at start-up x --mem-fraction-static {round(frac, 4):g}"
                   + ("" if args.mem_fraction_static is not None else " (SGLang's default for this GPU and TP"
                      + (", cut for the vision tower)" if args.vision else ")"))},
        {"name": "weights", "gib": -g(weights),
         "source": (f"split over TP={tp}" if groups == 1 else
                    f"attention split over its group of {args.attn_tp_size} GPU(s), the embedding whole, the rest "
                    f"over TP={tp} (DP attention {groups})") + f", + {LOAD_OVERHEAD_GIB:g} GiB the load itself takes (fitted)"},
        {"name": "KV cache", "gib": round(kv_gib, 4),
         "source": f"{raw:,} tokens x {cell:,.0f} B per token ({shape.num_layers} layers); {pool}"
                   + (f"; one pool per attention group, {groups} groups: {groups * tokens:,} tokens in all"
                      if groups > 1 else "")},
        {"name": "outside fraction", "gib": g(free * (1 - frac)),
         "source": "activations, CUDA graphs, workspaces (not sized here: SGLang reserves them)"},
    ]
    return ServingAccount(
        kv_cache_tokens=tokens if reason is None else 0,
        max_concurrency=round(groups * tokens / args.context_length, 4) if reason is None else 0.0,
        **memory_keys(kv_cache_gib=max(rest, 0.0), weights_gib=weights, activation_gib=free * (1 - frac),
                      non_torch_gib=total_bytes - free, requested_gib=free * frac, total_gib=total_bytes),
        max_model_len_fit=min(tokens, cap) if tokens > 0 else 0, num_gpu_blocks=raw // args.page_size,
        kv_cache_groups=1 if swa_tokens is None else 2, layers_per_group=shape.num_layers,
        blocks_per_request=math.ceil(args.context_length / args.page_size),
        page_bytes=int(per_layer * args.page_size), max_model_len=args.context_length, fits=reason is None,
        reason=reason, terms=terms)


def details(args: SGLangArgs, a: ServingAccount, total_bytes: float) -> dict:
    """The SGLang-only keys of the serving object: the fraction used and the request slots."""
    frac = round(mem_fraction(args, total_bytes / MIB), 4)
    chunk = args.chunked_prefill_size or default_chunk_and_graph_bs(total_bytes / MIB, args.tp_size)[0]
    tokens = a.kv_cache_tokens
    slots = args.max_running_requests or min(max(int(tokens / args.context_length * 512), 2048), 4096)
    out = {"mem_fraction_static": frac, "chunked_prefill_size": chunk, "max_total_num_tokens": tokens,
           "max_running_requests": slots, "page_size": args.page_size, "context_length": args.context_length}
    if args.enable_dp_attention:     # the flags stay the whole group's; SGLang divides them per attention group
        g = args.dp_size
        out.update({"dp_size": g, "enable_dp_attention": True, "attn_tp_size": args.attn_tp_size,
                    "chunked_prefill_size_per_group": chunk // g, "max_running_requests_per_group": slots // g,
                    "max_total_num_tokens_all_groups": tokens * g})
    return out
