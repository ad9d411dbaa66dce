"""Hugging Face transformers models on multihead's attention: ``attn_implementation="multihead"``.

    import multihead.hf
    multihead.hf.register()
    model = LlamaForCausalLM.from_pretrained(path, attn_implementation="multihead")

transformers (5.x) looks attention up by name in two registries:

* ``AttentionInterface``: the function each attention layer calls after its projections and
  RoPE, with ``query [B, H, Tq, d]`` and ``key``/``value [B, H_kv, Tk, d]`` (K/V *not* repeated
  for GQA), returning ``(out [B, Tq, H, d], weights or None)``. Ours passes q/k/v straight to
  ``multihead.attention``, which reads KV head ``h // (H / H_kv)`` for query head ``h`` without
  copying K/V.
* ``AttentionMaskInterface``: builds the mask the model hands to that function. A name missing
  there gets *no mask at all* (padding silently ignored), so we register transformers' own SDPA
  mask builder: a bool mask ``[B, 1, Tq, Tk]`` with True = attend (our convention too), or
  ``None`` when the pattern is plain causal and ``is_causal`` can carry it.

Mask cases the forward function maps (so that results equal ``"sdpa"``'s):

* bool mask: passed through (True = attend).
* float mask (additive, e.g. built by hand or by ``"eager"``): passed through, added to scores.
* ``None`` with causal layers: ``is_causal=True`` when ``Tq > 1``. When ``Tk == Tq`` our
  bottom-right causal rule equals SDPA's top-left one. transformers only leaves the mask out
  with ``Tk > Tq`` while prefilling an empty static cache, whose keys past ``Tq`` are unused
  slots; like its SDPA path we drop them (top-left semantics) instead of attending to them.
* ``None`` with ``Tq == 1`` (a decode step): the one query sees every key, no causal mask.

Registered names: ``"multihead"`` (backend "auto") and ``"multihead_<backend>"`` for each
kernel in ``multihead.kernels.BACKENDS`` (``multihead_reference``, ``multihead_tiled``,
``multihead_decode``), to pin a kernel.
"""
from __future__ import annotations

import functools

import torch

import multihead
from multihead.kernels import BACKENDS

NAME = "multihead"


def multihead_attention_forward(module: torch.nn.Module, query: torch.Tensor, key: torch.Tensor,
                                value: torch.Tensor, attention_mask: torch.Tensor | None,
                                dropout: float = 0.0, scaling: float | None = None,
                                is_causal: bool | None = None, *, backend: str = "auto",
                                **kwargs) -> tuple[torch.Tensor, None]:
    """transformers' attention-function signature on top of ``multihead.attention``.

    query [B, H, Tq, d]; key/value [B, H_kv, Tk, d] (not repeated); attention_mask None, bool
    or additive float, broadcastable to [B, H, Tq, Tk]. Returns (out [B, Tq, H, d], None): no
    attention weights are ever materialized for the caller. A ``multihead_backend=`` keyword
    passed down through the model's forward overrides ``backend`` for that call.
    """
    backend = kwargs.pop("multihead_backend", None) or backend   # per-call override (multihead.hf.generation)
    if dropout and module.training:
        raise ValueError("dropout: multihead attention is inference-only; use model.eval() or dropout=0")
    for unsupported in ("s_aux", "position_bias"):
        if kwargs.get(unsupported) is not None:
            raise ValueError(f"{unsupported}: not supported by attn_implementation='multihead'; use 'eager'")
    Tq, Tk = query.shape[2], key.shape[2]
    causal = is_causal if is_causal is not None else getattr(module, "is_causal", True)
    causal = bool(causal) and attention_mask is None and Tq > 1
    if causal and Tk > Tq:                      # empty static cache: keys past Tq are unused slots
        key, value = key[:, :, :Tq], value[:, :, :Tq]
    mask = attention_mask
    if mask is not None and mask.shape[-1] != key.shape[2]:
        mask = mask[..., : key.shape[2]]        # static caches may hand over a longer mask
    # Gemma-2/3: logit softcapping, and a sliding window (HF keeps keys with p_i - j < W). The
    # window is also in the mask; given as window_size it lets the kernels skip blocks. Only when
    # the keys are exactly the queries' positions (no static-cache slots), where bottom-right = absolute.
    sliding = kwargs.get("sliding_window")
    window = (sliding - 1, -1) if sliding and key.shape[2] == Tq else (-1, -1)
    kv = kwargs.get("multihead_kv")           # multihead.hf.cache.CachedLM with a paged / left-padded cache
    if kv is not None:                        # key/value are this step's tokens: append in place, attend
        out = kv.attend(module.layer_idx, query, key, value, is_causal=True, scale=scaling,
                        softcap=kwargs.get("softcap") or 0.0, backend=backend)
    else:
        out = multihead.attention(query, key, value, mask, is_causal=causal, scale=scaling, window_size=window,
                                  softcap=kwargs.get("softcap") or 0.0, backend=backend)  # (B, H, Tq, d)
    return out.transpose(1, 2).contiguous(), None   # (B, Tq, H, d)


def registered_names() -> list[str]:
    """Every attn_implementation name ``register()`` adds."""
    return [NAME] + [f"{NAME}_{b}" for b in BACKENDS]


@functools.cache
def register() -> list[str]:
    """Register multihead with transformers' attention and mask interfaces (idempotent).

    Returns the names registered. Raises MissingModelError if transformers is missing.
    """
    try:
        from transformers import AttentionInterface
        from transformers.masking_utils import AttentionMaskInterface, sdpa_mask
    except ImportError as err:
        from multihead.hf.errors import INSTALL_HINT, MissingModelError
        raise MissingModelError(f"transformers is not installed ({err}); {INSTALL_HINT}") from err
    names = registered_names()
    for name in names:
        backend = "auto" if name == NAME else name[len(NAME) + 1:]
        fn = functools.partial(multihead_attention_forward, backend=backend)
        functools.update_wrapper(fn, multihead_attention_forward)
        AttentionInterface.register(name, fn)
        AttentionMaskInterface.register(name, sdpa_mask)
    return names
