"""Parameters by part, total and active per token, from a ModelSpec (counted as transformers builds them).

A decoder is: embedding (V*D, plus a P*D position table when positions are learned), L layers of
attention + MLP (dense) or router + experts (MoE) + norms, a final norm and an LM head (V*D, or
none when tied to the embedding). ``ParamCounts.total`` equals transformers' own count of
``model.parameters()`` for the same config.json (tests/test_cost_transformers.py).
"""
from __future__ import annotations

from dataclasses import dataclass

from multihead.cost.counts.formulas import attention_params, ceil_div, mlp_params
from multihead.cost.spec.model import Bias, MlpKind, ModelSpec, NormKind, Positions


@dataclass(frozen=True)
class ParamCounts:
    """Parameters by part. Per-layer parts are for one layer of that kind."""
    embedding: int               # V*D (+ P*D learned positions)
    lm_head: int                 # V*D (+ V bias), 0 when tied
    attention_per_layer: int     # projections (+ biases, sinks, MLA's inner norms)
    norms_per_layer: int         # the layer's norms (+ q/k norms)
    final_norm: int
    n_layers: int
    mlp_per_layer: int           # a dense layer's MLP (0 when every layer is MoE)
    n_moe_layers: int = 0
    expert: int = 0              # one routed expert
    num_experts: int = 0
    experts_per_token: int = 0
    shared_per_layer: int = 0    # shared experts (+ their gate)
    router_per_layer: int = 0

    @property
    def n_dense_layers(self) -> int:
        return self.n_layers - self.n_moe_layers

    @property
    def per_layer(self) -> int:
        """A dense layer: attention + MLP + norms."""
        return self.attention_per_layer + self.mlp_per_layer + self.norms_per_layer

    def moe_layer(self, experts: float) -> float:
        """An MoE layer holding (or reading) ``experts`` routed experts."""
        return (self.attention_per_layer + self.norms_per_layer + self.router_per_layer
                + self.shared_per_layer + experts * self.expert)

    @property
    def experts_total(self) -> int:
        """All routed experts of all MoE layers (held in memory, mostly idle per token)."""
        return self.n_moe_layers * self.num_experts * self.expert

    @property
    def non_embedding(self) -> int:
        """The layers and the final norm: what every token passes through (all experts counted)."""
        return int(self.n_dense_layers * self.per_layer + self.n_moe_layers * self.moe_layer(self.num_experts)
                   + self.final_norm)

    @property
    def active_non_embedding(self) -> float:
        """The layers a token meets: k routed experts per MoE layer (= non_embedding when dense)."""
        return (self.n_dense_layers * self.per_layer + self.n_moe_layers * self.moe_layer(self.experts_per_token)
                + self.final_norm)

    @property
    def total(self) -> int:
        return self.embedding + self.lm_head + self.non_embedding

    @property
    def active(self) -> float:
        """Parameters one token uses, embedding and LM head included (as 'A3B' counts them)."""
        return self.embedding + self.lm_head + self.active_non_embedding


def attention_params_per_layer(s: ModelSpec) -> int:
    """One layer's attention: projections (MLA: its own, below), biases, gpt-oss's per-head sinks."""
    if s.mla is not None:
        return _mla_params(s)
    per = attention_params(s.hidden_size, s.num_heads, s.num_kv_heads, s.head_dim,
                           bias=s.attention_bias is not Bias.NONE)
    if s.attention_bias is Bias.QKV:
        per -= s.hidden_size            # q, k, v biases only: o_proj has none
    return per + (s.num_heads if s.attention_sinks else 0)


def _mla_params(s: ModelSpec) -> int:
    """MLA (DeepSeek-V2): q = D x H*(nope+rope), or through a rank-r_q bottleneck with its norm:
    D*r_q + r_q + r_q*H*(nope+rope); kv_a: D x (r_kv + rope); its norm r_kv; kv_b: r_kv x H*(nope+v);
    o: H*v x D. Biases (attention_bias) on q_a, kv_a and o."""
    m, D, H = s.mla, s.hidden_size, s.num_heads
    q = D * H * m.qk_head_dim if m.q_lora_rank is None else (
        D * m.q_lora_rank + m.q_lora_rank + m.q_lora_rank * H * m.qk_head_dim)
    kv = D * m.latent_dim + m.kv_lora_rank + m.kv_lora_rank * H * (m.qk_nope_head_dim + m.v_head_dim)
    out = H * m.v_head_dim * D
    bias = ((m.q_lora_rank or 0) + m.latent_dim + D) if s.attention_bias is not Bias.NONE else 0
    return q + kv + out + bias


def norm_params(s: ModelSpec) -> int:
    """One norm over D: RMSNorm D weights, LayerNorm D weights + D biases."""
    return (2 if s.norm is NormKind.LAYER else 1) * s.hidden_size


def mlp_width(s: ModelSpec) -> tuple[int, bool]:
    """(I, assumed): the config's intermediate_size, else the usual rule (LLaMA's SwiGLU:
    2/3 * 4D rounded up to a multiple of 256; a plain MLP: 4D)."""
    if s.intermediate_size is not None:
        return s.intermediate_size, False
    if s.mlp is MlpKind.PLAIN:
        return 4 * s.hidden_size, True
    return 256 * ceil_div(ceil_div(8 * s.hidden_size, 3), 256), True


def param_counts(s: ModelSpec) -> ParamCounts | None:
    """Parameters by part, or None when the config lacks the sizes (vocab_size, a dense layer's I)."""
    n_moe = s.moe.moe_layers if s.moe else 0
    if s.vocab_size is None or (s.intermediate_size is None and n_moe < s.num_layers):
        return None
    D, V = s.hidden_size, s.vocab_size
    pos = s.max_position_embeddings * D if s.positions is Positions.LEARNED and s.max_position_embeddings else 0
    norms = s.norms_per_layer * norm_params(s) + (2 * s.head_dim if s.qk_norm else 0)
    dense = mlp_params(D, s.intermediate_size, s.mlp, s.mlp_bias) if n_moe < s.num_layers else 0
    counts = dict(embedding=V * D + pos, lm_head=0 if s.tie_word_embeddings else V * D + (V if s.lm_head_bias else 0),
                  attention_per_layer=attention_params_per_layer(s), norms_per_layer=norms,
                  final_norm=norm_params(s), n_layers=s.num_layers, mlp_per_layer=dense)
    if s.moe:
        m = s.moe
        counts.update(n_moe_layers=n_moe, num_experts=m.num_experts, experts_per_token=m.experts_per_token,
                      expert=mlp_params(D, m.expert_intermediate_size, MlpKind.GATED, m.expert_bias),
                      shared_per_layer=m.shared_experts * mlp_params(D, m.shared_intermediate_size)
                      + (D if m.shared_expert_gate else 0),
                      router_per_layer=D * m.num_experts + (m.num_experts if m.router_bias else 0))
    return ParamCounts(**counts)


def total_params(s: ModelSpec) -> float:
    """The count the planner uses: ``params`` if stated, else the architecture's total."""
    if s.params is not None:
        return float(s.params)
    counts = param_counts(s)
    if counts is None:
        missing = [n for n in ("intermediate_size", "vocab_size") if getattr(s, n) is None]
        raise ValueError(f"params: the total parameter count needs {' and '.join(missing)} or an explicit --params")
    return float(counts.total)


def non_embedding_params(s: ModelSpec, active: bool = True) -> tuple[float, str]:
    """(N, how it was obtained) for the linear-layer FLOPs 2*N*T: the layers a token meets
    (``active``: an MoE token meets k experts per layer, not all E)."""
    counts = param_counts(s)
    if s.params is None and counts is not None:
        if active and s.moe:
            return float(counts.active_non_embedding), "from the architecture, active experts only"
        return float(counts.non_embedding), "from the architecture"
    if s.vocab_size is not None:
        emb = s.vocab_size * s.hidden_size * (1 if s.tie_word_embeddings else 2)
        return max(0.0, float(s.params) - emb), "stated params less the embedding and LM head"
    return float(s.params), "stated params (embedding size unknown: an upper bound)"
