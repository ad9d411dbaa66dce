"""MultiHeadAttention (an nn.Module over multihead.attention) and a preallocated KVCache.

Symbols: B batch, T tokens in this call, D = d_model, H query heads, H_kv key/value heads,
d = head_dim (d_k). Parameter counts and cache bytes come from multihead.cost.counts.formulas, the same
functions the planner uses.
"""
from __future__ import annotations

import math
import os
from typing import Callable

import torch
from torch import Tensor, nn

from multihead.cost.counts.formulas import attention_params, kv_cache_bytes
from multihead.functional import attention, normalize_mask, score_mods
from multihead.functional_kv import attention_with_kvcache
from multihead.kernels import paged

__all__ = ["MultiHeadAttention", "KVCache", "KVCacheFullError"]


class KVCacheFullError(ValueError):
    """Appending to a KVCache layer would go past its max_tokens."""


def _gib(nbytes: int) -> str:
    return f"{nbytes / 2**30:,.1f} GiB"


def _device_memory(device) -> int | None:
    """Bytes of memory on ``device`` (physical RAM for the CPU), or None where unknown."""
    dev = torch.device(device) if device is not None else torch.empty(0).device
    if dev.type == "cpu":
        try:
            return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            return None
    if dev.type == "cuda" and torch.cuda.is_available():
        return torch.cuda.get_device_properties(dev).total_memory
    return None


def _check_fits(shape: tuple[int, ...], dtype: torch.dtype, device) -> None:
    """Refuse, by name and before allocating, a cache larger than the device's memory."""
    need = 2 * math.prod(shape) * dtype.itemsize               # K and V
    have = _device_memory(device)
    if have is not None and need > have:
        raise ValueError(f"max_tokens: K and V need {_gib(need)} ({shape} x 2 in {dtype}), more than the "
                         f"{_gib(have)} of memory on {torch.device(device) if device is not None else 'this machine'}")


class KVCache:
    """A static KV cache: K and V for every layer, allocated once, filled token by token.

    Storage: ``k`` and ``v``, each [n_layers, batch, n_kv_heads, max_tokens, head_dim] in ``dtype``,
    so ``nbytes`` = 2 * L * H_kv * d * max_tokens * B * bytes (multihead.cost.counts.formulas.kv_cache_bytes),
    allocated up front: nothing grows during generation.

    A generation loop over an L-layer model::

        cache = KVCache(batch=B, n_kv_heads=H_kv, max_tokens=T_max, head_dim=d, n_layers=L)
        # every forward step (prefill with T tokens, then decode steps with T = 1), in each layer:
        pos0 = cache.length(layer)                           # tokens cached before this step
        k, v = rope(k_new, pos0), v_new                      # [B, H_kv, T, d] for the new tokens
        k_all, v_all = cache.update(layer, k, v)             # [B, H_kv, pos0 + T, d] views
        out = attention(q, k_all, v_all, is_causal=True)     # bottom-right causal: exact
        ...
        cache.reset()                                        # start a new sequence (no realloc)

    ``update(layer, k_new, v_new)`` copies the new tokens (cast to the cache dtype) into positions
    length(layer) .. length(layer) + T - 1 of that layer and returns views (no copy) of every
    token cached so far for it. Each layer keeps its own length: within one step layer 0 has
    already grown while layer L-1 has not. ``seq_len`` is the length of the last layer, i.e. the
    number of tokens the whole model has processed once a step is complete. Appending past
    ``max_tokens`` raises KVCacheFullError (a ValueError) and leaves the cache unchanged.

    Left padding: ``leftpad`` [B] (``set_leftpad``) says where each sequence's real tokens start
    in a left-padded batch; ``attend`` ignores the keys before it. Paged layout (``page_size``):
    ``k`` and ``v`` are page pools [L, num_pages, H_kv, page_size, d] (kernels/paged.py) with one
    ``block_table`` [B, max_pages] for all layers; pages are taken from a free list as sequences
    grow, so a sequence's pages interleave with the others' in the pool, and decode reads them in
    place (multihead.kernels.paged). A paged cache is used through ``attend`` (not ``update``;
    MultiHeadAttention with an attn_mask or another dtype appends and reads it back gathered).
    ``attend`` checks k/v before casting them, and a refused call leaves the cache as it was.
    """

    def __init__(self, batch: int, n_kv_heads: int, max_tokens: int, head_dim: int, n_layers: int = 1,
                 dtype: torch.dtype = torch.float32, device: torch.device | str | None = None,
                 *, page_size: int | None = None):
        for name, value in (("batch", batch), ("n_kv_heads", n_kv_heads), ("max_tokens", max_tokens),
                            ("head_dim", head_dim), ("n_layers", n_layers)) + (
                (("page_size", page_size),) if page_size is not None else ()):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name}: expected an integer >= 1, got {value!r}")
        if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
            raise ValueError(f"dtype: expected a floating torch dtype, got {dtype!r}")
        self.batch, self.n_kv_heads, self.max_tokens = batch, n_kv_heads, max_tokens
        self.head_dim, self.n_layers, self.dtype, self.page_size = head_dim, n_layers, dtype, page_size
        per_seq = -(-max_tokens // (page_size or 1))
        shape = ((n_layers, batch, n_kv_heads, max_tokens, head_dim) if page_size is None else
                 (n_layers, batch * per_seq, n_kv_heads, page_size, head_dim))
        _check_fits(shape, dtype, device)               # before the block table and free list too
        if page_size is None:
            self.block_table = None
        else:
            self.block_table = torch.zeros(batch, per_seq, dtype=torch.int32, device=device)
            self._free = list(range(batch * per_seq))
            self._pages = 0                                       # pages per sequence taken so far
        try:
            self.k = torch.zeros(shape, dtype=dtype, device=device)   # (L, B, H_kv, T_max, d) or pages
            self.v = torch.zeros(shape, dtype=dtype, device=device)
        except (RuntimeError, MemoryError) as err:           # the allocator's own refusal, named
            if isinstance(err, RuntimeError) and "alloc" not in str(err) and "out of memory" not in str(err):
                raise
            raise ValueError(f"max_tokens: K and V of {_gib(2 * math.prod(shape) * dtype.itemsize)} cannot be "
                             f"allocated on {device or 'the default device'} ({str(err).splitlines()[0][:120]})") from None
        self.leftpad = torch.zeros(batch, dtype=torch.int64, device=device)
        self._lengths = [0] * n_layers

    @property
    def device(self) -> torch.device:
        return self.k.device

    @property
    def nbytes(self) -> int:
        """Bytes of K and V storage, from the shared formula (equals the allocated bytes)."""
        tokens = self.k.shape[3] if self.page_size is None else self.block_table.shape[1] * self.page_size
        return int(kv_cache_bytes(self.n_layers, self.n_kv_heads, self.head_dim, tokens,
                                  self.dtype.itemsize, self.batch))

    def length(self, layer: int = 0) -> int:
        """Tokens cached so far in ``layer`` (the position of its next token)."""
        self._check_layer(layer)
        return self._lengths[layer]

    @property
    def seq_len(self) -> int:
        """Tokens cached in the last layer: the sequence length once a model step completes."""
        return self._lengths[-1]

    def _check_layer(self, layer: int) -> None:
        if isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer < self.n_layers:
            raise ValueError(f"layer: expected an integer in [0, {self.n_layers}), got {layer!r}")

    def set_leftpad(self, leftpad: Tensor) -> None:
        """Sequence b's real tokens start at position leftpad[b] (int [B]); earlier keys are ignored."""
        if not isinstance(leftpad, Tensor) or tuple(leftpad.shape) != (self.batch,) or leftpad.is_floating_point():
            raise ValueError(f"leftpad: expected an int tensor [B] = [{self.batch}], got {leftpad!r}")
        if int(leftpad.min()) < 0 or int(leftpad.max()) >= self.max_tokens:
            raise ValueError(f"leftpad: expected values in [0, {self.max_tokens}), got {leftpad.tolist()}")
        self.leftpad = leftpad.to(torch.int64, copy=True)

    def attend(self, layer: int, q: Tensor, k_new: Tensor, v_new: Tensor, **kwargs) -> Tensor:
        """Append k_new, v_new [B, H_kv, T, d] to ``layer`` in place and attend q [B, H, T, d] to
        every cached token from each sequence's ``leftpad`` on; ``kwargs`` are
        attention_with_kvcache's (is_causal, scale, window_size, softcap, alibi_slopes, backend)."""
        self._check_layer(layer)
        self._check_new(k_new, v_new)               # before any cast: int / complex / lists are refused
        t0, n = self._lengths[layer], k_new.shape[2]
        self._check_room(layer, t0, n)
        taken = self._take_pages(t0 + n) if self.page_size is not None else []
        try:
            out = attention_with_kvcache(q, self.k[layer], self.v[layer], k_new.to(self.dtype),
                                         v_new.to(self.dtype), cache_seqlens=t0, cache_leftpad=self.leftpad,
                                         block_table=self.block_table, **kwargs)
        except BaseException:
            self._give_back(taken)                  # a refused call leaves the cache as it was
            raise
        self._lengths[layer] = t0 + n
        return out

    def _check_new(self, k_new, v_new) -> None:
        """k_new, v_new: float tensors [B, H_kv, T, d] of the same shape (checked before any cast)."""
        want = (self.batch, self.n_kv_heads, None, self.head_dim)
        for name, t in (("k_new", k_new), ("v_new", v_new)):
            if not isinstance(t, Tensor) or t.dim() != 4 or any(
                    w is not None and s != w for s, w in zip(t.shape, want)):
                got = tuple(t.shape) if isinstance(t, Tensor) else type(t).__name__
                raise ValueError(f"{name}: expected shape [B, H_kv, T, d] = [{self.batch}, {self.n_kv_heads}, "
                                 f"T, {self.head_dim}], got {got}")
            if not t.is_floating_point():      # a cast would turn int/bool/complex into floats silently
                raise ValueError(f"{name}: expected a floating-point tensor, got dtype {t.dtype}")
        if k_new.shape != v_new.shape:
            raise ValueError(f"v_new: shape {tuple(v_new.shape)} does not match k_new's {tuple(k_new.shape)}")

    def _check_room(self, layer: int, t0: int, n: int) -> None:
        if t0 + n > self.max_tokens:
            raise KVCacheFullError(
                f"kv_cache: layer {layer} holds {t0} tokens; appending {n} would need {t0 + n} > "
                f"max_tokens={self.max_tokens}; allocate a larger KVCache or reset() it")

    def _take_pages(self, tokens: int) -> list[int]:
        """Give every sequence pages for ``tokens`` tokens, from the free list, sequence by sequence;
        return the pages taken, in order (for _give_back)."""
        need = -(-tokens // self.page_size)
        taken: list[int] = []
        while self._pages < need:
            for b in range(self.batch):
                taken.append(self._free.pop(0))
                self.block_table[b, self._pages] = taken[-1]
            self._pages += 1
        return taken

    def _give_back(self, taken: list[int]) -> None:
        """Undo _take_pages: the pages go back to the front of the free list, in their order."""
        if taken:
            self._free[:0] = taken
            self._pages -= len(taken) // self.batch

    def _append_and_read(self, layer: int, k_new: Tensor, v_new: Tensor) -> tuple[Tensor, Tensor]:
        """Append k_new, v_new to ``layer`` and return everything it holds [B, H_kv, length, d]:
        update()'s views for a contiguous cache, copies gathered from the pages for a paged one."""
        if self.page_size is None:
            return self.update(layer, k_new, v_new)
        self._check_layer(layer)
        self._check_new(k_new, v_new)
        t0, n = self._lengths[layer], k_new.shape[2]
        self._check_room(layer, t0, n)
        self._take_pages(t0 + n)
        starts = torch.full((self.batch,), t0, dtype=torch.int64, device=self.device)
        paged.write(self.k[layer], self.block_table, starts, k_new.to(self.dtype))
        paged.write(self.v[layer], self.block_table, starts, v_new.to(self.dtype))
        self._lengths[layer] = t0 + n
        return self.get(layer)

    def get_pages(self, layer: int = 0) -> tuple[Tensor, Tensor, Tensor]:
        """A paged cache's (k pool, v pool, block_table) for ``layer``: [num_pages, H_kv, P, d] x 2, [B, max_pages]."""
        self._check_layer(layer)
        return self.k[layer], self.v[layer], self.block_table

    def update(self, layer: int, k_new: Tensor, v_new: Tensor) -> tuple[Tensor, Tensor]:
        """Append k_new, v_new [B, H_kv, T, d] to ``layer``; return (k, v) [B, H_kv, length, d] views.
        (Contiguous layout only; a paged cache appends through ``attend``.)"""
        self._check_layer(layer)
        if self.page_size is not None:
            raise ValueError("kv_cache: a paged KVCache has no contiguous views; use attend(layer, q, k, v)")
        self._check_new(k_new, v_new)
        t0, n = self._lengths[layer], k_new.shape[2]
        self._check_room(layer, t0, n)
        self.k[layer, :, :, t0:t0 + n].copy_(k_new)            # (B, H_kv, n, d), cast to cache dtype
        self.v[layer, :, :, t0:t0 + n].copy_(v_new)
        self._lengths[layer] = t0 + n
        return self.k[layer, :, :, :t0 + n], self.v[layer, :, :, :t0 + n]   # (B, H_kv, t0+n, d)

    def get(self, layer: int = 0) -> tuple[Tensor, Tensor]:
        """Views [B, H_kv, length(layer), d] of what ``layer`` holds, without appending (for a paged
        cache: copies gathered from its pages)."""
        t = self.length(layer)
        if self.page_size is not None:
            k_pages, v_pages, table = self.get_pages(layer)
            return (torch.cat([paged.gather(k_pages, table[b], 0, t) for b in range(self.batch)]),
                    torch.cat([paged.gather(v_pages, table[b], 0, t) for b in range(self.batch)]))
        return self.k[layer, :, :, :t], self.v[layer, :, :, :t]

    def reset(self) -> None:
        """Forget every cached token and the left padding (storage is kept and overwritten)."""
        self._lengths = [0] * self.n_layers
        self.leftpad.zero_()
        if self.page_size is not None:
            self._free = sorted(set(self._free) | set(self.block_table[:, :self._pages].flatten().tolist()))
            self._pages = 0

    def __repr__(self) -> str:
        return (f"KVCache(batch={self.batch}, n_kv_heads={self.n_kv_heads}, max_tokens={self.max_tokens}, "
                f"head_dim={self.head_dim}, n_layers={self.n_layers}, dtype={self.dtype}, page_size={self.page_size}, "
                f"lengths={self._lengths}, nbytes={self.nbytes:,})")


def _with_leftpad(attn_mask: Tensor | None, q: Tensor, k: Tensor, leftpad: Tensor) -> Tensor | None:
    """attn_mask (validated here) with the keys before each sequence's leftpad dropped too."""
    mask = normalize_mask(attn_mask, q, k)                      # 4 dims, or None
    if not bool(leftpad.any()):
        return mask
    keep = torch.arange(k.shape[2], device=k.device) >= leftpad.view(-1, 1, 1, 1)   # (B, 1, 1, Tk)
    if mask is None or mask.dtype == torch.bool:
        return keep if mask is None else mask & keep
    return torch.where(keep, mask, torch.full((), float("-inf"), dtype=mask.dtype, device=mask.device))


# (q [B, H, T, d], k [B, H_kv, T, d], pos0) -> (q, k) with positions pos0 .. pos0 + T - 1 applied.
Rotary = Callable[[Tensor, Tensor, int], "tuple[Tensor, Tensor]"]


class MultiHeadAttention(nn.Module):
    """Multi-head attention with H query heads and H_kv key/value heads (MHA, GQA, MQA).

    q_proj: D -> H*d, k_proj and v_proj: D -> H_kv*d, o_proj: H*d -> D (the names Llama-style
    checkpoints use). head_dim defaults to D / H. Parameters: 2*D*H*d + 2*D*H_kv*d (4*D^2 for
    MHA), see num_parameters(). window_size, softcap and alibi_slopes ([H]) are
    multihead.attention's, applied in every forward (e.g. Mistral's window, Gemma-2's softcap).
    """

    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int | None = None, head_dim: int | None = None,
                 bias: bool = False, *, backend: str = "auto", window_size: tuple[int, int] = (-1, -1),
                 softcap: float = 0.0, alibi_slopes: Tensor | None = None, device=None, dtype=None):
        super().__init__()
        n_kv_heads = n_heads if n_kv_heads is None else n_kv_heads
        for name, value in (("d_model", d_model), ("n_heads", n_heads), ("n_kv_heads", n_kv_heads)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name}: expected an integer >= 1, got {value!r}")
        if n_heads % n_kv_heads:
            raise ValueError(f"n_kv_heads: n_heads={n_heads} must be a multiple of n_kv_heads={n_kv_heads}")
        if head_dim is None:
            if d_model % n_heads:
                raise ValueError(f"head_dim: d_model={d_model} is not divisible by n_heads={n_heads}; give head_dim")
            head_dim = d_model // n_heads
        elif isinstance(head_dim, bool) or not isinstance(head_dim, int) or head_dim < 1:
            raise ValueError(f"head_dim: expected an integer >= 1, got {head_dim!r}")
        self.d_model, self.n_heads, self.n_kv_heads, self.head_dim = d_model, n_heads, n_kv_heads, head_dim
        from multihead.kernels import BACKENDS
        if not isinstance(backend, str) or (backend != "auto" and backend not in BACKENDS):
            raise ValueError(f"backend: expected 'auto' or one of {sorted(BACKENDS)}, got {backend!r}")
        # window_size / softcap / alibi_slopes checked now, as backend is (not at the first forward):
        # score_mods on a stand-in q of this module's heads (alibi_slopes [H], or [B, H] for one B).
        b = alibi_slopes.shape[0] if isinstance(alibi_slopes, Tensor) and alibi_slopes.dim() == 2 else 1
        where = alibi_slopes.device if isinstance(alibi_slopes, Tensor) else "meta"
        score_mods(torch.empty(b, n_heads, 1, head_dim, device=where), window_size, softcap, alibi_slopes)
        self.bias, self.backend = bias, backend
        self.window_size, self.softcap = tuple(window_size), softcap
        self.register_buffer("alibi_slopes", alibi_slopes, persistent=False)
        kw = {"device": device, "dtype": dtype}
        self.q_proj = nn.Linear(d_model, n_heads * head_dim, bias=bias, **kw)
        self.k_proj = nn.Linear(d_model, n_kv_heads * head_dim, bias=bias, **kw)
        self.v_proj = nn.Linear(d_model, n_kv_heads * head_dim, bias=bias, **kw)
        self.o_proj = nn.Linear(n_heads * head_dim, d_model, bias=bias, **kw)

    def num_parameters(self) -> int:
        """2*D*H*d + 2*D*H_kv*d (+ biases): multihead.cost.counts.formulas.attention_params, shared with the planner."""
        return attention_params(self.d_model, self.n_heads, self.n_kv_heads, self.head_dim, self.bias)

    def forward(self, x: Tensor, *, attn_mask: Tensor | None = None, is_causal: bool = False,
                kv_cache: KVCache | None = None, layer: int = 0, rotary: Rotary | None = None) -> Tensor:
        """x [B, T, D] -> [B, T, D].

        attn_mask: broadcastable to [B, H, T, Tk] (Tk = T, or cached + T with a cache).
        kv_cache: append this call's K/V to ``kv_cache`` at ``layer`` and attend to everything
        cached from each sequence's leftpad on; with is_causal the mask is aligned bottom-right, so
        prefill followed by one-token steps equals one causal forward over the whole sequence. A
        cache in this module's dtype without attn_mask is attended in place (KVCache.attend);
        otherwise (an attn_mask, or a cache in another dtype, e.g. bf16 under an fp32 module) the
        cached K/V are read back (views, or copies gathered from the pages of a paged cache),
        upcast to q's dtype and attended with the mask and the cache's left padding.
        rotary: optional position encoding applied to q and k before caching, called as
        rotary(q, k, pos0) with pos0 the number of tokens already cached (0 without a cache).
        """
        if not isinstance(x, Tensor) or x.dim() != 3 or x.shape[-1] != self.d_model:
            got = tuple(x.shape) if isinstance(x, Tensor) else type(x).__name__
            raise ValueError(f"x: expected shape [B, T, D] with D={self.d_model}, got {got}")
        B, T, _ = x.shape
        H, H_kv, d = self.n_heads, self.n_kv_heads, self.head_dim
        # Project, split the feature axis into heads, then move heads before time.
        q = self.q_proj(x).view(B, T, H, d).transpose(1, 2)       # (B, H, T, d)
        k = self.k_proj(x).view(B, T, H_kv, d).transpose(1, 2)    # (B, H_kv, T, d)
        v = self.v_proj(x).view(B, T, H_kv, d).transpose(1, 2)    # (B, H_kv, T, d)
        pos0 = kv_cache.length(layer) if kv_cache is not None else 0
        if rotary is not None:
            q, k = rotary(q, k, pos0)
        mods = {"window_size": self.window_size, "softcap": self.softcap, "alibi_slopes": self.alibi_slopes}
        if kv_cache is not None and attn_mask is None and kv_cache.dtype == q.dtype:
            # In-place append and attention from each sequence's left padding on (paged or not).
            y = kv_cache.attend(layer, q, k, v, is_causal=is_causal, backend=self.backend, **mods)
        else:
            if kv_cache is not None:
                k, v = kv_cache._append_and_read(layer, k, v)     # (B, H_kv, pos0 + T, d)
                k, v = k.to(q.dtype), v.to(q.dtype)               # a lower-precision cache is upcast
                attn_mask = _with_leftpad(attn_mask, q, k, kv_cache.leftpad)
            y = attention(q, k, v, attn_mask, is_causal=is_causal, backend=self.backend, **mods)  # (B, H, T, d)
        # Heads back after time BEFORE merging them: (B, H, T, d) -> (B, T, H, d) -> (B, T, H*d).
        # Reshaping (B, H, T, d) straight to (B, T, H*d) runs without error and scrambles tokens.
        y = y.transpose(1, 2).reshape(B, T, H * d)                # (B, T, H*d)
        return self.o_proj(y)                                     # (B, T, D)

    def extra_repr(self) -> str:
        return (f"d_model={self.d_model}, n_heads={self.n_heads}, n_kv_heads={self.n_kv_heads}, "
                f"head_dim={self.head_dim}, bias={self.bias}, backend={self.backend!r}, "
                f"window_size={self.window_size}, softcap={self.softcap}")
