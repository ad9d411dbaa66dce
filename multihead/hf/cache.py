"""A ``multihead.KVCache`` for a Hugging Face model, and the forward pass that fills and reads it.

The model's own modules do the arithmetic that is not attention (embeddings, RMSNorm, RoPE, the
q/k/v/o projections, MLPs, lm_head), so the weights are used exactly as transformers uses them.
What changes is everything attention touches:

* K/V live in one preallocated ``multihead.KVCache`` [L, B, H_kv, T_max, d] instead of
  transformers' growing DynamicCache. Each attention layer hands its new K/V (after RoPE) to
  ``cache.update(layer, k, v)`` through ``CacheAdapter``, which looks like a transformers Cache
  to the layer, and gets back views of every cached token (no copies, K/V never repeated for GQA).
* No attention mask is built: one sequence per row, no padding, so causality is the only
  constraint and the kernel applies it (bottom-right aligned, which a step over a cache needs).

Works for models whose decoder layers take ``(hidden, attention_mask, position_ids, cache,
position_embeddings)`` and whose base model has ``embed_tokens``, ``rotary_emb``, ``layers``,
``norm`` (Llama, SmolLM2, Mistral without sliding windows, Qwen2/3).

    lm = CachedLM(model, batch=1, max_tokens=T + 64)      # the cache is sized from model.config
    logits = lm.forward(prompt_ids, backend="auto")       # prefill: [B, V] at the last position
    logits = lm.forward(next_ids, backend="fast_decode")  # one decode step
"""
from __future__ import annotations

import torch

from multihead.layers import KVCache


def max_positions(config) -> int:
    """Positions the model was built for (``max_position_embeddings`` in its config.json)."""
    n = getattr(config, "max_position_embeddings", None)
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"config: expected a positive max_position_embeddings, got {n!r}")
    return n


def head_dim(config) -> int:
    """Per-head width: the config's ``head_dim`` when given, else hidden_size / num_attention_heads."""
    return getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads


def kv_cache_for(config, batch: int, max_tokens: int, dtype: torch.dtype = torch.float32,
                 device: torch.device | str | None = None, page_size: int | None = None) -> KVCache:
    """A KVCache holding ``max_tokens`` positions of every layer of the model ``config`` describes
    (HF field names: num_hidden_layers, num_key_value_heads, head_dim). ``max_tokens`` may not
    exceed the model's positions: past them RoPE was never trained and the cache only wastes memory."""
    limit = max_positions(config)
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or not 1 <= max_tokens <= limit:
        raise ValueError(f"max_tokens: expected 1..{limit} (the model's max_position_embeddings), got {max_tokens!r}")
    return KVCache(batch=batch, n_kv_heads=config.num_key_value_heads, max_tokens=max_tokens,
                   head_dim=head_dim(config), n_layers=config.num_hidden_layers, dtype=dtype, device=device,
                   page_size=page_size)


class CacheAdapter:
    """What a transformers attention layer sees as its ``cache``: ``update(k, v, layer_idx)``.

    transformers calls ``cache.update(key [B, H_kv, T, d], value, layer_idx, ...)`` after RoPE
    and attends to what it returns; we store into the multihead.KVCache and return its views.
    """

    def __init__(self, cache: KVCache, through_attend: bool = False):
        self.cache, self.through_attend = cache, through_attend

    def update(self, key_states, value_states, layer_idx, *args, **kwargs):
        if self.through_attend:      # the attention function appends them itself (KVCache.attend)
            return key_states, value_states
        return self.cache.update(layer_idx, key_states, value_states)   # (B, H_kv, t, d) views

    def get_seq_length(self, layer_idx: int = 0) -> int:
        return self.cache.length(layer_idx)


def base_model(model):
    """The decoder stack of a Llama-family *ForCausalLM, or a ValueError saying what is missing."""
    base = getattr(model, "model", None)
    need = ("embed_tokens", "rotary_emb", "layers", "norm")
    if base is None or not all(hasattr(base, n) for n in need) or not hasattr(model, "lm_head"):
        raise ValueError(f"model: expected a Llama-family *ForCausalLM (model.model.{{{', '.join(need)}}} and "
                         f"lm_head), got {type(model).__name__}")
    if getattr(model.config, "sliding_window", None) and model.config.model_type != "llama":
        raise ValueError("model: sliding-window attention needs a mask; CachedLM runs full causal attention")
    return base


class CachedLM:
    """A causal LM run step by step on a preallocated multihead.KVCache (see the module docstring).

    ``forward`` needs the model's attention implementation to be ``multihead.hf.NAME`` (the
    caller owns that switch: ``greedy_generate`` sets and restores it around its loop)."""

    def __init__(self, model, batch: int, max_tokens: int, device: torch.device | str | None = None,
                 page_size: int | None = None, leftpad: torch.Tensor | None = None):
        """page_size: a paged KVCache; leftpad [B]: left padding of each row of a padded batch.
        With either, every layer appends and attends through KVCache.attend (in place, from each
        row's first real token; paged caches read in place) instead of update() views."""
        self.model, self.base = model, base_model(model)
        self.kv = kv_cache_for(model.config, batch, max_tokens, next(model.parameters()).dtype, device, page_size)
        if leftpad is not None:
            self.kv.set_leftpad(leftpad)
        self.leftpad = leftpad
        self.cache = CacheAdapter(self.kv, through_attend=page_size is not None or leftpad is not None)

    @torch.no_grad()
    def forward(self, ids: torch.Tensor, backend: str) -> torch.Tensor:
        """Run ``ids`` [B, T] on top of the cache; return the last position's logits [B, V] (fp32)."""
        B, T = ids.shape
        pos0 = self.cache.get_seq_length(0)
        position_ids = torch.arange(pos0, pos0 + T, device=ids.device).unsqueeze(0).expand(B, T)   # (B, T)
        if self.leftpad is not None:          # positions count from each row's first real token (as HF)
            position_ids = (position_ids - self.leftpad.view(B, 1)).clamp(min=0)
        extra = {"multihead_kv": self.kv} if self.cache.through_attend else {}
        h = self.base.embed_tokens(ids)                                   # (B, T, D)
        rope = self.base.rotary_emb(h, position_ids=position_ids)         # (cos, sin), each (B, T, d)
        for layer in self.base.layers[: self.model.config.num_hidden_layers]:
            # multihead_backend travels through the layer's **kwargs into multihead.hf's attention function
            h = layer(h, attention_mask=None, position_ids=position_ids, cache=self.cache, use_cache=True,
                      position_embeddings=rope, multihead_backend=backend, **extra)
        h = self.base.norm(h[:, -1:])                                     # (B, 1, D): only the last position
        return self.model.lm_head(h)[:, -1].float()                       # (B, V)
