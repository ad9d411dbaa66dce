"""Run a Llama-family decoder from layer l onwards on cached layer inputs.

Ablating a head of layer l cannot change layers 0 .. l-1, so their outputs can be computed once
and reused for all H ablations of layer l. For SmolLM2 (30 layers; the tied 49152 x 576 LM head
costs about 8 layers) this cuts the 270 ablation passes by ~40%.

Only for models laid out as ``model.model.layers`` / ``model.model.norm`` / ``model.lm_head``
(``supports_replay``); other models take the plain full-forward path.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn


def supports_replay(model: nn.Module) -> bool:
    inner = getattr(model, "model", None)
    return all(hasattr(inner, n) for n in ("layers", "norm")) and hasattr(model, "lm_head")


@dataclass
class LayerInputs:
    """Inputs of every decoder layer for a batch of N windows."""
    hidden: list[torch.Tensor]     # hidden[l]: (N, T, D) input of layer l
    kwargs: list[dict]             # keyword arguments each layer was called with (masks, RoPE cos/sin)
    batch: int


@torch.no_grad()
def capture_layer_inputs(model: nn.Module, ids: torch.Tensor) -> LayerInputs:
    """One forward pass over ``ids`` [N, T] recording each decoder layer's input and keyword arguments."""
    layers = model.model.layers
    hidden: list = [None] * len(layers)
    kwargs: list = [None] * len(layers)

    def pre(i: int):
        def fn(module, args, kw):
            x = args[0] if args else kw["hidden_states"]
            hidden[i] = x.detach()
            kwargs[i] = {k: v for k, v in kw.items() if k != "hidden_states"}
        return fn

    handles = [layer.register_forward_pre_hook(pre(i), with_kwargs=True) for i, layer in enumerate(layers)]
    try:
        model(input_ids=ids, use_cache=False)
    finally:
        for h in handles:
            h.remove()
    return LayerInputs(hidden, kwargs, ids.shape[0])


def _select_rows(value, rows: torch.Tensor, batch: int):
    """Index tensors whose leading dim is the window batch (N > 1) by ``rows``; leave broadcastable ones."""
    if isinstance(value, torch.Tensor) and value.dim() > 0 and value.shape[0] == batch and batch > 1:
        return value[rows]
    if isinstance(value, tuple):
        return tuple(_select_rows(v, rows, batch) for v in value)
    return value


def logits_from_layer(model: nn.Module, inputs: LayerInputs, layer: int, rows: torch.Tensor) -> torch.Tensor:
    """Logits [len(rows), T, V] running layers ``layer`` .. L-1 on cached inputs of windows ``rows``."""
    h = inputs.hidden[layer][rows]                                         # (R, T, D)
    for i in range(layer, len(model.model.layers)):
        kw = {k: _select_rows(v, rows, inputs.batch) for k, v in inputs.kwargs[i].items()}
        out = model.model.layers[i](h, **kw)
        h = out[0] if isinstance(out, tuple) else out
    return model.lm_head(model.model.norm(h))
