"""Session 7's terms of the GPU-time model, with hand numbers and monotonicity by hypothesis:
MXFP4 unpacking where a GPU has no FP4 tensor cores (cost/time/fp4_weights.py), host work overlapped with
the GPU's step (cost/time/engine_costs.py: vLLM's async scheduling, SGLang's overlap scheduler), and the
80% intervals calibrated per class (cost/time/timing_intervals.py)."""
import pytest
from hypothesis import given, settings, strategies as st

from multihead import cost
from multihead.cost.spec.quantization import from_flag
from multihead.cost.time import engine_costs as ec
from multihead.cost.time import fp4_weights
from multihead.cost.time import timing
from multihead.cost.time import timing_intervals as ti
from multihead.fits import timing_validation as tv

TABLE = tv.load_table()
GPT_OSS = tv._spec("gpt-oss-120b", TABLE)
MXFP4 = from_flag("mxfp4")


def _gpu(name):
    return timing.make_gpu(name, cost.gpu_catalog()[name])


def _setup(gpu="H100-SXM", tp=1, constants=None, **kw):
    c = constants or timing.Constants(dequant={"int8": 0.5, "int4": 0.3, "fp4": 0.25}, dequant_layer_s=0.0)
    return timing.Setup(GPT_OSS, _gpu(gpu), c, tp=tp, quantization=MXFP4, engine="vllm", **kw)


# -- MXFP4 unpacking -----------------------------------------------------------------------------------
@pytest.fixture
def fp4_on(monkeypatch):
    """The MXFP4 variant (off by default: it lost the cross-validation, fp4_weights.FP4_KIND)."""
    monkeypatch.setattr(fp4_weights, "FP4_KIND", True)


def test_fp4_tensor_cores_by_name(fp4_on):
    assert fp4_weights.has_fp4_tensor_cores("B200") and fp4_weights.has_fp4_tensor_cores("MI355X")
    assert not fp4_weights.has_fp4_tensor_cores("H100-SXM") and not fp4_weights.has_fp4_tensor_cores("MI300X")
    assert fp4_weights.has_fp4_tensor_cores("B200@700W")          # a measured variant of a catalog GPU
    assert timing.dequant_kind(_setup("H100-SXM")) == "fp4"
    assert timing.dequant_kind(_setup("MI300X")) == "fp4"
    assert timing.dequant_kind(_setup("B200")) is None
    awq = timing.Setup(cost.catalog_model("Llama-3.1-8B"), _gpu("H100-SXM"), timing.Constants(), quantization=from_flag("awq"))
    assert timing.dequant_kind(awq) == "int4"                    # other 4-bit formats keep int4's rate
    with pytest.raises(ValueError, match="expected MXFP4"):
        fp4_weights.dequant_kind(from_flag("awq"), "H100-SXM")


def test_fp4_dequant_by_hand(fp4_on, monkeypatch):
    """One decode step of gpt-oss-120b at batch 1 on one H100: the quantized elements it reads are the
    touched experts' (4 of 128 per layer), each unpacked at 0.25 weights per fp32 FLOP of 67 TFLOP/s."""
    s = _setup("H100-SXM")
    _, quantized = timing.weights_read(s, 1)
    counts = cost.counts.params.param_counts(GPT_OSS)
    touched = 4 * counts.expert * counts.n_moe_layers                     # 4 experts per layer at one token
    assert quantized == pytest.approx(touched, rel=1e-9)
    step = timing.decode_step(s, 1, 1024)
    assert step.dequant_s == pytest.approx(touched / (0.25 * 67e12), rel=1e-9)
    # on a B200 the same weights are consumed as stored
    assert timing.decode_step(_setup("B200"), 1, 1024).dequant_s == 0.0
    # the session-6 model (FP4_KIND off): int4's rate on every GPU
    monkeypatch.setattr(fp4_weights, "FP4_KIND", False)
    assert timing.decode_step(_setup("B200"), 1, 1024).dequant_s == pytest.approx(touched / (0.3 * 75e12), rel=1e-9)


def test_fp4_rate_falls_back_to_int4_for_an_older_fit(fp4_on):
    s = _setup("H100-SXM", constants=timing.Constants(dequant={"int8": 0.5, "int4": 0.3}, dequant_layer_s=0.0))
    _, quantized = timing.weights_read(s, 1)
    assert timing.decode_step(s, 1, 0).dequant_s == pytest.approx(quantized / (0.3 * 67e12), rel=1e-9)


@settings(max_examples=30, deadline=None)
@given(tp=st.sampled_from([1, 2, 4, 8]), batch=st.integers(1, 256), more=st.integers(1, 256))
def test_fp4_dequant_grows_with_tokens_and_shrinks_with_tp(tp, batch, more):
    old, fp4_weights.FP4_KIND = fp4_weights.FP4_KIND, True     # (hypothesis reruns the body: set here, restored)
    try:
        _fp4_monotone(tp, batch, more)
    finally:
        fp4_weights.FP4_KIND = old


def _fp4_monotone(tp, batch, more):
    a = timing.decode_step(_setup("H100-SXM", tp=tp), batch, 1024).dequant_s
    b = timing.decode_step(_setup("H100-SXM", tp=tp), batch + more, 1024).dequant_s
    assert b >= a * (1 - 1e-12)
    if tp < 8:
        assert timing.decode_step(_setup("H100-SXM", tp=tp * 2), batch, 1024).dequant_s < a


# -- host work overlapped with the GPU -----------------------------------------------------------------
def test_charged_host_by_hand():
    assert ec.charged_host_s(3e-3, 5e-3, overlapped=False) == 3e-3       # in turn: the sum
    assert ec.charged_host_s(3e-3, 5e-3, overlapped=True) == 0.0         # hidden under a longer GPU step
    assert ec.charged_host_s(7e-3, 5e-3, overlapped=True) == pytest.approx(2e-3)   # what sticks out
    with pytest.raises(ValueError, match="host_s"):
        ec.charged_host_s(-1.0, 1.0, overlapped=True)


@pytest.fixture
def overlap_on(monkeypatch):
    """The overlapped-host variant (off by default: not cross-validated, engine_costs.OVERLAP)."""
    monkeypatch.setattr(ec, "OVERLAP", True)


def test_overlapping_families(overlap_on):
    assert ec.version_family("vllm", "0.17.0") == "v1-async" and ec.version_family("vllm", "0.10.2") == "v1"
    assert ec.version_family("vllm", None, "2026-03") == "v1-async" and ec.version_family("vllm", None, "2025-12") == "v1"
    assert ec.cost_key("vllm", "v1-async") == "vllm@v1"          # V1's kernels and fixed costs
    s = _setup(engine_version="0.17.0")
    assert ec.overlaps_host(s) and not ec.overlaps_host(_setup(engine_version="0.10.2"))
    assert ec.overlaps_host(timing.Setup(GPT_OSS, _gpu("H100-SXM"), timing.Constants(), engine="sglang"))
    assert not ec.overlaps_host(timing.Setup(GPT_OSS, _gpu("H100-SXM"), timing.Constants(), engine="tensorrt-llm"))


def test_overlapped_step_by_hand(overlap_on):
    """A decode step of 64 sequences with 50 us of host work each (3.2 ms): in turn it adds 3.2 ms; overlapped
    it adds only what exceeds the GPU's time (the step's other terms and fixed costs)."""
    c = timing.Constants(layer_overhead_s={"vllm@v1": 20e-6}, sequence_overhead_s={"vllm@v1": 50e-6},
                         dequant={"int8": 0.5, "int4": 0.3, "fp4": 0.25})
    sync, asyn = _setup(constants=c, engine_version="0.10.2"), _setup(constants=c, engine_version="0.17.0")
    a, b = timing.decode_step(sync, 64, 1024), timing.decode_step(asyn, 64, 1024)
    layers = ec.layer_kernels(GPT_OSS, MXFP4) * 20e-6
    assert a.overhead_s == pytest.approx(layers + 64 * 50e-6)
    gpu = max(b.compute_s, b.memory_s) + b.attention_s + b.dequant_s + b.comm_s + layers
    assert b.overhead_s == pytest.approx(layers + max(0.0, 64 * 50e-6 - gpu))
    assert b.total_s == pytest.approx(max(gpu, 64 * 50e-6))


@settings(max_examples=30, deadline=None)
@given(batch=st.integers(1, 512), seq_us=st.floats(0.0, 200.0), tp=st.sampled_from([1, 2, 8]))
def test_overlap_never_slower_and_step_grows_with_batch(batch, seq_us, tp):
    old, ec.OVERLAP = ec.OVERLAP, True      # (hypothesis reruns the body: set here, restored)
    try:
        _overlap_monotone(batch, seq_us, tp)
    finally:
        ec.OVERLAP = old


def _overlap_monotone(batch, seq_us, tp):
    c = timing.Constants(layer_overhead_s={"vllm@v1": 40e-6}, sequence_overhead_s={"vllm@v1": seq_us * 1e-6},
                         dequant={"int8": 0.5, "int4": 0.3, "fp4": 0.25})
    sync = timing.decode_step(_setup(tp=tp, constants=c, engine_version="0.10.2"), batch, 1024).total_s
    asyn = timing.decode_step(_setup(tp=tp, constants=c, engine_version="0.17.0"), batch, 1024).total_s
    assert asyn <= sync * (1 + 1e-12)
    assert asyn >= sync - batch * seq_us * 1e-6 - 1e-12          # it hides at most the host work
    bigger = timing.decode_step(_setup(tp=tp, constants=c, engine_version="0.17.0"), batch + 1, 1024).total_s
    assert bigger >= asyn * (1 - 1e-12)


# -- intervals calibrated per class --------------------------------------------------------------------
def _errors(ratios, cls, docs):
    return [{"id": f"{cls}{i}", "source": f"{cls}-{docs[i % len(docs)]}", "metric": "itl_ms", "error": r - 1.0,
             "family": [cls, "decode", "vllm"]} for i, r in enumerate(ratios)]


def test_rule_for_a_class_by_hand():
    rule = {"weighting": "row", "min_documents": 2, "widen": 1.0, "classes": {"moe": {"widen": 2.0}}}
    assert ti.rule_for(rule, "moe/decode/vllm") == {"weighting": "row", "min_documents": 2, "widen": 2.0}
    assert ti.rule_for(rule, "dense") == {"weighting": "row", "min_documents": 2, "widen": 1.0}
    assert ti.rule_for(rule, "all")["widen"] == 1.0
    # time ratios 0.8 .. 1.7 (10 rows, 2 documents): 10th/50th/90th percentiles 0.89 / 1.25 / 1.61; the moe
    # class widened x2 in log space about its median: 1.25 * (0.89/1.25)^2 and 1.25 * (1.61/1.25)^2
    errs = _errors([0.8 + 0.1 * i for i in range(10)], "moe", "ab") + _errors([0.8 + 0.1 * i for i in range(10)], "dense", "ab")
    table = ti.interval_table(errs, rule=rule)
    assert table["dense/decode/vllm"]["r_low"] == pytest.approx(0.89)
    assert table["moe/decode/vllm"]["r_low"] == pytest.approx(1.25 * (0.89 / 1.25) ** 2)
    assert table["moe/decode/vllm"]["r_high"] == pytest.approx(1.25 * (1.61 / 1.25) ** 2)


def test_choose_rule_by_class_widens_only_the_class_that_needs_it():
    """Dense documents agree (each document's ratios the same spread), MoE documents disagree (each one
    shifted): leave-one-document-out, MoE needs wider intervals than dense to cover 80%."""
    dense = []
    for d in range(6):
        dense += [{"id": f"d{d}-{i}", "source": f"dense-{d}", "metric": "itl_ms", "error": 0.9 + 0.02 * i - 1.0,
                   "family": ["dense", "decode", "vllm"]} for i in range(10)]
    moe = []
    for d in range(6):
        shift = 0.7 + 0.12 * d
        moe += [{"id": f"m{d}-{i}", "source": f"moe-{d}", "metric": "itl_ms", "error": shift + 0.02 * i - 1.0,
                 "family": ["moe", "decode", "vllm"]} for i in range(10)]
    rule, scored = ti.choose_rule_by_class(dense + moe, [{"weighting": "row", "min_documents": 2, "widen": w}
                                                         for w in (1.0, 1.5, 2.0)])
    assert set(rule["classes"]) == {"dense", "moe"}
    assert rule["classes"]["moe"]["widen"] >= rule["classes"]["dense"]["widen"]
    for cls in ("dense", "moe"):
        gaps = {r["widen"]: g for r, g, _ in scored[cls]}
        assert gaps[rule["classes"][cls]["widen"]] == min(gaps.values())


# -- ROCm engines' matmul factor -----------------------------------------------------------------------
def test_rocm_factor_by_hand():
    from multihead.cost.time import rocm
    assert rocm.is_amd("MI300X") and rocm.is_amd("MI355X") and not rocm.is_amd("H100-SXM")
    c = timing.Constants(flops_efficiency=0.8, flops_efficiency_rocm=0.5)
    llama = cost.catalog_model("Llama-3.1-8B")
    mi = timing.Setup(llama, _gpu("MI300X"), c)
    h = timing.Setup(llama, _gpu("H100-SXM"), c)
    share = _gpu("MI300X").mamf_share
    # MI300X: 1307 TFLOP/s x its MAMF share x 0.8 x 0.5; an H100 is not affected
    assert timing.linear_flops_per_s(mi) == pytest.approx(1307e12 * share * 0.8 * 0.5)
    assert timing.attention_flops_per_s(mi) == pytest.approx(1307e12 * share * 0.8 * 0.5)
    assert timing.linear_flops_per_s(h) == pytest.approx(989e12 * _gpu("H100-SXM").mamf_share * 0.8)
    # 0 (not fitted, the session-6 model): no factor
    assert timing.linear_flops_per_s(timing.Setup(llama, _gpu("MI300X"), timing.Constants(flops_efficiency=0.8))) == \
        pytest.approx(1307e12 * share * 0.8)


@settings(max_examples=25, deadline=None)
@given(f=st.floats(0.1, 1.0), tokens=st.integers(16, 8192))
def test_rocm_factor_slows_prefill_only_on_amd(f, tokens):
    llama = cost.catalog_model("Llama-3.1-8B")
    on = timing.Constants(flops_efficiency=0.8, flops_efficiency_rocm=f)
    off = timing.Constants(flops_efficiency=0.8)
    a = timing.prefill(timing.Setup(llama, _gpu("MI300X"), on), tokens).total_s
    b = timing.prefill(timing.Setup(llama, _gpu("MI300X"), off), tokens).total_s
    assert a >= b * (1 - 1e-12)
    assert timing.prefill(timing.Setup(llama, _gpu("H100-SXM"), on), tokens).total_s == \
        timing.prefill(timing.Setup(llama, _gpu("H100-SXM"), off), tokens).total_s


# -- MXFP4 MoE backends' kernel count ----------------------------------------------------------------
@pytest.fixture
def fused_on(monkeypatch):
    monkeypatch.setattr(ec, "FUSED_MXFP4_MOE", True)


def test_mxfp4_moe_kernels_by_hand(fused_on, monkeypatch):
    # gpt-oss-120b: 36 routed-expert GQA layers; MXFP4 experts: 2 norms + 4 attention + 4 MoE = 10 kernels
    assert GPT_OSS.num_layers == 36 and GPT_OSS.moe.moe_layers == 36 and not GPT_OSS.moe.shared_experts
    assert ec.moe_kernels(MXFP4) == 4 and ec.moe_kernels(from_flag("fp8")) == 7 and ec.moe_kernels(None) == 7
    assert ec.layer_kernels(GPT_OSS, MXFP4) == pytest.approx(36 * 10 / 9) == pytest.approx(40.0)
    assert ec.layer_kernels(GPT_OSS) == pytest.approx(36 * 13 / 9) == pytest.approx(52.0)      # bf16 experts
    c = timing.Constants(layer_overhead_s={"vllm@v1": 75e-6}, sequence_overhead_s={"vllm@v1": 0.0})
    s = _setup(constants=c, engine_version="0.10.2")
    assert ec.fixed_overhead_s(s, "decode", 4) == pytest.approx(40 * 75e-6)                      # 3.0 ms
    monkeypatch.setattr(ec, "FUSED_MXFP4_MOE", False)
    assert ec.fixed_overhead_s(s, "decode", 4) == pytest.approx(52 * 75e-6)                      # 3.9 ms


@settings(max_examples=20, deadline=None)
@given(batch=st.integers(1, 256), tp=st.sampled_from([1, 2, 4, 8]))
def test_fused_mxfp4_moe_never_slower(batch, tp):
    old, ec.FUSED_MXFP4_MOE = ec.FUSED_MXFP4_MOE, True
    try:
        fused = timing.decode_step(_setup(tp=tp), batch, 1024).total_s
        ec.FUSED_MXFP4_MOE = False
        unfused = timing.decode_step(_setup(tp=tp), batch, 1024).total_s
    finally:
        ec.FUSED_MXFP4_MOE = old
    assert fused <= unfused * (1 + 1e-12)
