"""All-reduce chosen smoothly, in-switch reduction, and the MoE terms (cost/time/comm_time.py, cost/time/moe_time.py): hand numbers."""
import math

import pytest
from hypothesis import given, settings, strategies as st

from multihead import cost
from multihead.cost.time import comm_time
from multihead.cost.time import moe_time
from multihead.cost.time import timing as t

PLAIN = t.Constants(allreduce_latency_s={"nvlink3": 10e-6, "nvlink4": 10e-6}, allreduce_step_s=5e-6, link_efficiency=0.5)


def test_cheapest_algorithm_by_hand():
    # 100 kB over 4 GPUs of 100 GB/s (wire 50 GB/s): one-stage 10 + 6 us; two-stage 10 + 5 + 3 us; ring 10 + 10 + 3 us
    costs = comm_time.algorithm_costs(1e5, 4, 100e9, 10e-6, 5e-6, 0.5, "nvlink3")
    assert costs["one-stage"] == pytest.approx(16e-6) and costs["two-stage"] == pytest.approx(18e-6)
    assert costs["ring"] == pytest.approx(23e-6) and "in-switch" not in costs        # NVLink 3: no SHARP
    assert comm_time.allreduce_seconds(1e5, 4, 100e9, PLAIN, "nvlink3") == pytest.approx(16e-6)
    # 10 MB: two-stage 15 + 300 us beats the ring's 20 + 300 us
    assert comm_time.allreduce_seconds(10e6, 4, 100e9, PLAIN, "nvlink3") == pytest.approx(315e-6)
    # NVLink 4 has in-switch reduction: 10 MB at 8 GPUs sends b once: 15 us + 200 us, not 15 + 350
    assert comm_time.in_switch("nvlink4") and not comm_time.in_switch("infinity-fabric-mi300x")
    assert comm_time.allreduce_seconds(10e6, 8, 100e9, PLAIN, "nvlink4") == pytest.approx(15e-6 + 10e6 / 50e9)
    assert comm_time.chosen_algorithm(10e6, 8, 100e9, PLAIN, "nvlink4") == "in-switch"
    # across nodes only the ring
    assert comm_time.allreduce_seconds(1e6, 4, 100e9, PLAIN, "nvlink4", inter_node=True) == pytest.approx(50e-6)


def test_timing_uses_the_smooth_choice_by_default():
    assert t.ALLREDUCE_ALGORITHM == "smooth"
    assert t.allreduce_seconds(1e5, 4, 100e9, PLAIN, "nvlink3") == pytest.approx(16e-6)


@settings(max_examples=60, deadline=None)
@given(b=st.floats(1e3, 64e6), n=st.sampled_from([2, 4, 8]), link=st.sampled_from(["nvlink3", "nvlink4"]))
def test_no_jump_in_message_size(b, n, link):
    """Continuous and non-decreasing: 0.1% more bytes never costs more than 0.1% more time plus nothing."""
    a = t.allreduce_seconds(b, n, 100e9, PLAIN, link)
    z = t.allreduce_seconds(b * 1.001, n, 100e9, PLAIN, link)
    assert a <= z <= a * 1.001 + 1e-12


def test_session4_jump_is_gone_on_mi300x():
    """The two-stage switch at 512 KiB made one all-reduce jump by the step; now it moves by bytes only."""
    c = t.load_constants()
    link = "infinity-fabric-mi300x"
    below, above = (t.allreduce_seconds(x, 8, 64e9, c, link) for x in (255 * 1024, 257 * 1024))
    assert above - below < 2 * 1024 * 8 / (64e9 * c.link_efficiency)


def test_ep_imbalance_by_hand():
    assert moe_time.ep_imbalance(256, 8, 8, 1) == 1.0
    # every expert touched (many tokens): no imbalance
    assert moe_time.ep_imbalance(256, 8, 4096, 8) == pytest.approx(1.0, abs=1e-6)
    # 2 experts over 2 GPUs, 1 token choosing 1: each GPU's expert is touched with p = 1/2; the GPUs taken as
    # independent, E[max] = 1 - 1/4 = 3/4 against a mean of 1/2 (exactly: 1 vs 1/2; the correlation is ignored)
    assert moe_time.ep_imbalance(2, 1, 1, 2) == pytest.approx(1.5)
    # few tokens over many GPUs read more than the mean on the slowest GPU
    f = moe_time.ep_imbalance(256, 8, 8, 8)
    assert 1.2 < f < 2.5


def test_padding_factor_by_hand():
    # 1024 tokens x 8 of 256 experts: every expert touched, m = 32 rows -> one 64-row tile: twice the FLOPs
    assert moe_time.padding_factor(1024, 8, 256) == pytest.approx(64 / 32, rel=1e-3)
    # 16384 tokens: m = 512 -> 512 + 32 rows
    assert moe_time.padding_factor(16384, 8, 256) == pytest.approx(544 / 512, rel=1e-6)


def test_all_to_all_by_hand():
    # 128 tokens, k 8, D 7168, 8 GPUs of 450 GB/s at 0.82: 2 x 10 us + 3 B x 128 x 8 x 7/8 x 7168 / 369 GB/s
    elements = 128 * 8 * 7 / 8 * 7168
    assert moe_time.all_to_all_seconds(128, 8, 7168, 8, 450e9, 10e-6, 0.82) == pytest.approx(20e-6 + 3 * elements / (450e9 * 0.82))
    assert moe_time.all_to_all_seconds(128, 8, 7168, 1, 450e9, 10e-6, 0.82) == 0.0


def test_expert_parallel_decode_reads_more_than_tensor_parallel():
    spec = cost.catalog_model("Qwen3-30B-A3B")
    gpu = t.make_gpu("H100-SXM", cost.gpu_catalog()["H100-SXM"])
    c = t.load_constants()
    tp = t.Setup(spec, gpu, c, tp=4)
    ep = t.Setup(spec, gpu, c, tp=4, expert_parallel_size=4)
    assert t.decode_step(ep, 8, 1024).bytes > t.decode_step(tp, 8, 1024).bytes
    # with thousands of tokens every expert is read on every GPU: the same bytes
    assert t.decode_step(ep, 4096, 64).bytes == pytest.approx(t.decode_step(tp, 4096, 64).bytes, rel=1e-6)


def test_dp_attention_uses_all_to_all():
    spec = cost.catalog_model("Qwen3-30B-A3B")
    gpu = t.make_gpu("H100-SXM", cost.gpu_catalog()["H100-SXM"])
    c = t.load_constants()
    dp = t.Setup(spec, gpu, c, tp=8, expert_parallel_size=8, data_parallel_size=8, enable_dp_attention=True)
    comm = t.tp_comm_seconds(dp, 64)
    a2a = moe_time.all_to_all_seconds(8, spec.moe.experts_per_token, spec.hidden_size, 8, gpu.link_bandwidth,
                                      c.allreduce_latency(gpu.link), c.link_efficiency)
    assert comm == pytest.approx(spec.moe.moe_layers * a2a)       # groups of one GPU: no all-reduce
    assert math.isfinite(t.decode_step(dp, 64, 1024).total_s)


@settings(max_examples=60, deadline=None)
@given(e=st.sampled_from([8, 64, 128, 256]), k=st.integers(1, 8), t=st.integers(1, 4096),
       ep=st.sampled_from([1, 2, 4, 8]))
def test_moe_factors_are_at_least_one_and_fall_with_tokens(e, k, t, ep):
    k = min(k, e)
    f, g = moe_time.ep_imbalance(e, k, t, ep), moe_time.ep_imbalance(e, k, 4 * t, ep)
    assert f >= 1.0 and g >= 1.0 and g <= f + 1e-9           # more tokens: every GPU nearer all its experts
    assert moe_time.padding_factor(t, k, e) >= 1.0
