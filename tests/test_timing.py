"""GPU-time model (multihead.cost.timing): each term against hand numbers, communication, monotonicity."""
import math

import pytest
from hypothesis import given, settings, strategies as st

from multihead import configs, devices
from multihead.cost import timing as t

A100 = devices.gpu_catalog()["A100-80GB"]
H100 = devices.gpu_catalog()["H100-SXM"]
PLAIN = t.Constants(flops_efficiency=0.5, bandwidth_efficiency=0.8, layer_overhead_s={"vllm": 0.0},
                    request_overhead_s=0.0, allreduce_latency_s={"nvlink3": 10e-6, "nvlink4": 10e-6},
                    allreduce_step_s=5e-6, link_efficiency=0.5, dequant={"int8": 0.5, "int4": 0.25})


def llama7b():
    return t.shape_from_spec(configs.catalog_model("Llama-2-7B"))


def setup(shape=None, gpu=A100, name="A100-80GB", c=PLAIN, **kw):
    return t.Setup(shape or llama7b(), t.make_gpu(name, gpu), c, **kw)


def moe():
    return t.Shape(name="moe", layers=2, hidden=64, heads=4, kv_heads=2, head_dim=16, attn_params=100,
                   mlp_params=1000, lm_head_params=10, experts=8, experts_per_token=2)


# -- terms -------------------------------------------------------------------------------------------
def test_weight_bytes_per_element():
    assert t.weight_bytes_per_element("bf16") == 2
    assert t.weight_bytes_per_element("fp8") == 1
    assert t.weight_bytes_per_element("int8") == 1
    assert t.weight_bytes_per_element("int4") == 0.5 + 4 / 128      # bf16 scale + zero per 128 weights
    assert t.weight_bytes_per_element("int4-g32") == 0.5 + 4 / 32


def test_distinct_experts_formula():
    s = moe()
    assert s.distinct_experts(1) == pytest.approx(2)                 # one token: its k experts
    assert s.distinct_experts(2) == pytest.approx(8 * (1 - 0.75 ** 2))
    assert s.distinct_experts(10_000) == pytest.approx(8)            # a big batch touches all
    assert s.active_params() == 2 * (100 + 2 * 1000) + 10
    assert s.params_read(1) == pytest.approx(s.active_params())
    assert s.params_read(10_000) == pytest.approx(2 * (100 + 8 * 1000) + 10)


def test_dense_shape_counts_match_the_model_spec():
    spec = configs.catalog_model("Llama-2-7B")
    s = t.shape_from_spec(spec)
    counts = spec.param_counts()
    # every layer weight plus the LM head; the embedding lookup reads one row per token (not counted)
    assert s.active_params() == counts.non_embedding - counts.final_norm - counts.n_layers * counts.norms_per_layer \
        + spec.vocab_size * spec.hidden_size


@given(new=st.integers(1, 40), past=st.integers(0, 40), window=st.one_of(st.none(), st.integers(1, 50)))
def test_causal_pairs_match_brute_force(new, past, window):
    brute = sum(min(past + i + 1, window or 10 ** 9) for i in range(new))
    assert t.causal_pairs(new, past, window) == brute


def test_causal_attention_is_about_half_the_texts_count():
    s = llama7b()
    T = 4096
    causal = t.attention_flops(s, T, 0)
    assert causal == 4 * s.heads * s.head_dim * s.layers * T * (T + 1) // 2
    assert t.text_attention_flops(s, T) == 4 * T * T * s.hidden * s.layers
    assert causal / t.text_attention_flops(s, T) == pytest.approx((T + 1) / (2 * T))


def test_decode_memory_term_is_weights_plus_kv_over_bandwidth():
    st_ = setup()
    s = st_.shape
    step = t.decode_step(st_, 1, 1000)
    weights = s.active_params() * 2
    kv = 2 * s.kv_heads * s.head_dim * s.layers * 1001 * 2          # K and V of 1001 tokens, bf16
    assert step.bytes == pytest.approx(weights + kv)
    assert step.memory_s == pytest.approx((weights + kv) / (2.039e12 * 0.8))
    assert step.bound == "memory" and step.comm_s == 0 and step.dequant_s == 0
    assert step.total_s == pytest.approx(step.memory_s)


def test_compute_term_counts_two_flops_per_weight_and_the_causal_attention():
    st_ = setup()
    s = st_.shape
    ph = t.prefill(st_, 2048)
    linear = 2 * 2048 * s.active_params()
    attn = t.attention_flops(s, 2048, 0)
    assert ph.flops == pytest.approx(linear + attn)
    assert ph.compute_s == pytest.approx((linear + attn) / (312e12 * 0.5))
    assert ph.bound == "compute"


def test_dequantization_term():
    assert t.decode_step(setup(weights="bf16"), 1, 10).dequant_s == 0
    int8 = t.decode_step(setup(weights="int8"), 1, 10)
    elements = llama7b().active_params()
    assert int8.dequant_s == pytest.approx(elements / (0.5 * 19.5e12))
    assert t.dequant_kind(setup(weights="fp8")) == "int8"                            # A100: no fp8 tensor cores
    assert t.dequant_kind(setup(gpu=H100, name="H100-SXM", weights="fp8")) is None   # native fp8 matmul
    assert t.matmul_dtype(setup(gpu=H100, name="H100-SXM", weights="fp8")) == "fp8"


def test_kv_heads_split_over_tp_and_replicated_below_it():
    s = t.shape_from_spec(configs.catalog_model("Llama-2-70B"))             # H_kv = 8
    per = lambda tp: t.kv_bytes_per_gpu(setup(shape=s, tp=tp), 100)
    assert per(2) == pytest.approx(per(1) / 2)
    assert per(8) == pytest.approx(per(1) / 8)
    assert per(16) == pytest.approx(per(8))                                  # one KV head per GPU at most


def test_sliding_window_caps_kv_reads():
    s = t.Shape(name="w", layers=2, hidden=64, heads=4, kv_heads=4, head_dim=16, attn_params=1, mlp_params=1,
                lm_head_params=1, windows=(8, None))
    st_ = setup(shape=s)
    assert t.kv_bytes_per_gpu(st_, 100) == 2 * 4 * 16 * (8 + 100) * 2


def test_overheads_add_per_layer_and_per_request():
    c = t.Constants(**{**PLAIN.__dict__, "layer_overhead_s": {"vllm": 20e-6}, "request_overhead_s": 3e-3})
    base, slow = setup(), setup(c=c)
    assert t.decode_step(slow, 1, 10).total_s - t.decode_step(base, 1, 10).total_s == pytest.approx(32 * 20e-6)
    d = t.serving_point(slow, 1, 100, 10).ttft_s - t.serving_point(base, 1, 100, 10).ttft_s
    assert d == pytest.approx(3e-3 + 32 * 20e-6)


# -- communication against hand numbers --------------------------------------------------------------
def test_allreduce_hand_number():
    # 10 us + 5 us * log2(4) + 2 * 3/4 * 1 MB / (100 GB/s * 0.5) = 20 us + 30 us
    assert t.allreduce_seconds(1e6, 4, 100e9, PLAIN, "nvlink3") == pytest.approx(50e-6)
    assert t.allreduce_seconds(1e6, 1, 100e9, PLAIN, "nvlink3") == 0
    # 8 GPUs: 10 + 15 us latency, 2 * 7/8 of the bytes
    assert t.allreduce_seconds(8e6, 8, 100e9, PLAIN, "nvlink3") == pytest.approx(25e-6 + 2 * 7 / 8 * 8e6 / 50e9)


def test_tp_comm_is_two_allreduces_per_layer():
    st_ = setup(tp=4)
    one = t.allreduce_seconds(3 * 4096 * 2, 4, 300e9, PLAIN, "nvlink3")    # 3 tokens of D=4096 in bf16, NVLink3
    assert t.tp_comm_seconds(st_, 3) == pytest.approx(2 * 32 * one)
    assert t.decode_step(st_, 3, 10).comm_s == pytest.approx(2 * 32 * one)


def test_unknown_link_uses_the_mean_latency():
    c = t.Constants(allreduce_latency_s={"nvlink3": 10e-6, "nvlink4": 30e-6})
    assert c.allreduce_latency("pcie4") == pytest.approx(20e-6)
    assert c.allreduce_latency("nvlink4") == 30e-6


def test_across_nodes_uses_the_inter_node_link():
    st_ = setup(gpu=H100, name="H100-SXM", tp=16)
    assert t.link_bandwidth(st_) == 50e9
    assert t.link_bandwidth(setup(gpu=H100, name="H100-SXM", tp=8)) == 450e9


def test_pipeline_bubble_and_handoffs():
    assert t.pipeline_bubble_fraction(4, 4) == pytest.approx(3 / 7)
    assert t.pipeline_bubble_fraction(1, 5) == 0
    one, two = setup(), setup(pp=2)
    hand = t.handoff_seconds(4096 * 2, 300e9, PLAIN, "nvlink3")
    assert t.decode_step(two, 1, 10).total_s == pytest.approx(t.decode_step(one, 1, 10).total_s + hand)
    # 8 prompts through 2 stages as 8 micro-batches: (8 + 1) slots of half a prompt's time
    p = t.prefill(two, 512).total_s
    assert t.pipelined_prefill_seconds(two, 512, 8) == pytest.approx(p / 2 * 9)


def test_more_tensor_parallel_gpus_cut_a_big_models_decode_time():
    s = t.shape_from_spec(configs.catalog_model("Llama-2-70B"))
    times = [t.decode_step(setup(shape=s, tp=n), 1, 100).total_s for n in (1, 2, 4, 8)]
    assert times == sorted(times, reverse=True)
    # but not by n: the all-reduce latency does not shrink
    assert times[0] / times[3] < 8


# -- serving metrics ---------------------------------------------------------------------------------
def test_serving_point_at_one_request():
    st_ = setup()
    p = t.serving_point(st_, 1, 1000, 200)
    assert p.ttft_s == pytest.approx(t.prefill(st_, 1000).total_s)
    assert p.tpot_s == pytest.approx(t.decode_step(st_, 1, 1100).total_s)
    assert p.request_latency_s == pytest.approx(p.ttft_s + 199 * p.tpot_s)
    assert p.output_tokens_per_s == pytest.approx(200 / p.request_latency_s)


def test_serving_curve_grid_ends_at_max():
    assert t.concurrency_grid(1) == [1]
    assert t.concurrency_grid(20) == [1, 2, 4, 8, 16, 20]
    with pytest.raises(ValueError, match="max_concurrency"):
        t.serving_curve(setup(), 10, 10, 0)


CONC = st.integers(1, 512)


@settings(max_examples=40, deadline=None)
@given(model=st.sampled_from(["Llama-2-7B", "Llama-3.1-70B", "moe"]), tp=st.sampled_from([1, 2, 8]),
       inp=st.integers(1, 32_000), out=st.integers(1, 4000), c=CONC, mode=st.sampled_from(["serving", "static"]),
       kv=st.sampled_from(["bf16", "fp8"]))
def test_concurrency_monotone(model, tp, inp, out, c, mode, kv):
    """More requests in flight never lower aggregate throughput below one request's, never shorten TPOT."""
    shape = moe() if model == "moe" else t.shape_from_spec(configs.catalog_model(model))
    st_ = setup(shape=shape, gpu=H100, name="H100-SXM", c=t.load_constants(), tp=tp, kv=kv)
    one = t.serving_point(st_, 1, inp, out, mode)
    more = t.serving_point(st_, c, inp, out, mode)
    fewer = t.serving_point(st_, max(1, c // 2), inp, out, mode)
    assert more.output_tokens_per_s >= one.output_tokens_per_s * (1 - 1e-9)
    assert more.tpot_s >= fewer.tpot_s * (1 - 1e-9) >= one.tpot_s * (1 - 1e-9)


def test_bad_mode_is_refused():
    with pytest.raises(ValueError, match="mode"):
        t.serving_point(setup(), 1, 10, 10, mode="offline")
