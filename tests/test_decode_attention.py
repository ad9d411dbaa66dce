"""Decode attention as its own kernel (cost/decode_attention.py): hand numbers, MLA's absorbed intensity,
GQA's, monotonicity, the merged variant and the refusals."""
import pytest
from hypothesis import given, settings, strategies as st

from multihead import cost
from multihead.cost.time import decode_attention as da
from multihead.cost.counts import formulas
from multihead.cost.counts import memory
from multihead.cost.time import timing as t


@pytest.fixture(autouse=True)
def separate_kernels():
    """These tests pin the separate-kernel term; the default (merged) is restored after each."""
    old = da.KERNELS
    da.KERNELS = "separate"
    yield
    da.KERNELS = old

H100 = cost.gpu_catalog()["H100-SXM"]
PLAIN = t.Constants(flops_efficiency=0.5, bandwidth_efficiency=0.8, layer_overhead_s={"vllm": 0.0},
                    request_overhead_s=0.0, allreduce_latency_s={"nvlink4": 10e-6}, allreduce_step_s=5e-6,
                    link_efficiency=0.5, dequant={"int8": 0.5, "int4": 0.25})
DSV3 = {"model_type": "deepseek_v3", "hidden_size": 7168, "intermediate_size": 18432, "moe_intermediate_size": 2048,
        "num_hidden_layers": 61, "num_attention_heads": 128, "num_key_value_heads": 128, "n_shared_experts": 1,
        "n_routed_experts": 256, "num_experts_per_tok": 8, "first_k_dense_replace": 3, "moe_layer_freq": 1,
        "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
        "v_head_dim": 128, "vocab_size": 129280}


def test_roofline_by_hand():
    # 1 TFLOP at 500 TFLOP/s = 2 ms; 1 GB at 2.5 TB/s = 0.4 ms: compute-bound, 2 ms
    assert da.attention_roofline_s(1e12, 1e9, 5e14, 2.5e12) == pytest.approx(2e-3)
    # 10 GFLOP, 1 GB: 0.02 ms vs 0.4 ms: memory-bound
    assert da.attention_roofline_s(1e10, 1e9, 5e14, 2.5e12) == pytest.approx(0.4e-3)
    assert da.attention_roofline_s(0.0, 0.0, 5e14, 2.5e12) == 0.0
    assert da.intensity(1e10, 1e9) == pytest.approx(10.0) and da.intensity(1.0, 0.0) == float("inf")


def test_refusals_name_the_argument():
    with pytest.raises(ValueError, match="decode attention: rates must be > 0"):
        da.attention_roofline_s(1.0, 1.0, 0.0, 1.0)
    old = da.KERNELS
    try:
        da.KERNELS = "fused"
        with pytest.raises(ValueError, match="KERNELS must be 'separate' or 'merged', got 'fused'"):
            da.split_step(linear_s=1.0, attention_compute_s=1.0, weight_s=1.0, kv_s=1.0)
    finally:
        da.KERNELS = old


def test_split_step_separate_and_merged_by_hand():
    # GEMMs compute-bound (3 ms of FLOPs, 1 ms of weights), attention memory-bound (0.5 ms FLOPs, 2 ms KV)
    sep = da.split_step(linear_s=3e-3, attention_compute_s=0.5e-3, weight_s=1e-3, kv_s=2e-3)
    assert sep == pytest.approx((3e-3, 1e-3, 2e-3))     # step = max(3, 1) + max(0.5, 2) = 5 ms
    old = da.KERNELS
    try:
        da.KERNELS = "merged"
        merged = da.split_step(linear_s=3e-3, attention_compute_s=0.5e-3, weight_s=1e-3, kv_s=2e-3)
    finally:
        da.KERNELS = old
    assert merged == pytest.approx((3.5e-3, 3e-3, 0.0))  # step = max(3.5, 3) = 3.5 ms: the KV hid under the GEMMs


def test_mla_absorbed_intensity_by_hand():
    """DeepSeek-V3's decode attention per GPU: every local head meets the replicated 576-element latent
    (512 + rope 64): 2176 FLOPs per (head, token), 1152 bytes per token in bf16."""
    spec = cost.read_config(DSV3, name="dsv3")
    assert formulas.pair_flops(spec, absorbed=True) == 2 * (576 + 512) == 2176
    ctx, batch = 4096, 32
    for tp, heads in ((1, 128), (8, 16)):
        flops = formulas.decode_attention_flops(spec, ctx, batch) / tp
        kv = memory.kv_bytes(spec, ctx, "bf16", batch=batch, gpus=tp)
        assert kv == pytest.approx(61 * 576 * ctx * batch * 2)            # replicated on every GPU
        assert da.intensity(flops, kv) == pytest.approx(heads * 2176 / 1152)
    # GQA (Llama-3-8B: 32 query heads on 8 KV heads, d 128): 4 d FLOPs per head and key, 2 * 8 * 128 * 2 bytes
    llama = cost.catalog_model("Llama-3.1-8B")
    flops = formulas.decode_attention_flops(llama, ctx, batch)
    kv = memory.kv_bytes(llama, ctx, "bf16", batch=batch)
    assert da.intensity(flops, kv) == pytest.approx(32 * 4 * 128 / (2 * 8 * 128 * 2)) == pytest.approx(4.0)


def test_decode_step_adds_the_kv_read_when_the_gemms_are_compute_bound():
    """Llama-3.1-8B on one H100 at batch 512, 4k context: the GEMMs are compute-bound, so the merged max
    hid the 68 GB of KV reads under them; separate kernels pay them after the GEMMs."""
    s = t.Setup(cost.catalog_model("Llama-3.1-8B"), t.make_gpu("H100-SXM", H100), PLAIN)
    step = t.decode_step(s, 512, 4096)
    assert step.compute_s > step.memory_s                                 # the GEMMs' own roofline
    kv = memory.kv_bytes(s.spec, 4097, "bf16", batch=512)
    bw = s.gpu.bandwidth_bytes_per_s * PLAIN.bandwidth_efficiency
    assert step.attention_s == pytest.approx(kv / bw)                     # memory-bound attention kernel
    assert step.total_s == pytest.approx(step.compute_s + step.attention_s)
    old = da.KERNELS
    try:
        da.KERNELS = "merged"
        merged = t.decode_step(s, 512, 4096)
    finally:
        da.KERNELS = old
    assert merged.attention_s == 0.0 and merged.total_s < step.total_s


def test_prefill_is_unchanged():
    """Only a decode step splits its kernels; a prefill already adds attention FLOPs to the GEMMs'."""
    s = t.Setup(cost.catalog_model("Llama-3.1-8B"), t.make_gpu("H100-SXM", H100), PLAIN)
    assert t.prefill(s, 2048).attention_s == 0.0


def test_default_is_merged_as_cross_validation_chose():
    import importlib
    assert importlib.reload(da).KERNELS == "merged"
    da.KERNELS = "separate"     # the fixture restores whatever the module had


@settings(max_examples=40, deadline=None)
@given(batch=st.integers(1, 256), ctx=st.integers(16, 32768), extra=st.integers(1, 4096),
       tp=st.sampled_from([1, 2, 8]))
def test_decode_step_grows_with_context_and_batch_and_never_undercuts_merged(batch, ctx, extra, tp):
    spec = cost.read_config(DSV3, name="dsv3") if tp == 8 else cost.catalog_model("Llama-3.1-8B")
    s = t.Setup(spec, t.make_gpu("H100-SXM", H100), PLAIN, tp=tp)
    a = t.decode_step(s, batch, ctx)
    assert t.decode_step(s, batch, ctx + extra).attention_s >= a.attention_s
    assert t.decode_step(s, batch + 1, ctx).total_s >= a.total_s * (1 - 1e-12)
    old = da.KERNELS
    try:
        da.KERNELS = "merged"
        merged = t.decode_step(s, batch, ctx)
    finally:
        da.KERNELS = old
    # max(a, b) + max(c, d) >= max(a + c, b + d): separate kernels are never faster than the merged max
    assert a.total_s >= merged.total_s * (1 - 1e-12)
