"""Model configs: the catalog against figures.md, HF config.json reading, parameter counts."""
from __future__ import annotations

import json

import pytest

from multihead.cost import ModelSpec, catalog_model, load_config_file, model_catalog, param_counts, resolve_model
from multihead.cost import read_config as spec_from_hf_config
from multihead.cost import total_params
from multihead.cost.spec import precision

# figures.md section 2, row by row: hidden, L, H, H_kv, head_dim, intermediate, vocab, max_pos.
FIGURES = {
    "Llama-2-7B": (4096, 32, 32, 32, 128, 11008, 32000, 4096),
    "Llama-2-13B": (5120, 40, 40, 40, 128, 13824, 32000, 4096),
    "Llama-2-70B": (8192, 80, 64, 8, 128, 28672, 32000, 4096),
    "Llama-3.1-8B": (4096, 32, 32, 8, 128, 14336, 128256, 131072),
    "Llama-3.1-70B": (8192, 80, 64, 8, 128, 28672, 128256, 131072),
    "Mistral-7B-v0.1": (4096, 32, 32, 8, 128, 14336, 32000, 32768),
    "Qwen2.5-7B": (3584, 28, 28, 4, 128, 18944, 152064, 131072),
    "Qwen2.5-14B": (5120, 48, 40, 8, 128, 13824, 152064, 131072),
    "Gemma-2-9B": (3584, 42, 16, 8, 256, 14336, 256000, 8192),
    "GPT-2": (768, 12, 12, 12, 64, 3072, 50257, 1024),
    "SmolLM2-135M": (576, 30, 9, 3, 64, 1536, 49152, 8192),
}


def _shape(s: ModelSpec) -> tuple:
    return (s.hidden_size, s.num_layers, s.num_heads, s.num_kv_heads, s.head_dim, s.intermediate_size,
            s.vocab_size, s.max_position_embeddings)


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_catalog_matches_figures(name):
    spec = catalog_model(name)
    assert _shape(spec) == FIGURES[name]
    assert spec.source


def test_table_covers_every_catalog_model_citing_figures_md():
    """The catalog records which of its models come from figures.md section 2 (their `source`);
    the table above is checked against exactly those, so a model added with that citation is
    checked too (the catalog, not a path to the reference file, is the repo's record of it)."""
    cited = {name for name, entry in model_catalog().items() if "figures.md section 2" in entry["source"]}
    assert cited == set(FIGURES)


def test_every_catalog_entry_loads_and_has_a_source():
    names = list(model_catalog())
    assert "example-13b-gqa8" in names and set(FIGURES) <= set(names)
    for name in names:
        spec = catalog_model(name)
        assert spec.source and total_params(spec) > 0


def test_example_is_the_reference_texts_model():
    s = catalog_model("example-13b-gqa8")
    assert (s.hidden_size, s.num_layers, s.num_heads, s.num_kv_heads, s.head_dim) == (5120, 40, 40, 8, 128)
    assert total_params(s) == 13e9 and precision.resolve(s).weights == "fp16"


@pytest.mark.parametrize("name", sorted(n for n in FIGURES))
def test_parameter_count_equals_published_total(name):
    spec = catalog_model(name)
    counts = param_counts(spec)
    assert counts.total == spec.params_published       # exact: embeddings, attention, MLP, norms, head


def test_llama2_7b_total():
    assert total_params(catalog_model("Llama-2-7B")) == pytest.approx(6.74e9, rel=1e-3)


def test_gated_versus_plain_mlp():
    llama, gpt2 = param_counts(catalog_model("Llama-2-7B")), param_counts(catalog_model("GPT-2"))
    assert llama.mlp_per_layer == 3 * 4096 * 11008
    assert gpt2.mlp_per_layer == 2 * 768 * 3072 + 3072 + 768      # fc and proj, with biases


def test_gemma2_head_dim_and_alternating_window():
    s = catalog_model("Gemma-2-9B")
    assert s.head_dim == 256 != s.hidden_size // s.num_heads
    assert s.attention_width == 4096
    assert s.layer_types[0::2] == ("sliding_attention",) * 21 and s.layer_types[1::2] == ("full_attention",) * 21
    assert {(g.kind.value, g.layers, g.window) for g in s.layer_groups()} == {
        ("sliding_attention", 21, 4096), ("full_attention", 21, None)}


def test_window_rules():
    assert [(g.layers, g.window) for g in catalog_model("Mistral-7B-v0.1").layer_groups()] == [(32, 4096)]
    assert [(g.layers, g.window) for g in catalog_model("Qwen2.5-7B").layer_groups()] == [(28, None)]  # use_sliding_window: false
    assert catalog_model("Qwen2.5-7B").head_dim == 128                    # no head_dim field: 3584 / 28


def test_config_file_round_trip(tmp_path):
    cfg = {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
           "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256,
           "max_position_embeddings": 131072, "rope_scaling": {"rope_type": "llama3", "factor": 8.0},
           "tie_word_embeddings": False, "torch_dtype": "bfloat16"}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    spec = resolve_model(str(path))
    assert total_params(spec) == total_params(catalog_model("Llama-3.1-8B"))
    assert precision.resolve(spec).weights == "bf16" and spec.rope_scaling.factor == 8.0


def test_model_folder_reads_its_config_json(tmp_path):
    folder = tmp_path / "my-model"
    folder.mkdir()
    with pytest.raises(ValueError, match="config.json' does not exist"):
        resolve_model(str(folder))
    (folder / "config.json").write_text(json.dumps(catalog_model_config("SmolLM2-135M")))
    spec = resolve_model(str(folder))
    assert spec.name == "my-model/config.json" and total_params(spec) == total_params(catalog_model("SmolLM2-135M"))


def catalog_model_config(name: str) -> dict:
    return model_catalog()[name]["config"]


def test_missing_field_is_named(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"hidden_size": 4096, "num_attention_heads": 32}))
    with pytest.raises(ValueError, match="missing required field 'num_hidden_layers'"):
        load_config_file(path)
    path.write_text('{"hidden_size": 4096,')
    with pytest.raises(ValueError, match="not valid JSON"):
        load_config_file(path)
    path.write_text("[1, 2]")
    with pytest.raises(ValueError, match="JSON object"):
        load_config_file(path)
    with pytest.raises(ValueError, match="does not exist"):
        load_config_file(tmp_path / "nope.json")


def test_incomplete_config_needs_params_for_the_total():
    spec = spec_from_hf_config({"hidden_size": 512, "num_hidden_layers": 2, "num_attention_heads": 8})
    assert spec.num_kv_heads == 8 and spec.head_dim == 64 and param_counts(spec) is None
    with pytest.raises(ValueError, match="intermediate_size and vocab_size"):
        total_params(spec)
    assert total_params(spec.with_overrides(params=1e8)) == 1e8


@pytest.mark.parametrize("bad, match", [
    ({"num_key_value_heads": 3}, "kv_heads: expected a divisor of heads=8"),
    ({"hidden_size": 500}, "not divisible"),
    ({"num_hidden_layers": -2}, "num_hidden_layers: expected an integer in 1..100,000, got -2"),
    ({"num_attention_heads": 8.5}, "num_attention_heads: expected an integer"),
])
def test_impossible_shapes(bad, match):
    cfg = {"hidden_size": 512, "num_hidden_layers": 2, "num_attention_heads": 8, **bad}
    with pytest.raises(ValueError, match=match):
        spec_from_hf_config(cfg)


def test_unknown_model_suggests_close_names():
    with pytest.raises(ValueError, match="did you mean.*Llama-2-7B"):
        catalog_model("llama-2-7")
    with pytest.raises(ValueError, match="did you mean.*Mistral-7B-v0.1"):
        catalog_model("mistral7b")


def test_overrides_rederive_head_dim():
    s = catalog_model("Llama-2-7B").with_overrides(num_kv_heads=8)
    assert s.num_kv_heads == 8 and s.head_dim == 128
    gemma = catalog_model("Gemma-2-9B").with_overrides(num_heads=8, num_kv_heads=8)
    assert gemma.head_dim == 256          # a stated head_dim stays

# transformers' own counts for every family: tests/test_cost_transformers.py
