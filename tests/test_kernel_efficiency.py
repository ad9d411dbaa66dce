"""Session 14: kernel efficiency by engine for the routed experts' and MLA attention's kernels
(cost/time/kernel_efficiency.py, Constants.moe_efficiency / mla_efficiency): off changes nothing, factor 1 is the
dense rate, the extra seconds by hand, the refusal, the fit's free parameters, and monotonicity by hypothesis."""
import dataclasses

import pytest
from hypothesis import given, settings, strategies as st

from multihead import cost
from multihead.cost.time import kernel_efficiency as ke
from multihead.cost.time import moe_time
from multihead.cost.time import timing
from multihead.fits import timing_validation as tv

TABLE = tv.load_table()
DSR1 = tv._spec("DeepSeek-R1", TABLE)          # MoE (256 experts, 8 a token, 58 MoE layers) and MLA
LLAMA = cost.catalog_model("Llama-3.1-8B")
FP8 = timing.table_precision("fp8")[1]


def _setup(spec=DSR1, engine="sglang", moe=None, mla=None, tp=8, gpu="H200-SXM", **kw):
    c = dataclasses.replace(timing.load_constants(), moe_efficiency=dict(moe or {}), mla_efficiency=dict(mla or {}))
    g = timing.make_gpu(gpu, cost.gpu_catalog()[gpu])
    q = FP8 if spec is DSR1 else None
    return timing.Setup(spec, g, c, tp=tp, engine=engine, quantization=q, **kw)


@pytest.fixture
def on(monkeypatch):
    monkeypatch.setattr(ke, "KERNEL_EFFICIENCY", True)


def test_off_the_factors_change_nothing():
    a = timing.decode_step(_setup(), 4, 2048).total_s
    b = timing.decode_step(_setup(moe={"sglang": 0.3}, mla={"sglang": 0.3}), 4, 2048).total_s
    assert a == b


def test_factor_one_is_the_dense_rate(on):
    plain = _setup()
    ones = _setup(moe={"sglang": 1.0}, mla={"sglang": 1.0})
    for f in (lambda s: timing.decode_step(s, 16, 4096).total_s, lambda s: timing.prefill(s, 4096).total_s):
        assert f(plain) == f(ones)


def test_routed_expert_read_by_hand(on):
    """DeepSeek-R1 in fp8 on 8 GPUs, one token: 8 experts of 3 * 7168 * 2048 = 44,040,192 one-byte weights in each of
    58 MoE layers, an eighth on each GPU: 2,554,331,136 bytes. At moe_efficiency 0.5 they take twice as long: the
    step's memory side grows by exactly their read time at the dense rate, and the compute side by their FLOPs'
    time (2 per weight)."""
    base, slow = _setup(), _setup(moe={"sglang": 0.5})
    routed = moe_time.routed_expert_bytes(base, 1)
    assert routed == pytest.approx(58 * 8 * 3 * 7168 * 2048 / 8)
    a, b = timing.decode_step(base, 1, 1000), timing.decode_step(slow, 1, 1000)
    assert b.memory_s - a.memory_s == pytest.approx(timing.read_seconds(base, routed), rel=1e-9)
    flops = 2 * 8 * 44040192 * 58 / 8
    assert flops == moe_time.routed_flops_per_gpu(base, 1)
    assert b.compute_s - a.compute_s == pytest.approx(flops / timing.linear_flops_per_s(base), rel=1e-9)


def test_mla_factor_scales_the_attention_sides(on):
    """mla_efficiency 0.5: the latent read (the KV side) takes twice as long, the weights' read is unchanged."""
    base, slow = _setup(), _setup(mla={"sglang": 0.5})
    a, b = timing.decode_step(base, 64, 8192), timing.decode_step(slow, 64, 8192)
    weights = timing.weights_read(base, 64)[0] + moe_time.imbalance_extra_bytes(base, 64)
    kv_s = timing.read_seconds(base, a.bytes - weights)
    assert b.memory_s - a.memory_s == pytest.approx(kv_s, rel=1e-9)


def test_prefill_moe_factor_covers_the_grouped_gemms_padding(on):
    """A 4096-token prefill at moe_efficiency 0.5: compute grows by the routed FLOPs plus the grouped GEMMs' tile
    padding (moe_time term 2) at the dense rate, and the memory side by the touched experts' read."""
    base, slow = _setup(), _setup(moe={"sglang": 0.5})
    a, b = timing.prefill(base, 4096), timing.prefill(slow, 4096)
    flops = moe_time.routed_flops_per_gpu(base, 4096) + moe_time.padding_extra_flops(base, 4096)
    assert moe_time.padding_extra_flops(base, 4096) > 0
    assert b.compute_s - a.compute_s == pytest.approx(flops / timing.linear_flops_per_s(base), rel=1e-9)
    assert b.memory_s - a.memory_s == pytest.approx(
        timing.read_seconds(base, moe_time.routed_expert_bytes(base, 4096)), rel=1e-9)


def test_prefill_mla_factor_covers_the_attention_flops(on):
    """A 4096-token prefill at mla_efficiency 0.5: compute grows by the MLA attention's FLOPs (causal count, per GPU)
    at the dense attention rate."""
    base, slow = _setup(), _setup(mla={"sglang": 0.5})
    a, b = timing.prefill(base, 4096), timing.prefill(slow, 4096)
    attention = timing.prefill_attention_flops(DSR1, 4096) / 8
    assert b.compute_s - a.compute_s == pytest.approx(attention / timing.attention_flops_per_s(base), rel=1e-9)


def test_expert_parallel_imbalance_is_in_the_slower_read(on):
    """Experts over 8 GPUs (expert_parallel_size 8), a 4-token step: the slowest GPU reads its share plus the
    imbalance (moe_time term 1); at moe_efficiency 0.5 the step's memory side grows by both at the dense rate."""
    base = _setup(expert_parallel_size=8)
    slow = _setup(moe={"sglang": 0.5}, expert_parallel_size=8)
    extra = moe_time.imbalance_extra_bytes(base, 4)
    assert extra > 0
    a, b = timing.decode_step(base, 4, 1000), timing.decode_step(slow, 4, 1000)
    assert b.memory_s - a.memory_s == pytest.approx(
        timing.read_seconds(base, moe_time.routed_expert_bytes(base, 4) + extra), rel=1e-9)


def test_a_per_phase_table_without_the_switch_is_refused(on):
    """A fit keyed by engine and phase read while PER_PHASE is off would fall back to 1 unseen: refused by name."""
    with pytest.raises(ValueError, match=r"kernel efficiency: .*'sglang/decode'.* PER_PHASE"):
        timing.decode_step(_setup(moe={"sglang/decode": 0.5}), 1, 100)


def test_engine_keys_and_per_phase(on, monkeypatch):
    fast = _setup(moe={"vllm": 0.5})            # another engine's factor does not apply to SGLang
    assert timing.decode_step(fast, 8, 1024).total_s == timing.decode_step(_setup(), 8, 1024).total_s
    monkeypatch.setattr(ke, "PER_PHASE", True)
    assert ke.key("vllm@v1", "prefill") == "vllm/prefill"
    s = _setup(moe={"sglang/prefill": 0.5})
    assert timing.decode_step(s, 8, 1024).total_s == timing.decode_step(_setup(), 8, 1024).total_s
    assert timing.prefill(s, 2048).total_s > timing.prefill(_setup(), 2048).total_s
    assert ke.factor({"sglang": 0.7}, "sglang", "decode") == 0.7      # the engine's own entry, phase missing


def test_a_dense_model_is_untouched(on):
    a = _setup(LLAMA, "vllm", tp=1)
    b = _setup(LLAMA, "vllm", moe={"vllm": 0.3}, mla={"vllm": 0.3}, tp=1)
    assert timing.decode_step(a, 32, 2048).total_s == timing.decode_step(b, 32, 2048).total_s


def test_a_factor_at_or_below_zero_is_refused_by_name(on):
    with pytest.raises(ValueError, match=r"kernel efficiency: expected a factor > 0 for 'sglang'"):
        timing.decode_step(_setup(moe={"sglang": 0.0}), 1, 100)


def test_free_parameters_follow_the_switch(monkeypatch):
    sub = {**TABLE, "rows": [r for r in TABLE["rows"] if tv.split_of(r) in tv.FIT_SPLITS]}
    assert not [p for p in tv.free_parameters(sub) if p[0] in ke.TABLES]
    monkeypatch.setattr(ke, "KERNEL_EFFICIENCY", True)
    got = {p for p in tv.free_parameters(sub) if p[0] in ke.TABLES}
    assert ("moe_efficiency", "sglang") in got and ("mla_efficiency", "sglang") in got
    assert ("mla_efficiency", "gpt-fast") not in got           # no MLA row runs on gpt-fast
    monkeypatch.setattr(ke, "PER_PHASE", True)
    got = {p for p in tv.free_parameters(sub) if p[0] in ke.TABLES}
    assert ("moe_efficiency", "sglang/prefill") in got and ("moe_efficiency", "sglang/decode") in got
    assert ("moe_efficiency", "gpt-fast/prefill") not in got     # gpt-fast rows time decode only


@settings(max_examples=40, deadline=None)
@given(eta=st.floats(0.2, 3.0), lower=st.floats(0.2, 1.0), batch=st.integers(1, 256),
       context=st.integers(1, 32768), engine=st.sampled_from(["vllm", "sglang", "tensorrt-llm"]),
       which=st.sampled_from(["moe", "mla"]))
def test_slower_kernels_never_make_a_step_faster(eta, lower, batch, context, engine, which):
    ke_on = ke.KERNEL_EFFICIENCY
    ke.KERNEL_EFFICIENCY = True
    try:
        hi = _setup(engine=engine, **{which: {engine: eta}})
        lo = _setup(engine=engine, **{which: {engine: eta * lower}})
        assert timing.decode_step(lo, batch, context).total_s >= timing.decode_step(hi, batch, context).total_s
        assert timing.prefill(lo, min(context, 8192)).total_s >= timing.prefill(hi, min(context, 8192)).total_s
    finally:
        ke.KERNEL_EFFICIENCY = ke_on
