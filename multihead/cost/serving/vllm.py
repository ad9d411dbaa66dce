"""The serving account: what vLLM allocates per GPU, how many requests fit, the longest one (torch-free).

Modelled on how vLLM v0.19 sizes its KV cache at start-up (vllm/v1/worker/gpu_worker.py,
vllm/v1/core/kv_cache_utils.py), per GPU of one tensor-parallel group and pipeline stage:

    requested = total physical memory (as CUDA reports it) * gpu_memory_utilization
    available KV = requested - weights - activation peak - non-torch memory

- weights: this GPU's share (tensor parallelism splits the layers N ways; pipeline parallelism
  gives each stage whole layers as vLLM's get_pp_indices does: L // PP each, the remainder to
  the stages before the last; the embedding on the first stage, the LM head on the last);
- activation: the torch peak of the profile forward of ``max_num_batched_tokens`` tokens and the
  dummy sampler over ``max_num_seqs`` rows of logits (fitted on real logs: ``serving_fit.py``);
- non-torch: CUDA context, cuBLAS workspaces, and NCCL / custom all-reduce buffers once the GPU
  talks to others (fitted on the same logs).
vLLM v0.19 leaves CUDA-graph memory out of this budget (its log says so); so do we.

The pool is then cut into pages of ``block_size`` tokens. Layers whose KV caches are kept alike
(full attention, one sliding window, one attention chunk) form a kind; with more than one kind
the layers are dealt into KV-cache groups of equal size (the smallest kind's count, or the
largest's when that is < 1.5x the smallest; short groups padded), one page per group slot:

    num_blocks = available // (page_bytes * layers_per_group)          (min over the stages)
    kv_cache_tokens = num_blocks // groups * block_size                ("GPU KV cache size")
    blocks per request = sum over groups of the blocks one request of max_model_len takes:
        full: cdiv(L, bs); sliding: cdiv(min(window - 1 + batched, L), bs) + 1;
        chunked: cdiv(min(chunk + batched, L), bs)
    max_concurrency = num_blocks / blocks per request                   ("Maximum concurrency")

MLA layers cache one latent (kv_lora_rank + qk_rope_head_dim) per token, on every TP rank.
"""
from __future__ import annotations

import collections
import math
from dataclasses import asdict, dataclass, field

from multihead.cost.counts.formulas import kv_cache_elements
from multihead.cost.counts.memory import check_tensor_parallel, kv_heads_per_gpu
from multihead.cost.spec.model import LayerKind

GIB = 1 << 30
# the account's GiB keys (rounded to 1e-4 GiB, as the engines' logs print) and their byte twins, written
# from the unrounded bytes (the JSON's one unit of memory; planner/names.py re-exports it)
BYTE_TWINS = {
    "kv_cache_gib": "kv_cache_pool_bytes", "weights_gib": "weights_bytes", "activation_gib": "activation_bytes",
    "non_torch_gib": "non_torch_bytes", "requested_gib": "requested_bytes", "total_gib": "physical_memory_bytes",
}
FULL, SLIDING, CHUNKED = (k.short for k in (LayerKind.FULL, LayerKind.SLIDING, LayerKind.CHUNKED))   # LayerKind's
NOT_FIT_HINT = ("Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
                "initializing the engine.")


@dataclass(frozen=True)
class ServingShape:
    """What the account needs of a model, per layer in order (one decoder + optional vision tower)."""
    name: str
    layer_kinds: tuple[tuple[str, int | None], ...]   # (kind, window) per decoder layer
    num_kv_heads: int
    head_dim: int
    num_heads: int
    hidden_size: int
    intermediate_size: int           # dense MLP width (MoE layers: see moe_*)
    vocab_size: int
    mla_latent: int = 0              # kv_lora_rank + qk_rope_head_dim (0: not MLA)
    experts_per_token: int = 0       # 0: dense
    moe_intermediate_size: int = 0
    multimodal: bool = False
    # weight bytes of the whole model at the serving dtype / quantization, by part
    embedding_bytes: float = 0.0
    lm_head_bytes: float = 0.0
    layer_bytes: float = 0.0         # all decoder layers together
    vision_bytes: float = 0.0        # vision tower + projector (vLLM loads them too)
    replicated_bytes: float = 0.0    # buffers every GPU holds whole (the rotary cos/sin cache)
    attention_bytes: float = 0.0     # the attention projections of every layer (part of layer_bytes; DP attention)
    max_position: int | None = None  # the model's longest position (vLLM's derived max_model_len)

    @property
    def num_layers(self) -> int:
        return len(self.layer_kinds)

    @property
    def weight_bytes(self) -> float:
        return self.embedding_bytes + self.lm_head_bytes + self.layer_bytes + self.vision_bytes + self.replicated_bytes


@dataclass(frozen=True)
class EngineArgs:
    """The vLLM flags the account depends on, under vLLM's names and defaults (H100-class GPU)."""
    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    gpu_memory_utilization: float = 0.9
    max_model_len: int = 8192
    max_num_batched_tokens: int = 8192
    max_num_seqs: int = 1024
    kv_cache_dtype_bytes: float = 2.0
    activation_dtype_bytes: float = 2.0
    block_size: int = 16


@dataclass(frozen=True)
class Fit:
    """Fitted coefficients of the activation peak and non-torch memory (serving_fit.py writes them)."""
    act_base_gib: float
    act_forward: float       # x forward bytes: T * (2 D + 3 I / TP) * act_bytes
    act_sampler: float       # x sampler bytes: R * V * 4 (fp32 logits rows)
    act_moe: float           # x fused-MoE workspace: T * k * (max(2 I_e / TP, D) + I_e / TP) * act_bytes
    act_multimodal_gib: float
    non_torch_gib: float     # one GPU alone
    nccl_gib: float          # extra once a GPU has peers (TP or PP > 1)
    nccl_per_gpu_gib: float  # and per GPU in the group
    source: str = ""


@dataclass
class ServingAccount:
    """One GPU's budget and what the engine makes of it. JSON keys are contracted (``serving.*``)."""
    kv_cache_tokens: int
    max_concurrency: float
    kv_cache_gib: float
    weights_gib: float
    activation_gib: float
    non_torch_gib: float
    max_model_len_fit: int
    requested_gib: float
    total_gib: float
    num_gpu_blocks: int
    kv_cache_groups: int
    layers_per_group: int
    blocks_per_request: int
    page_bytes: int
    max_model_len: int
    fits: bool
    reason: str | None = None
    terms: list[dict] = field(default_factory=list)     # each memory term: name, GiB, source
    exact_bytes: dict[str, float] = field(default_factory=dict, repr=False)   # GiB key -> its unrounded bytes

    def to_json(self) -> dict:
        """The contracted keys, each GiB key with its ``_bytes`` twin (BYTE_TWINS) from the unrounded bytes."""
        out = asdict(self)
        exact = out.pop("exact_bytes")
        out.update({BYTE_TWINS[k]: round(v) for k, v in exact.items()})
        return out


def memory_keys(**exact: float) -> dict:
    """ServingAccount's GiB keywords from byte counts (``kv_cache_gib=bytes, ...``): each rounded to 1e-4
    GiB, and the bytes themselves kept for the exact ``_bytes`` twins (not rebuilt from the rounded GiB)."""
    unknown = set(exact) - set(BYTE_TWINS)
    if unknown:
        raise TypeError(f"memory_keys: not a GiB key of the account: {sorted(unknown)}")
    return {**{k: round(v / GIB, 4) for k, v in exact.items()}, "exact_bytes": dict(exact)}


# -- pages and groups ------------------------------------------------------------------------------
def kv_bytes_per_token_layer(shape: ServingShape, tp: int, kv_bytes: float) -> float:
    """One layer's KV bytes per token on one GPU: 2 * H_kv/N * d * bytes (H_kv/N >= 1: replicated
    when N > H_kv), or MLA's latent * bytes on every GPU."""
    if shape.mla_latent:
        return shape.mla_latent * kv_bytes
    return kv_cache_elements(1, kv_heads_per_gpu(shape.num_kv_heads, tp), shape.head_dim, 1) * kv_bytes


def kv_groups(kinds: list[tuple[str, int | None]]) -> tuple[int, list[tuple[str, int | None, int]]]:
    """vLLM's KV-cache groups for layers of these kinds: (layers per group, [(kind, window, groups)]).

    One kind: one group of all layers. Several: groups of the smallest kind's count (or the
    largest's when it is < 1.5x the smallest), ceil(count / size) groups per kind."""
    counts: dict[tuple[str, int | None], int] = {}
    for k in kinds:
        counts[k] = counts.get(k, 0) + 1
    if len(counts) == 1:
        (kind, window), n = next(iter(counts.items()))
        return n, [(kind, window, 1)]
    lo, hi = min(counts.values()), max(counts.values())
    size = hi if hi < 1.5 * lo else lo
    return size, [(kind, window, math.ceil(n / size)) for (kind, window), n in counts.items()]


def blocks_for_request(kind: str, window: int | None, max_len: int, batched: int, block: int) -> int:
    """Blocks one request of ``max_len`` tokens holds in one group (vLLM's max_memory_usage_bytes)."""
    if kind == SLIDING:
        return math.ceil(min(window - 1 + batched, max_len) / block) + 1
    if kind == CHUNKED:
        return math.ceil(min(window + batched, max_len) / block)
    return math.ceil(max_len / block)


def stage_layers(num_layers: int, pp: int) -> list[range]:
    """Layers per pipeline stage as vLLM's get_pp_indices deals them: L // PP each, the remainder
    one by one to the stages before the last (the last also holds the LM head)."""
    sizes = [num_layers // pp] * pp
    for i in range(2, num_layers % pp + 2):
        sizes[-i] += 1
    out, start = [], 0
    for n in sizes:
        out.append(range(start, start + n))
        start += n
    return out


# -- memory terms ----------------------------------------------------------------------------------
def activation_bytes(shape: ServingShape, args: EngineArgs, fit: Fit, last_stage: bool = True) -> float:
    """Peak torch memory of the profile run: max(forward of T tokens, sampler over R rows) plus the
    fused-MoE workspace (kept between layers) and the vision encoder's profile, by the fit.

    forward  ~ T * (2 D + 3 I / TP) * act_bytes   (residual stream, gate/up and activated MLP)
    sampler  ~ R * V * 4, R = min(max_num_seqs, T) (fp32 logits rows; the LM head is gathered)
    moe      ~ T * k * (max(2 I_e / TP, D) + I_e / TP) * act_bytes
    Only the last pipeline stage samples. A size the model does not state (a --params-only model
    has no vocabulary or MLP width) contributes nothing; the plan's model summary says it is missing."""
    tp, t = args.tensor_parallel_size, args.max_num_batched_tokens
    forward = t * (2 * shape.hidden_size + 3 * shape.intermediate_size / tp) * args.activation_dtype_bytes
    rows = min(args.max_num_seqs, t)
    sampler = rows * shape.vocab_size * 4 if last_stage else 0.0
    moe = 0.0
    if shape.experts_per_token:
        ie = shape.moe_intermediate_size / tp
        moe = t * shape.experts_per_token * (max(2 * ie, shape.hidden_size) + ie) * args.activation_dtype_bytes
    peak = max(fit.act_forward * forward, fit.act_sampler * sampler) + fit.act_moe * moe
    extra = fit.act_multimodal_gib * GIB if shape.multimodal else 0.0
    return fit.act_base_gib * GIB + peak + extra


# Communicator buffers of GPUs that talk over PCIe only (no NVLink switch: no NVLS buffers, and
# custom all-reduce is off beyond 2 PCIe GPUs). Not in the H100 logs the fit saw; read from the one
# PCIe multi-GPU log we have, SGLang 0.4.3 on 4x L4 ("Init torch distributed ends. mem usage=0.13 GB",
# https://github.com/didier-durand/llms-in-clouds/blob/main/docs/sglang.md), which is therefore
# listed as fitted in reports/serving/logs/. Charged once per GPU with peers.
PCIE_COMM_GIB = 0.13


def non_torch_bytes(args: EngineArgs, fit: Fit, pcie: bool = False) -> float:
    """CUDA context and library workspaces; plus communicator buffers once the GPU has peers
    (NVLink-switch GPUs: the fitted NCCL terms; ``pcie``: PCIE_COMM_GIB)."""
    peers = args.tensor_parallel_size * args.pipeline_parallel_size
    if peers <= 1:
        extra = 0.0
    elif pcie:
        extra = PCIE_COMM_GIB
    else:
        extra = fit.nccl_gib + fit.nccl_per_gpu_gib * peers
    return (fit.non_torch_gib + extra) * GIB


def stage_weight_bytes(shape: ServingShape, args: EngineArgs, layers: range, stage: int) -> float:
    """This GPU's weights in one stage: its layers, the embedding (+ vision tower) on the first
    stage, the LM head on the last, all split N ways by tensor parallelism; plus the buffers
    every GPU keeps whole (the rotary cache)."""
    pp = args.pipeline_parallel_size
    w = shape.layer_bytes * len(layers) / shape.num_layers
    if stage == 0:
        w += shape.embedding_bytes + shape.vision_bytes
    if stage == pp - 1:
        w += shape.lm_head_bytes
    return w / args.tensor_parallel_size + shape.replicated_bytes


# -- the account -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Stage:
    index: int
    layers: range
    weights: float
    activation: float
    non_torch: float
    available: float
    layers_per_group: int
    page_bytes: int
    num_blocks: int
    needed_one: float           # KV bytes one request of max_model_len needs on this stage


def _stage(shape: ServingShape, args: EngineArgs, fit: Fit, total_bytes: float, index: int,
           layers: range, group_sizes: dict, per_token_layer: float, pcie: bool = False) -> _Stage:
    pp = args.pipeline_parallel_size
    kinds = [shape.layer_kinds[i] for i in layers]
    weights = stage_weight_bytes(shape, args, layers, index)
    act = activation_bytes(shape, args, fit, last_stage=index == pp - 1)
    non_torch = non_torch_bytes(args, fit, pcie)
    available = total_bytes * args.gpu_memory_utilization - weights - act - non_torch
    # layers of each kind on this stage, dealt over that kind's groups (vLLM: layers[i::groups])
    lpg = max(math.ceil(kinds.count(k) / group_sizes[k]) for k in set(kinds)) if kinds else 1
    page = int(args.block_size * per_token_layer)
    blocks = max(0, int(available // (page * lpg))) if available > 0 else 0
    needed = sum(blocks_for_request(k, w, args.max_model_len, args.max_num_batched_tokens, args.block_size)
                 for k, w in kinds) * page
    return _Stage(index, layers, weights, act, non_torch, available, lpg, page, blocks, needed)


def max_len_fit(kinds: list[tuple[str, int | None]], available: float, page: int, args: EngineArgs,
                cap: int) -> int:
    """The longest max_model_len whose one request fits ``available`` (vLLM's estimate_max_model_len:
    a binary search over the same per-layer need); 0 when not even one token fits."""
    layers_of = collections.Counter(kinds)      # per kind, not per layer: ~30 steps of the search
    def need(n: int) -> float:
        return sum(count * blocks_for_request(k, w, n, args.max_num_batched_tokens, args.block_size)
                   for (k, w), count in layers_of.items()) * page
    if available <= 0 or need(1) > available:
        return 0
    lo, hi = 1, cap
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if need(mid) <= available else (lo, mid - 1)
    return lo


def account(shape: ServingShape, args: EngineArgs, fit: Fit, total_bytes: float,
            max_len_cap: int | None = None, pcie: bool = False) -> ServingAccount:
    """The serving account of ``shape`` on GPUs of ``total_bytes`` physical memory (see module doc).
    ``max_model_len_fit`` searches up to ``max_len_cap`` (default: the model's longest position or
    max_model_len, whichever is larger)."""
    check_args(shape, args)
    per_token_layer = kv_bytes_per_token_layer(shape, args.tensor_parallel_size, args.kv_cache_dtype_bytes)
    size, groups = kv_groups(list(shape.layer_kinds))
    group_sizes = {(k, w): n for k, w, n in groups}
    stages = [_stage(shape, args, fit, total_bytes, i, layers, group_sizes, per_token_layer, pcie)
              for i, layers in enumerate(stage_layers(shape.num_layers, args.pipeline_parallel_size))]
    worst = min(stages, key=lambda s: (s.num_blocks, s.available))
    n_groups = sum(n for _, _, n in groups)
    bpr = sum(n * blocks_for_request(k, w, args.max_model_len, args.max_num_batched_tokens, args.block_size)
              for k, w, n in groups)
    tokens = worst.num_blocks // n_groups * args.block_size
    kinds = [shape.layer_kinds[i] for i in worst.layers]
    cap = max_len_cap or max(shape.max_position or 0, args.max_model_len)
    fit_len = max_len_fit(kinds, worst.available, worst.page_bytes, args, cap)
    reason = _reason(shape, args, worst, total_bytes, fit_len)
    return ServingAccount(
        kv_cache_tokens=tokens if reason is None else 0,
        max_concurrency=round(worst.num_blocks / bpr, 4) if reason is None else 0.0,
        **memory_keys(kv_cache_gib=max(worst.available, 0.0), weights_gib=worst.weights,
                      activation_gib=worst.activation, non_torch_gib=worst.non_torch,
                      requested_gib=total_bytes * args.gpu_memory_utilization, total_gib=total_bytes),
        max_model_len_fit=fit_len, num_gpu_blocks=worst.num_blocks, kv_cache_groups=n_groups,
        layers_per_group=worst.layers_per_group, blocks_per_request=bpr, page_bytes=worst.page_bytes,
        max_model_len=args.max_model_len, fits=reason is None, reason=reason,
        terms=_terms(args, worst, total_bytes))


def _reason(shape: ServingShape, args: EngineArgs, st: _Stage, total_bytes: float, fit_len: int) -> str | None:
    """None when one request of max_model_len fits; else the engine's own failure, in its words."""
    if st.weights > total_bytes:
        return (f"CUDA out of memory while loading the model: {st.weights / GIB:.2f} GiB of weights per GPU "
                f"on a GPU with {total_bytes / GIB:.2f} GiB. Use more GPUs (--tensor-parallel-size / "
                f"--pipeline-parallel-size) or a quantized checkpoint.")
    if st.available <= 0:
        return ("No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
                f"initializing the engine. (weights {st.weights / GIB:.2f} + activation {st.activation / GIB:.2f}"
                f" + non-torch {st.non_torch / GIB:.2f} GiB exceed the requested "
                f"{total_bytes * args.gpu_memory_utilization / GIB:.2f} GiB)")
    if st.needed_one > st.available or st.num_blocks == 0:
        est = (f"Based on the available memory, the estimated maximum model length is {fit_len}. "
               if fit_len > 0 else "")
        return (f"To serve at least one request with the models's max seq len ({args.max_model_len}), "
                f"({st.needed_one / GIB:.2f} GiB KV cache is needed, which is larger than the available KV "
                f"cache memory ({st.available / GIB:.2f} GiB). {est}{NOT_FIT_HINT}")
    return None


def _terms(args: EngineArgs, st: _Stage, total_bytes: float) -> list[dict]:
    """Every term of the budget, with where it comes from."""
    g = lambda x: round(x / GIB, 4)  # noqa: E731
    return [
        {"name": "physical memory", "gib": g(total_bytes), "source": "GPU catalog (what CUDA reports)"},
        {"name": "requested", "gib": g(total_bytes * args.gpu_memory_utilization),
         "source": f"physical x --gpu-memory-utilization {args.gpu_memory_utilization:g}"},
        {"name": "weights", "gib": -g(st.weights),
         "source": f"stage {st.index}: {len(st.layers)} layers, split over TP={args.tensor_parallel_size}"},
        {"name": "activation peak", "gib": -g(st.activation),
         "source": f"profile run of {args.max_num_batched_tokens} tokens / {args.max_num_seqs} seqs (fitted)"},
        {"name": "non-torch", "gib": -g(st.non_torch), "source": "CUDA context (+ NCCL with peers), fitted"},
        {"name": "KV cache", "gib": g(max(st.available, 0.0)),
         "source": f"{st.num_blocks} blocks x {st.layers_per_group} layers x {st.page_bytes} B pages"},
    ]


# -- input checks ----------------------------------------------------------------------------------
def check_args(shape: ServingShape, args: EngineArgs) -> None:
    """The engine's own start-up checks; a ValueError names the flag."""
    tp, pp = args.tensor_parallel_size, args.pipeline_parallel_size
    if tp < 1 or pp < 1:
        raise ValueError("tensor-parallel-size / pipeline-parallel-size: expected positive integers")
    check_tensor_parallel(shape.num_heads, shape.num_kv_heads, tp, bool(shape.mla_latent), "tensor-parallel-size")
    if pp > shape.num_layers:
        raise ValueError(f"pipeline-parallel-size: {pp} stages for {shape.num_layers} layers")
    if not 0 < args.gpu_memory_utilization <= 1:
        raise ValueError(f"gpu-memory-utilization: expected a fraction in (0, 1], got {args.gpu_memory_utilization:g}")
    if args.max_model_len < 1 or args.max_num_batched_tokens < 1 or args.max_num_seqs < 1:
        raise ValueError("max-model-len / max-num-batched-tokens / max-num-seqs: expected positive integers")
    if args.block_size not in (1, 8, 16, 32, 64, 128):
        raise ValueError(f"block-size: expected one of 1, 8, 16, 32, 64, 128, got {args.block_size}")
