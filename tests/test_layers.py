"""MultiHeadAttention and KVCache: parameter count, head layout, cache bytes, incremental decoding."""
from __future__ import annotations

import pytest
import torch

import multihead as mh
from conftest import attention_fp64
from multihead.cost.counts.formulas import attention_params, kv_cache_bytes
from multihead.kernels import BACKENDS
from multihead.layers import KVCacheFullError

CONFIGS = {"MHA": (64, 8, 8), "GQA": (64, 8, 2), "MQA": (64, 8, 1)}   # (D, H, H_kv)


def make(kind, bias=False, head_dim=None, seed=0):
    torch.manual_seed(seed)
    D, H, H_kv = CONFIGS[kind]
    return mh.MultiHeadAttention(D, H, H_kv, head_dim=head_dim, bias=bias)


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("kind", list(CONFIGS))
def test_parameter_count_is_the_shared_formula(kind, bias):
    m = make(kind, bias=bias, head_dim=16)
    D, H, H_kv = CONFIGS[kind]
    counted = sum(p.numel() for p in m.parameters())
    assert m.num_parameters() == counted == attention_params(D, H, H_kv, 16, bias)
    if not bias:
        assert counted == 2 * D * H * 16 + 2 * D * H_kv * 16


def test_mha_has_4_d_squared_parameters():
    m = mh.MultiHeadAttention(4096, 32, device="meta")   # the reference text's exercise; no allocation
    assert m.head_dim == 128 and m.num_parameters() == 4 * 4096**2 == 67_108_864


def explicit_heads(m, x, is_causal):
    """Each query head h computed on its own from weight slices, reading KV head h // (H / H_kv)."""
    H, H_kv, d = m.n_heads, m.n_kv_heads, m.head_dim
    T = x.shape[1]
    keep = torch.ones(T, T, dtype=torch.bool).tril() if is_causal else torch.ones(T, T, dtype=torch.bool)
    heads = []
    for h in range(H):
        g = h // (H // H_kv)
        q = x @ m.q_proj.weight[h * d:(h + 1) * d].T                  # (B, T, d)
        k = x @ m.k_proj.weight[g * d:(g + 1) * d].T
        v = x @ m.v_proj.weight[g * d:(g + 1) * d].T
        s = (q @ k.transpose(1, 2) / d**0.5).masked_fill(~keep, float("-inf"))
        heads.append(torch.softmax(s, -1) @ v)                        # (B, T, d)
    return torch.cat(heads, dim=-1) @ m.o_proj.weight.T               # heads side by side, (B, T, D)


@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize("kind", list(CONFIGS))
def test_forward_matches_per_head_computation(kind, is_causal):
    """Catches a reshape without the transpose and h % H_kv grouping (both give no error)."""
    m = make(kind)
    x = torch.randn(2, 11, 64)
    with torch.no_grad():
        assert torch.allclose(m(x, is_causal=is_causal), explicit_heads(m, x, is_causal), atol=1e-5)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.float64])
def test_kv_cache_nbytes_is_formula_and_storage(dtype):
    c = mh.KVCache(batch=2, n_kv_heads=3, max_tokens=17, head_dim=8, n_layers=4, dtype=dtype)
    storage = c.k.untyped_storage().nbytes() + c.v.untyped_storage().nbytes()
    assert c.nbytes == storage == kv_cache_bytes(4, 3, 8, 17, dtype.itemsize, batch=2)
    assert c.nbytes == 2 * 4 * 3 * 8 * 17 * 2 * dtype.itemsize


@pytest.mark.parametrize("kind", list(CONFIGS))
def test_prefill_then_decode_equals_full_causal_forward(kind):
    """Two stacked layers sharing one 2-layer cache: prefill 9 tokens, then 7 single-token steps."""
    torch.manual_seed(1)
    layers = [make(kind, seed=s) for s in (1, 2)]
    x = torch.randn(2, 16, 64)
    with torch.no_grad():
        full = x
        for m in layers:
            full = m(full, is_causal=True)
        cache = mh.KVCache(2, layers[0].n_kv_heads, 16, layers[0].head_dim, n_layers=2)
        steps = [x[:, :9]] + [x[:, t:t + 1] for t in range(9, 16)]
        outs = []
        for chunk in steps:
            h = chunk
            for i, m in enumerate(layers):
                h = m(h, is_causal=True, kv_cache=cache, layer=i)
            outs.append(h)
            assert cache.length(0) == cache.length(1) == cache.seq_len
        assert cache.seq_len == 16
        assert torch.allclose(torch.cat(outs, dim=1), full, atol=1e-5)


def test_decode_backends_through_the_cache_agree():
    """A decode step over cache views (non-contiguous) gives the same output on every backend."""
    m = make("GQA")
    x = torch.randn(1, 40, 64)
    cache = mh.KVCache(1, 2, 64, 8)
    with torch.no_grad():
        m(x[:, :39], is_causal=True, kv_cache=cache)
        k, v = cache.get(0)
        q = torch.randn(1, 8, 1, 8)
        ref, _ = attention_fp64(q, k, v, is_causal=True)
        for backend in sorted(BACKENDS):
            out = mh.attention(q, k, v, is_causal=True, backend=backend)
            assert (out.double() - ref).abs().max() < 1e-5, backend


def test_rotary_hook_gets_cache_offset():
    """rotary(q, k, pos0) is called with the number of tokens cached before the step."""
    seen = []

    def rotary(q, k, pos0):
        seen.append((pos0, q.shape[2], k.shape[2]))
        return q, k

    m = make("MQA")
    cache = mh.KVCache(1, 1, 10, 8)
    with torch.no_grad():
        m(torch.randn(1, 4, 64), is_causal=True, kv_cache=cache, rotary=rotary)
        m(torch.randn(1, 1, 64), is_causal=True, kv_cache=cache, rotary=rotary)
        m(torch.randn(1, 3, 64), rotary=rotary)
    assert seen == [(0, 4, 4), (4, 1, 1), (0, 3, 3)]


def test_cache_update_returns_views_and_casts():
    cache = mh.KVCache(1, 2, 8, 4, n_layers=2, dtype=torch.bfloat16)
    k1, v1 = torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4)
    k, v = cache.update(1, k1, v1)
    assert k.shape == (1, 2, 3, 4) and k.dtype == torch.bfloat16
    assert k.untyped_storage().data_ptr() == cache.k.untyped_storage().data_ptr()   # a view, no copy
    assert torch.equal(k, k1.bfloat16()) and torch.equal(v, v1.bfloat16())
    assert cache.length(1) == 3 and cache.length(0) == 0 and cache.seq_len == 3
    k, _ = cache.update(1, torch.ones(1, 2, 2, 4), torch.ones(1, 2, 2, 4))
    assert k.shape[2] == 5 and torch.equal(k[:, :, :3], k1.bfloat16())
    cache.reset()
    assert cache.length(1) == 0 and cache.get(1)[0].shape[2] == 0


def test_cache_full_is_a_clear_error_and_leaves_cache_unchanged():
    cache = mh.KVCache(1, 1, 5, 2)
    cache.update(0, torch.ones(1, 1, 4, 2), torch.ones(1, 1, 4, 2))
    with pytest.raises(KVCacheFullError, match=r"layer 0 holds 4 tokens; appending 2 .* max_tokens=5"):
        cache.update(0, torch.zeros(1, 1, 2, 2), torch.zeros(1, 1, 2, 2))
    assert cache.length(0) == 4 and torch.all(cache.k[0, :, :, :4] == 1)
    cache.update(0, torch.zeros(1, 1, 1, 2), torch.zeros(1, 1, 1, 2))   # exactly full is fine
    assert isinstance(KVCacheFullError("x"), ValueError)


@pytest.mark.parametrize("call,match", [
    (lambda c: c.update(2, torch.ones(1, 2, 1, 4), torch.ones(1, 2, 1, 4)), r"^layer: expected an integer in \[0, 2\)"),
    (lambda c: c.update(0, torch.ones(1, 3, 1, 4), torch.ones(1, 3, 1, 4)), r"^k_new: expected shape"),
    (lambda c: c.update(0, torch.ones(1, 2, 1, 4), torch.ones(1, 2, 1, 5)), r"^v_new: expected shape"),
    (lambda c: c.update(0, torch.ones(1, 2, 1, 4), torch.ones(1, 2, 2, 4)), r"^v_new: shape .* does not match"),
    (lambda c: c.length(-1), r"^layer"),
])
def test_cache_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call(mh.KVCache(1, 2, 8, 4, n_layers=2))


@pytest.mark.parametrize("kwargs,match", [
    ({"batch": 0}, r"^batch: expected an integer >= 1"),
    ({"max_tokens": 2.5}, r"^max_tokens"),
    ({"dtype": torch.int8}, r"^dtype: expected a floating torch dtype"),
])
def test_cache_bad_construction(kwargs, match):
    args = {"batch": 1, "n_kv_heads": 2, "max_tokens": 8, "head_dim": 4} | kwargs
    with pytest.raises(ValueError, match=match):
        mh.KVCache(**args)


@pytest.mark.parametrize("args,match", [
    ((64, 8, 3), r"^n_kv_heads: n_heads=8 must be a multiple of n_kv_heads=3"),
    ((65, 8), r"^head_dim: d_model=65 is not divisible"),
    ((64, 0), r"^n_heads: expected an integer >= 1"),
])
def test_module_bad_construction(args, match):
    with pytest.raises(ValueError, match=match):
        mh.MultiHeadAttention(*args)


def test_module_bad_input_shape():
    with pytest.raises(ValueError, match=r"^x: expected shape \[B, T, D\] with D=64"):
        make("MHA")(torch.randn(2, 5, 32))


def test_head_dim_may_differ_from_d_model_over_heads():
    m = mh.MultiHeadAttention(48, 4, 2, head_dim=32)     # H * d = 128 != D (as in Gemma)
    assert m(torch.randn(1, 3, 48), is_causal=True).shape == (1, 3, 48)
    assert m.num_parameters() == 2 * 48 * 4 * 32 + 2 * 48 * 2 * 32


# --- window / softcap / ALiBi in the module; left padding and the paged layout in the cache ----

@pytest.mark.parametrize("page_size", [None, 4, 16])
@pytest.mark.parametrize("mods", [{}, {"window_size": (5, 0)}, {"softcap": 2.0}])
def test_prefill_then_decode_with_mods_and_pages(page_size, mods):
    """The same prefill + one-token steps as above, through a contiguous or paged cache, with a
    window or softcap on the module: equal to one causal forward over the whole sequence."""
    torch.manual_seed(3)
    slopes = torch.rand(8) * 0.1 if not mods else None
    layers = [mh.MultiHeadAttention(64, 8, 2, alibi_slopes=slopes, **mods) for _ in range(2)]
    x = torch.randn(3, 15, 64)
    with torch.no_grad():
        full = x
        for m in layers:
            full = m(full, is_causal=True)
        cache = mh.KVCache(3, 2, 15, 8, n_layers=2, page_size=page_size)
        outs = []
        for chunk in [x[:, :6]] + [x[:, t:t + 1] for t in range(6, 15)]:
            h = chunk
            for i, m in enumerate(layers):
                h = m(h, is_causal=True, kv_cache=cache, layer=i)
            outs.append(h)
    assert cache.seq_len == 15
    assert torch.allclose(torch.cat(outs, dim=1), full, atol=1e-5)


@pytest.mark.parametrize("page_size", [None, 8])
def test_left_padded_batch_equals_each_sequence_alone(page_size):
    """Two prompts of 5 and 9 tokens, the shorter left-padded to 9: with leftpad set, each row of
    the batched prefill + decode equals that sequence run alone (pad keys are never attended)."""
    torch.manual_seed(4)
    m = mh.MultiHeadAttention(32, 4, 2)
    x = torch.randn(2, 12, 32)
    pad = 4
    with torch.no_grad():
        cache = mh.KVCache(2, 2, 12, 8, page_size=page_size)
        cache.set_leftpad(torch.tensor([pad, 0]))
        outs = [m(x[:, :9], is_causal=True, kv_cache=cache)]
        outs += [m(x[:, t:t + 1], is_causal=True, kv_cache=cache) for t in range(9, 12)]
        batched = torch.cat(outs, dim=1)
        alone = m(x[:1, pad:], is_causal=True)
        assert torch.allclose(batched[0, pad:], alone[0], atol=1e-5)
        assert torch.allclose(batched[1], m(x[1:], is_causal=True)[0], atol=1e-5)


def test_paged_cache_pages_interleave_and_reset_returns_them():
    cache = mh.KVCache(2, 1, 20, 4, page_size=4)
    assert cache.nbytes == cache.k.numel() * 4 * 2
    q = torch.randn(2, 1, 9, 4)
    cache.attend(0, q, torch.randn(2, 1, 9, 4), torch.randn(2, 1, 9, 4), is_causal=True)
    table = cache.block_table[:, :3].tolist()
    assert table == [[0, 2, 4], [1, 3, 5]]                  # taken step by step, sequences interleave
    k, _ = cache.get(0)
    assert k.shape == (2, 1, 9, 4)
    with pytest.raises(ValueError, match="paged KVCache has no contiguous views"):
        cache.update(0, k, k)
    cache.reset()
    assert cache.length(0) == 0 and cache._free == list(range(10))
    with pytest.raises(ValueError, match="^leftpad: expected"):
        cache.set_leftpad(torch.tensor([1.0, 0.0]))


# --- the library audit: the cache's refusals, the module's other cache paths, build-time checks ---

@pytest.mark.parametrize("page_size", [None, 4])
@pytest.mark.parametrize("bad,match", [
    (torch.ones(1, 2, 1, 8, dtype=torch.int64), r"^k_new: expected a floating-point tensor, got dtype torch.int64"),
    (torch.ones(1, 2, 1, 8, dtype=torch.complex64), r"^k_new: expected a floating-point tensor"),
    ([1], r"^k_new: expected shape \[B, H_kv, T, d\] = \[1, 2, T, 8\], got list"),
    (torch.ones(1, 2, 1, 7), r"^k_new: expected shape"),
])
def test_attend_refuses_bad_k_v_before_casting(bad, match, page_size):
    """attend (MultiHeadAttention's path) refused nothing: int and complex k/v were cast, a list
    gave AttributeError. Refused by name, the cache unchanged."""
    c = mh.KVCache(batch=1, n_kv_heads=2, max_tokens=8, head_dim=8, page_size=page_size)
    with pytest.raises(ValueError, match=match):
        c.attend(0, torch.randn(1, 4, 1, 8), bad, bad)
    assert c.length(0) == 0


def test_refused_paged_attend_keeps_its_pages():
    """A paged attend refused by attention_with_kvcache (q's d does not match) gives its pages back."""
    c = mh.KVCache(batch=2, n_kv_heads=2, max_tokens=8, head_dim=8, page_size=4)
    c.attend(0, torch.randn(2, 4, 3, 8), torch.randn(2, 2, 3, 8), torch.randn(2, 2, 3, 8))
    free, table = list(c._free), c.block_table.clone()
    with pytest.raises(ValueError, match=r"^k_cache: expected .*d=7"):
        c.attend(0, torch.randn(2, 4, 5, 7), torch.randn(2, 2, 5, 8), torch.randn(2, 2, 5, 8))
    assert c.length(0) == 3 and c._pages == 1 and c._free == free
    assert torch.equal(c.block_table[:, :1], table[:, :1])


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("masked", [False, True])
def test_paged_cache_with_a_mask_or_another_dtype_equals_the_contiguous_one(dtype, masked):
    """MultiHeadAttention with a paged cache in another dtype, or with attn_mask, works (it raised
    'a paged KVCache has no contiguous views; use attend(...)') and equals the contiguous cache;
    a left-padded sequence's pad keys are ignored on this path too, for both layouts."""
    torch.manual_seed(6)
    m = mh.MultiHeadAttention(32, 4, 2)
    x = torch.randn(2, 9, 32)
    pad = torch.tensor([3, 0])
    outs = {}
    with torch.no_grad():
        for page_size in (None, 4):
            cache = mh.KVCache(2, 2, 9, 8, page_size=page_size, dtype=dtype)
            cache.set_leftpad(pad)
            steps = []
            for t0, t1 in [(0, 6), (6, 7), (7, 9)]:
                mask = torch.ones(t1 - t0, t1, dtype=torch.bool) if masked else None
                steps.append(m(x[:, t0:t1], attn_mask=mask, is_causal=True, kv_cache=cache))
            outs[page_size] = torch.cat(steps, dim=1)
            assert cache.length(0) == 9
        assert (outs[None] - outs[4]).abs().max() < 1e-5
        for b in range(2):                                   # each sequence alone, from its first real token
            p = int(pad[b])
            kv = mh.KVCache(1, 2, 9, 8, dtype=dtype)
            alone = torch.cat([m(x[b:b + 1, p:6], is_causal=True, kv_cache=kv),
                               m(x[b:b + 1, 6:7], is_causal=True, kv_cache=kv),
                               m(x[b:b + 1, 7:9], is_causal=True, kv_cache=kv)], dim=1)
            assert (outs[4][b, p:] - alone[0]).abs().max() < 1e-5


@pytest.mark.parametrize("kwargs,match", [
    ({"softcap": -1}, r"^softcap: expected a finite number >= 0"),
    ({"softcap": float("nan")}, r"^softcap"),
    ({"window_size": (1,)}, r"^window_size: expected \(left, right\)"),
    ({"window_size": 5}, r"^window_size"),
    ({"window_size": (-2, 0)}, r"^window_size"),
    ({"alibi_slopes": torch.ones(3)}, r"^alibi_slopes: expected a float tensor of shape \[H\] = \[6\]"),
    ({"alibi_slopes": torch.ones(6, dtype=torch.int64)}, r"^alibi_slopes"),
    ({"alibi_slopes": [0.1] * 6}, r"^alibi_slopes"),
])
def test_module_checks_its_score_mods_when_built(kwargs, match):
    """window_size / softcap / alibi_slopes are checked by MultiHeadAttention(...), like backend
    (they were first refused at the first forward)."""
    with pytest.raises(ValueError, match=match):
        mh.MultiHeadAttention(48, 6, **kwargs)
    mh.MultiHeadAttention(48, 6, window_size=(4, 0), softcap=2.0, alibi_slopes=torch.rand(6))
