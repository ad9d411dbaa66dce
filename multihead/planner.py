"""The planner: parameters, compute and memory for one model on one GPU, and the decision.

``plan(...)`` answers the reference text's question for any model and GPU: does one full pass over
T tokens fit, or must the input be cut into chunks; how long prefill and decode take; and what to
do when it does not fit, each fallback with its effect in numbers. Counts come from
``multihead.accounting`` and seconds from ``multihead.devices`` only, so the planner, the layers
and the benchmarks share one cost model.

Conventions (stated once, used everywhere):
  * Attention FLOPs follow the text: 4 * T^2 * (H*d_k) * L, the full score matrix, no causal
    halving. The exact causal count (T(T+1)/2 kept pairs per head) is reported beside it and
    drives the time only with ``causal_skip=True`` (kernels that skip fully masked blocks).
  * Attention is assumed tiled (FlashAttention-style): the [B, H, T, T] score matrix is never
    stored. ``attention="materialized"`` charges one layer's score matrix instead.
  * Workspace (activations) of a prefill in inference: layers run one at a time and nothing is
    kept for a backward pass, so the peak is the widest moment of one layer. For a gated MLP that
    is the residual x (D) plus the fused gate/up output (2I) plus their product (I):
    B * T * (D + 3I) * bytes (plain MLP: D + 2I). The attention sublayer holds x, q and the tiled
    kernel's fp32 accumulators (d_k + 2 per row and head); the larger of the two is charged.
    Logits are computed for the last position only (B * V * 4 bytes).
  * Usable memory = GPU memory * memory_utilization (default 0.9, vLLM's default
    gpu_memory_utilization), leaving room for the CUDA context and allocator fragmentation.
  * Tensor parallelism over N GPUs splits heads, KV heads (replicated when N > H_kv), the MLP width
    and the weights by N; compute and bandwidth scale by N; communication is not counted.
"""
from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from multihead import accounting as acc
from multihead import devices as dev
from multihead.configs import ModelSpec, resolve_model

DEFAULT_MEMORY_UTILIZATION = 0.9
COMPARE_CHUNKS = 8                      # the reference text's alternative: eight 16k chunks
QUALITY_REPORT = Path("reports/heads/summary.json")
_SIXTEEN_BIT = ("fp16", "bf16")


# -- small formatting helpers for the derivation lines ---------------------------------------------
def _gb(x: float) -> str:
    """Bytes in GB (1e9, as datasheets count); below 1 GB in MB or KB, so small numbers do not read 0.00."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if abs(x) >= scale:
            return f"{x / scale:,.2f} {unit}"
    return f"{x:,.0f} B"


def _n(x: float) -> str:
    return f"{x:,.0f}" if float(x).is_integer() and abs(x) < 1e15 else f"{x:.3g}"


def _passes(n: int) -> str:
    return f"{n} pass" + ("es" if n != 1 else "")


def _s(x: float) -> str:
    return f"{x * 1e3:,.2f} ms" if x < 1 else f"{x:,.1f} s"


# -- the accounts -----------------------------------------------------------------------------------
@dataclass
class MemoryAccount:
    """Bytes per GPU of one forward over ``tokens`` tokens (a full pass or one chunk)."""
    tokens: int
    weights_bytes: float
    kv_cache_bytes: float
    workspace_bytes: float
    score_matrix_bytes: float        # charged only when attention is materialized
    usable_bytes: float

    @property
    def total_bytes(self) -> float:
        return self.weights_bytes + self.kv_cache_bytes + self.workspace_bytes + self.score_matrix_bytes

    @property
    def fits(self) -> bool:
        return self.total_bytes <= self.usable_bytes


@dataclass
class Fallback:
    """One way out, with what it does in numbers. ``fits``: whether the single pass then fits."""
    name: str
    action: str
    effect: dict
    fits: bool | None
    text: str
    notes: list[str] = field(default_factory=list)
    needed: bool = True     # False: the plan fits with headroom; listed for reference


@dataclass
class Plan:
    """Everything the planner decided and why. Bytes are per GPU; seconds per pass unless named."""
    # inputs, as resolved
    model: str
    model_source: str
    attention_kind: str
    d_model: int
    n_layers: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    tokens: int
    batch: int
    passes: int
    gpus: int
    device: str
    device_kind: str
    device_source: str
    gpu_memory_bytes: float
    usable_memory_bytes: float
    effective_tflops: float
    effective_bandwidth_tbps: float
    weights_dtype: str
    kv_dtype: str
    activation_dtype: str
    attention_mode: str
    causal_skip: bool
    # parameters
    params: float
    params_architecture: int | None
    params_published: int | None
    attention_params_per_layer: int
    attention_params: int
    non_embedding_params: float
    # memory
    kv_cache_bytes_per_token: float
    kv_cache_bytes: float
    kv_cache_bytes_no_window: float
    weights_bytes: float
    workspace_bytes: float
    score_matrix_bytes_per_layer: float
    tiled_attention_bytes_per_layer: float
    total_memory_bytes: float
    # compute and time
    attention_flops: float
    attention_flops_causal: float
    linear_flops: float
    attention_prefill_seconds: float
    attention_prefill_seconds_causal: float
    attention_prefill_seconds_all_passes: float
    linear_prefill_seconds: float
    prefill_seconds: float
    prefill_seconds_all_passes: float
    decode_kv_read_seconds: float
    decode_weight_read_seconds: float
    decode_seconds_per_token: float
    tokens_per_second: float
    tokens_per_second_kv_only: float
    # the chunked alternative and the decision
    chunked: dict
    fits: bool
    decision: str
    chunks: int
    decision_fits: bool
    reason: str
    chunking_loses: str
    warnings: list[str]
    fallbacks: list[Fallback]
    explain: list[str]

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        return d

    def to_json(self, **kw) -> str:
        return json.dumps(self.to_dict(), **kw)


# -- device -----------------------------------------------------------------------------------------
def resolve_device(device: str | dev.DeviceSpec | None = None, *, gpu_memory_gb: float | None = None,
                   effective_tflops: float | None = None, bandwidth_tbps: float | None = None,
                   flops_efficiency: float | None = None,
                   bandwidth_efficiency: float | None = None) -> dev.DeviceSpec:
    """A DeviceSpec from a catalog name / profile path / DeviceSpec, with explicit figures on top.

    Explicit figures are already effective: they replace the peak and set its efficiency to 1.0.
    With no device, all three explicit figures are needed.
    """
    for name, v in (("gpu-memory-gb", gpu_memory_gb), ("effective-tflops", effective_tflops),
                    ("bandwidth-tbps", bandwidth_tbps)):
        if v is not None and not v > 0:
            raise ValueError(f"{name}: expected a positive number, got {v}")
    for name, v in (("flops-efficiency", flops_efficiency), ("bandwidth-efficiency", bandwidth_efficiency)):
        if v is not None and not 0 < v <= 1:
            raise ValueError(f"{name}: expected a fraction in (0, 1], got {v}")
    if device is None:
        missing = [n for n, v in (("--gpu-memory-gb", gpu_memory_gb), ("--effective-tflops", effective_tflops),
                                  ("--bandwidth-tbps", bandwidth_tbps)) if v is None]
        if missing:
            raise ValueError(f"gpu: expected --gpu NAME (or --device PROFILE.json) or all of --gpu-memory-gb, "
                             f"--effective-tflops, --bandwidth-tbps; missing {', '.join(missing)}")
        spec = dev.DeviceSpec(name=f"{gpu_memory_gb:g} GB GPU (explicit figures)", memory_bytes=gpu_memory_gb * 1e9,
                              bandwidth_bytes_per_s=bandwidth_tbps * 1e12,
                              matmul_flops={k: effective_tflops * 1e12 for k in _SIXTEEN_BIT},
                              flops_efficiency=1.0, bandwidth_efficiency=1.0,
                              source="command line (effective figures)", kind="explicit")
        return spec
    spec = device if isinstance(device, dev.DeviceSpec) else dev.load_device(
        str(device), flops_efficiency=flops_efficiency, bandwidth_efficiency=bandwidth_efficiency)
    spec = dataclasses.replace(spec, matmul_flops=dict(spec.matmul_flops))
    if gpu_memory_gb is not None:
        spec.memory_bytes = gpu_memory_gb * 1e9
    # explicit figures replace a profile's measured kernel terms too: the user's number is the rate
    if effective_tflops is not None:
        spec.matmul_flops = {k: effective_tflops * 1e12 for k in _SIXTEEN_BIT}
        spec.flops_efficiency = 1.0
        if getattr(spec, "prefill", None):
            spec.prefill = {}
    if bandwidth_tbps is not None:
        spec.bandwidth_bytes_per_s = bandwidth_tbps * 1e12
        spec.bandwidth_efficiency = 1.0
        if getattr(spec, "decode", None):
            spec.decode = {}
    return spec


# -- model ------------------------------------------------------------------------------------------
def resolve_spec(model=None, *, params=None, layers=None, heads=None, kv_heads=None, head_dim=None,
                 hidden=None, intermediate=None, vocab=None, max_position=None) -> ModelSpec:
    """The model: a catalog name, a config.json path or a ModelSpec, with explicit fields on top.

    Without a model, --layers, --heads and --params are needed; --hidden defaults to heads*head_dim.
    """
    base = resolve_model(model)
    over = dict(num_layers=layers, num_heads=heads, num_kv_heads=kv_heads, head_dim=head_dim,
                hidden_size=hidden, intermediate_size=intermediate, vocab_size=vocab,
                max_position_embeddings=max_position, params=params)
    if base is not None:
        return base.with_overrides(**over)
    missing = [f"--{n}" for n, v in (("layers", layers), ("heads", heads)) if v is None]
    if hidden is None and head_dim is None:
        missing.append("--hidden or --head-dim")
    if params is None and (intermediate is None or vocab is None):
        missing.append("--params (or --intermediate and --vocab)")
    if missing:
        raise ValueError(f"model: expected a model name, a config.json path, or explicit "
                         f"{', '.join(missing)}")
    if hidden is None:
        if not isinstance(heads, int) or not isinstance(head_dim, int) or heads <= 0 or head_dim <= 0:
            raise ValueError(f"heads/head-dim: expected positive integers, got {heads}, {head_dim}")
        hidden = heads * head_dim
    return ModelSpec(name="model from flags", hidden_size=hidden, num_layers=layers, num_heads=heads,
                     num_kv_heads=kv_heads, head_dim=head_dim, intermediate_size=intermediate,
                     vocab_size=vocab, max_position_embeddings=max_position, params=params,
                     source="command-line flags")


def check_tensor_parallel(spec: ModelSpec, gpus: int) -> None:
    """Tensor parallelism splits query heads evenly and KV heads evenly (or replicates each KV head
    over N / H_kv GPUs); anything else leaves some GPU with a fraction of a head."""
    if not isinstance(gpus, int) or gpus < 1:
        raise ValueError(f"gpus: expected a positive integer, got {gpus!r}")
    if spec.num_heads % gpus:
        raise ValueError(f"gpus: expected a divisor of heads={spec.num_heads} for tensor parallelism, got {gpus}")
    if spec.num_kv_heads % gpus and gpus % spec.num_kv_heads:
        raise ValueError(f"gpus: kv_heads={spec.num_kv_heads} neither divides by {gpus} nor divides it; "
                         f"tensor parallelism cannot place the KV heads")


def kv_heads_per_gpu(n_kv_heads: int, gpus: int) -> int:
    """KV heads each GPU stores: H_kv / N, or one replicated head when N > H_kv."""
    return max(1, n_kv_heads // gpus)


# -- the core accounts (used for the plan, the chunked alternative, the fallbacks and the plot) -----
@dataclass
class _Setup:
    spec: ModelSpec
    device: dev.DeviceSpec
    batch: int
    gpus: int
    weights_dtype: str
    kv_dtype: str
    act_dtype: str
    attention: str
    memory_utilization: float

    @property
    def usable(self) -> float:
        return self.device.memory_bytes * self.memory_utilization

    def kv_bytes(self, tokens: int, kv_heads: int | None = None, kv_dtype: str | None = None,
                 gpus: int | None = None) -> float:
        """KV cache bytes per GPU: sum over layers of 2 * H_kv * d_k * min(T, window) * B * bytes."""
        s, n = self.spec, gpus or self.gpus
        h_kv = kv_heads_per_gpu(kv_heads or s.num_kv_heads, n)
        per_el = acc.dtype_bytes(kv_dtype or self.kv_dtype)
        return sum(acc.kv_cache_bytes(1, h_kv, s.head_dim, min(tokens, w) if w else tokens, per_el, self.batch)
                   for w in s.layer_windows())

    def weights_bytes(self, weights_dtype: str | None = None, gpus: int | None = None) -> float:
        return self.spec.total_params() * acc.dtype_bytes(weights_dtype or self.weights_dtype) / (gpus or self.gpus)

    def workspace_parts(self, tokens: int, gpus: int | None = None) -> tuple[float, float, float]:
        """(MLP peak, attention peak, logits) of one layer's prefill, per GPU (module docstring):
        B*T*(D + kI)*bytes with k = 3 gated / 2 plain; B*T*(D + H*d_k)*bytes (+ the tiled state);
        B*V*4 for the last position's fp32 logits."""
        s, n = self.spec, gpus or self.gpus
        a = acc.dtype_bytes(self.act_dtype)
        width, _ = s.mlp_width()
        mlp_peak = self.batch * tokens * (s.hidden_size + s.mlp_matrices * width // n) * a
        attn_peak = self.batch * tokens * (s.hidden_size + s.attention_width // n) * a
        if self.attention == "tiled":
            attn_peak += self.tiled_bytes(tokens, n)
        return mlp_peak, attn_peak, self.batch * (s.vocab_size or 0) * 4

    def workspace_bytes(self, tokens: int, gpus: int | None = None) -> float:
        """Peak activations of one layer's prefill, per GPU: the wider sublayer plus the logits."""
        mlp_peak, attn_peak, logits = self.workspace_parts(tokens, gpus)
        return max(mlp_peak, attn_peak) + logits

    def tiled_bytes(self, tokens: int, gpus: int | None = None) -> float:
        """A tiled kernel's state per layer: fp32 accumulator (d_k) plus running max and sum (2) per
        query row and head, B * H * T * (d_k + 2) * 4 bytes: O(T * d_k), never T^2."""
        s = self.spec
        return self.batch * (s.num_heads // (gpus or self.gpus)) * tokens * (s.head_dim + 2) * 4

    def score_bytes(self, tokens: int, gpus: int | None = None) -> float:
        s = self.spec
        return acc.score_matrix_bytes(self.batch, s.num_heads // (gpus or self.gpus), tokens, tokens,
                                      acc.dtype_bytes(self.act_dtype))

    def memory(self, tokens: int, *, kv_heads=None, kv_dtype=None, weights_dtype=None, gpus=None) -> MemoryAccount:
        return MemoryAccount(
            tokens=tokens, weights_bytes=self.weights_bytes(weights_dtype, gpus),
            kv_cache_bytes=self.kv_bytes(tokens, kv_heads, kv_dtype, gpus),
            workspace_bytes=self.workspace_bytes(tokens, gpus),
            score_matrix_bytes=self.score_bytes(tokens, gpus) if self.attention == "materialized" else 0.0,
            usable_bytes=self.usable)

    def attention_flops(self, tokens: int, causal: bool) -> float:
        """Whole-model attention FLOPs over one sequence batch of ``tokens`` (all GPUs together).

        Full layers: 4*B*H*T*T*d_k (causal: only the T(T+1)/2 kept pairs). A sliding layer of window
        w: each query meets min(T, w) keys (causal: min(i+1, w) for query i, i.e. the causal pairs of
        T less those of T - w).
        """
        s, b = self.spec, self.batch
        total = 0
        for w in s.layer_windows():
            if w is None or w >= tokens:
                total += acc.attention_flops(b, s.num_heads, tokens, tokens, s.head_dim, causal=causal)
            elif not causal:
                total += acc.attention_flops(b, s.num_heads, tokens, w, s.head_dim)
            else:
                total += (acc.attention_flops(b, s.num_heads, tokens, tokens, s.head_dim, causal=True)
                          - acc.attention_flops(b, s.num_heads, tokens - w, tokens - w, s.head_dim, causal=True))
        return float(total)

    def attention_seconds(self, flops: float, tokens: int, calls_per_layer: int = 1, gpus: int | None = None,
                          causal: bool = False) -> float:
        """Seconds of the attention core: ``flops`` (all GPUs) over ``calls_per_layer`` kernel calls
        per layer (one per chunk) of ``tokens`` query rows each, split over the GPUs. ``causal``:
        the FLOPs are the causal count (a measured kernel that does not skip masked blocks is
        charged the full count by devices.attention_seconds)."""
        s, n = self.spec, gpus or self.gpus
        return dev.attention_seconds(self.device, flops / n, self.act_dtype, head_dim=s.head_dim,
                                     heads=s.num_heads // n, tokens=tokens, kv_tokens=tokens, batch=self.batch,
                                     calls=s.num_layers * calls_per_layer, causal=causal)

    def decode_seconds(self, context: int, kv_bytes: float, weight_bytes: float,
                       kv_dtype: str | None = None) -> float:
        """One decode step at ``context`` cached tokens: reads ``kv_bytes`` and ``weight_bytes``
        (per GPU; pass weight_bytes=0 for the attention's KV read alone)."""
        s = self.spec
        heads = s.num_heads // self.gpus
        flops = sum(acc.attention_flops(self.batch, heads, 1, min(context, w) if w else context, s.head_dim)
                    for w in s.layer_windows())
        return dev.decode_step_seconds(self.device, kv_bytes, weight_bytes, dtype=kv_dtype or self.kv_dtype,
                                       flops=flops, calls=s.num_layers,
                                       rows_per_kv_head=s.num_heads // s.num_kv_heads)

    def linear_flops(self, tokens: int) -> float:
        n, _ = self.spec.non_embedding_params()
        return acc.linear_flops(n, tokens, self.batch)

    def linear_seconds(self, flops: float, gpus: int | None = None) -> float:
        return dev.compute_seconds(flops / (gpus or self.gpus), self.device, self.weights_dtype)


def chunk_sizes(tokens: int, chunks: int) -> list[int]:
    """Split T into ``chunks`` near-equal parts (the first T mod n get one more token)."""
    q, r = divmod(tokens, chunks)
    return [q + 1] * r + [q] * (chunks - r)


def _chunk_account(st: _Setup, tokens: int, chunks: int, passes: int, causal_skip: bool) -> dict:
    """The chunked alternative: chunks run one after another, each with its own KV cache."""
    sizes = chunk_sizes(tokens, chunks)
    biggest = sizes[0]
    mem = st.memory(biggest)
    flops = sum(st.attention_flops(t, causal=False) for t in sizes)
    flops_causal = sum(st.attention_flops(t, causal=True) for t in sizes)
    # one call per chunk and layer; chunk lengths differ by at most one token (two groups)
    attn_s = 0.0
    for length in sorted(set(sizes)):
        group = [t for t in sizes if t == length]
        f = len(group) * st.attention_flops(length, causal=causal_skip)
        attn_s += st.attention_seconds(f, length, calls_per_layer=len(group), causal=causal_skip)
    linear_s = st.linear_seconds(st.linear_flops(tokens))
    kv_read = st.decode_seconds(biggest, mem.kv_cache_bytes, 0.0)
    step = st.decode_seconds(biggest, mem.kv_cache_bytes, mem.weights_bytes)
    return {
        "chunks": chunks, "chunk_tokens": biggest, "kv_cache_bytes": mem.kv_cache_bytes,
        "workspace_bytes": mem.workspace_bytes, "total_memory_bytes": mem.total_bytes, "fits": mem.fits,
        "attention_flops": flops, "attention_flops_causal": flops_causal,
        "attention_prefill_seconds": attn_s, "attention_prefill_seconds_all_passes": attn_s * passes,
        "prefill_seconds": attn_s + linear_s, "prefill_seconds_all_passes": (attn_s + linear_s) * passes,
        "decode_kv_read_seconds": kv_read, "decode_seconds_per_token": step,
        "tokens_per_second": st.batch / step,
    }


def fewest_chunks(st: _Setup, tokens: int, max_chunk_tokens: int | None = None) -> int | None:
    """The fewest chunks whose largest chunk fits (and is no longer than ``max_chunk_tokens``).

    Memory grows with the chunk length, so the answer is found by bisection; None when even a
    one-token chunk does not fit (the weights alone are too large).
    """
    lo = acc.ceil_div(tokens, max_chunk_tokens) if max_chunk_tokens else 1
    if not st.memory(1).fits:
        return None
    if st.memory(chunk_sizes(tokens, lo)[0]).fits:
        return lo
    hi = tokens
    while lo + 1 < hi:     # invariant: lo does not fit, hi fits
        mid = (lo + hi) // 2
        if st.memory(chunk_sizes(tokens, mid)[0]).fits:
            hi = mid
        else:
            lo = mid
    return hi


def max_tokens_that_fit(st: _Setup, kv_heads: int | None = None, limit: int = 1 << 24) -> int:
    """The longest single pass that fits (0 if none), by bisection on T."""
    if not st.memory(1, kv_heads=kv_heads).fits:
        return 0
    lo, hi = 1, limit
    if st.memory(hi, kv_heads=kv_heads).fits:
        return hi
    while lo + 1 < hi:
        mid = (lo + hi) // 2
        if st.memory(mid, kv_heads=kv_heads).fits:
            lo = mid
        else:
            hi = mid
    return lo


# -- the plan ---------------------------------------------------------------------------------------
def plan(model: str | ModelSpec | None = None, *, tokens: int, batch: int = 1, passes: int = 1,
         chunks: int | None = None, params: float | None = None, layers: int | None = None,
         heads: int | None = None, kv_heads: int | None = None, head_dim: int | None = None,
         hidden: int | None = None, intermediate: int | None = None, vocab: int | None = None,
         max_position: int | None = None, weights_dtype: str | None = None, kv_dtype: str | None = None,
         device: str | dev.DeviceSpec | None = None, gpu_memory_gb: float | None = None,
         effective_tflops: float | None = None, bandwidth_tbps: float | None = None,
         flops_efficiency: float | None = None, bandwidth_efficiency: float | None = None,
         gpus: int = 1, memory_utilization: float = DEFAULT_MEMORY_UTILIZATION,
         attention: str = "tiled", causal_skip: bool = False,
         quality_report: str | Path | None = QUALITY_REPORT) -> Plan:
    """Plan one workload: T tokens (batch B, ``passes`` passes) of ``model`` on ``device``.

    ``model``: a catalog name, a config.json path or a ModelSpec; the explicit fields override it.
    ``device``: a catalog GPU name, a measured profile JSON path or a DeviceSpec; or give all of
    ``gpu_memory_gb``, ``effective_tflops`` and ``bandwidth_tbps`` (effective figures).
    ``chunks``: evaluate this split instead of choosing one. Raises ValueError on bad input.
    """
    for name, v in (("tokens", tokens), ("batch", batch), ("passes", passes)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ValueError(f"{name}: expected a positive integer, got {v!r}")
    if chunks is not None and (not isinstance(chunks, int) or not 1 <= chunks <= tokens):
        raise ValueError(f"chunks: expected an integer from 1 to tokens={tokens}, got {chunks!r}")
    if attention not in ("tiled", "materialized"):
        raise ValueError(f"attention: expected 'tiled' or 'materialized', got {attention!r}")
    if not 0 < memory_utilization <= 1:
        raise ValueError(f"memory-utilization: expected a fraction in (0, 1], got {memory_utilization}")
    spec = resolve_spec(model, params=params, layers=layers, heads=heads, kv_heads=kv_heads,
                        head_dim=head_dim, hidden=hidden, intermediate=intermediate, vocab=vocab,
                        max_position=max_position)
    check_tensor_parallel(spec, gpus)
    device_spec = resolve_device(device, gpu_memory_gb=gpu_memory_gb, effective_tflops=effective_tflops,
                                 bandwidth_tbps=bandwidth_tbps, flops_efficiency=flops_efficiency,
                                 bandwidth_efficiency=bandwidth_efficiency)
    weights_dtype = _dtype_name(weights_dtype or spec.weights_dtype_default(), "weights-dtype")
    act_dtype = weights_dtype if weights_dtype in ("fp32", *_SIXTEEN_BIT) else (
        "bf16" if spec.weights_dtype_default() == "bf16" else "fp16")
    kv_dtype = _dtype_name(kv_dtype or act_dtype, "kv-dtype")
    st = _Setup(spec, device_spec, batch, gpus, weights_dtype, kv_dtype, act_dtype, attention, memory_utilization)
    ex: list[str] = []
    warnings: list[str] = list(f"{spec.name}: {n}" for n in spec.notes)
    s, L, H, Hkv, dk, D = spec, spec.num_layers, spec.num_heads, spec.num_kv_heads, spec.head_dim, spec.hidden_size
    wb, kvb, ab = (acc.dtype_bytes(x) for x in (weights_dtype, kv_dtype, act_dtype))
    T, B = tokens, batch

    # 1. parameters
    ex.append(f"d_k = head_dim = {dk}" + (f" (= D/H = {D}/{H})" if D == H * dk else
                                          f" (stated; D/H would be {D / H:g}, so H*d_k = {H * dk} != D = {D})"))
    attn_per_layer = s.attention_params_per_layer()
    biases = attn_per_layer - acc.attention_params(D, H, Hkv, dk)
    ex.append(f"attention params/layer = 2*D*H*d_k + 2*D*H_kv*d_k{' + biases' if biases else ''} = 2*{D}*{H}*{dk} "
              f"+ 2*{D}*{Hkv}*{dk}{f' + {_n(biases)}' if biases else ''} = {_n(attn_per_layer)}"
              + (f" (MHA with d_k = D/H: 4*D^2 = {_n(4 * D * D)})" if H == Hkv and H * dk == D and not biases else ""))
    attn_total = s.attention_params_total()
    ex.append(f"attention params, all layers = L * per layer = {L} * {_n(attn_per_layer)} = {_n(attn_total)}")
    counts = s.param_counts()
    total_params = s.total_params()
    if counts is not None:
        n_mat = s.mlp_matrices
        ex.append(f"MLP params/layer = {n_mat}*D*I = {n_mat}*{D}*{s.intermediate_size}"
                  f"{' (+ biases)' if s.mlp_bias else ''} = {_n(counts.mlp_per_layer)} ({s.mlp} MLP)")
        ex.append(f"embedding = V*D = {s.vocab_size}*{D}{' + positions P*D' if s.positions == 'learned' else ''} "
                  f"= {_n(counts.embedding)}; LM head = {'tied (0)' if s.tie_word_embeddings else _n(counts.lm_head)}")
        ex.append(f"params from the architecture = embedding + LM head + L*(attention + MLP + norms) + final norm "
                  f"= {_n(counts.total)}")
        if s.params_published:
            ex.append(f"published total {_n(s.params_published)}: architecture count differs by "
                      f"{(counts.total - s.params_published) / s.params_published:+.3%}")
        if s.params is not None:
            diff = (s.params - counts.total) / counts.total
            ex.append(f"stated params {_n(s.params)} override the architecture count ({diff:+.1%})")
            if abs(diff) > 0.05:
                warnings.append(f"params: the stated {_n(s.params)} differs from the architecture's "
                                f"{_n(counts.total)} by {diff:+.0%}; the stated figure sizes the weights")
    else:
        ex.append(f"params = {_n(total_params)} (stated; the config lacks intermediate_size/vocab_size, so "
                  f"no breakdown" + (f": attention is {attn_total / total_params:.1%} of it)" if total_params else ")"))
    non_emb, non_emb_how = s.non_embedding_params()

    # 2. memory
    kv_tok = acc.kv_cache_bytes(L, Hkv, dk, 1, kvb)
    ex.append(f"KV cache per token = 2*L*H_kv*d_k*bytes = 2*{L}*{Hkv}*{dk}*{kvb:g} B = {_n(kv_tok)} B ({kv_dtype})"
              + (f"; H_kv/H = {Hkv}/{H} = {Hkv / H:.3g} of MHA's {_n(kv_tok * H // Hkv)} B" if Hkv != H else ""))
    kv_full = acc.kv_cache_bytes(L, Hkv, dk, T, kvb, B)
    kv = st.kv_bytes(T)
    windows = s.layer_windows()
    n_sliding = sum(w is not None for w in windows)
    ex.append(f"KV cache = per token * T * B = {_n(kv_tok)} * {_n(T)} * {B} = {_gb(kv_full)}"
              + (f"; with the {s.sliding_window}-token window on {n_sliding} of {L} layers: {_gb(st.kv_bytes(T, gpus=1))}"
                 if n_sliding and T > s.sliding_window else ""))
    if gpus > 1:
        ex.append(f"KV cache per GPU = {kv_heads_per_gpu(Hkv, gpus)} of {Hkv} KV heads on each of {gpus} GPUs = {_gb(kv)}")
    weights = st.weights_bytes()
    ex.append(f"weights = params * bytes{' / GPUs' if gpus > 1 else ''} = {_n(total_params)} * {wb:g} B"
              f"{f' / {gpus}' if gpus > 1 else ''} = {_gb(weights)} ({weights_dtype})")
    score = acc.score_matrix_bytes(B, H, T, T, ab)
    ex.append(f"score matrix [B,H,T,T] of one layer, if materialized = B*H*T^2*bytes = {B}*{H}*{_n(T)}^2*{ab:g} B "
              f"= {_gb(score)}")
    tiled = st.tiled_bytes(T, 1)
    ex.append(f"tiled attention state of one layer = B*H*T*(d_k+2)*4 B (fp32 accumulator, running max and sum) "
              f"= {B}*{H}*{_n(T)}*{dk + 2}*4 = {_gb(tiled)}: O(T*d_k), {score / tiled:,.0f}x smaller")
    width, assumed = s.mlp_width()
    workspace = st.workspace_bytes(T)
    mlp_peak, attn_peak, logits = st.workspace_parts(T)
    ex.append(f"workspace = max(MLP peak B*T*(D+{s.mlp_matrices}I)*bytes, attention peak B*T*(D+H*d_k)*bytes"
              f"{' + tiled state' if attention == 'tiled' else ''}) + last-position logits B*V*4 = "
              f"max({_gb(mlp_peak)}, {_gb(attn_peak)}) + {_gb(logits)} = {_gb(workspace)}"
              + (f" (I = {width} assumed)" if assumed else ""))
    if assumed:
        warnings.append(f"workspace: intermediate_size unknown; assumed I = {width} "
                        + ("(LLaMA's rule: 2/3*4D rounded up to a multiple of 256)" if s.mlp == "gated" else "(4D)"))
    single = st.memory(T)
    usable = st.usable
    ex.append(f"total = weights + KV + workspace{' + score matrix' if attention == 'materialized' else ''} = "
              f"{_gb(single.weights_bytes)} + {_gb(single.kv_cache_bytes)} + {_gb(single.workspace_bytes)}"
              f"{' + ' + _gb(single.score_matrix_bytes) if attention == 'materialized' else ''} = {_gb(single.total_bytes)}"
              f" vs usable {_gb(usable)} (= {_gb(device_spec.memory_bytes)} * {memory_utilization:g})"
              f" -> {'fits' if single.fits else 'does not fit'}")

    # 3. compute and time
    att_flops = st.attention_flops(T, causal=False)
    att_flops_causal = st.attention_flops(T, causal=True)
    if n_sliding == 0:
        assert att_flops == B * acc.model_attention_flops(T, s.attention_width, L)
        ex.append(f"attention FLOPs (the text's count, no causal halving) = 4*T^2*(H*d_k)*L*B = "
                  f"4*{_n(T)}^2*{s.attention_width}*{L}*{B} = {att_flops:.3g}")
    else:
        ex.append(f"attention FLOPs = sum over layers of 4*B*H*T*min(T,window)*d_k = {att_flops:.3g} "
                  f"(sliding layers meet at most {s.sliding_window} keys per query)")
    ex.append(f"attention FLOPs with the causal mask (kept pairs T(T+1)/2 per head and layer) = "
              f"{att_flops_causal:.3g} = {att_flops_causal / att_flops:.4f} of the full count")
    eff_flops = device_spec.effective_flops(act_dtype) * gpus
    ex.append(f"effective compute = {device_spec.matmul_flops.get(dev._dtype_key(act_dtype), eff_flops / gpus / device_spec.flops_efficiency) / 1e12:g} "
              f"TFLOP/s * efficiency {device_spec.flops_efficiency:g}{f' * {gpus} GPUs' if gpus > 1 else ''} = "
              f"{eff_flops / 1e12:g} TFLOP/s ({act_dtype})")
    att_s_full = st.attention_seconds(att_flops, T)
    att_s_causal = st.attention_seconds(att_flops_causal, T, causal=True)
    att_s = att_s_causal if causal_skip else att_s_full
    ex.append(f"attention prefill = FLOPs / effective FLOP/s = {(att_flops_causal if causal_skip else att_flops):.3g} / "
              f"{eff_flops:.3g} = {_s(att_s)} per pass ({'causal count: --causal-skip' if causal_skip else 'the text: full count'}; "
              f"the other count gives {_s(att_s_full if causal_skip else att_s_causal)})")
    roofline = (att_flops_causal if causal_skip else att_flops) / eff_flops
    if abs(att_s - roofline) > 1e-9 * max(att_s, 1e-12):
        ex.append(f"  + the measured profile's per-score, per-row and per-call terms: {_s(att_s)} in all "
                  f"(roofline alone {_s(roofline)})")
    ex.append(f"attention prefill, {_passes(passes)} = {passes} * {_s(att_s)} = {_s(att_s * passes)}")
    lin_flops = st.linear_flops(T)
    lin_s = st.linear_seconds(lin_flops)
    ex.append(f"linear layers = 2 * N_non_embedding * T * B = 2 * {non_emb:.4g} * {_n(T)} * {B} = {lin_flops:.3g} FLOPs "
              f"-> {_s(lin_s)} (N: {non_emb_how})")
    prefill = att_s + lin_s
    ex.append(f"prefill per pass = attention + linear = {_s(att_s)} + {_s(lin_s)} = {_s(prefill)}; "
              f"{_passes(passes)} = {_s(prefill * passes)}")
    bw = device_spec.effective_bandwidth() * gpus
    kv_read = st.decode_seconds(T, kv, 0.0)
    kv_roofline = kv * gpus / bw
    w_read = dev.memory_seconds(weights, device_spec)
    step = st.decode_seconds(T, kv, weights)
    ex.append(f"effective bandwidth = {device_spec.bandwidth_bytes_per_s / 1e12:g} TB/s * "
              f"{device_spec.bandwidth_efficiency:g}{f' * {gpus} GPUs' if gpus > 1 else ''} = {bw / 1e12:g} TB/s")
    ex.append(f"decode KV read per token = KV bytes / bandwidth = {_gb(kv * gpus)} / {bw / 1e12:g} TB/s = {_s(kv_roofline)} "
              f"(KV-only upper bound {B / kv_read:,.0f} tokens/s)")
    if abs(kv_read - kv_roofline) > 1e-9 * max(kv_read, 1e-12):
        ex.append(f"  + the measured profile's per-call, compute and cache terms of the decode kernel: {_s(kv_read)} in all "
                  f"(bandwidth alone {_s(kv_roofline)})")
    ex.append(f"decode per token = (KV + weights) / bandwidth = {_s(kv_read)} + {_s(w_read)} = {_s(step)} "
              f"-> {B / step:,.1f} tokens/s{' (whole batch)' if B > 1 else ''}")

    # 4. the decision
    max_pos = s.max_position_embeddings
    learned_limit = max_pos if (s.positions == "learned" and max_pos) else None
    if chunks is not None:
        n_chunks = chunks
        chosen = st.memory(chunk_sizes(T, chunks)[0])
        decision = "single_pass" if chunks == 1 else "chunked"
        reason = (f"{chunks} chunk{'s' if chunks > 1 else ''} requested: the largest ({_n(chunk_sizes(T, chunks)[0])} "
                  f"tokens) needs {_gb(chosen.total_bytes)} of {_gb(usable)} usable"
                  f" -> {'fits' if chosen.fits else 'does not fit'}")
        decision_fits = chosen.fits
        if learned_limit and chunk_sizes(T, chunks)[0] > learned_limit:
            decision_fits = False
            reason += f"; but chunks longer than the {learned_limit} learned positions cannot run"
    elif single.fits and not (learned_limit and T > learned_limit):
        n_chunks, decision, decision_fits = 1, "single_pass", True
        reason = (f"one full pass needs {_gb(single.total_bytes)} (weights {_gb(single.weights_bytes)} + KV "
                  f"{_gb(single.kv_cache_bytes)} + workspace {_gb(single.workspace_bytes)}) of {_gb(usable)} usable: "
                  f"it fits, so read all {_n(T)} tokens at once and keep every cross-reference")
    else:
        best = fewest_chunks(st, T, learned_limit)
        if best is None:
            n_chunks, decision, decision_fits = 1, "does_not_fit", False
            reason = (f"the weights alone ({_gb(single.weights_bytes)}) plus a one-token workspace exceed the "
                      f"{_gb(usable)} usable: no split helps; see the fallbacks (more GPUs, quantized weights)")
        else:
            n_chunks, decision, decision_fits = best, "chunked", True
            why = (f"one full pass needs {_gb(single.total_bytes)} > {_gb(usable)} usable" if not single.fits else
                   f"{_n(T)} tokens exceed the {learned_limit} learned positions")
            reason = (f"{why}; the fewest chunks that fit: {best} of about {_n(chunk_sizes(T, best)[0])} tokens, "
                      f"each {_gb(st.memory(chunk_sizes(T, best)[0]).total_bytes)}")
            if best != COMPARE_CHUNKS and COMPARE_CHUNKS <= T:
                text_split = st.memory(chunk_sizes(T, COMPARE_CHUNKS)[0])
                reason += (f" (the reference text's {COMPARE_CHUNKS} chunks of {_n(chunk_sizes(T, COMPARE_CHUNKS)[0])} "
                           f"need {_gb(text_split.total_bytes)}: {'they fit too' if text_split.fits else 'they do not fit'})")
    longest = chunk_sizes(T, n_chunks)[0]
    if max_pos and not learned_limit and longest > max_pos and decision != "does_not_fit":
        # RoPE runs past its table but leaves the trained range: the memory answer stands, with a caveat
        reason += (f"; but {'each chunk' if n_chunks > 1 else 'the pass'} ({_n(longest)} tokens) is longer than the "
                   f"{_n(max_pos)} positions the model was trained on: interpolate positions by >= "
                   f"{math.ceil(longest / max_pos * 100) / 100:g}x or use chunks of <= {_n(max_pos)} tokens "
                   f"(see the fallbacks)")
    ex.append(f"decision: {decision}{f' ({n_chunks} chunks)' if decision == 'chunked' else ''}: {reason}")
    compare = n_chunks if n_chunks > 1 else min(COMPARE_CHUNKS, T)
    chunked = _chunk_account(st, T, compare, passes, causal_skip)
    chunked["why_this_count"] = ("the decision's split" if n_chunks > 1 else
                                 f"the reference text's comparison ({COMPARE_CHUNKS} chunks)")
    ex.append(f"chunked alternative: {compare} chunks of {_n(chunked['chunk_tokens'])} tokens: attention FLOPs = "
              f"sum 4*t^2*(H*d_k)*L*B = {chunked['attention_flops']:.3g} (1/{att_flops / chunked['attention_flops']:.3g} "
              f"of one pass) -> {_s(chunked['attention_prefill_seconds'])} per pass, "
              f"{_s(chunked['attention_prefill_seconds_all_passes'])} for {passes}; KV {_gb(chunked['kv_cache_bytes'])}, "
              f"total {_gb(chunked['total_memory_bytes'])}")
    chunking_loses = (f"Chunking cuts the document into {compare} pieces of ~{_n(chunked['chunk_tokens'])} tokens that never "
                      f"see each other: a token in one chunk cannot attend to any token in another, so cross-chunk "
                      f"references (a clause citing a definition {_n(chunked['chunk_tokens'])}+ tokens earlier, a "
                      f"pronoun whose antecedent is in a previous chunk) are lost, and the per-chunk results must be "
                      f"merged without the model having read the whole. It saves "
                      f"{_s(att_s - chunked['attention_prefill_seconds'])} of attention per pass.")

    # 5. warnings and fallbacks
    if single.fits and single.total_bytes > 0.9 * usable:
        warnings.append(f"memory: the single pass uses {single.total_bytes / usable:.0%} of usable memory; little headroom")
    if score > usable and attention == "materialized":
        warnings.append(f"attention: a materialized score matrix needs {_gb(score)} per layer, more than the "
                        f"GPU; use tiled attention")
    if max_pos and T > max_pos:
        warnings.append(f"positions: T = {_n(T)} exceeds max_position_embeddings = {_n(max_pos)} "
                        + ("(learned positions: impossible beyond the table)" if s.positions == "learned" else
                           f"(RoPE angles leave the trained range: attention drifts, summaries repeat; "
                           f"interpolate positions by {T / max_pos:.3g}x or chunk to <= {_n(max_pos)})"))
    elif max_pos is None:
        warnings.append(f"positions: the training length (max_position_embeddings) is unknown; "
                        f"give --max-position to check T = {_n(T)} against it")
    if gpus > 1:
        warnings.append(f"tensor parallelism over {gpus} GPUs: all-reduce communication is not counted"
                        + (f"; {gpus // Hkv}x KV replication (H_kv = {Hkv} < {gpus} GPUs)" if gpus > Hkv else ""))
    if n_sliding:
        warnings.append(f"sliding window: {n_sliding} of {L} layers attend to the last {s.sliding_window} tokens only; "
                        f"their KV cache is capped at the window")
    if decision == "chunked":
        warnings.append("chunking: " + chunking_loses.split(": ", 1)[-1].split(", and")[0])
    fallbacks = _fallbacks(st, T, passes, single, att_s, prefill, quality_report, causal_skip)
    risky = not single.fits or single.total_bytes > 0.9 * usable or bool(max_pos and T > max_pos)
    for f in fallbacks:
        f.needed = (risky or f.name == "reuse_kv_across_passes"
                    or (f.name == "tiled_attention" and attention == "materialized"))

    result = Plan(
        model=s.name, model_source=s.source, attention_kind=s.attention_kind, d_model=D, n_layers=L,
        n_heads=H, n_kv_heads=Hkv, head_dim=dk, tokens=T, batch=B, passes=passes, gpus=gpus,
        device=device_spec.name, device_kind=device_spec.kind, device_source=device_spec.source,
        gpu_memory_bytes=device_spec.memory_bytes, usable_memory_bytes=usable,
        effective_tflops=device_spec.effective_flops(act_dtype) / 1e12,
        effective_bandwidth_tbps=device_spec.effective_bandwidth() / 1e12,
        weights_dtype=weights_dtype, kv_dtype=kv_dtype, activation_dtype=act_dtype, attention_mode=attention,
        causal_skip=causal_skip, params=total_params, params_architecture=counts.total if counts else None,
        params_published=s.params_published, attention_params_per_layer=attn_per_layer,
        attention_params=attn_total, non_embedding_params=non_emb,
        kv_cache_bytes_per_token=kv_tok, kv_cache_bytes=kv, kv_cache_bytes_no_window=kv_full,
        weights_bytes=weights, workspace_bytes=workspace, score_matrix_bytes_per_layer=score,
        tiled_attention_bytes_per_layer=tiled, total_memory_bytes=single.total_bytes,
        attention_flops=att_flops, attention_flops_causal=att_flops_causal, linear_flops=lin_flops,
        attention_prefill_seconds=att_s, attention_prefill_seconds_causal=att_s_causal,
        attention_prefill_seconds_all_passes=att_s * passes, linear_prefill_seconds=lin_s,
        prefill_seconds=prefill, prefill_seconds_all_passes=prefill * passes,
        decode_kv_read_seconds=kv_read, decode_weight_read_seconds=w_read, decode_seconds_per_token=step,
        tokens_per_second=B / step, tokens_per_second_kv_only=B / kv_read,
        chunked=chunked, fits=single.fits, decision=decision, chunks=n_chunks, decision_fits=decision_fits,
        reason=reason, chunking_loses=chunking_loses, warnings=warnings, fallbacks=fallbacks, explain=ex)
    result._setup = st          # not a field: kept for memory curves (report.plot_memory)
    return result


def memory_curve(p: Plan, tokens: list[int], kv_heads: int | None = None) -> list[float]:
    """Total single-pass bytes per GPU at each context length, for the plan's model and settings."""
    st = p._setup
    return [st.memory(t, kv_heads=kv_heads).total_bytes for t in tokens]


def longest_fitting_context(p: Plan, kv_heads: int | None = None) -> int:
    """The longest single pass that fits the plan's GPU (0 if none)."""
    return max_tokens_that_fit(p._setup, kv_heads)


def _dtype_name(name: str, arg: str) -> str:
    try:
        acc.dtype_bytes(name)
    except ValueError:
        raise ValueError(f"{arg}: expected one of fp32, fp16, bf16, fp8, int8, int4, got {name!r}") from None
    return dev._dtype_key(name)


# -- fallbacks --------------------------------------------------------------------------------------
def _fallbacks(st: _Setup, T: int, passes: int, single: MemoryAccount, att_s: float, prefill: float,
               quality_report, causal_skip: bool) -> list[Fallback]:
    s, out = st.spec, []
    H, Hkv, usable = s.num_heads, s.num_kv_heads, st.usable
    tight = not single.fits or single.total_bytes > 0.9 * usable

    # fewer KV heads: every divisor of H below H_kv is a valid grouping; show the next one down,
    # the first that fits (if different) and MQA.
    options = [d for d in range(Hkv - 1, 0, -1) if H % d == 0]
    if options:
        fitting = [d for d in options if st.memory(T, kv_heads=d).fits]
        picks = sorted({options[0], 1, *(fitting[:1])}, reverse=True)
        rows = []
        for d in picks:
            m = st.memory(T, kv_heads=d)
            rows.append({"kv_heads": d, "kind": "MQA" if d == 1 else f"GQA-{d}",
                         "kv_cache_bytes": m.kv_cache_bytes, "kv_fraction_of_now": d / Hkv,
                         "total_memory_bytes": m.total_bytes, "fits": m.fits,
                         "decode_kv_read_seconds": st.decode_seconds(T, m.kv_cache_bytes, 0.0)})
        best = next((r for r in rows if r["fits"]), rows[-1])
        notes = ["Converting MHA/GQA checkpoints: mean-pool each group's K and V projections, then uptrain "
                 "~5% of the original steps (Ainslie et al. 2023: T5-XXL quality MHA 47.2, GQA-8 47.1, MQA 46.6)."]
        notes += gqa_quality_lines(quality_report, s.name)
        text = "; ".join(f"H_kv {r['kv_heads']} ({r['kind']}): KV {_gb(r['kv_cache_bytes'])} "
                         f"({r['kv_fraction_of_now']:.3g}x), total {_gb(r['total_memory_bytes'])}, "
                         f"{'fits' if r['fits'] else 'does not fit'}" for r in rows)
        target = f"H_kv {Hkv} -> {best['kv_heads']}" if best["fits"] else "even H_kv = 1 does not fit"
        out.append(Fallback("fewer_kv_heads", f"share K/V across more query heads ({target})",
                            {"options": rows, "current_kv_heads": Hkv}, best["fits"], text, notes))

    # KV quantization: smaller KV elements, same heads.
    now = acc.dtype_bytes(st.kv_dtype)
    rows = []
    for q in ("fp8", "int8", "int4"):
        if acc.dtype_bytes(q) < now:
            m = st.memory(T, kv_dtype=q)
            rows.append({"kv_dtype": q, "kv_cache_bytes": m.kv_cache_bytes, "total_memory_bytes": m.total_bytes,
                         "fits": m.fits, "decode_kv_read_seconds": st.decode_seconds(T, m.kv_cache_bytes, 0.0, q)})
    if rows:
        text = "; ".join(f"{r['kv_dtype']}: KV {_gb(r['kv_cache_bytes'])}, decode KV read "
                         f"{_s(r['decode_kv_read_seconds'])}, total {_gb(r['total_memory_bytes'])}, "
                         f"{'fits' if r['fits'] else 'does not fit'}" for r in rows)
        out.append(Fallback("kv_quantization", f"store the KV cache in fewer bits (now {st.kv_dtype})",
                            {"options": rows}, next((r["fits"] for r in rows if r["fits"]), False), text,
                            ["Per-group scales add a few percent not counted here; int4 KV costs measurable "
                             "quality, fp8/int8 usually little."]))

    # tiled attention: the score matrix is never stored.
    score, tiled = st.score_bytes(T), st.tiled_bytes(T)
    out.append(Fallback(
        "tiled_attention", "compute softmax(QK^T)V block by block (FlashAttention-style) instead of storing [B,H,T,T]",
        {"score_matrix_bytes_per_layer": score, "tiled_bytes_per_layer": tiled, "ratio": score / tiled,
         "already_assumed": st.attention == "tiled"},
        st.attention == "tiled" and single.fits,
        f"materialized score matrix {_gb(score)} per layer vs tiled state {_gb(tiled)} "
        f"({score / tiled:,.0f}x less){' - already assumed by this plan' if st.attention == 'tiled' else ''}; "
        f"FLOPs unchanged (O(T^2)), memory O(T*d_k)"))

    # position interpolation when T leaves the trained range.
    max_pos = s.max_position_embeddings
    if max_pos and T > max_pos:
        factor = T / max_pos
        if s.positions == "learned":
            out.append(Fallback("position_interpolation", "not available: learned absolute positions",
                                {"factor_needed": factor, "max_position_embeddings": max_pos}, False,
                                f"the model has {max_pos} learned positions and none beyond; chunk to <= {max_pos} tokens"))
        else:
            scaled = f" (config already has rope_scaling {s.rope_scaling.get('rope_type', s.rope_scaling.get('type', ''))})" \
                if s.rope_scaling else ""
            out.append(Fallback("position_interpolation", f"scale RoPE positions by 1/{factor:.3g}",
                                {"factor_needed": factor, "max_position_embeddings": max_pos,
                                 "rope_scaling": s.rope_scaling}, None,
                                f"T = {_n(T)} is {factor:.3g}x the trained {_n(max_pos)}: interpolate positions by a factor "
                                f">= {math.ceil(factor * 100) / 100:g} (linear PI, or NTK/YaRN), ideally with a short "
                                f"fine-tune{scaled}; or chunk to <= {_n(max_pos)} tokens "
                                f"({acc.ceil_div(T, max_pos)} chunks)"))

    # more GPUs (tensor parallelism), when one is not enough.
    if tight:
        for n in range(2, H + 1):
            if H % n or (Hkv % n and n % Hkv):
                continue
            m = st.memory(T, gpus=n)
            if m.fits:
                att_n = st.attention_seconds(st.attention_flops(T, causal=causal_skip), T, gpus=n, causal=causal_skip)
                pre_n = att_n + st.linear_seconds(st.linear_flops(T), gpus=n)
                out.append(Fallback("more_gpus", f"tensor parallelism over {n} GPUs",
                                    {"gpus": n, "memory_per_gpu_bytes": m.total_bytes,
                                     "kv_cache_per_gpu_bytes": m.kv_cache_bytes,
                                     "attention_prefill_seconds": att_n, "prefill_seconds": pre_n},
                                    True, f"{n} GPUs (H={H}, H_kv={Hkv} divide): {_gb(m.total_bytes)} per GPU, "
                                          f"prefill ~{_s(pre_n)} per pass before communication"))
                break
        else:
            out.append(Fallback("more_gpus", "tensor parallelism", {"gpus": None}, False,
                                f"no head-compatible GPU count up to H = {H} fits"))

    # quantized weights, when the weights are the problem.
    if not single.fits and single.weights_bytes > 0.5 * usable:
        rows = []
        for q in ("fp8", "int8", "int4"):
            if acc.dtype_bytes(q) < acc.dtype_bytes(st.weights_dtype):
                m = st.memory(T, weights_dtype=q)
                rows.append({"weights_dtype": q, "weights_bytes": m.weights_bytes,
                             "total_memory_bytes": m.total_bytes, "fits": m.fits})
        if rows:
            out.append(Fallback("weight_quantization", "store the weights in fewer bits", {"options": rows},
                                any(r["fits"] for r in rows),
                                "; ".join(f"{r['weights_dtype']}: weights {_gb(r['weights_bytes'])}, total "
                                          f"{_gb(r['total_memory_bytes'])}, {'fits' if r['fits'] else 'does not fit'}"
                                          for r in rows)))

    # several passes over one document: keep its KV cache instead of prefilling again.
    if passes > 1:
        saved = prefill * (passes - 1)
        out.append(Fallback("reuse_kv_across_passes", "prefix caching: keep the document's KV cache between passes",
                            {"prefill_seconds_saved": saved, "prefill_seconds_all_passes": prefill}, single.fits,
                            f"if the {passes} passes share the document as a prefix (instructions after it), prefill "
                            f"once: {_s(prefill)} instead of {_s(prefill * passes)} (saves {_s(saved)})"))
    return out


def gqa_quality_lines(path, model_name: str) -> list[str]:
    """Lines from a measured GQA-conversion summary (written by ``multihead heads``), if one exists.

    Expected shape, read defensively (anything else is ignored): {"model": name, "gqa_quality":
    [{"kv_heads": n, "method": str, "perplexity": x, "baseline_perplexity": y}, ...]}, or a list of
    such objects.
    """
    if path is None:
        return []
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return []
    lines = []
    for entry in data if isinstance(data, list) else [data]:
        if not isinstance(entry, dict) or not isinstance(entry.get("gqa_quality"), list):
            continue
        measured_on = str(entry.get("model", "unknown model"))
        same = measured_on.lower() == model_name.lower()
        for row in entry["gqa_quality"]:
            try:
                ppl, base, n = float(row["perplexity"]), float(row["baseline_perplexity"]), int(row["kv_heads"])
            except (KeyError, TypeError, ValueError):
                continue
            lines.append(f"measured{'' if same else f' on {measured_on} (not this model)'}: H_kv -> {n} "
                         f"({row.get('method', '?')}): perplexity {ppl:.4g} vs {base:.4g} ({ppl / base - 1:+.1%})")
    return lines
