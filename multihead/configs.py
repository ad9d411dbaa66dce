"""Model configs: a ``ModelSpec`` from the catalog, a HuggingFace ``config.json`` or explicit numbers.

The planner needs only the architecture's shape (D, L, H, H_kv, d_k, the MLP width, the vocabulary)
plus a few facts that change the accounts: sliding-window layers (their KV cache stops growing at
the window), learned versus rotary positions (learned ones cannot go past their table at all),
a gated or plain MLP (3*D*I or 2*D*I weights) and tied embeddings. Field names are HF's; GPT-2's
own names (n_embd, n_layer, ...) are accepted as aliases.
"""
from __future__ import annotations

import difflib
import json
import math
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from multihead import accounting as acc

# GPT-2 style configs name the same fields differently (transformers' GPT2Config.attribute_map).
_ALIASES = {
    "n_embd": "hidden_size", "n_layer": "num_hidden_layers", "n_head": "num_attention_heads",
    "n_positions": "max_position_embeddings", "n_inner": "intermediate_size",
}
# Families whose MLP is two matrices (D->I, I->D) with biases and whose norms are LayerNorm.
_PLAIN_MLP_TYPES = {"gpt2", "gpt_neo", "gptj", "opt", "bert", "roberta", "gpt_bigcode", "falcon", "gpt_neox", "phi"}
_LEARNED_POSITION_TYPES = {"gpt2", "opt", "bert", "roberta", "gpt_bigcode"}
_DTYPE_NAMES = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float8_e4m3fn": "fp8"}


@dataclass
class ParamCounts:
    """Parameters by part. ``per_layer`` = attention + mlp + norms of one decoder layer."""
    embedding: int            # token embedding V*D (plus a learned position table P*D)
    lm_head: int              # V*D, or 0 when tied to the embedding
    attention_per_layer: int  # 2*D*H*d_k + 2*D*H_kv*d_k (+ biases)
    mlp_per_layer: int        # 3*D*I gated, 2*D*I plain (+ biases)
    norms_per_layer: int
    final_norm: int
    n_layers: int

    @property
    def per_layer(self) -> int:
        return self.attention_per_layer + self.mlp_per_layer + self.norms_per_layer

    @property
    def non_embedding(self) -> int:
        """Weights every token multiplies through: the decoder layers (and final norm)."""
        return self.n_layers * self.per_layer + self.final_norm

    @property
    def total(self) -> int:
        return self.embedding + self.lm_head + self.non_embedding


@dataclass
class ModelSpec:
    """One model's shape. ``head_dim`` defaults to hidden/H; ``num_kv_heads`` to H (MHA).

    ``layer_types`` lists "full_attention" or "sliding_attention" per layer when the model mixes them
    (Gemma-2); a plain ``sliding_window`` with no ``layer_types`` slides on every layer (Mistral).
    ``params`` overrides the count derived from the architecture (the reference example states 13e9
    and gives no MLP width or vocabulary).
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
    rope_scaling: dict | None = None
    sliding_window: int | None = None
    layer_types: list[str] | None = None
    tie_word_embeddings: bool = False
    torch_dtype: str | None = None
    mlp: str = "gated"              # "gated" (SwiGLU/GeGLU: gate, up, down) or "plain" (fc, proj)
    positions: str = "rope"         # "rope", "learned" or "unknown"
    attention_bias: str = "none"    # "none", "qkv" (Qwen2) or "all" (GPT-2)
    mlp_bias: bool = False
    norm: str = "rms"               # "rms" (weight only) or "layer" (weight and bias)
    norms_per_layer: int = 2        # Gemma-2 has four
    params: float | None = None
    params_published: int | None = None
    source: str = ""
    notes: list[str] = field(default_factory=list)

    def __post_init__(self):
        for name in ("hidden_size", "num_layers", "num_heads"):
            _check_positive(name, getattr(self, name))
        if self.num_kv_heads is None:
            self.num_kv_heads = self.num_heads
        _check_positive("num_kv_heads", self.num_kv_heads)
        if self.head_dim is None:
            self.head_dim = acc.head_dim_of(self.hidden_size, self.num_heads)
        _check_positive("head_dim", self.head_dim)
        if self.num_heads % self.num_kv_heads:
            raise ValueError(f"kv_heads: expected a divisor of heads={self.num_heads} "
                             f"(each KV head serves H/H_kv query heads), got {self.num_kv_heads}")
        for name in ("intermediate_size", "vocab_size", "max_position_embeddings", "sliding_window"):
            if getattr(self, name) is not None:
                _check_positive(name, getattr(self, name))
        if self.params is not None and not self.params >= 0:   # 0: attention alone (multihead validate)
            raise ValueError(f"params: expected a non-negative count, got {self.params}")
        if self.layer_types is not None and len(self.layer_types) != self.num_layers:
            raise ValueError(f"layer_types: expected {self.num_layers} entries (num_hidden_layers), "
                             f"got {len(self.layer_types)}")

    # -- derived shape -----------------------------------------------------------------------------
    @property
    def groups(self) -> int:
        """Query heads per KV head, H / H_kv (1 = MHA, H = MQA)."""
        return self.num_heads // self.num_kv_heads

    @property
    def attention_width(self) -> int:
        """H * d_k: the width the attention core works in (= D unless head_dim != D/H, as in Gemma-2)."""
        return self.num_heads * self.head_dim

    @property
    def mlp_matrices(self) -> int:
        """Weight matrices of D x I in the MLP: 3 gated (gate, up, down), 2 plain (fc, proj)."""
        return 3 if self.mlp == "gated" else 2

    @property
    def attention_kind(self) -> str:
        if self.num_kv_heads == self.num_heads:
            return "MHA"
        return "MQA" if self.num_kv_heads == 1 else f"GQA-{self.num_kv_heads}"

    def layer_windows(self) -> list[int | None]:
        """The attention window of each layer: an int for sliding-window layers, None for full."""
        if self.sliding_window is None:
            return [None] * self.num_layers
        if self.layer_types is None:
            return [self.sliding_window] * self.num_layers
        return [self.sliding_window if t == "sliding_attention" else None for t in self.layer_types]

    def mlp_width(self) -> tuple[int, bool]:
        """(I, assumed): the config's intermediate_size, or the LLaMA rule when the config lacks it.

        LLaMA sizes its SwiGLU at 2/3 * 4D rounded up to a multiple of 256 (4096 -> 11008,
        5120 -> 13824); a plain MLP is 4D (GPT-2).
        """
        if self.intermediate_size is not None:
            return self.intermediate_size, False
        if self.mlp == "plain":
            return 4 * self.hidden_size, True
        return 256 * acc.ceil_div(math.ceil(8 * self.hidden_size / 3), 256), True

    # -- parameters --------------------------------------------------------------------------------
    def param_counts(self) -> ParamCounts | None:
        """Parameters by part from the architecture, or None without intermediate_size and vocab_size."""
        if self.intermediate_size is None or self.vocab_size is None:
            return None
        d, i = self.hidden_size, self.intermediate_size
        attn = self.attention_params_per_layer()
        n_mats = self.mlp_matrices
        mlp = n_mats * d * i + ((n_mats - 1) * i + d if self.mlp_bias else 0)
        norm = (2 if self.norm == "layer" else 1) * d
        pos = self.max_position_embeddings * d if self.positions == "learned" else 0
        return ParamCounts(embedding=self.vocab_size * d + pos,
                           lm_head=0 if self.tie_word_embeddings else self.vocab_size * d,
                           attention_per_layer=attn, mlp_per_layer=mlp,
                           norms_per_layer=self.norms_per_layer * norm, final_norm=norm,
                           n_layers=self.num_layers)

    def attention_params_per_layer(self) -> int:
        """One layer's attention projections: 2*D*H*d_k + 2*D*H_kv*d_k (+ biases)."""
        d = self.hidden_size
        per = acc.attention_params(d, self.num_heads, self.num_kv_heads, self.head_dim,
                                   bias=self.attention_bias != "none")
        # "qkv" (Qwen2): biases on q, k, v only, i.e. the "all" biases less o_proj's D
        return per - d if self.attention_bias == "qkv" else per

    def attention_params_total(self) -> int:
        """All layers' attention projections: L * (2*D*H*d_k + 2*D*H_kv*d_k) (+ biases)."""
        return self.num_layers * self.attention_params_per_layer()

    def total_params(self) -> float:
        """The count the planner uses: ``params`` if stated, else the architecture's total."""
        if self.params is not None:
            return float(self.params)
        counts = self.param_counts()
        if counts is None:
            missing = [n for n in ("intermediate_size", "vocab_size") if getattr(self, n) is None]
            raise ValueError(f"params: the total parameter count needs {' and '.join(missing)} "
                             f"or an explicit --params")
        return float(counts.total)

    def non_embedding_params(self) -> tuple[float, str]:
        """(N_non_embedding, how it was obtained) for the linear-layer FLOPs 2 * N * T."""
        counts = self.param_counts()
        if self.params is None and counts is not None:
            return float(counts.non_embedding), "from the architecture"
        if self.vocab_size is not None:
            emb = self.vocab_size * self.hidden_size * (1 if self.tie_word_embeddings else 2)
            return max(0.0, float(self.params) - emb), "stated params less the embedding and LM head"
        return float(self.params), "stated params (embedding size unknown: an upper bound)"

    def with_overrides(self, **kw) -> "ModelSpec":
        """A copy with the given non-None fields replaced (derived fields are re-derived)."""
        values = {k: v for k, v in self.__dict__.items()}
        changed = {k: v for k, v in kw.items() if v is not None}
        if "num_heads" in changed or "hidden_size" in changed:
            # head_dim given by the config stays; one that was derived from D/H is derived again
            if self._head_dim_was_derived() and "head_dim" not in changed:
                values["head_dim"] = None
        if "num_heads" in changed and "num_kv_heads" not in changed and self.num_kv_heads == self.num_heads:
            values["num_kv_heads"] = None
        values.update(changed)
        values["notes"] = list(self.notes)
        return ModelSpec(**values)

    def _head_dim_was_derived(self) -> bool:
        return self.hidden_size % self.num_heads == 0 and self.head_dim == self.hidden_size // self.num_heads

    def weights_dtype_default(self) -> str:
        """The engines' --dtype auto (multihead.cost.precision): float32 checkpoints served in bf16."""
        from multihead.cost.precision import serving_dtype
        from multihead.cost.units import canonical_dtype
        return serving_dtype(canonical_dtype(self.torch_dtype) if self.torch_dtype else None)[0]


def _check_positive(name: str, value) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{name}: expected a positive integer, got {value!r}")


# -- reading configs ---------------------------------------------------------------------------------
REQUIRED_FIELDS = ("hidden_size", "num_hidden_layers", "num_attention_heads")


def spec_from_hf_config(config: dict, name: str = "config.json", *, params: float | None = None,
                        params_published: int | None = None, source: str = "") -> ModelSpec:
    """A ModelSpec from a HuggingFace config.json dict (GPT-2 field names accepted)."""
    if not isinstance(config, dict):
        raise ValueError(f"{name}: expected a JSON object with HF config fields, got {type(config).__name__}")
    cfg = dict(config)
    for alias, hf in _ALIASES.items():
        if alias in cfg and hf not in cfg:
            cfg[hf] = cfg[alias]
    missing = [f for f in REQUIRED_FIELDS if cfg.get(f) is None]
    if missing:
        raise ValueError(f"{name}: missing required field {missing[0]!r}"
                         + (f" (also {', '.join(map(repr, missing[1:]))})" if missing[1:] else ""))
    model_type = str(cfg.get("model_type", "")).lower()
    notes = []
    plain = model_type in _PLAIN_MLP_TYPES
    if "n_embd" in config:
        plain = True
    positions = ("learned" if model_type in _LEARNED_POSITION_TYPES or "n_positions" in config
                 else "rope" if ("rope_theta" in cfg or "rope_scaling" in cfg or model_type) else "unknown")
    intermediate = cfg.get("intermediate_size")
    if intermediate is None and plain and "n_inner" in config:
        intermediate = 4 * cfg["hidden_size"]     # GPT-2: n_inner null means 4 * n_embd
        notes.append("intermediate_size: n_inner is null, so 4 * n_embd (GPT-2 convention)")
    window = cfg.get("sliding_window")
    if cfg.get("use_sliding_window") is False:
        window = None                               # Qwen2 states a window but does not use it
    layer_types = cfg.get("layer_types")
    if window is not None and layer_types is None and model_type in {"gemma2", "gemma3", "gemma3_text"}:
        # Gemma2Config's default: layer i slides when (i + 1) is odd, i.e. even-indexed layers
        layer_types = ["sliding_attention" if (i + 1) % 2 else "full_attention"
                       for i in range(cfg["num_hidden_layers"])]
        notes.append("layer_types: not in the file; Gemma-2's default alternation (even layers slide)")
    if layer_types is not None and window is None:
        layer_types = None
    kv_heads = cfg.get("num_key_value_heads")
    if kv_heads is None:
        notes.append("num_key_value_heads: absent, so H_kv = H (MHA), as transformers assumes")
    try:
        return ModelSpec(
            name=name, hidden_size=cfg["hidden_size"], num_layers=cfg["num_hidden_layers"],
            num_heads=cfg["num_attention_heads"], num_kv_heads=kv_heads, head_dim=cfg.get("head_dim"),
            intermediate_size=intermediate, vocab_size=cfg.get("vocab_size"),
            max_position_embeddings=cfg.get("max_position_embeddings"), rope_scaling=cfg.get("rope_scaling"),
            sliding_window=window, layer_types=layer_types,
            tie_word_embeddings=bool(cfg.get("tie_word_embeddings", plain or model_type.startswith("gemma"))),
            torch_dtype=cfg.get("torch_dtype") or cfg.get("dtype"),
            mlp="plain" if plain else "gated", positions=positions,
            attention_bias="all" if plain else ("qkv" if model_type == "qwen2" else
                                                ("all" if cfg.get("attention_bias") else "none")),
            mlp_bias=plain or bool(cfg.get("mlp_bias", False)), norm="layer" if plain else "rms",
            norms_per_layer=4 if model_type == "gemma2" else 2,
            params=params, params_published=params_published, source=source or name, notes=notes)
    except ValueError as err:
        raise ValueError(f"{name}: {err}") from None


def load_config_file(path: str | Path) -> ModelSpec:
    """A ModelSpec from a config.json path (or a model folder holding one); unreadable, malformed or
    incomplete files say why."""
    path = Path(path)
    if path.is_dir():
        path = path / "config.json"
    if not path.is_file():
        raise ValueError(f"model: config file {str(path)!r} does not exist")
    try:
        config = json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise ValueError(f"model: {path} is not valid JSON ({err})") from None
    return spec_from_hf_config(config, name=path.name if path.name != "config.json" else f"{path.parent.name}/config.json",
                               source=str(path))


def model_catalog() -> dict[str, dict]:
    text = resources.files("multihead.catalog").joinpath("models.json").read_text()
    return {k: v for k, v in json.loads(text).items() if not k.startswith("_")}


def catalog_model(name: str) -> ModelSpec:
    """A catalog model by name (case-insensitive); an unknown name lists the closest ones."""
    catalog = model_catalog()
    key = {k.lower(): k for k in catalog}.get(name.lower())
    if key is None:
        close = difflib.get_close_matches(name, list(catalog), n=3, cutoff=0.3)
        close = close or difflib.get_close_matches(name.lower(), [k.lower() for k in catalog], n=3, cutoff=0.3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ValueError(f"model: unknown model {name!r}{hint} (known: {', '.join(catalog)}; "
                         f"or give a config.json path)")
    entry = catalog[key]
    return spec_from_hf_config(entry["config"], name=key, params=entry.get("params"),
                               params_published=entry.get("params_published"), source=entry["source"])


def resolve_model(model: str | Path | ModelSpec | None) -> ModelSpec | None:
    """A ModelSpec from a catalog name, a config.json path or a ModelSpec (None stays None)."""
    if model is None or isinstance(model, ModelSpec):
        return model
    text = str(model)
    if text.endswith(".json") or Path(text).exists() or "/" in text:
        return load_config_file(text)
    return catalog_model(text)
