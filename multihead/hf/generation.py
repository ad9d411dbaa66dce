"""Greedy generation for a Hugging Face Llama-family model on multihead's KVCache and decode path.

The prompt (prefill) runs ``multihead.attention(..., is_causal=True)`` with backend "auto"; every
new token (decode step, Tq = 1) runs backend "fast_decode" (K/V streamed once: split-K over the
cached keys, merged by log-sum-exp, flash-decoding). The cache and the step-by-step forward pass
are ``multihead.hf.cache.CachedLM``; this module is the loop around it.

    ids = greedy_generate(model, prompt_ids, max_new_tokens=64)     # LongTensor [B, T + n]
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch

from multihead.hf.cache import CachedLM, max_positions


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


def check_new_tokens(config, prompt_tokens: int, max_new_tokens) -> None:
    """The prompt and every new token must fit the model's positions (max_position_embeddings):
    the cache is preallocated for all of them, and RoPE past them was never trained."""
    if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) or max_new_tokens < 1:
        raise ValueError(f"--max-new-tokens: expected an integer >= 1, got {max_new_tokens!r}")
    limit = max_positions(config)
    if prompt_tokens >= limit:               # no --max-new-tokens could help: the prompt is what is too long
        raise ValueError(f"--prompt: {prompt_tokens} tokens (the longest prompt, chat template included) leave no room "
                         f"for a new token in the model's {limit} positions (max_position_embeddings); "
                         f"shorten it to at most {limit - 1} tokens")
    if prompt_tokens + max_new_tokens > limit:
        raise ValueError(f"--max-new-tokens: the prompt's {prompt_tokens} tokens + {max_new_tokens} new ones exceed "
                         f"the model's {limit} positions (max_position_embeddings); at most "
                         f"{limit - prompt_tokens} new tokens fit (or shorten --prompt)")


def greedy_generate(model, input_ids: torch.Tensor, max_new_tokens: int, eos_token_id: int | list[int] | None = None,
                    decode_backend: str = "fast_decode", stats: GenerationStats | None = None, *,
                    attention_mask: torch.Tensor | None = None, page_size: int | None = None) -> torch.Tensor:
    """Greedy decoding: input_ids [B, T] -> [B, T + n], n <= max_new_tokens.

    Stops early when every row has produced an ``eos_token_id`` (after it, a finished row is
    padded with its EOS, as transformers does with pad = eos). ``stats`` (optional) is filled
    with token counts, prefill/decode seconds and the cache size.
    The model's attention implementation is switched to "multihead" for the call and restored.
    attention_mask [B, T] (HF's, 1 = token, 0 = padding) may mark a LEFT-padded batch: each row's
    keys start at its first real token. page_size: store K/V in a paged KVCache (read in place).
    """
    from multihead.hf.attention import NAME, register

    if input_ids.dim() != 2 or input_ids.shape[1] < 1:
        raise ValueError(f"input_ids: expected a LongTensor [B, T] with T >= 1, got shape {tuple(input_ids.shape)}")
    check_new_tokens(model.config, input_ids.shape[1], max_new_tokens)
    cfg = model.config
    eos = set([eos_token_id] if isinstance(eos_token_id, int) else (eos_token_id or []))
    B, T = input_ids.shape
    leftpad = None
    if attention_mask is not None:
        if attention_mask.shape != input_ids.shape or not bool((attention_mask.diff(dim=1) >= 0).all()) \
                or not bool(attention_mask[:, -1].all()):
            raise ValueError("attention_mask: expected [B, T] with 0s only at the start of a row (left padding)")
        leftpad = (attention_mask == 0).sum(dim=1)
    lm = CachedLM(model, batch=B, max_tokens=T + max_new_tokens, device=input_ids.device,
                  page_size=page_size, leftpad=leftpad)
    stats = stats if stats is not None else GenerationStats()
    stats.prompt_tokens, stats.kv_cache_bytes = T, lm.kv.nbytes
    stats.step_backends = {"prefill": "auto", "decode": decode_backend}

    register()
    previous = cfg._attn_implementation
    model.set_attn_implementation(NAME)
    try:
        t0 = time.perf_counter()
        logits = lm.forward(input_ids, backend="auto")          # prefill, (B, V)
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
            logits = lm.forward(nxt[:, None], backend=decode_backend)   # decode, (B, V)
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


def smollm2_generate(prompt: str | list[str], max_new_tokens: int = 64, attention: str = "multihead", chat: bool = True,
                     page_size: int | None = None) -> dict:
    """Greedy continuation of ``prompt`` by SmolLM2-135M-Instruct.

    attention "multihead": ``greedy_generate`` (multihead.KVCache + decode backend);
    "sdpa"/"eager": transformers' own ``model.generate(do_sample=False)``.
    Returns text, token_ids (new tokens only), prompt_tokens, chat_template, attention, seconds,
    tokens_per_second. Several prompts run as one left-padded batch (pad = EOS, HF's
    attention_mask); the keys above are then the first prompt's and ``batch`` lists every
    prompt's {prompt, prompt_tokens, text, token_ids, new_tokens}. page_size: a paged KVCache.
    """
    from multihead.hf.loading import load_smollm2
    prompts = [prompt] if isinstance(prompt, str) else list(prompt)
    if not prompts or not all(isinstance(p, str) and p for p in prompts):
        raise ValueError("--prompt: expected a non-empty string")
    if page_size is not None and (isinstance(page_size, bool) or not isinstance(page_size, int) or page_size < 1):
        raise ValueError(f"--page-size: expected an integer >= 1, got {page_size!r}")
    if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) or max_new_tokens < 1:
        raise ValueError(f"--max-new-tokens: expected an integer >= 1, got {max_new_tokens!r}")
    if attention not in ("multihead", "sdpa", "eager"):
        raise ValueError(f"attention: expected multihead, sdpa or eager, got {attention!r}")
    model, tok = load_smollm2(attn_implementation="sdpa" if attention == "multihead" else attention)
    rows = [prompt_ids(tok, p, chat)[0] for p in prompts]                     # each (T_i,)
    T = max(len(r) for r in rows)
    ids = torch.full((len(rows), T), tok.eos_token_id, dtype=torch.long)       # (B, T), left-padded
    mask = torch.zeros(len(rows), T, dtype=torch.long)
    for b, r in enumerate(rows):
        ids[b, T - len(r):], mask[b, T - len(r):] = r, 1
    check_new_tokens(model.config, T, max_new_tokens)                         # before any cache is allocated
    t0 = time.perf_counter()
    if attention == "multihead":
        out = greedy_generate(model, ids, max_new_tokens, eos_token_id=tok.eos_token_id, page_size=page_size,
                              attention_mask=None if bool(mask.all()) else mask)
    else:
        with torch.no_grad():
            out = model.generate(ids, attention_mask=mask, max_new_tokens=max_new_tokens,
                                 do_sample=False, eos_token_id=tok.eos_token_id, pad_token_id=tok.eos_token_id)
    seconds = time.perf_counter() - t0
    batch = []
    for b, p in enumerate(prompts):
        new = out[b, T:].tolist()
        if tok.eos_token_id in new:                                           # a finished row's EOS padding
            new = new[:new.index(tok.eos_token_id) + 1]
        batch.append({"prompt": p, "prompt_tokens": len(rows[b]), "text": tok.decode(new, skip_special_tokens=True),
                      "token_ids": new, "new_tokens": len(new)})
    n_new = sum(r["new_tokens"] for r in batch)
    return {"model": "SmolLM2-135M-Instruct", "attention": attention, "prompt": prompts[0],
            "chat_template": bool(chat and getattr(tok, "chat_template", None)),
            "prompt_tokens": batch[0]["prompt_tokens"], "text": batch[0]["text"], "token_ids": batch[0]["token_ids"],
            "new_tokens": batch[0]["new_tokens"], "seconds": seconds,
            "tokens_per_second": n_new / seconds if seconds > 0 else None, "page_size": page_size,
            **({"batch": batch} if len(prompts) > 1 else {})}
