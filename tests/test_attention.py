"""multihead.attention against a float64 oracle and torch SDPA, over shapes, masks, dtypes, backends.

The matrix: heads {MHA, GQA, MQA} x Tq x Tk in {1, 7, 128, 1003} x mask kind x backend, full for
fp32 (but for two masks at 1003 x 1003). B and d alternate between {1, 2} and {64, 128} across cases (B = 1 for the largest ones) so
every value meets every head layout and mask. bf16/fp16 run a smaller subset (plain-PyTorch
low-precision matmuls are slow on this CPU) and are held to at most 2x SDPA's own error in the
same dtype. 1003 is deliberately not a multiple of the tiled block (256) or decode chunk (512).
"""
from __future__ import annotations

import functools
import itertools
import math

import pytest
import torch
from hypothesis import given, settings, strategies as st
from torch.utils.flop_counter import FlopCounterMode

import multihead as mh
from attention_oracle import oracle
from conftest import attention_fp64, attention_sdpa, bottom_right_causal
from multihead import functional
from multihead.cost.counts.formulas import attention_flops, score_matrix_bytes
from multihead.demo import peak_allocated_bytes
from multihead.kernels import BACKENDS, decode, tiled

HEADS = {"MHA": (4, 4), "GQA": (4, 2), "MQA": (4, 1)}
SIZES = [1, 7, 128, 1003]
MASKS = ["none", "causal", "padding", "bool", "causal+bool"]
ALL_BACKENDS = sorted(BACKENDS)          # includes any fast kernel registered beside ours
CORE_BACKENDS = ["reference", "tiled", "decode"]


def make_case(heads: str, tq: int, tk: int, mask_kind: str, dtype=torch.float32, seed: int = 0):
    """Random q, k, v and a mask of the given kind. Returns (q, k, v, attn_mask, is_causal)."""
    H, H_kv = HEADS[heads]
    i = SIZES.index(tq) + SIZES.index(tk) + MASKS.index(mask_kind) if tq in SIZES and tk in SIZES else seed
    big = tq * tk > 128 * 128
    B = 1 if big else 1 + i % 2
    d = 64 if (i + list(HEADS).index(heads)) % 2 else 128
    g = torch.Generator().manual_seed(1000 * i + 17 * len(mask_kind) + seed + H_kv)
    q = torch.randn(B, H, tq, d, generator=g).to(dtype)
    k = torch.randn(B, H_kv, tk, d, generator=g).to(dtype)
    v = torch.randn(B, H_kv, tk, d, generator=g).to(dtype)
    mask = None
    if mask_kind == "padding":
        # key padding: sequence b has its last b * tk // 3 keys padded out ([B, 1, 1, Tk])
        lengths = torch.tensor([tk - b * tk // 3 for b in range(B)])
        mask = (torch.arange(tk)[None, :] < lengths[:, None]).view(B, 1, 1, tk)
    elif mask_kind in ("bool", "causal+bool"):
        mask = torch.rand(B, H, tq, tk, generator=g) > 0.3
        mask[:, :, tq // 2, :] = False            # one fully masked query row in every head
    return q, k, v, mask, "causal" in mask_kind


@functools.lru_cache(maxsize=64)
def expected(heads, tq, tk, mask_kind, dtype=torch.float32):
    """(case, fp64 oracle (out, lse), SDPA output in `dtype`), computed once per case."""
    case = make_case(heads, tq, tk, mask_kind, dtype)
    q, k, v, mask, causal = case
    return case, attention_fp64(q, k, v, mask, causal), attention_sdpa(q, k, v, mask, causal)


def max_err(a, b):
    return (a.double() - b.double()).abs().max().item()


# All of it, except that 1003 x 1003 (the slowest size) skips the two non-causal masks, which the
# 128 x 1003 and 1003 x 128 cases cover.
FP32_CASES = [c for c in itertools.product(HEADS, SIZES, SIZES, MASKS)
              if not (c[1] == c[2] == 1003 and c[3] in ("padding", "bool"))]


@pytest.mark.parametrize("backend", ALL_BACKENDS)
@pytest.mark.parametrize("heads,tq,tk,mask_kind", FP32_CASES,
                         ids=[f"{h}-q{a}-k{b}-{m}" for h, a, b, m in FP32_CASES])
def test_fp32_matches_fp64_and_sdpa(heads, tq, tk, mask_kind, backend):
    (q, k, v, mask, causal), (ref, ref_lse), sdpa = expected(heads, tq, tk, mask_kind)
    out, lse = mh.attention(q, k, v, mask, is_causal=causal, return_lse=True, backend=backend)
    assert out.shape == q.shape and out.dtype == torch.float32
    assert lse.shape == q.shape[:3] and lse.dtype == torch.float32
    assert not out.isnan().any()
    err, err_sdpa = max_err(out, ref), max_err(sdpa, ref)
    assert err <= 2 * err_sdpa + 2e-6, (err, err_sdpa)
    assert max_err(out, sdpa) <= 3 * err_sdpa + 2e-6
    # lse: same -inf pattern (rows that see no key) and close elsewhere
    assert torch.equal(torch.isneginf(lse), torch.isneginf(ref_lse))
    finite = torch.isfinite(ref_lse)
    assert torch.allclose(lse[finite].double(), ref_lse[finite], atol=1e-4, rtol=1e-5)
    if mask_kind in ("bool", "causal+bool"):   # the fully masked row: zeros and -inf
        assert torch.all(out[:, :, tq // 2] == 0) and torch.all(torch.isneginf(lse[:, :, tq // 2]))


LOW_CASES = [(h, tq, tk, m) for h in HEADS
             for tq, tk in [(1, 7), (7, 128), (128, 128), (1, 1003), (128, 1003)]
             for m in ("causal", "bool")]


@pytest.mark.parametrize("backend", ALL_BACKENDS)
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "fp16"])
@pytest.mark.parametrize("heads,tq,tk,mask_kind", LOW_CASES,
                         ids=[f"{h}-q{a}-k{b}-{m}" for h, a, b, m in LOW_CASES])
def test_low_precision_within_2x_of_pytorch(heads, tq, tk, mask_kind, dtype, backend):
    (q, k, v, mask, causal), (ref, ref_lse), sdpa = expected(heads, tq, tk, mask_kind, dtype)
    out, lse = mh.attention(q, k, v, mask, is_causal=causal, return_lse=True, backend=backend)
    assert out.dtype == dtype and lse.dtype == torch.float32
    assert not out.isnan().any()
    # "plain PyTorch in the same dtype" = SDPA on the same low-precision inputs; both are scored
    # against the fp64 oracle of those same inputs. Slack: a quarter of one output ulp near 1.
    slack = torch.finfo(dtype).eps / 4
    err, err_sdpa = max_err(out, ref), max_err(sdpa, ref)
    assert err <= 2 * err_sdpa + slack, (err, err_sdpa)
    finite = torch.isfinite(ref_lse)
    assert torch.equal(torch.isneginf(lse), torch.isneginf(ref_lse))
    assert torch.allclose(lse[finite].double(), ref_lse[finite], atol=1e-4, rtol=1e-5)


# Block and chunk edges: tiny blocks so that every path (first block, ragged last block, causal
# blocks skipped / straddling / fully below the diagonal, empty rows when Tq > Tk) is exercised.
EDGE_SIZES = [(1, 1), (1, 37), (7, 7), (37, 37), (37, 100), (100, 37), (100, 100)]


@pytest.mark.parametrize("kernel", ["tiled", "decode"])
@pytest.mark.parametrize("mask_kind", ["none", "causal", "padding", "causal+bool"])
@pytest.mark.parametrize("tq,tk", EDGE_SIZES)
def test_kernel_block_edges(tq, tk, mask_kind, kernel):
    q, k, v, mask, causal = make_case("GQA", tq, tk, mask_kind, seed=tq * 7 + tk)
    ref, ref_lse = attention_fp64(q, k, v, mask, causal)
    norm = functional.normalize_mask(mask, q, k)
    scale = q.shape[-1] ** -0.5
    for blocks in ([{"block_q": 16, "block_k": 9}, {"block_q": 5, "block_k": 32}] if kernel == "tiled"
                   else [{"chunk": 9}, {"chunk": 32}, {"chunk": 1}]):
        fn = tiled.attention if kernel == "tiled" else decode.attention
        out, lse = fn(q, k, v, norm, is_causal=causal, scale=scale, **blocks)
        assert max_err(out, ref) < 1e-5, blocks
        assert torch.equal(torch.isneginf(lse), torch.isneginf(ref_lse))
        fin = torch.isfinite(ref_lse)
        assert torch.allclose(lse[fin].double(), ref_lse[fin], atol=1e-5)


@pytest.mark.parametrize("backend", ALL_BACKENDS)
def test_float_additive_mask_and_scale(backend):
    """An additive float mask (finite biases and -inf) and a custom scale, vs the oracle and SDPA."""
    g = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(2, 4, n, 64, generator=g) for n in (9, 9, 9))
    k, v = k[:, :2, :5], v[:, :2, :5]                    # GQA 4/2, Tq=9, Tk=5 (Tq > Tk)
    bias = torch.randn(2, 1, 9, 5, generator=g)
    bias[0, 0, 3] = float("-inf")                         # a fully masked row via -inf
    bias[1, 0, :, 0] = float("-inf")
    ref, _ = attention_fp64(q, k, v, bias, scale=0.3)
    out = mh.attention(q, k, v, bias, scale=0.3, backend=backend)
    assert max_err(out, ref) < 1e-5 and torch.all(out[0, :, 3] == 0)
    sdpa = torch.nn.functional.scaled_dot_product_attention(
        q, k.repeat_interleave(2, 1), v.repeat_interleave(2, 1), attn_mask=bias, scale=0.3)
    assert max_err(out, sdpa) < 1e-5
    # two stacked "finfo.min" masks overflow to -inf in fp32: must still give zeros, not NaN
    lowest = torch.full((9, 5), torch.finfo(torch.float32).min)
    twice = lowest + lowest                               # -inf everywhere
    assert torch.all(mh.attention(q, k, v, twice, backend=backend) == 0)


def test_causal_is_bottom_right():
    """Tq=2 after 3 cached keys: query 0 sees keys 0..3, query 1 sees 0..4 (the docstring drawing)."""
    q, k = torch.zeros(1, 1, 2, 4), torch.zeros(1, 1, 5, 4)
    v = torch.eye(5).view(1, 1, 5, 5)                     # out = the attention matrix itself
    for backend in ALL_BACKENDS:
        p = mh.attention(q, k, v, is_causal=True, backend=backend)[0, 0]
        expect = torch.tensor([[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]]) / torch.tensor([[4.0], [5.0]])
        assert torch.allclose(p, expect), backend
    # Tq > Tk: the first Tq - Tk queries see nothing
    p = mh.attention(torch.zeros(1, 1, 4, 4), torch.zeros(1, 1, 2, 4), torch.ones(1, 1, 2, 4), is_causal=True)
    assert p[0, 0, :, 0].tolist() == [0, 0, 1, 1]


def test_mask_and_causal_combine_with_and():
    q, k, v, _, _ = make_case("MHA", 7, 7, "none")
    keep = torch.ones(7, 7, dtype=torch.bool)
    keep[:, 0] = False                                   # never attend to key 0
    out = mh.attention(q, k, v, keep, is_causal=True)
    ref, _ = attention_fp64(q, k, v, keep & bottom_right_causal(7, 7))
    assert max_err(out, ref) < 1e-6
    assert torch.all(out[:, :, 0] == 0)                  # query 0 saw only key 0, now masked


@pytest.mark.parametrize("heads", list(HEADS))
def test_reference_flops_match_accounting(heads):
    """FlopCounterMode sees exactly Q K^T and P V: 4 * B * H * Tq * Tk * d (GQA included)."""
    q, k, v, _, _ = make_case(heads, 7, 128, "none")
    B, H, Tq, d = q.shape
    with FlopCounterMode(display=False) as counter:
        mh.attention(q, k, v, backend="reference")
    assert counter.get_total_flops() == attention_flops(B, H, Tq, k.shape[2], d) == 4 * B * H * Tq * 128 * d


def test_auto_choice_and_result():
    # The rule's shape, not the kernel names (the performance work swaps in tuned kernels):
    # a decode-family kernel for few queries over many keys, reference when the scores are small,
    # a memory-bounded kernel otherwise.
    decode_pick = functional.choose_backend(1, 32, 1, 32768)
    assert decode_pick in BACKENDS and "decode" in decode_pick
    assert functional.choose_backend(2, 4, 128, 128) == "reference"
    assert functional.choose_backend(1, 32, 8192, 8192) in set(BACKENDS) - {"reference", "decode"}
    for tq, tk in [(1, 2048), (128, 128), (1003, 1003)]:
        q, k, v, _, _ = make_case("GQA", tq, tk, "none", seed=1)
        ref, _ = attention_fp64(q, k, v, is_causal=True)
        assert max_err(mh.attention(q, k, v, is_causal=True), ref) < 1e-5


def test_reference_limit_names_bytes_and_suggests_tiled():
    q = torch.randn(1, 2, 300, 16)
    need = score_matrix_bytes(1, 2, 300, 300, 4)
    with functional.score_limit(need - 1):
        with pytest.raises(ValueError, match=r"backend.*720,000 bytes.*tiled"):
            mh.attention(q, q[:, :1], q[:, :1], backend="reference")
        mh.attention(q, q[:, :1], q[:, :1], backend="tiled")          # tiled has no such limit
    with functional.score_limit(need):
        mh.attention(q, q[:, :1], q[:, :1], backend="reference")      # exactly at the limit is fine
    assert functional.max_score_bytes() == functional.MAX_SCORE_BYTES


def test_the_score_limit_has_one_override(monkeypatch):
    """score_limit() is the one way to change the limit: assigning the documented default does
    nothing (a second, silent way was issue 17's complaint), and the error names score_limit()."""
    q = torch.randn(1, 2, 300, 16)
    monkeypatch.setattr(functional, "MAX_SCORE_BYTES", 10)
    assert functional.max_score_bytes() == functional._DEFAULT_SCORE_LIMIT != 10
    mh.attention(q, q[:, :1], q[:, :1], backend="reference")            # 720 kB: under the default
    with functional.score_limit(10):
        with pytest.raises(ValueError, match=r"score_limit\(n\).*MULTIHEAD_MAX_SCORE_BYTES"):
            mh.attention(q, q[:, :1], q[:, :1], backend="reference")


def test_auto_stays_within_a_lowered_score_limit(monkeypatch):
    """A limit below auto's own reference threshold (64 MiB): auto picks a kernel the limit
    allows (it picked the reference, which then refused: "use backend='tiled'"), and a fallback
    auto chose (fast_decode with softcap -> decode) never holds more scores than the limit."""
    q = torch.randn(1, 1, 100, 8)
    with functional.score_limit(1000):
        assert functional.choose_backend(1, 1, 100, 100) not in ("reference", "decode")
        ref, _ = attention_fp64(q, q, q)
        assert max_err(mh.attention(q, q, q), ref) < 1e-5
    need = score_matrix_bytes(1, 1, 100, 100, 4)
    with functional.score_limit(need):                       # within both limits: still the reference
        assert functional.choose_backend(1, 1, 100, 100) == "reference"
    seen = []
    for name in ("reference", "decode"):
        def spy(q, k, v, mask, *, is_causal, scale, mods=None, _kernel=BACKENDS[name]):
            seen.append(q.shape[0] * q.shape[1] * q.shape[2] * k.shape[2] * 4)
            return _kernel(q, k, v, mask, is_causal=is_causal, scale=scale, mods=mods)
        monkeypatch.setitem(BACKENDS, name, spy)
    qd, kd = torch.randn(1, 4, 2, 16), torch.randn(1, 2, 3000, 16)
    with functional.score_limit(4096):
        out = mh.attention(qd, kd, kd, softcap=5.0, backend="fast_decode")
        mh.attention(qd, kd, kd, softcap=5.0)
    assert all(n <= 4096 for n in seen)
    assert (out - oracle(qd, kd, kd, softcap=5.0)[0]).abs().max() < 1e-5


def test_auto_under_a_low_env_limit_runs():
    """The audit's MULTIHEAD_MAX_SCORE_BYTES=16000000 reproducer, in a fresh process."""
    import subprocess
    import sys
    code = ("import torch, multihead as mh; q = torch.randn(1, 8, 1024, 64); "
            "print(mh.attention(q, q, q, is_causal=True).shape)")
    env = dict(__import__("os").environ, MULTIHEAD_MAX_SCORE_BYTES="16000000")
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-500:]


def test_flags_are_bools_and_numpy_scales_are_numbers():
    """return_lse is checked like is_causal (a truthy string was taken as True, also on the
    remembered decode path); a NumPy float scale is a number, as SDPA takes it."""
    np = pytest.importorskip("numpy")
    q, k, v = torch.randn(1, 4, 1, 8), torch.randn(1, 2, 40, 8), torch.randn(1, 2, 40, 8)
    mh.attention(q, k, v)                                     # a shape the decode path remembers
    for call in (lambda **kw: mh.attention(q, k, v, **kw),
                 lambda **kw: mh.attention(q.expand(1, 4, 3, 8), k, v, **kw),
                 lambda **kw: mh.attention_with_kvcache(q, k, v, cache_seqlens=40, **kw),
                 lambda **kw: mh.attention_varlen(q[0].transpose(0, 1), k[0].transpose(0, 1), v[0].transpose(0, 1),
                                                  torch.tensor([0, 1]), torch.tensor([0, 40]), **kw)):
        with pytest.raises(ValueError, match=r"^return_lse: expected True or False, got 'yes'"):
            call(return_lse="yes")
        with pytest.raises(ValueError, match=r"^scale: expected a finite number"):
            call(scale=np.float32("nan"))
        with pytest.raises(ValueError, match=r"^scale: expected a finite number"):
            call(scale=torch.tensor(0.5))
        for scale in (np.float32(0.5), np.float64(0.5), np.int64(2)):
            assert torch.equal(call(scale=scale), call(scale=float(scale)))


def test_noncontiguous_inputs_and_grad():
    """KV-cache slices are non-contiguous; autograd flows through the reference and tiled paths."""
    big = torch.randn(2, 2, 50, 32)
    k, v = big[:, :, :37], big.flip(2)[:, :, :37]
    q = torch.randn(2, 4, 5, 32, requires_grad=True)
    ref, _ = attention_fp64(q.detach(), k, v, is_causal=True)
    grads = []
    for backend in CORE_BACKENDS:                        # fast kernels need not support autograd
        out = mh.attention(q, k, v, is_causal=True, backend=backend)
        assert max_err(out.detach(), ref) < 1e-5
        (g,) = torch.autograd.grad(out.square().sum(), q)
        grads.append(g)
    for g in grads[1:]:
        assert torch.allclose(g, grads[0], atol=1e-5)


# --- bad input: every error names the argument ---------------------------------------------------

def _qkv(B=1, H=4, H_kv=2, Tq=3, Tk=5, d=8):
    return torch.randn(B, H, Tq, d), torch.randn(B, H_kv, Tk, d), torch.randn(B, H_kv, Tk, d)


@pytest.mark.parametrize("mutate,match", [
    (lambda q, k, v: (q[0], k, v, {}), r"^q: expected 4 dims"),
    (lambda q, k, v: (q, k[0], v, {}), r"^k: expected 4 dims"),
    (lambda q, k, v: (q, k, v[..., None], {}), r"^v: expected 4 dims"),
    (lambda q, k, v: (q, torch.randn(1, 3, 5, 8), torch.randn(1, 3, 5, 8), {}), r"^k: .*multiple of k's H_kv=3"),
    (lambda q, k, v: (q, k[..., :4], v, {}), r"^k: head dim d=4 does not match q's d=8"),
    (lambda q, k, v: (q, k, v[:, :, :4], {}), r"^v: expected shape"),
    (lambda q, k, v: (q, k.double(), v, {}), r"^k: dtype torch.float64 does not match"),
    (lambda q, k, v: (q, k, v.half(), {}), r"^v: dtype torch.float16 does not match"),
    (lambda q, k, v: (q.int(), k, v, {}), r"^q: expected dtype float16"),
    (lambda q, k, v: (q, k.to("meta"), v, {}), r"^k: device meta does not match"),
    (lambda q, k, v: (q, torch.randn(2, 2, 5, 8), torch.randn(2, 2, 5, 8), {}), r"^k: batch 2"),
    (lambda q, k, v: (q[:, :, :0], k, v, {}), r"^q: expected Tq >= 1.*T=0"),
    (lambda q, k, v: (q, k[:, :, :0], v[:, :, :0], {}), r"^k: expected Tk >= 1.*T=0"),
    (lambda q, k, v: (q, k, v, {"attn_mask": torch.ones(3, 4, dtype=torch.bool)}), r"^attn_mask: shape \(3, 4\) is not broadcastable"),
    (lambda q, k, v: (q, k, v, {"attn_mask": torch.ones(1, 1, 1, 1, 3, 5, dtype=torch.bool)}), r"^attn_mask: .*not broadcastable"),
    (lambda q, k, v: (q, k, v, {"attn_mask": torch.ones(3, 5, dtype=torch.int64)}), r"^attn_mask: expected dtype bool"),
    (lambda q, k, v: (q, k, v, {"attn_mask": [[True]]}), r"^attn_mask: expected a bool or float tensor"),
    (lambda q, k, v: (q, k, v, {"attn_mask": torch.ones(3, 5, dtype=torch.bool, device="meta")}), r"^attn_mask: device"),
    (lambda q, k, v: (q, k, v, {"backend": "flash"}), r"^backend: expected 'auto' or one of"),
    (lambda q, k, v: (q, k, v, {"scale": float("nan")}), r"^scale: expected a finite number"),
    (lambda q, k, v: (q, k, v, {"is_causal": 1}), r"^is_causal: expected True or False"),
    (lambda q, k, v: ("q", k, v, {}), r"^q: expected a torch.Tensor"),
], ids=["q-rank", "k-rank", "v-rank", "H%H_kv", "d-mismatch", "v-shape", "k-dtype", "v-dtype", "q-int",
        "device", "batch", "Tq=0", "Tk=0", "mask-shape", "mask-rank", "mask-dtype", "mask-type",
        "mask-device", "backend", "scale", "is_causal", "q-type"])
def test_bad_input_names_the_argument(mutate, match):
    q, k, v, kwargs = mutate(*_qkv())
    with pytest.raises(ValueError, match=match):
        mh.attention(q, k, v, **kwargs)


# --- properties (hypothesis) ---------------------------------------------------------------------

@st.composite
def small_problem(draw):
    H_kv = draw(st.sampled_from([1, 2]))
    H = H_kv * draw(st.sampled_from([1, 2, 3]))
    B, tq, tk, d = draw(st.integers(1, 2)), draw(st.integers(1, 12)), draw(st.integers(1, 12)), draw(st.integers(1, 16))
    seed = draw(st.integers(0, 2**31 - 1))
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(B, H, tq, d, generator=g) * draw(st.sampled_from([0.1, 1.0, 5.0]))
    k = torch.randn(B, H_kv, tk, d, generator=g)
    return q, k, draw(st.sampled_from(ALL_BACKENDS)), g


def _probabilities(q, k, backend, **kw):
    """The attention matrix itself: with V = I (d_v = Tk), out[b, h, i, j] = P[i, j]."""
    B, H_kv, tk, _ = k.shape
    eye = torch.eye(tk).expand(B, H_kv, tk, tk)
    return mh.attention(q, k, eye, backend=backend, **kw)


@settings(max_examples=25, deadline=None)
@given(small_problem())
def test_property_rows_sum_to_one(problem):
    q, k, backend, _ = problem
    p = _probabilities(q, k, backend)
    assert torch.all(p >= 0)
    assert torch.allclose(p.sum(-1), torch.ones(()), atol=1e-5)


@settings(max_examples=25, deadline=None)
@given(small_problem())
def test_property_causal_zero_above_diagonal(problem):
    q, k, backend, _ = problem
    tq, tk = q.shape[2], k.shape[2]
    p = _probabilities(q, k, backend, is_causal=True)
    above = ~bottom_right_causal(tq, tk)
    assert torch.all(p[..., above] == 0)
    seen = bottom_right_causal(tq, tk).any(-1)            # rows that see at least one key sum to 1
    assert torch.allclose(p.sum(-1)[..., seen], torch.ones(()), atol=1e-5)
    assert torch.all(p.sum(-1)[..., ~seen] == 0)


@settings(max_examples=25, deadline=None)
@given(small_problem(), st.floats(-50, 50))
def test_property_shift_invariance(problem, c):
    """Adding a constant to every logit of a row (here: a per-row additive mask) changes nothing."""
    q, k, backend, g = problem
    v = torch.randn(k.shape, generator=g)
    shift = torch.full(q.shape[:3] + (1,), c) + torch.randn(q.shape[:3] + (1,), generator=g)
    base = mh.attention(q, k, v, backend=backend)
    assert torch.allclose(mh.attention(q, k, v, shift, backend=backend), base, atol=1e-5)


@settings(max_examples=25, deadline=None)
@given(small_problem())
def test_property_key_permutation_invariance(problem):
    q, k, backend, g = problem
    v = torch.randn(k.shape, generator=g)
    mask = torch.rand(q.shape[:3] + (k.shape[2],), generator=g) > 0.3
    perm = torch.randperm(k.shape[2], generator=g)
    base = mh.attention(q, k, v, mask, backend=backend)
    permuted = mh.attention(q, k[:, :, perm], v[:, :, perm], mask[..., perm], backend=backend)
    assert torch.allclose(permuted, base, atol=1e-5)


# --- memory --------------------------------------------------------------------------------------

@pytest.mark.slow
def test_tiled_memory_is_far_below_score_matrix():
    """Peak extra allocation measured with torch.profiler(profile_memory=True): every allocator
    allocation/free is an event with a signed size; the peak of their running sum over the call
    is what the call added on top of its inputs (see multihead.demo.peak_allocated_bytes)."""
    T, d = 8192, 64
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 1, T, d, generator=g) for _ in range(3))
    scores = score_matrix_bytes(1, 1, T, T, 4)                          # 256 MiB in fp32
    peak = peak_allocated_bytes(lambda: mh.attention(q, k, v, is_causal=True, backend="tiled"))
    # What tiled needs: the output (T*d*4 = 2 MiB) plus a few 256x256 blocks (256 KiB each).
    out_bytes = T * d * 4
    assert out_bytes <= peak < out_bytes + 16 * tiled.BLOCK_Q * tiled.BLOCK_K * 4, peak
    assert peak < scores / 50
    # The method does see a T^2 allocation when there is one (reference at a size that fits).
    t = 1024
    peak_ref = peak_allocated_bytes(lambda: mh.attention(q[:, :, :t], k[:, :, :t], v[:, :, :t],
                                                         backend="reference"))
    assert peak_ref >= score_matrix_bytes(1, 1, t, t, 4)


def test_tiled_result_at_long_length_spot_check():
    """Tiled and reference agree on a long causal GQA case (rows spread across many blocks)."""
    q, k, v, _, _ = make_case("GQA", 2500, 2500, "none", seed=5)
    q, k, v = q[:1, :, :, :64], k[:1, :, :, :64], v[:1, :, :, :64]
    rows = torch.tensor([0, 255, 256, 1000, 2499])
    ref, _ = attention_fp64(q[:, :, rows], k, v, bottom_right_causal(2500, 2500)[rows])
    out = mh.attention(q, k, v, is_causal=True, backend="tiled")
    assert max_err(out[:, :, rows], ref) < 1e-5
    assert math.isfinite(out.abs().max().item())
