"""The GPU-time table's models and the planner catalog share one copy of each published config: a table model
that names a catalog HF id (``catalog``) is read from cost/catalog/configs, less its quantization_config (a row
states its own weights), and the same id plans by name (`multihead plan zai-org/GLM-4.6`)."""
import json

import pytest

from multihead import cost
from multihead.cli import main
from multihead.cost.spec.lookup import catalog_config, config_index, find_model
from multihead.fits import measurement_table as mt
from multihead.fits import timing_validation as tv

RAW = json.loads(tv.MEASUREMENTS.read_text())
BY_CATALOG = {name: e["catalog"] for name, e in RAW["models"].items() if "catalog" in e}


def test_served_moe_and_mla_models_come_from_the_catalog():
    assert {"DeepSeek-R1", "Kimi-K2", "GLM-4.6", "MiniMax-M2", "gpt-oss-120b", "Qwen3-235B-A22B"} <= set(BY_CATALOG)
    assert all("config" not in RAW["models"][name] for name in BY_CATALOG)    # one copy, not two


@pytest.mark.parametrize("name", sorted(BY_CATALOG))
def test_table_model_is_the_catalog_config_without_its_quantization(name):
    table = tv.load_table()
    published = catalog_config(BY_CATALOG[name])
    assert table["models"][name]["config"] == {k: v for k, v in published.items() if k != "quantization_config"}
    spec = tv._spec(name, table)
    planned = find_model(BY_CATALOG[name], paths=False).spec
    # the same shape the planner reads; the planner also reads the checkpoint's quantization
    shape = lambda m: (m.hidden_size, m.num_layers, m.num_heads, m.num_kv_heads, m.head_dim, m.moe, m.mla)
    assert shape(spec) == shape(planned) and spec.quantization is None
    assert "huggingface.co/" + BY_CATALOG[name] in config_index()[BY_CATALOG[name]]["source"]


def test_block_fp8_checkpoints_plan_as_fp8_by_name():
    for hf in ("deepseek-ai/DeepSeek-R1", "moonshotai/Kimi-K2-Instruct", "MiniMaxAI/MiniMax-M2"):
        assert catalog_config(hf)["quantization_config"]["quant_method"] == "fp8"
        assert find_model(hf, paths=False).spec.quantization.method == "fp8"
    assert find_model("zai-org/GLM-4.6", paths=False).spec.quantization is None


def test_plan_by_hf_id_of_a_served_moe(capsys):
    assert main(["plan", "zai-org/GLM-4.6", "--gpu", "H200", "--gpus", "8", "--tokens", "32000", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["model"], out["num_kv_heads"], out["num_hidden_layers"]) == ("zai-org/GLM-4.6", 8, 92)


@pytest.mark.parametrize("entry, words", [
    ({"source": "x", "catalog": "nobody/None"}, "catalog: expected a catalog HF id"),
    ({"source": "x", "catalog": ["zai-org/GLM-4.6"]}, "catalog: expected a catalog HF id"),
    ({"source": "x"}, "either config"),
    ({"source": "x", "catalog": "zai-org/GLM-4.6", "config": {}}, "either config"),
])
def test_a_bad_model_entry_is_refused_by_name(entry, words):
    table = {**RAW, "models": {**RAW["models"], "GLM-4.6": entry}}
    with pytest.raises(ValueError, match="models.GLM-4.6") as err:
        mt.check_table(table, "t.json")
    assert words in str(err.value)


def test_time_model_reads_the_catalog_models():
    table = tv.load_table()
    for name in BY_CATALOG:
        assert isinstance(tv._spec(name, table), cost.ModelSpec)


def test_yarn_checkpoints_keep_their_original_length_past_the_config(capsys):
    """DeepSeek-R1 is yarn x40 over 4,096 positions: a longer --max-model-len scales that yarn further (the
    override keeps original_max_position_embeddings 4096 and mscale), never a new yarn over 163,840."""
    assert main(["serving", "deepseek-ai/DeepSeek-R1", "--gpu", "B200", "--tensor-parallel-size", "8",
                 "--max-model-len", "200000", "--json"]) == 0
    argv = json.loads(capsys.readouterr().out)["serving"]["command"]["argv"]
    rope = json.loads(argv[argv.index("--hf-overrides") + 1])["rope_scaling"]
    assert rope["original_max_position_embeddings"] == 4096 and rope["mscale_all_dim"] == 1.0
    assert rope["factor"] == pytest.approx(200000 / 4096, rel=1e-3)


@pytest.mark.parametrize("model", ["openai/gpt-oss-20b", "openai/gpt-oss-120b"])
def test_mxfp4_checkpoint_without_torch_dtype_runs_in_bf16(model, capsys):
    """gpt-oss states no torch_dtype; vLLM's MXFP4 kernels take bf16 only and its logged gpt-oss-20b run resolved
    --dtype auto to bfloat16, so the command says bfloat16 (float16 would be refused)."""
    assert main(["serving", model, "--gpu", "H100", "--tensor-parallel-size", "2", "--json"]) == 0
    argv = json.loads(capsys.readouterr().out)["serving"]["command"]["argv"]
    assert argv[argv.index("--dtype") + 1] == "bfloat16"
