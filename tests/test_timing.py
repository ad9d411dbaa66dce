"""GPU-time model (multihead.cost.time.timing): each term against hand numbers, communication, monotonicity."""
import pytest
from hypothesis import given, settings, strategies as st

from multihead import cost
from multihead.cost.time import timing as t

A100 = cost.gpu_catalog()["A100-80GB"]
H100 = cost.gpu_catalog()["H100-SXM"]
PLAIN = t.Constants(flops_efficiency=0.5, bandwidth_efficiency=0.8, layer_overhead_s={"vllm": 0.0},
                    request_overhead_s=0.0, allreduce_latency_s={"nvlink3": 10e-6, "nvlink4": 10e-6},
                    allreduce_step_s=5e-6, link_efficiency=0.5, dequant={"int8": 0.5, "int4": 0.25})
MIXTRAL = {"model_type": "mixtral", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
           "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 32000, "num_local_experts": 8,
           "num_experts_per_tok": 2, "torch_dtype": "bfloat16"}


def llama7b():
    return cost.catalog_model("Llama-2-7B")


def setup(spec=None, gpu=A100, name="A100-80GB", c=PLAIN, **kw):
    return t.Setup(spec or llama7b(), t.make_gpu(name, gpu), c, **kw)


# -- terms -------------------------------------------------------------------------------------------
def test_table_precisions():
    assert t.table_precision("bf16") == ("bf16", None)
    _, q8 = t.table_precision("int8")
    _, q4 = t.table_precision("int4-g32")
    assert q8.bytes_per_weight(4096) == pytest.approx(1 + 2 / 4096)          # per-channel bf16 scale
    assert q4.bytes_per_weight(4096) == pytest.approx(0.5 + 4 / 32)          # bf16 scale + zero per 32
    with pytest.raises(ValueError, match="weights"):
        t.table_precision("int3")


def test_weights_read_is_every_layer_and_the_lm_head_not_the_embedding():
    spec = llama7b()
    c = cost.param_counts(spec)
    read, quantized = t.weights_read(setup(), 1)
    assert read == pytest.approx((c.total - c.embedding) * 2) and quantized == 0
    read2, _ = t.weights_read(setup(tp=2), 1)
    assert read2 == pytest.approx(read / 2)


def test_moe_reads_the_experts_a_batch_touches():
    spec = cost.read_config(MIXTRAL, name="mixtral")
    c = cost.param_counts(spec)
    one, _ = t.weights_read(setup(spec), 1)
    two, _ = t.weights_read(setup(spec), 2)
    many, _ = t.weights_read(setup(spec), 100_000)
    expert = c.expert * 2 * 32                                    # one expert in every layer, bf16
    assert two - one == pytest.approx(expert * (8 * (1 - 0.75 ** 2) - 2))   # E(1 - (1 - k/E)^2) - k
    assert many == pytest.approx((c.total - c.embedding) * 2, rel=1e-6)
    # compute: k experts per token
    ph = t.decode_step(setup(spec), 1, 0)
    assert ph.flops == pytest.approx(2 * (c.active_non_embedding + 32000 * 4096)
                                     + cost.decode_attention_flops(spec, 1), rel=1e-9)


def test_causal_attention_is_about_half_the_texts_count():
    spec = llama7b()
    T = 4096
    causal = t.prefill_attention_flops(spec, T)
    assert causal == 4 * spec.num_heads * spec.head_dim * spec.num_layers * T * (T + 1) // 2
    assert t.text_attention_flops(spec, T) == 4 * T * T * spec.hidden_size * spec.num_layers
    assert causal / t.text_attention_flops(spec, T) == pytest.approx((T + 1) / (2 * T))


def test_decode_memory_term_is_weights_plus_kv_over_bandwidth():
    st_ = setup()
    spec = st_.spec
    step = t.decode_step(st_, 1, 1000)
    weights, _ = t.weights_read(st_, 1)
    kv = 2 * spec.num_kv_heads * spec.head_dim * spec.num_layers * 1001 * 2          # K and V of 1001 tokens
    assert step.bytes == pytest.approx(weights + kv)
    # the default (merged) kernels: one memory term of weights + KV (cost/decode_attention.py); at batch 1
    # the separate kernels give the same step, both memory-bound
    assert step.memory_s == pytest.approx((weights + kv) / (2.039e12 * 0.8)) and step.attention_s == 0.0
    assert step.bound == "memory" and step.comm_s == 0 and step.dequant_s == 0
    assert step.total_s == pytest.approx((weights + kv) / (2.039e12 * 0.8))


def test_compute_term_two_flops_per_weight_logits_once_and_causal_attention():
    st_ = setup()
    spec = st_.spec
    ph = t.prefill(st_, 2048)
    layers, _ = cost.counts.params.non_embedding_params(spec)
    linear = 2 * 2048 * layers + 2 * 32000 * 4096              # the LM head on the last position only
    attn = t.prefill_attention_flops(spec, 2048)
    assert ph.flops == pytest.approx(linear + attn)
    assert ph.compute_s == pytest.approx((linear + attn) / (312e12 * 0.859 * 0.5))   # A100's MAMF share
    assert ph.bound == "compute"


def test_compute_runs_at_the_gpus_measured_matmul_ceiling():
    """Each GPU's compute is its datasheet peak times its maximum achievable matmul share (the
    ml-engineering MAMF table: A100 SXM 267.9/312, H100 SXM 792.1/989, MI300X 781.9/1300), the fitted
    efficiency on top; a GPU without a measurement takes the median share; explicit figures are used as given."""
    assert t.make_gpu("A100-80GB", A100).mamf_share == 0.859
    assert t.make_gpu("H100-SXM", H100).mamf_share == 0.801
    assert t.make_gpu("MI300X", cost.gpu_catalog()["MI300X"]).mamf_share == 0.601
    assert t.make_gpu("L40S", cost.gpu_catalog()["L40S"]).mamf_share == pytest.approx(0.8115)
    assert t.make_gpu("A100-80GB@330W", A100, {"base": "A100-80GB", "bandwidth_tbps": 1.7}).mamf_share == 0.859
    assert t.make_gpu("x", A100, {"mamf_share": 1.0}).mamf_share == 1.0
    a, h = t.prefill(setup(), 4096), t.prefill(setup(gpu=H100, name="H100-SXM"), 4096)
    assert a.compute_s / h.compute_s == pytest.approx((989 * 0.801) / (312 * 0.859))
    decode = t.decode_step(setup(), 1, 0)              # memory-bound: the share does not enter
    assert decode.memory_s > decode.compute_s


def test_without_the_measured_ceiling_every_gpu_runs_at_its_datasheet_peak(monkeypatch):
    monkeypatch.setattr(t, "USE_MAMF", False)
    ph = t.prefill(setup(), 2048)
    assert ph.compute_s == pytest.approx(ph.flops / (312e12 * 0.5))


def test_dequantization_term():
    assert t.decode_step(setup(), 1, 10).dequant_s == 0
    _, q8 = t.table_precision("int8")
    st8 = setup(quantization=q8)
    _, quantized = t.weights_read(st8, 1)
    assert quantized == pytest.approx(cost.counts.memory.quantized_params(llama7b(), q8))   # layers and LM head
    assert t.decode_step(st8, 1, 10).dequant_s == pytest.approx(quantized / (0.5 * 19.5e12))
    # a start-up cost per layer of weight-only kernels, paid on every GPU whatever the TP degree
    import dataclasses
    per_layer = dataclasses.replace(PLAIN, dequant_layer_s=7e-6)
    one = setup(quantization=q8, c=per_layer)
    assert t.decode_step(one, 1, 10).dequant_s == pytest.approx(quantized / (0.5 * 19.5e12) + 32 * 7e-6)
    eight = setup(quantization=q8, c=per_layer, tp=8)
    assert t.decode_step(eight, 1, 10).dequant_s == pytest.approx(t.weights_read(eight, 1)[1] / (0.5 * 19.5e12)
                                                                  + 32 * 7e-6)
    assert t.decode_step(setup(c=per_layer), 1, 10).dequant_s == 0            # bf16: no unpacking
    fp8 = cost.spec.quantization.from_flag("fp8")
    assert t.dequant_kind(setup(quantization=fp8)) == "int8"                            # A100: no fp8 tensor cores
    h100 = setup(gpu=H100, name="H100-SXM", quantization=fp8)
    assert t.dequant_kind(h100) is None and t.matmul_dtype(h100) == "fp8"               # native fp8 matmul
    assert t.dequant_kind(setup(quantization=cost.spec.quantization.from_flag("gptq"))) == "int4"
    assert t.dequant_kind(setup(quantization=cost.spec.quantization.from_flag("int8"))) is None   # w8a8


def test_kv_heads_split_over_tp_and_replicated_below_it():
    spec = cost.catalog_model("Llama-2-70B")                               # H_kv = 8
    per = lambda tp: t.decode_step(setup(spec, tp=tp), 1, 1000).bytes - t.weights_read(setup(spec, tp=tp), 1)[0]
    assert per(2) == pytest.approx(per(1) / 2)
    assert per(8) == pytest.approx(per(1) / 8)
    assert per(16) == pytest.approx(per(8))                                # one KV head per GPU at most


def test_sliding_window_caps_kv_reads():
    spec = cost.catalog_model("Mistral-7B-v0.1")                          # every layer slides, window 4096
    kv = lambda ctx: t.decode_step(setup(spec), 1, ctx).bytes
    assert kv(20_000) == pytest.approx(kv(10_000))
    assert kv(3000) < kv(4000)


def test_overheads_add_per_layer_and_per_request():
    c = t.Constants(**{**PLAIN.__dict__, "layer_overhead_s": {"vllm": 20e-6}, "request_overhead_s": 3e-3})
    base, slow = setup(), setup(c=c)
    assert t.decode_step(slow, 1, 10).total_s - t.decode_step(base, 1, 10).total_s == pytest.approx(32 * 20e-6)
    d = t.serving_point(slow, 1, 100, 10).ttft_s - t.serving_point(base, 1, 100, 10).ttft_s
    assert d == pytest.approx(3e-3 + 32 * 20e-6)
    with pytest.raises(ValueError, match="engine"):
        t.decode_step(setup(engine="exllama"), 1, 10)


# -- communication against hand numbers --------------------------------------------------------------
def test_allreduce_hand_number(monkeypatch):
    # session 4's size thresholds (since session 5 the default is the cheapest algorithm: tests/test_comm_time.py)
    monkeypatch.setattr(t, "ALLREDUCE_ALGORITHM", "custom")
    # NCCL's ring (8 MiB+, or across nodes): 10 us + 5 us * log2(4) + 2 * 3/4 * 10 MB / (100 GB/s * 0.5)
    assert t.allreduce_seconds(10e6, 4, 100e9, PLAIN, "nvlink3") == pytest.approx(20e-6 + 300e-6)
    assert t.allreduce_seconds(1e6, 4, 100e9, PLAIN, "nvlink3", inter_node=True) == pytest.approx(50e-6)
    assert t.allreduce_seconds(1e6, 1, 100e9, PLAIN, "nvlink3") == 0
    # 8 GPUs, ring: 10 + 15 us latency, 2 * 7/8 of the bytes
    assert t.allreduce_seconds(9e6, 8, 100e9, PLAIN, "nvlink3") == pytest.approx(25e-6 + 2 * 7 / 8 * 9e6 / 50e9)
    # the engines' one-stage kernel (<= 512 KiB at 4 GPUs): 10 us + 3 peers' 100 kB each, no log2 steps
    assert t.allreduce_seconds(1e5, 4, 100e9, PLAIN, "nvlink3") == pytest.approx(10e-6 + 3 * 1e5 / 50e9)
    # two stages (256 KiB .. 8 MiB at 8 GPUs): 10 us + one 5-us step + the ring's traffic
    assert t.allreduce_seconds(1e6, 8, 100e9, PLAIN, "nvlink3") == pytest.approx(15e-6 + 2 * 7 / 8 * 1e6 / 50e9)
    # a batch-1 decode message costs the same latency at 2 and at 8 GPUs (up to its few bytes)
    small = [t.allreduce_seconds(8192, n, 300e9, PLAIN, "nvlink3") for n in (2, 4, 8)]
    assert small == sorted(small) and small[-1] - small[0] < 1e-6


def test_ring_only_variant_keeps_the_log2_steps(monkeypatch):
    monkeypatch.setattr(t, "ALLREDUCE_ALGORITHM", "ring")
    assert t.allreduce_seconds(1e6, 4, 100e9, PLAIN, "nvlink3") == pytest.approx(50e-6)


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
    spec = cost.catalog_model("Llama-2-70B")
    times = [t.decode_step(setup(spec, tp=n), 1, 100).total_s for n in (1, 2, 4, 8)]
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


def test_prefill_queue_hand_numbers():
    """Mean value analysis of c requests, prefill 1 s, 1 s outside the prefill queue: with 2, the other
    request is in the queue half the time and half done on average (0.5 x 0.5 = 0.25 s); with 3, the
    network of 2 has throughput 2 / (1.5 + 1) = 0.8 and queue 1.2, so the wait is 1.2 - 0.8 / 2 = 0.8 s."""
    assert t.prefill_queue(1, 1.0, 1.0) == (0.0, 0.0)
    assert t.prefill_queue(2, 1.0, 1.0) == pytest.approx((0.25, 0.5))
    assert t.prefill_queue(3, 1.0, 1.0) == pytest.approx((0.8, 0.8))
    wait, busy = t.prefill_queue(100, 1.0, 1.0)       # saturated: nearly every other prompt is ahead
    assert busy == pytest.approx(1.0) and 97 < wait <= 99
    assert t.prefill_queue(100, 1.0, 1e6)[0] < 1e-3   # long decodes: prompts rarely meet


def test_other_prefills_are_counted_once_in_ttft_or_tpot():
    st_ = setup(c=t.load_constants())
    c, inp, out = 16, 4000, 300
    old, t.ARRIVAL_WAVES = t.ARRIVAL_WAVES, False      # the evenly spread loop alone (mean value analysis)
    try:
        p = t.serving_point(st_, c, inp, out)
    finally:
        t.ARRIVAL_WAVES = old
    one, step = p.prefill_s, p.decode_step_s
    wait, busy = t.prefill_queue(c, one, st_.constants.request_overhead_s + (out - 1) * (step + (c - 1) * one / out))
    assert wait > 0
    assert p.ttft_s == pytest.approx(st_.constants.request_overhead_s + one + wait + 0.5 * (1 - busy) * step)
    assert (p.ttft_s - st_.constants.request_overhead_s - one - 0.5 * (1 - busy) * step) + (p.tpot_s - step) * out \
        == pytest.approx((c - 1) * one)


def test_residual_variant_is_the_older_ttft(monkeypatch):
    monkeypatch.setattr(t, "PREFILL_QUEUE", "residual")
    st_ = setup()
    p = t.serving_point(st_, 4, 1000, 100)
    assert p.tpot_s == pytest.approx(p.decode_step_s + 3 * p.prefill_s / 100)


def test_serving_curve_grid_ends_at_max():
    assert t.concurrency_grid(1) == [1]
    assert t.concurrency_grid(20) == [1, 2, 4, 8, 16, 20]
    with pytest.raises(ValueError, match="max_concurrency"):
        t.serving_curve(setup(), 10, 10, 0)


CONC = st.integers(1, 512)


@settings(max_examples=40, deadline=None)
@given(model=st.sampled_from(["Llama-2-7B", "Llama-3.1-70B", "mixtral"]), tp=st.sampled_from([1, 2, 8]),
       inp=st.integers(1, 32_000), out=st.integers(1, 4000), c=CONC, mode=st.sampled_from(["serving", "static"]),
       kv=st.sampled_from(["bf16", "fp8"]))
def test_concurrency_monotone(model, tp, inp, out, c, mode, kv):
    """More requests in flight never lower aggregate throughput below one request's, never shorten TPOT."""
    spec = cost.read_config(MIXTRAL, name="mixtral") if model == "mixtral" else cost.catalog_model(model)
    st_ = setup(spec, gpu=H100, name="H100-SXM", c=t.load_constants(), tp=tp, kv=kv)
    one = t.serving_point(st_, 1, inp, out, mode)
    more = t.serving_point(st_, c, inp, out, mode)
    fewer = t.serving_point(st_, max(1, c // 2), inp, out, mode)
    assert more.output_tokens_per_s >= one.output_tokens_per_s * (1 - 1e-9)
    assert more.tpot_s >= fewer.tpot_s * (1 - 1e-9) >= one.tpot_s * (1 - 1e-9)


def test_bad_mode_is_refused():
    with pytest.raises(ValueError, match="mode"):
        t.serving_point(setup(), 1, 10, 10, mode="offline")
