"""Fixed costs by engine, version family and kernels per layer (cost/time/engine_costs.py): hand numbers."""
import pytest
from hypothesis import given, settings, strategies as st

from multihead import cost
from multihead.cost.time import engine_costs as ec
from multihead.cost.time import timing


def _spec(name):
    return cost.catalog_model(name)


def deepseek_v3():
    return cost.read_config({"model_type": "deepseek_v3", "hidden_size": 7168, "intermediate_size": 18432,
                             "moe_intermediate_size": 2048, "num_hidden_layers": 61, "num_attention_heads": 128,
                             "num_key_value_heads": 128, "n_shared_experts": 1, "n_routed_experts": 256,
                             "num_experts_per_tok": 8, "first_k_dense_replace": 3, "moe_layer_freq": 1,
                             "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_nope_head_dim": 128,
                             "qk_rope_head_dim": 64, "v_head_dim": 128, "vocab_size": 129280}, name="dsv3")


def test_layer_kernels_by_hand():
    assert ec.DENSE_LAYER_KERNELS == 9
    assert ec.layer_kernels(_spec("Llama-3.1-8B")) == pytest.approx(32)
    # Mixtral: 32 MoE layers of 2 norms + 4 attention + 7 routed-MLP kernels = 13
    assert ec.layer_kernels(_spec("Mixtral-8x7B")) == pytest.approx(32 * 13 / 9)
    # DeepSeek-V3: 3 dense MLA layers (2 + 9 + 3 = 14) and 58 MoE MLA layers with a shared expert (2 + 9 + 7 + 3 = 21)
    assert ec.layer_kernels(deepseek_v3()) == pytest.approx((3 * 14 + 58 * 21) / 9) == pytest.approx(140.0)


def test_version_families():
    assert ec.version_family("vllm", "0.6.3") == "v0"
    assert ec.version_family("vllm", "v0.8.0") == "v1" == ec.version_family("vllm", "0.13.0")
    assert ec.version_family("vllm", "0.17.0") == "v1-async"     # session 7: async scheduling by default
    assert ec.version_family("vllm", None, "2024-10") == "v0"
    assert ec.version_family("vllm", None, "2025-12") == "v1"
    assert ec.version_family("vllm") == "v1-async"               # not stated: the newest family
    assert ec.cost_key("vllm", "v1-async") == "vllm@v1"          # V1's fixed costs
    assert ec.version_family("sglang", "0.5.7") == "0.4+"
    assert ec.cost_key("vllm", "v0") == "vllm@v0" and ec.cost_key("sglang", "0.4+") == "sglang"
    # session 13: TensorRT-LLM's two lines apart
    assert set(ec.cost_keys()) == {"vllm@v0", "vllm@v1", "sglang", "tensorrt-llm@0.x", "tensorrt-llm@1.x", "gpt-fast"}


def test_year_only_dates_are_placed_only_inside_one_family():
    assert ec.version_family("tensorrt-llm", None, "2024") == "0.x"
    assert ec.version_family("vllm", None, "2024") == "v0"
    with pytest.raises(ValueError, match="engine_date: vllm changed version family during 2025"):
        ec.version_family("vllm", None, "2025")
    with pytest.raises(ValueError, match="engine_date: expected 'YYYY-MM'"):
        ec.version_family("vllm", None, "March 2025")
    assert ec.version_family("vllm", None, 2024) == "v0" and ec.version_family("vllm", None, "2025-12-01") == "v1"


def test_tensorrt_llm_families_as_the_memory_account_names_them(monkeypatch):
    """Session 12: the compiled-engine line (0.x) and the PyTorch backend (1.x, the default since 1.0) have fixed
    costs of their own (adopted in session 13); a source without a version is placed by date; '0.x' / '1.x' name
    the families themselves (the memory account's --engine-version choices); pooled (the session-11 tables, variant
    'trtpooled') both read one entry."""
    from multihead.cost.serving import tensorrt_llm
    assert ec.version_family("tensorrt-llm", "0.18.2") == "0.x" == ec.version_family("tensorrt-llm", "0.x")
    assert ec.version_family("tensorrt-llm", "1.2.0rc1") == "1.x" == ec.version_family("tensorrt-llm", "1.x")
    assert ec.version_family("tensorrt-llm", None, "2024") == "0.x"
    assert ec.version_family("tensorrt-llm", None, "2026-02") == "1.x" == ec.version_family("tensorrt-llm")
    assert set(tensorrt_llm.FAMILIES) == {f["family"] for f in
                                          ec.versions_catalog()["engines"]["tensorrt-llm"]["families"]}
    assert ec.cost_key("tensorrt-llm", "0.x") == "tensorrt-llm@0.x" and ec.cost_key("tensorrt-llm", "1.x") == "tensorrt-llm@1.x"
    # the shipped fit has both families' costs, and they differ
    c = timing.load_constants()
    assert c.layer_overhead_s["tensorrt-llm@0.x"] != c.layer_overhead_s["tensorrt-llm@1.x"]
    # the memory account draws the same boundary between the two lines
    for version in ("0.7", "0.18.2", "0.21.0", "1.0", "1.0.0rc2", "1.2.0rc1", "1.3.0rc14", "0.x", "1.x"):
        assert tensorrt_llm.resolve(version) == ec.version_family("tensorrt-llm", version), version
    monkeypatch.setattr(ec, "POOLED", ("tensorrt-llm",))       # variant 'trtpooled': one entry for both
    assert ec.cost_key("tensorrt-llm", "0.x") == "tensorrt-llm" == ec.cost_key("tensorrt-llm", "1.x")
    assert "tensorrt-llm" in ec.cost_keys() and "tensorrt-llm@0.x" not in ec.cost_keys()


def test_every_tensorrt_llm_source_has_its_family():
    """The measurement table's TensorRT-LLM sources (reserved editions included): the compiled-engine era (2023-24
    documents, NIM 1.8, LMDeploy's TurboMind entered under this family) is 0.x; the 2026 trtllm-serve runs are 1.x."""
    from multihead.fits import timing_validation as tv
    table = tv.load_table(sealed=True)
    new = {"gpustack-qwen3-8b-h100-trtllm", "trtllm11559-glm47-h100", "trtllm11691-glm47-gb200",
           "ix3317-dsr1-b200-trt"}
    trt = {k: s for k, s in table["sources"].items() if s.get("engine_family") == "tensorrt-llm"}
    assert new <= set(trt) and len(trt) >= 10
    for key, src in trt.items():
        family = ec.version_family("tensorrt-llm", *tv.source_version(src))
        assert family == ("1.x" if key in new else "0.x"), key


def test_a_family_missing_from_the_fit_reads_the_engines_entry(monkeypatch):
    gpu = timing.make_gpu("H100-SXM", cost.gpu_catalog()["H100-SXM"])
    old = timing.Constants(layer_overhead_s={"tensorrt-llm": 70e-6}, prefill_layer_overhead_s={"tensorrt-llm": 1e-4},
                           sequence_overhead_s={"tensorrt-llm": 2e-6})
    monkeypatch.setattr(ec, "POOLED", ())
    for version in ("0.18", "1.2.0"):
        s = timing.Setup(_spec("Llama-3.1-8B"), gpu, old, engine="tensorrt-llm", engine_version=version)
        assert s.cost_key.startswith("tensorrt-llm@")
        assert ec.fixed_overhead_s(s, "decode", 4) == pytest.approx(32 * 70e-6 + 4 * 2e-6)
        assert ec.fixed_overhead_s(s, "prefill", 1) == pytest.approx(32 * 1e-4 + 2e-6)
    from multihead.fits import timing_validation as tv
    assert tv._value(old, "layer_overhead_s", "tensorrt-llm@1.x") == 70e-6      # a warm fit starts it there


def test_version_refusals_name_the_argument():
    with pytest.raises(ValueError, match="engine_version"):
        ec.version_family("vllm", "latest")
    with pytest.raises(ValueError, match="^engine: expected one of"):
        ec.version_family("llama.cpp", "1.0")


def _setup(spec, **c):
    gpu = timing.make_gpu("H100-SXM", cost.gpu_catalog()["H100-SXM"])
    return timing.Setup(spec, gpu, timing.Constants(**c), engine="vllm", engine_version="0.10.0")


def test_fixed_overhead_by_hand():
    c = dict(layer_overhead_s={"vllm@v1": 100e-6}, prefill_layer_overhead_s={"vllm@v1": 300e-6},
             sequence_overhead_s={"vllm@v1": 50e-6})
    s = _setup(_spec("Llama-3.1-8B"), **c)
    assert s.cost_key == "vllm@v1"
    assert ec.fixed_overhead_s(s, "decode", 10) == pytest.approx(32 * 100e-6 + 10 * 50e-6)     # 3.7 ms
    assert ec.fixed_overhead_s(s, "prefill", 1) == pytest.approx(32 * 300e-6 + 50e-6)          # 9.65 ms
    eager = timing.Setup(s.spec, s.gpu, s.constants, engine="vllm", engine_version="0.10.0", enforce_eager=True)
    assert ec.fixed_overhead_s(eager, "decode", 0) == pytest.approx(32 * 300e-6)
    # an older fit file (no version families, no prefill or sequence tables): the engine's one cost
    old = _setup(_spec("Llama-3.1-8B"), layer_overhead_s={"vllm": 80e-6})
    assert ec.fixed_overhead_s(old, "prefill", 4) == pytest.approx(32 * 80e-6)
    with pytest.raises(ValueError, match="phase"):
        ec.fixed_overhead_s(s, "both")


@settings(max_examples=40, deadline=None)
@given(b=st.integers(1, 2048), extra=st.integers(1, 512))
def test_decode_step_grows_with_batch(b, extra):
    c = timing.load_constants()
    gpu = timing.make_gpu("H100-SXM", cost.gpu_catalog()["H100-SXM"])
    s = timing.Setup(_spec("Qwen3-30B-A3B"), gpu, c, engine="vllm")
    assert timing.decode_step(s, b + extra, 1024).total_s >= timing.decode_step(s, b, 1024).total_s
