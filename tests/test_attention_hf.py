"""Real model code that needs windows and softcapping: tiny random-weight Gemma-2 and Gemma-3
configs (Gemma-3 text: windows only, it has no attention softcap), built locally (no download), run by transformers with attn_implementation="multihead"
against transformers' own eager attention. Sliding layers see 40 tokens through an 8-token
window, and the softcap is small enough to bend the scores (it is 50 in the real Gemma-2)."""
from __future__ import annotations

import pytest
import torch

from conftest import require  # noqa: E402

transformers = require("transformers")     # missing: fails in CI with what to install
import multihead.hf  # noqa: E402

# Shares an xdist worker with the other tests that load transformers (pyproject: --dist loadgroup):
# one worker pays for its import and the SmolLM2 load.
pytestmark = pytest.mark.xdist_group("transformers")

SEQ = 40


def gemma(kind: str, softcap: float = 1.0):
    common = dict(vocab_size=96, hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, head_dim=16, max_position_embeddings=128, sliding_window=8,
                  layer_types=["sliding_attention", "full_attention"], query_pre_attn_scalar=16)
    if kind == "gemma2":
        cfg = transformers.Gemma2Config(attn_logit_softcapping=softcap, final_logit_softcapping=None, **common)
        cls = transformers.Gemma2ForCausalLM
    else:
        cfg = transformers.Gemma3TextConfig(attn_logit_softcapping=softcap, final_logit_softcapping=None, **common)
        cls = transformers.Gemma3ForCausalLM
    torch.manual_seed(0)
    model = cls(cfg).eval()
    with torch.no_grad():                       # random init is tiny; make the scores a few units
        for name, p in model.named_parameters():
            if name.endswith(("q_proj.weight", "k_proj.weight")):
                p.mul_(8.0)
    return model


def logits(model, impl: str, ids, mask=None):
    model.config._attn_implementation = impl
    for layer in model.model.layers:
        layer.self_attn.config._attn_implementation = impl
    with torch.no_grad():
        return model(input_ids=ids, attention_mask=mask).logits


@pytest.mark.parametrize("kind", ["gemma2", "gemma3"])
def test_gemma_matches_eager_with_window_and_softcap(kind):
    multihead.hf.register()
    model = gemma(kind)
    ids = torch.randint(0, 96, (2, SEQ), generator=torch.Generator().manual_seed(1))
    eager = logits(model, "eager", ids)
    for impl in ("multihead", "multihead_tiled", "multihead_fast_prefill"):   # in-kernel / band slices
        assert (logits(model, impl, ids) - eager).abs().max() < 1e-4, impl
    # the window and (Gemma-2's; Gemma-3 has QK-norm instead and passes no softcap to attention)
    # the softcap both matter here: leaving either out changes the logits
    if kind == "gemma2":
        plain = gemma(kind, softcap=None)
        assert (logits(plain, "eager", ids) - eager).abs().max() > 1e-2
    model.config.sliding_window = SEQ
    for layer in model.model.layers:
        if layer.self_attn.sliding_window:
            layer.self_attn.sliding_window = SEQ
    assert (logits(model, "eager", ids) - eager).abs().max() > 1e-2


@pytest.mark.parametrize("kind", ["gemma2", "gemma3"])
def test_gemma_left_padded_batch_matches_eager(kind):
    """A left-padded batch (HF attention_mask): every real position equals eager's."""
    multihead.hf.register()
    model = gemma(kind)
    ids = torch.randint(0, 96, (2, SEQ), generator=torch.Generator().manual_seed(2))
    mask = torch.ones(2, SEQ, dtype=torch.long)
    mask[0, :13] = 0
    eager = logits(model, "eager", ids, mask)
    ours = logits(model, "multihead", ids, mask)
    real = mask.bool()
    assert (ours[real] - eager[real]).abs().max() < 1e-4


def tiny_llama():
    cfg = transformers.LlamaConfig(vocab_size=64, hidden_size=48, intermediate_size=64, num_hidden_layers=2,
                                   num_attention_heads=6, num_key_value_heads=2, max_position_embeddings=64)
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(cfg).eval()


@pytest.mark.parametrize("page_size", [None, 4])
def test_left_padded_paged_generation_matches_each_prompt_and_transformers(page_size):
    """greedy_generate on a left-padded batch (HF attention_mask) with a paged or contiguous
    KVCache: every row's tokens equal that prompt generated alone, and transformers' generate."""
    from multihead.hf.generation import greedy_generate
    model = tiny_llama()
    g = torch.Generator().manual_seed(3)
    prompts = [torch.randint(1, 64, (n,), generator=g) for n in (9, 4, 6)]
    T = max(len(p) for p in prompts)
    ids = torch.zeros(3, T, dtype=torch.long)
    mask = torch.zeros(3, T, dtype=torch.long)
    for b, p in enumerate(prompts):
        ids[b, T - len(p):], mask[b, T - len(p):] = p, 1
    out = greedy_generate(model, ids, 12, attention_mask=mask, page_size=page_size)
    with torch.no_grad():
        ref = model.generate(ids, attention_mask=mask, max_new_tokens=12, min_new_tokens=12, do_sample=False,
                             pad_token_id=0)
    assert torch.equal(out[:, T:], ref[:, T:])
    for b, p in enumerate(prompts):
        alone = greedy_generate(model, p[None], 12)
        assert torch.equal(out[b, T:], alone[0, len(p):])
