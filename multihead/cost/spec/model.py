"""ModelSpec: one model's shape, as the cost model sees it (no weights, no torch).

A spec says what the formulas need and nothing else: the dense decoder's sizes (HF config.json
names: hidden_size D, num_layers L, num_heads H, num_kv_heads H_kv, head_dim d, intermediate_size
I, vocab_size V), and the facts that change an account, each as a type:

- ``LayerKind`` per layer: full attention, a sliding window (Mistral, Gemma-2 alternating,
  Gemma-3 5:1, gpt-oss) or chunked local attention (Llama-4); their KV caches stop growing at the
  window / chunk.
- ``MLA`` (DeepSeek-V2/V3, Kimi): keys and values are rebuilt from a per-token latent of
  kv_lora_rank + qk_rope_head_dim numbers, which is all the cache holds.
- ``MoE``: routed experts (all held in memory, a few read per token), shared experts, and which
  layers carry them.
- ``Quantization`` (cost/spec/quantization.py): how many bytes a weight takes, and which ones.
- ``RopeScaling``: how far the positions reach (cost/spec/positions.py decides coverage).

Names and validation live here once; readers (hf_config.py) build specs, formulas read them.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import Enum

from multihead.cost.spec.quantization import Quantization

MAX_LAYERS = 100_000        # far beyond any published model; bounds every per-layer loop
MAX_WIDTH = 1 << 24         # D, I, V, H*d: 16.7M, also far beyond any published model


class MlpKind(str, Enum):
    GATED = "gated"          # SwiGLU / GeGLU: gate, up (D x I) and down (I x D): 3*D*I
    PLAIN = "plain"          # fc (D x I) and proj (I x D): 2*D*I (GPT-2, Phi-2)


class NormKind(str, Enum):
    RMS = "rms"              # weight only: D
    LAYER = "layer"          # weight and bias: 2D


class Positions(str, Enum):
    ROPE = "rope"            # rotary: runs past the table, leaves the trained range
    LEARNED = "learned"      # an absolute table (GPT-2): nothing beyond it
    UNKNOWN = "unknown"


class Bias(str, Enum):
    NONE = "none"
    QKV = "qkv"              # q, k and v projections (Qwen2)
    ALL = "all"              # q, k, v and o (GPT-2, gpt-oss, Phi-2)


class LayerKind(str, Enum):
    FULL = "full_attention"
    SLIDING = "sliding_attention"      # attends to the last `sliding_window` tokens
    CHUNKED = "chunked_attention"      # attends within fixed chunks of `attention_chunk_size` (Llama-4)

    @property
    def short(self) -> str:
        """The serving account's spelling ("full", "sliding", "chunked"): the same kinds, shorter."""
        return self.value.removesuffix("_attention")


@dataclass(frozen=True)
class LayerGroup:
    """Layers sharing one attention kind. ``window``: tokens a query sees (None: all)."""
    kind: LayerKind
    layers: int
    window: int | None = None


@dataclass(frozen=True)
class MLA:
    """Multi-head latent attention (DeepSeek-V2): K and V come from a compressed latent c_kv.

    Per token the cache holds c_kv (kv_lora_rank) and the shared rotary key (qk_rope_head_dim);
    a query head has qk_nope_head_dim + qk_rope_head_dim dims, a value head v_head_dim.
    """
    kv_lora_rank: int
    qk_rope_head_dim: int
    qk_nope_head_dim: int
    v_head_dim: int
    q_lora_rank: int | None = None     # None: q is one D x H*(nope+rope) projection

    @property
    def qk_head_dim(self) -> int:
        return self.qk_nope_head_dim + self.qk_rope_head_dim

    @property
    def latent_dim(self) -> int:
        """Numbers cached per token and layer: kv_lora_rank + qk_rope_head_dim."""
        return self.kv_lora_rank + self.qk_rope_head_dim


@dataclass(frozen=True)
class MoE:
    """Routed experts on ``moe_layers`` of the L layers (the rest are dense, width I).

    Each routed expert is a gated MLP of width ``expert_intermediate_size``; a token uses
    ``experts_per_token`` of ``num_experts``. ``shared_experts`` always run (DeepSeek:
    n_shared_experts of the expert width; Qwen2-MoE: one of shared_expert_intermediate_size).
    """
    num_experts: int
    experts_per_token: int
    expert_intermediate_size: int
    moe_layers: int
    shared_experts: int = 0
    shared_intermediate_size: int = 0
    shared_expert_gate: bool = False   # Qwen2-MoE: a D -> 1 gate scales the shared expert
    router_bias: bool = False          # gpt-oss: the router Linear has a bias
    expert_bias: bool = False          # gpt-oss: experts' projections have biases
    layout: str = "every layer"        # said in the summary (e.g. "layers 1..26; layer 0 dense")


@dataclass(frozen=True)
class RopeScaling:
    """A config's rope_scaling: type ('linear', 'dynamic', 'yarn', 'llama3', 'longrope', ...),
    factor, and the length the model was trained at before scaling (None: not stated)."""
    rope_type: str
    factor: float | None = None
    original_max_position_embeddings: int | None = None
    raw: dict = field(default_factory=dict, compare=False)


@dataclass
class ModelSpec:
    """One model's shape. ``head_dim`` defaults to D/H; ``num_kv_heads`` to H (MHA).

    ``layer_types`` (HF's per-layer list) or ``sliding_window`` alone (every layer slides, as in
    Mistral) place the windows; ``params`` overrides the count derived from the architecture (the
    reference text states 13e9 and gives no MLP width or vocabulary).
    """
    name: str
    hidden_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int | None = None
    head_dim: int | None = None
    intermediate_size: int | None = None
    vocab_size: int | None = None
    max_position_embeddings: int | None = None
    rope_scaling: RopeScaling | None = None
    sliding_window: int | None = None
    layer_types: tuple[str, ...] | None = None
    attention_chunk_size: int | None = None
    tie_word_embeddings: bool = False
    dtype: str | None = None            # the checkpoint's dtype (config torch_dtype), canonical
    mlp: MlpKind = MlpKind.GATED
    positions: Positions = Positions.ROPE
    attention_bias: Bias = Bias.NONE
    mlp_bias: bool = False
    lm_head_bias: bool = False          # Phi-2
    norm: NormKind = NormKind.RMS
    norms_per_layer: int = 2            # Gemma-2/3 have four, Phi-2 one
    qk_norm: bool = False               # Qwen3, Gemma-3: RMSNorm over d on q and k (2d per layer)
    attention_sinks: bool = False       # gpt-oss: one learned sink logit per head and layer
    mla: MLA | None = None
    moe: MoE | None = None
    quantization: Quantization | None = None
    model_type: str = ""
    params: float | None = None
    params_published: int | None = None
    source: str = ""
    notes: list[str] = field(default_factory=list)

    def __post_init__(self):
        self.mlp, self.positions = MlpKind(self.mlp), Positions(self.positions)
        self.attention_bias, self.norm = Bias(self.attention_bias), NormKind(self.norm)
        _check_int("num_layers", self.num_layers, hi=MAX_LAYERS)
        for name in ("hidden_size", "num_heads"):
            _check_int(name, getattr(self, name), hi=MAX_WIDTH)
        if self.num_kv_heads is None:
            self.num_kv_heads = self.num_heads
        _check_int("num_kv_heads", self.num_kv_heads, hi=MAX_WIDTH)
        if self.head_dim is None:
            self.head_dim = head_dim_of(self.hidden_size, self.num_heads)
        _check_int("head_dim", self.head_dim, hi=MAX_WIDTH)
        if self.num_heads % self.num_kv_heads:
            raise ValueError(f"kv_heads: expected a divisor of heads={self.num_heads} "
                             f"(each KV head serves H/H_kv query heads), got {self.num_kv_heads}")
        for name in ("intermediate_size", "vocab_size", "max_position_embeddings", "sliding_window",
                     "attention_chunk_size"):
            if getattr(self, name) is not None:
                _check_int(name, getattr(self, name), hi=1 << 40 if name != "intermediate_size" else MAX_WIDTH)
        if self.params is not None and not 0 <= self.params < float("inf"):
            raise ValueError(f"params: expected a finite non-negative count, got {self.params}")
        self._check_layer_types()
        if self.moe is not None:
            self._check_moe()

    def _check_moe(self) -> None:
        m = self.moe
        for name in ("num_experts", "experts_per_token", "expert_intermediate_size"):
            _check_int(name, getattr(m, name), hi=MAX_WIDTH)
        if m.experts_per_token > m.num_experts:
            raise ValueError(f"num_experts_per_tok: {m.experts_per_token} is more than the {m.num_experts} experts")
        if not 0 <= m.moe_layers <= self.num_layers:
            raise ValueError(f"moe layers: {m.moe_layers} of {self.num_layers} layers")
        if m.shared_experts:
            _check_int("shared expert size", m.shared_intermediate_size, hi=MAX_WIDTH)

    def _check_layer_types(self) -> None:
        if self.layer_types is None:
            return
        self.layer_types = tuple(self.layer_types)
        if len(self.layer_types) != self.num_layers:
            raise ValueError(f"layer_types: expected {self.num_layers} entries (num_hidden_layers), "
                             f"got {len(self.layer_types)}")
        known = {k.value for k in LayerKind}
        bad = sorted({t for t in self.layer_types if t not in known})
        if bad:
            raise ValueError(f"layer_types: unknown attention kind {bad[0]!r} (known: {', '.join(sorted(known))})")

    # -- derived shape ---------------------------------------------------------------------------
    @property
    def groups(self) -> int:
        """Query heads per KV head, G = H / H_kv (1 = MHA, H = MQA)."""
        return self.num_heads // self.num_kv_heads

    @property
    def attention_width(self) -> int:
        """H * d: the width the attention core works in (= D unless head_dim != D/H, as in Gemma-2)."""
        return self.num_heads * self.head_dim

    @property
    def mlp_matrices(self) -> int:
        return 3 if self.mlp is MlpKind.GATED else 2

    @property
    def attention_kind(self) -> str:
        if self.mla is not None:
            return "MLA"
        if self.num_kv_heads == self.num_heads:
            return "MHA"
        return "MQA" if self.num_kv_heads == 1 else f"GQA-{self.num_kv_heads}"

    def kind_window(self, kind: LayerKind) -> tuple[LayerKind, int | None]:
        """A layer kind with its window (tokens a query sees); a kind without its size attends to
        everything, so it is a full layer."""
        window = {LayerKind.FULL: None, LayerKind.SLIDING: self.sliding_window,
                  LayerKind.CHUNKED: self.attention_chunk_size}[kind]
        return (kind, window) if kind is LayerKind.FULL or window is not None else (LayerKind.FULL, None)

    def layer_kinds(self) -> tuple[tuple[LayerKind, int | None], ...]:
        """(kind, window) per layer, in order: the one reading of layer_types / sliding_window (the
        serving account deals the layers into KV-cache groups by it; layer_groups counts it)."""
        if self.layer_types is None:
            kind = LayerKind.SLIDING if self.sliding_window is not None else LayerKind.FULL
            return (self.kind_window(kind),) * self.num_layers
        return tuple(self.kind_window(LayerKind(t)) for t in self.layer_types)

    def layer_groups(self) -> tuple[LayerGroup, ...]:
        """The layers by attention kind, with their windows (counts; kinds in LayerKind's order)."""
        if self.layer_types is None:
            kind, window = self.kind_window(LayerKind.SLIDING if self.sliding_window is not None else LayerKind.FULL)
            return (LayerGroup(kind, self.num_layers, window),)
        out = []
        for kind in LayerKind:
            n = self.layer_types.count(kind.value)
            if n:
                real, window = self.kind_window(kind)
                out.append(LayerGroup(real, n, window))
        return _merge_groups(out)

    def features(self) -> list[str]:
        """What makes this model more than a dense full-attention decoder, for the summary line."""
        out = []
        if self.moe:
            out.append(f"MoE {self.moe.experts_per_token}/{self.moe.num_experts} experts"
                       + (f" + {self.moe.shared_experts} shared" if self.moe.shared_experts else ""))
        if self.mla:
            out.append(f"MLA (latent {self.mla.kv_lora_rank} + rope {self.mla.qk_rope_head_dim})")
        for g in self.layer_groups():
            if g.window is not None:
                out.append(f"{g.kind.value.split('_')[0]} window {g.window:,} on {g.layers} of {self.num_layers} layers")
        if self.quantization:
            out.append(f"quantized {self.quantization.describe()}")
        return out

    def with_overrides(self, **kw) -> "ModelSpec":
        """A copy with the given non-None fields replaced (derived fields are derived again)."""
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        changed = {k: v for k, v in kw.items() if v is not None}
        if ("num_heads" in changed or "hidden_size" in changed) and "head_dim" not in changed \
                and self.hidden_size % self.num_heads == 0 and self.head_dim == self.hidden_size // self.num_heads:
            values["head_dim"] = None          # derived from D/H before: derive again
        if "num_heads" in changed and "num_kv_heads" not in changed and self.num_kv_heads == self.num_heads:
            values["num_kv_heads"] = None
        values.update(changed)
        values["notes"] = list(self.notes)
        return ModelSpec(**values)


def _merge_groups(groups: list[LayerGroup]) -> tuple[LayerGroup, ...]:
    merged: dict[tuple, int] = {}
    for g in groups:
        merged[(g.kind, g.window)] = merged.get((g.kind, g.window), 0) + g.layers
    return tuple(LayerGroup(k, n, w) for (k, w), n in merged.items())


def head_dim_of(d_model: int, n_heads: int) -> int:
    """d = D / H when a config does not state head_dim."""
    if d_model % n_heads:
        raise ValueError(f"head_dim: hidden_size {d_model} is not divisible by num_attention_heads "
                         f"{n_heads}; give head_dim")
    return d_model // n_heads


def _check_int(name: str, value, lo: int = 1, hi: int | None = None) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < lo:
        raise ValueError(f"{name}: expected a positive integer, got {value!r}")
    if hi is not None and value > hi:
        raise ValueError(f"{name}: {value:,} is beyond any model the cost model represents (at most {hi:,})")
