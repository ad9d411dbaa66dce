"""The accounts: bytes per GPU, FLOPs and seconds of one setup (model, precision, GPU, batch, GPUs).

``Accounts`` is the planner's questions about one deployment: its fields are the plan's inputs
(model, GPU record, precision, GPU count) plus the workload knobs only the planner has (batch, the
attention kind, the memory utilization, the engine's account); ``Accounts.setup`` is the one
``Setup`` of that deployment (cost/time/timing.Setup: what the GPU-time model times, the same class
the serving section and the search time with), None for a measured CPU profile. ``Accounts`` is asked the same questions by the plan, the chunked alternative, the fallbacks and the
memory plot, each with a knob turned (fewer KV heads, another KV dtype, quantized weights, more
GPUs), so every number comes from one place. Counts come from ``multihead.cost``. Seconds come from
ONE time model per device: a GPU (catalog or explicit figures) is timed by the fitted GPU-time model
(``cost/time/timing.py``, the model the serving section times requests with), a measured CPU profile by
its own kernel terms (``cost.time.attention_time``). The reference text's 4*T^2*D*L is timed at the
same GPU rate and labelled "the text's count"; it is a second FLOP count, not a second GPU model.

Workspace (activations) of a prefill: layers run one at a time and nothing is kept for a backward
pass, so the peak is the widest moment of one layer. Gated MLP: the residual x (D), the fused
gate/up output (2I) and their product (I): B*T*(D + 3I)*bytes (plain: D + 2I; MoE: I = k routed
experts' widths + the shared ones). Attention: x, q and a tiled kernel's fp32 state. Logits for
the last position only: B*V*4.
"""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

from multihead.cost.time import attention_time as at
from multihead.cost.time.device import DeviceSpec, compute_seconds
from multihead.cost.counts.formulas import (ceil_div, decode_attention_flops, linear_flops, pair_flops, score_matrix_bytes,
                                     spec_attention_flops, tiled_state_bytes)
from multihead.cost.counts.memory import WeightBytes, decode_weight_bytes, kv_bytes, kv_heads_per_gpu, weight_bytes
from multihead.cost.spec.model import ModelSpec
from multihead.cost.counts.params import mlp_width, non_embedding_params
from multihead.cost.spec.precision import Precision
from multihead.cost.spec.quantization import Quantization
from multihead.cost.spec.units import dtype_bytes


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
class Accounts:
    spec: ModelSpec
    device: DeviceSpec
    precision: Precision
    batch: int
    gpus: int
    attention: str                 # "tiled" or "materialized"
    memory_utilization: float
    # the engine's account of this plan (planner/serving.Engine), set by planner.build; None: a CPU
    # profile, whose one-pass decision is the plan's own account
    engine: object = dataclasses.field(default=None, repr=False, compare=False)

    @property
    def usable(self) -> float:
        return self.device.memory_bytes * self.memory_utilization

    def with_gpus(self, gpus: int) -> "Accounts":
        return dataclasses.replace(self, gpus=gpus)

    # -- memory ------------------------------------------------------------------------------------
    def weights(self, quantization: Quantization | None | bool = False, gpus: int | None = None) -> WeightBytes:
        """Weight bytes per GPU (``quantization`` False: the plan's own; None: none; else that one)."""
        q = self.precision.quantization if quantization is False else quantization
        return weight_bytes(self.spec, self.precision.weights, q, gpus or self.gpus)

    def kv_bytes(self, tokens: int, kv_heads: int | None = None, kv_dtype: str | None = None,
                 gpus: int | None = None) -> float:
        """KV cache bytes per GPU: per layer group, elements * min(T, window) * B * bytes."""
        return kv_bytes(self.spec, tokens, kv_dtype or self.precision.kv, self.batch, kv_heads, gpus or self.gpus)

    def workspace_parts(self, tokens: int, gpus: int | None = None) -> tuple[float, float, float]:
        """(MLP peak, attention peak, logits) of one layer's prefill, per GPU (module docstring)."""
        s, n, a = self.spec, gpus or self.gpus, dtype_bytes(self.precision.activation)
        mlp_peak = self.batch * tokens * (s.hidden_size + s.mlp_matrices * self.mlp_peak_width() // n) * a
        attn_peak = self.batch * tokens * (s.hidden_size + s.attention_width // n) * a
        if self.attention == "tiled":
            attn_peak += self.tiled_bytes(tokens, n)
        return mlp_peak, attn_peak, self.batch * (s.vocab_size or 0) * 4

    def mlp_peak_width(self) -> int:
        """The widest MLP a token passes: the dense I, or k routed experts plus the shared ones."""
        s = self.spec
        dense = mlp_width(s)[0] if not s.moe or s.moe.moe_layers < s.num_layers else 0
        if not s.moe:
            return dense
        m = s.moe
        return max(dense, m.experts_per_token * m.expert_intermediate_size + m.shared_experts * m.shared_intermediate_size)

    def workspace_bytes(self, tokens: int, gpus: int | None = None) -> float:
        mlp_peak, attn_peak, logits = self.workspace_parts(tokens, gpus)
        return max(mlp_peak, attn_peak) + logits

    def tiled_bytes(self, tokens: int, gpus: int | None = None) -> float:
        return tiled_state_bytes(self.batch, self.spec.num_heads // (gpus or self.gpus), tokens, self.spec.head_dim)

    def score_bytes(self, tokens: int, gpus: int | None = None) -> float:
        return score_matrix_bytes(self.batch, self.spec.num_heads // (gpus or self.gpus), tokens, tokens,
                                  dtype_bytes(self.precision.activation))

    def memory(self, tokens: int, *, kv_heads=None, kv_dtype=None, quantization=False, gpus=None) -> MemoryAccount:
        return MemoryAccount(
            tokens=tokens, weights_bytes=self.weights(quantization, gpus).total,
            kv_cache_bytes=self.kv_bytes(tokens, kv_heads, kv_dtype, gpus),
            workspace_bytes=self.workspace_bytes(tokens, gpus),
            score_matrix_bytes=self.score_bytes(tokens, gpus) if self.attention == "materialized" else 0.0,
            usable_bytes=self.usable)

    # -- compute and time --------------------------------------------------------------------------
    @functools.cached_property
    def setup(self):
        """The Setup of this plan (cost/time/timing.Setup; TP = the plan's GPUs), or None
        for a measured CPU profile (timed by its own kernel terms)."""
        if self.device.kind == "measured":
            return None
        from multihead.cost.time.serving_time import plan_setup
        return plan_setup(self.spec, self.device, self.precision, self.gpus)

    def _setup(self, gpus: int | None):
        ts = self.setup
        return ts if ts is None or not gpus or gpus == ts.tp else dataclasses.replace(ts, tp=gpus)

    def prefill(self, tokens: int, gpus: int | None = None, causal_skip: bool = False) -> tuple[float, dict | None]:
        """(seconds, terms) of one prefill of the batch's T-token prompts. A GPU: the GPU-time model's
        phase (max(compute, memory) + dequantization + fixed costs + all-reduces; terms = its Phase as a
        dict); a measured CPU profile: attention (causal count with ``causal_skip``) + linear layers."""
        ts = self._setup(gpus)
        if ts is None:
            flops = self.attention_flops(tokens, causal=causal_skip)
            att = self.attention_seconds(flops, tokens, gpus=gpus, causal=causal_skip)
            return att + self.linear_seconds(self.linear_flops(tokens), gpus), None
        from multihead.cost.time import timing
        phase = timing.prefill(ts, tokens, batch=self.batch)
        return phase.total_s, {**_terms(phase), "engine": ts.engine, "constants": ts.constants.source,
                               "link": ts.gpu.link}

    def effective_rates(self) -> tuple[float, float]:
        """(attention FLOP/s, bytes/s) per GPU that time this plan: the GPU-time model's (peak x
        mamf_share x fitted efficiency; explicit figures as given), or a measured profile's roofline."""
        ts = self.setup
        if ts is None:
            return self.device.effective_flops(self.precision.activation), self.device.effective_bandwidth()
        from multihead.cost.time import timing
        return timing.attention_flops_per_s(ts), ts.gpu.bandwidth_bytes_per_s * ts.constants.bandwidth_efficiency

    def read_seconds(self, nbytes: float) -> float:
        """Streaming ``nbytes`` per GPU: the GPU-time model's rate, or the profile's bandwidth."""
        ts = self.setup
        if ts is None:
            from multihead.cost.time.device import memory_seconds
            return memory_seconds(nbytes, self.device)
        from multihead.cost.time import timing
        return timing.read_seconds(ts, nbytes)

    def attention_flops(self, tokens: int, causal: bool) -> float:
        """Whole-model attention FLOPs of one T-token prefill (all GPUs), windows and chunks included."""
        return float(spec_attention_flops(self.spec, tokens, self.batch, causal))

    def attention_seconds(self, flops: float, tokens: int, calls_per_layer: int = 1, gpus: int | None = None,
                          causal: bool = False) -> float:
        """Seconds of the attention core: ``flops`` (all GPUs) over ``calls_per_layer`` kernel calls per
        layer of ``tokens`` query rows each, split over the GPUs."""
        s, n = self.spec, gpus or self.gpus
        ts = self._setup(n)
        if ts is not None:        # the GPU-time model's attention rate, whatever count is asked
            from multihead.cost.time import timing
            return flops / n / timing.attention_flops_per_s(ts)
        return at.attention_seconds(self.device, flops / n, self.precision.activation, head_dim=pair_flops(s) / 4,
                                    heads=s.num_heads // n, tokens=tokens, kv_tokens=tokens, batch=self.batch,
                                    calls=s.num_layers * calls_per_layer, causal=causal)

    def decode_weight_bytes(self, gpus: int | None = None) -> tuple[float, float]:
        """(weight bytes one decode step reads per GPU, routed experts read per MoE layer)."""
        return decode_weight_bytes(self.spec, self.weights(False, gpus), self.batch)

    def decode_seconds(self, context: int, kv: float, weights: float, kv_dtype: str | None = None) -> float:
        """One decode step at ``context`` cached tokens reading ``kv`` and ``weights`` bytes per GPU
        (weights=0: the attention's KV read alone)."""
        s = self.spec
        if self.setup is not None:     # the GPU-time model: reads at its rate, decode FLOPs hidden
            return self.read_seconds(kv + weights)
        flops = decode_attention_flops(s, context, self.batch, heads=s.num_heads // self.gpus)
        return at.decode_step_seconds(self.device, kv, weights, dtype=kv_dtype or self.precision.kv, flops=flops,
                                      calls=s.num_layers, rows_per_kv_head=s.num_heads // s.num_kv_heads)

    def decode_step(self, context: int):
        """(seconds, terms) of one decode step of the batch at ``context`` cached tokens. A GPU: the
        GPU-time model (cost/timing: weights and KV read, fixed costs, the 2 all-reduces per layer over
        the GPUs; terms = its Phase as a dict). A measured CPU profile: its own kernel terms (terms None)."""
        if self.device.kind == "measured":
            kv, (weights, _) = self.kv_bytes(context), self.decode_weight_bytes()
            return self.decode_seconds(context, kv, weights), None
        from multihead.cost.time import timing
        setup = self.setup
        phase = timing.decode_step(setup, self.batch, context)
        return phase.total_s, {**_terms(phase), "engine": setup.engine,
                               "constants": setup.constants.source, "link": setup.gpu.link}

    def linear_flops(self, tokens: int) -> float:
        return linear_flops(non_embedding_params(self.spec)[0], tokens, self.batch)

    def linear_seconds(self, flops: float, gpus: int | None = None) -> float:
        ts = self._setup(gpus)
        if ts is not None:
            from multihead.cost.time import timing
            return flops / (gpus or self.gpus) / timing.linear_flops_per_s(ts)
        return compute_seconds(flops / (gpus or self.gpus), self.device, self.precision.weights)

    def kv_heads_per_gpu(self, kv_heads: int | None = None) -> int:
        return kv_heads_per_gpu(kv_heads or self.spec.num_kv_heads, self.gpus)


def _terms(phase) -> dict:
    """A Phase's fields as a dict (its values are numbers and strings: no deep copy needed)."""
    return {f.name: getattr(phase, f.name) for f in dataclasses.fields(phase)}


# -- splitting T into chunks (closed forms: never a list of length T or of the chunk count) ----------
def chunk_tokens(tokens: int, chunks: int) -> int:
    """The largest of ``chunks`` near-equal parts of T: ceil(T / n)."""
    return ceil_div(tokens, chunks)


def chunk_groups(tokens: int, chunks: int) -> list[tuple[int, int]]:
    """[(length, how many)]: T mod n chunks of ceil(T/n) tokens and the rest of floor(T/n)."""
    q, r = divmod(tokens, chunks)
    return [(length, count) for length, count in ((q + 1, r), (q, chunks - r)) if count and length]


def fewest_chunks(st: Accounts, tokens: int, max_chunk_tokens: int | None = None) -> int | None:
    """The fewest chunks whose largest fits (and is no longer than ``max_chunk_tokens``), by bisection
    on the count (memory grows with the chunk length); None when even one token does not fit."""
    lo = ceil_div(tokens, max_chunk_tokens) if max_chunk_tokens else 1
    if not st.memory(1).fits:
        return None
    if st.memory(chunk_tokens(tokens, lo)).fits:
        return lo
    hi = tokens
    while lo + 1 < hi:     # invariant: lo does not fit, hi fits
        mid = (lo + hi) // 2
        if st.memory(chunk_tokens(tokens, mid)).fits:
            hi = mid
        else:
            lo = mid
    return hi


def max_tokens_that_fit(st: Accounts, kv_heads: int | None = None, limit: int = 1 << 40) -> int:
    """The longest single pass that fits (0 if none), by bisection on T (at most 40 steps)."""
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
