"""Greedy generation for a Hugging Face Llama-family model on multihead's KVCache and decode path.

The model's own modules do the arithmetic that is not attention (embeddings, RMSNorm, RoPE,
the q/k/v/o projections, MLPs, lm_head), so the weights are used exactly as transformers uses
them. What changes is everything attention touches:

* K/V live in one preallocated ``multihead.KVCache`` [L, B, H_kv, T_max, d] instead of
  transformers' growing DynamicCache. Each attention layer hands its new K/V (after RoPE) to
  ``cache.update(layer, k, v)`` through a small adapter that looks like a transformers Cache to
  the layer, and gets back views of every cached token (no copies, K/V never repeated for GQA).
* The prompt (prefill) runs ``multihead.attention(..., is_causal=True)`` with backend "auto".
* Every new token (decode step, Tq = 1) runs ``multihead.attention`` with backend "fast_decode" (K/V streamed once):
  split-K over the cached keys, merged by log-sum-exp (flash-decoding).

No attention mask is built: one sequence per row, no padding, so causality is the only
constraint and the kernel applies it (bottom-right aligned, which is what a step over a cache
needs). Works for models whose decoder layers take ``(hidden, attention_mask, position_ids,
cache, position_embeddings)`` and whose base model has ``embed_tokens``, ``rotary_emb``,
``layers``, ``norm`` (Llama, SmolLM2, Mistral without sliding windows, Qwen2/3).

    ids = greedy_generate(model, prompt_ids, max_new_tokens=64)     # LongTensor [B, T + n]
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch

from multihead.layers import KVCache


class _CacheAdapter:
    """What a transformers attention layer sees as its ``cache``: ``update(k, v, layer_idx)``.

    transformers calls ``cache.update(key [B, H_kv, T, d], value, layer_idx, ...)`` after RoPE
    and attends to what it returns; we store into the multihead.KVCache and return its views.
    """

    def __init__(self, cache: KVCache):
        self.cache = cache

    def update(self, key_states, value_states, layer_idx, *args, **kwargs):
        return self.cache.update(layer_idx, key_states, value_states)   # (B, H_kv, t, d) views

    def get_seq_length(self, layer_idx: int = 0) -> int:
        return self.cache.length(layer_idx)


@dataclass
class GenerationStats:
    prompt_tokens: int = 0
    new_tokens: int = 0
    prefill_seconds: float = 0.0
    decode_seconds: float = 0.0
    kv_cache_bytes: int = 0
    step_backends: dict = field(default_factory=dict)

    @property
    def decode_tokens_per_second(self) -> float:
        steps = max(self.new_tokens - 1, 0)       # the first new token comes from the prefill
        return steps / self.decode_seconds if self.decode_seconds > 0 else float("nan")


def _base_model(model):
    base = getattr(model, "model", None)
    need = ("embed_tokens", "rotary_emb", "layers", "norm")
    if base is None or not all(hasattr(base, n) for n in need) or not hasattr(model, "lm_head"):
        raise ValueError(f"model: expected a Llama-family *ForCausalLM (model.model.{{{', '.join(need)}}} and "
                         f"lm_head), got {type(model).__name__}")
    if getattr(model.config, "sliding_window", None) and model.config.model_type != "llama":
        raise ValueError("model: sliding-window attention needs a mask; greedy_generate runs full causal attention")
    return base


@torch.no_grad()
def _forward(model, base, cache: _CacheAdapter, ids: torch.Tensor, backend: str) -> torch.Tensor:
    """Run ``ids`` [B, T] through the model on top of the cache; return last-position logits [B, V]."""
    B, T = ids.shape
    pos0 = cache.get_seq_length(0)
    position_ids = torch.arange(pos0, pos0 + T, device=ids.device).unsqueeze(0).expand(B, T)   # (B, T)
    h = base.embed_tokens(ids)                                        # (B, T, D)
    rope = base.rotary_emb(h, position_ids=position_ids)              # (cos, sin), each (B, T, d)
    for layer in base.layers[: model.config.num_hidden_layers]:
        # multihead_backend travels through the layer's **kwargs into multihead.hf's attention function
        h = layer(h, attention_mask=None, position_ids=position_ids, cache=cache, use_cache=True,
                  position_embeddings=rope, multihead_backend=backend)
    h = base.norm(h[:, -1:])                                          # (B, 1, D): only the last position is needed
    return model.lm_head(h)[:, -1].float()                            # (B, V)


def greedy_generate(model, input_ids: torch.Tensor, max_new_tokens: int, eos_token_id: int | list[int] | None = None,
                    decode_backend: str = "fast_decode", stats: GenerationStats | None = None) -> torch.Tensor:
    """Greedy decoding: input_ids [B, T] -> [B, T + n], n <= max_new_tokens.

    Stops early when every row has produced an ``eos_token_id`` (after it, a finished row is
    padded with its EOS, as transformers does with pad = eos). ``stats`` (optional) is filled
    with token counts, prefill/decode seconds and the cache size.
    The model's attention implementation is switched to "multihead" for the call and restored.
    """
    from multihead import hf

    if input_ids.dim() != 2 or input_ids.shape[1] < 1:
        raise ValueError(f"input_ids: expected a LongTensor [B, T] with T >= 1, got shape {tuple(input_ids.shape)}")
    if max_new_tokens < 1:
        raise ValueError(f"max-new-tokens: expected >= 1, got {max_new_tokens}")
    base = _base_model(model)
    cfg = model.config
    eos = set([eos_token_id] if isinstance(eos_token_id, int) else (eos_token_id or []))
    B, T = input_ids.shape
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    kv = KVCache(batch=B, n_kv_heads=cfg.num_key_value_heads, max_tokens=T + max_new_tokens, head_dim=head_dim,
                 n_layers=cfg.num_hidden_layers, dtype=next(model.parameters()).dtype, device=input_ids.device)
    cache = _CacheAdapter(kv)
    stats = stats if stats is not None else GenerationStats()
    stats.prompt_tokens, stats.kv_cache_bytes = T, kv.nbytes
    stats.step_backends = {"prefill": "auto", "decode": decode_backend}

    hf.register()
    previous = cfg._attn_implementation
    model.set_attn_implementation(hf.NAME)
    try:
        t0 = time.perf_counter()
        logits = _forward(model, base, cache, input_ids, backend="auto")          # prefill, (B, V)
        stats.prefill_seconds = time.perf_counter() - t0
        out = [input_ids]
        done = torch.zeros(B, dtype=torch.bool, device=input_ids.device)
        t0 = time.perf_counter()
        for step in range(max_new_tokens):
            nxt = logits.argmax(dim=-1)                                            # (B,)
            if eos:
                fill = next(iter(eos))
                nxt = torch.where(done, torch.full_like(nxt, fill), nxt)
                done |= torch.isin(nxt, torch.tensor(sorted(eos), device=nxt.device))
            out.append(nxt[:, None])
            stats.new_tokens = step + 1
            if (eos and bool(done.all())) or step == max_new_tokens - 1:
                break
            logits = _forward(model, base, cache, nxt[:, None], backend=decode_backend)   # decode, (B, V)
        stats.decode_seconds = time.perf_counter() - t0
    finally:
        model.set_attn_implementation(previous)
    return torch.cat(out, dim=1)


def prompt_ids(tokenizer, prompt: str, chat: bool = True) -> torch.Tensor:
    """Prompt text -> LongTensor [1, T]: wrapped in the tokenizer's chat template (with the
    assistant turn opened) when it has one and ``chat`` is true, else the raw text."""
    if chat and getattr(tokenizer, "chat_template", None):
        enc = tokenizer.apply_chat_template([{"role": "user", "content": prompt}], add_generation_prompt=True,
                                            return_tensors="pt", return_dict=True)
        return enc["input_ids"]
    return tokenizer(prompt, return_tensors="pt")["input_ids"]


def smollm2_generate(prompt: str, max_new_tokens: int = 64, attention: str = "multihead", chat: bool = True) -> dict:
    """Greedy continuation of ``prompt`` by SmolLM2-135M-Instruct.

    attention "multihead": ``greedy_generate`` (multihead.KVCache + decode backend);
    "sdpa"/"eager": transformers' own ``model.generate(do_sample=False)``.
    Returns text, token_ids (new tokens only), prompt_tokens, chat_template, attention, seconds,
    tokens_per_second.
    """
    from multihead.models.loading import load_smollm2
    if not prompt:
        raise ValueError("prompt: expected a non-empty string")
    if max_new_tokens < 1:
        raise ValueError(f"max-new-tokens: expected >= 1, got {max_new_tokens}")
    if attention not in ("multihead", "sdpa", "eager"):
        raise ValueError(f"attention: expected multihead, sdpa or eager, got {attention!r}")
    model, tok = load_smollm2(attn_implementation="sdpa" if attention == "multihead" else attention)
    ids = prompt_ids(tok, prompt, chat)                                        # (1, T)
    t0 = time.perf_counter()
    if attention == "multihead":
        out = greedy_generate(model, ids, max_new_tokens, eos_token_id=tok.eos_token_id)
    else:
        with torch.no_grad():
            out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=max_new_tokens,
                                 do_sample=False, eos_token_id=tok.eos_token_id, pad_token_id=tok.eos_token_id)
    seconds = time.perf_counter() - t0
    new = out[0, ids.shape[1]:].tolist()
    return {"model": "SmolLM2-135M-Instruct", "attention": attention, "prompt": prompt,
            "chat_template": bool(chat and getattr(tok, "chat_template", None)), "prompt_tokens": int(ids.shape[1]),
            "text": tok.decode(new, skip_special_tokens=True), "token_ids": new, "new_tokens": len(new),
            "seconds": seconds, "tokens_per_second": len(new) / seconds if seconds > 0 else None}
