"""`multihead plan` on the families people serve: MoE, MLA, windows, quantized weights, long context;
weights against what vLLM loaded (real start-up logs), and hostile input."""
from __future__ import annotations

import json
import time

import pytest

from multihead import cost, planner
from multihead.cli import main

GIB = 2 ** 30
# weights_gib from vLLM v0.19 start-up logs ("Model loading took X GiB"; /work/shared/data/vllm-startup-logs,
# copied into multihead/cost/catalog/vllm_runs.json): (catalog model, tensor-parallel GPUs, GiB per GPU)
VLLM_WEIGHTS = [("Qwen2.5-7B", 1, 14.25), ("Qwen2.5-7B", 2, 7.12), ("Qwen2.5-7B", 4, 3.55), ("Qwen3-8B", 1, 15.27),
                ("Qwen3-30B-A3B", 1, 56.88), ("Phi-4", 1, 27.39)]


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("name, gpus, gib", VLLM_WEIGHTS)
def test_weights_within_1pct_of_what_vllm_loads(name, gpus, gib):
    p = planner.plan(name, tokens=8192, device="H100-SXM", gpus=gpus)
    assert p.weights_bytes / GIB == pytest.approx(gib, rel=0.01)


def test_quantized_checkpoints_within_1pct_of_vllm():
    """RedHatAI's Qwen2.5-7B-Instruct fp8-dynamic and w8a8 (compressed-tensors, per-channel): 8.14 GiB."""
    base = dict(cost.model_catalog()["Qwen2.5-7B"]["config"])
    for qtype in ("float", "int"):
        qc = {"quant_method": "compressed-tensors", "ignore": ["lm_head"], "config_groups": {"group_0": {
            "targets": ["Linear"], "weights": {"num_bits": 8, "type": qtype, "strategy": "channel", "symmetric": True}}}}
        spec = cost.read_config({**base, "quantization_config": qc}, name=f"w8 {qtype}")
        p = planner.plan(spec, tokens=8192, device="H100-SXM")
        assert p.weights_bytes / GIB == pytest.approx(8.14, rel=0.01)
        assert "quantized compressed-tensors" in " ".join(p.model_features)


@pytest.mark.parametrize("name, words", [
    ("Mixtral-8x7B", ["MoE 2/8 experts"]), ("Qwen3-30B-A3B", ["MoE 8/128 experts"]),
    ("DeepSeek-V2-Lite", ["MoE 6/64 experts + 2 shared", "MLA (latent 512 + rope 64)"]),
    ("Gemma-2-27B", ["sliding window 4,096 on 23 of 46 layers"]), ("Gemma-3-1B", ["sliding window 512 on 22 of 26"]),
    ("gpt-oss-20b", ["MoE 4/32 experts", "sliding window 128", "quantized mxfp4"]),
    ("Mistral-7B-v0.1", ["sliding window 4,096 on 32 of 32 layers"])])
def test_summary_says_what_the_model_is(name, words, capsys):
    code, out, _ = run(["plan", name, "--tokens", "8192", "--gpu", "H100-SXM"], capsys)
    head = " ".join(out.split("Workload:")[0].split())
    assert code == 0 and all(w in head for w in words), head


def test_mixtral_is_not_a_7b_dense_model():
    p = planner.plan("Mixtral-8x7B", tokens=4096, device="H100-SXM")
    assert p.params == 46_702_792_704 and p.params_active == pytest.approx(12_879_925_248)
    assert p.weights_bytes == pytest.approx(93.4e9, rel=1e-3) and not p.fits
    assert p.decision == "does_not_fit"
    assert p.compute.decode_experts_read == pytest.approx(2.0)
    assert p.non_embedding_params < p.params_active              # linear FLOPs: active experts only
    two = planner.plan("Mixtral-8x7B", tokens=4096, device="H100-SXM", gpus=2)
    assert two.fits


def test_deepseek_mla_kv_and_tp_replication():
    p = planner.plan("DeepSeek-V2-Lite", tokens=32768, device="H100-SXM")
    assert p.kv_cache_bytes_per_token == 31_104 and p.kv_cache_bytes == 31_104 * 32768
    assert p.attention_kind == "MLA" and p.params == 15_706_484_224
    assert not any(f.name == "fewer_kv_heads" for f in p.fallbacks)
    two = planner.plan("DeepSeek-V2-Lite", tokens=32768, device="H100-SXM", gpus=2)
    assert two.kv_cache_bytes == p.kv_cache_bytes                # the latent is on every GPU
    assert any("MLA" in w and "naive" in w for w in p.warnings)


def test_float32_config_is_planned_in_bf16_with_a_note():
    p = planner.plan("Gemma-2-27B", tokens=8192, device="H100-SXM")
    assert p.weights_dtype == "bf16" and p.weights_bytes == 27_227_128_320 * 2
    assert any("float32" in w and "bf16" in w for w in p.warnings)


def test_quantization_flag_keeps_embeddings_16_bit():
    p = planner.plan("Llama-3.1-8B", tokens=8192, device="H100-SXM", quantization="awq")
    c = cost.param_counts(cost.catalog_model("Llama-3.1-8B"))
    assert p.weights_bytes > 2 * (c.embedding + c.lm_head) + 0.5 * (c.total - c.embedding - c.lm_head)
    assert p.quantization["method"] == "awq" and p.quantization["bytes_per_weight"] == 0.5 + 2.5 / 128


def test_rope_scaling_decides_coverage():
    cfg = dict(cost.model_catalog()["Qwen2.5-7B"]["config"], max_position_embeddings=32768)
    plain = planner.plan(cost.read_config(cfg), tokens=100_000, device="H200-SXM")
    pi = next(f for f in plain.fallbacks if f.name == "position_interpolation")
    assert pi.effect["factor"] == 3.06 and '"rope_type": "yarn", "factor": 3.06' in pi.effect["config_snippet"]
    assert "3.06x" in plain.reason and not plain.outcome.positions["covered"]
    yarn = dict(cfg, rope_scaling={"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768})
    covered = planner.plan(cost.read_config(yarn), tokens=100_000, device="H200-SXM")
    assert covered.outcome.positions["covered"] and covered.outcome.positions["covered_tokens"] == 131072
    assert not any(f.name == "position_interpolation" for f in covered.fallbacks)
    assert "positions" not in covered.reason


def test_huge_sizes_are_fast(capsys):
    t0 = time.perf_counter()
    code, out, _ = run(["plan", "Llama-3.1-8B", "--tokens", "1e11", "--gpu", "H100-SXM", "--json"], capsys)
    assert code == 0 and json.loads(out)["decision"] == "chunked"
    code, out, _ = run(["plan", "Llama-3.1-8B", "--tokens", "1099511627776", "--gpu", "H100-SXM", "--json"], capsys)
    assert code == 0
    assert time.perf_counter() - t0 < 60          # a bound on runaway work, not a timing claim


@pytest.mark.parametrize("content, needle", [
    (b"\x00\x01\x02\xff\xfe", "is not text"), (b'{"model_type": "llama", "hidden_size": 64, '
                                              b'"num_hidden_layers": 2, "num_attention_heads": 4, '
                                              b'"torch_dtype": "float99"}', "torch_dtype: expected one of"),
    (b'{"model_type": "mamba", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4}',
     "model_type 'mamba'"),
    (b'{"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 1000000000, "num_attention_heads": 4}',
     "num_hidden_layers: expected an integer in 1..100,000, got 1000000000")])
def test_bad_config_files_exit_2_naming_file_and_field(tmp_path, capsys, content, needle):
    path = tmp_path / "cfg.json"
    path.write_bytes(content)
    code, _, err = run(["plan", str(path), "--tokens", "100", "--gpu", "H100-SXM"], capsys)
    assert code == 2 and needle in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("argv, needle", [
    (["/dev/null"], "/dev/null is not a regular file"),
    (["Llama-2-7B", "--effective-tflops", "inf", "--gpu-memory-gb", "80", "--bandwidth-tbps", "2"],
     "argument --effective-tflops"),
    (["Llama-2-7B", "--gpu", ""], "gpu: expected a catalog GPU name"),
    (["Llama-2-7B", "--gpu", "/tmp"], "is not a regular file"),
    (["Llama-2-7B", "--gpu", "H100-SXM", "--plot", "/nonexistent/dir/x.png"], "argument --plot"),
    (["Llama-2-7B", "--gpu", "H100-SXM", "--plot", "memory"], "argument --plot: expected a file name ending in"),
    (["Llama-2-7B", "--gpu", "H100-SXM", "--plot", "/dev/full"], "argument --plot")])
def test_bad_cli_input_exits_2(argv, needle, capsys):
    model, *rest = argv
    code, _, err = run(["plan", model, "--tokens", "100", *rest] if model != "/dev/null" else
                       ["plan", model, "--tokens", "100", "--gpu", "H100-SXM"], capsys)
    assert code == 2 and needle in err and "Traceback" not in err


def test_sections_registry_adds_a_json_object():
    class Demo:
        def __init__(self, kv):
            self.kv = kv

        def to_dict(self):
            return {"kv_cache_bytes_seen": self.kv}

        def explain(self):
            return [f"demo section saw {self.kv} KV bytes"]

    planner.sections.register("demo", lambda ctx: Demo(ctx.plan.memory.kv_cache_bytes) if ctx.options.get("on") else None)
    try:
        p = planner.plan("Llama-2-7B", tokens=1024, device="H100-SXM", options={"demo": {"on": True}})
        assert p.to_dict()["demo"] == {"kv_cache_bytes_seen": p.kv_cache_bytes}
        assert p.explain[-1] == f"demo section saw {p.kv_cache_bytes} KV bytes"
        assert "demo" not in planner.plan("Llama-2-7B", tokens=1024, device="H100-SXM").to_dict()
    finally:
        planner.sections._BUILDERS.pop("demo")


def test_plan_imports_no_torch():
    import subprocess
    import sys
    code = ("import sys; from multihead import planner; planner.plan('Llama-3.1-8B', tokens=1000, device='H100-SXM');"
            " print('torch' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"
