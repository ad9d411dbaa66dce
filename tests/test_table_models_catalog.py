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
