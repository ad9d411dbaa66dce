"""Model names a user types: the HF id a planner catalog model was read from (meta-llama/Llama-2-70b-hf is
Llama-2-70B), and variants whose published config.json equals a catalog model's in every field multihead reads
(``same_as`` in cost/catalog/configs/index.json: instruct and chat releases, DeepSeek-V3 and R1). A variant plans
as its model and launches under its own id."""
import json

import pytest

from multihead.cli import main
from multihead.cost.spec.lookup import catalog_config, catalog_key, config_index, find_model, model_catalog

INDEX = config_index()
ALIASES = {k: e["same_as"] for k, e in INDEX.items() if "same_as" in e}


def test_every_alias_names_a_model_the_catalog_holds():
    assert len(ALIASES) >= 10
    for alias, target in ALIASES.items():
        assert target in INDEX or target in model_catalog(), alias
        assert "same_as" not in INDEX.get(target, {}), f"{alias}: an alias of an alias"
        assert INDEX[alias]["source"].startswith(f"https://huggingface.co/{alias}/")
        assert "file" not in INDEX[alias]


@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_alias_plans_as_its_model_and_launches_under_its_own_id(alias):
    target = ALIASES[alias]
    assert catalog_config(alias) == (catalog_config(target) if target in INDEX else model_catalog()[target]["config"])
    mine, theirs = find_model(alias, paths=False), find_model(target, paths=False)
    shape = lambda s: (s.hidden_size, s.num_layers, s.num_heads, s.num_kv_heads, s.head_dim, s.intermediate_size,
                       s.vocab_size, s.moe, s.mla, s.quantization, s.max_position_embeddings)
    assert shape(mine.spec) == shape(theirs.spec)
    assert mine.model_id == alias and alias in mine.spec.source


@pytest.mark.parametrize("hf, name", [("meta-llama/Llama-2-70b-hf", "Llama-2-70B"),
                                      ("mistralai/Mixtral-8x7B-v0.1", "Mixtral-8x7B"),
                                      ("META-LLAMA/LLAMA-3.1-405B", "Llama-3.1-405B"),
                                      ("deepseek-ai/DeepSeek-V2-Lite", "DeepSeek-V2-Lite")])
def test_planner_models_answer_to_their_hf_ids(hf, name):
    assert catalog_key(hf) == name
    assert find_model(hf, paths=False).model_id.lower() == hf.lower()


def test_a_name_without_a_slash_is_not_matched_as_an_hf_id():
    assert catalog_key("Llama-2-70b-hf") is None


@pytest.mark.parametrize("short, hf", [("DeepSeek-R1", "deepseek-ai/DeepSeek-R1"), ("qwen3-235b-a22b", "Qwen/Qwen3-235B-A22B"),
                                       ("Falcon-180b", "tiiuae/falcon-180B"), ("GLM-4.7", "zai-org/GLM-4.6")])
def test_an_hf_id_without_its_organisation_is_refused_naming_the_id(short, hf, capsys):
    """A short name is not resolved to an HF id (one tail may stand for two repositories, and `vllm serve` takes the
    organisation); the refusal names the id, exact or close (GLM-4.7 is not in the catalog: GLM-4.6 is offered)."""
    assert main(["plan", short, "--tokens", "1024"]) == 2
    err = capsys.readouterr().err
    assert f"did you mean {hf}" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_planner_catalog_name_still_wins_over_an_hf_tail():
    assert find_model("Qwen3-8B", paths=False).spec.name == "Qwen3-8B"      # also the tail of Qwen/Qwen3-8B


def test_serving_an_alias_uses_its_id(capsys):
    assert main(["serving", "meta-llama/Llama-2-70b-chat-hf", "--gpu", "A100-80GB", "--tensor-parallel-size", "4",
                 "--json"]) == 0
    argv = json.loads(capsys.readouterr().out)["serving"]["command"]["argv"]
    assert argv[:3] == ["vllm", "serve", "meta-llama/Llama-2-70b-chat-hf"]


def test_an_hf_id_the_catalog_lacks_is_still_refused_by_name(capsys):
    assert main(["plan", "meta-llama/Llama-2-70b-not-a-model", "--tokens", "1024"]) == 2
    assert "meta-llama/Llama-2-70b-not-a-model" in capsys.readouterr().err


def test_planner_models_name_distinct_hf_ids():
    """catalog_key maps a planner model's HF id back to it: two models with one id would be ambiguous."""
    from multihead.cost.spec.lookup import hf_id
    ids = [hf_id(e.get("source", ""), k).lower() for k, e in model_catalog().items() if not k.startswith("_")]
    ids = [i for i in ids if "/" in i]
    assert len(ids) == len(set(ids)) and len(ids) >= 20


def test_serving_list_marks_each_alias(capsys):
    assert main(["serving", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    for alias, target in ALIASES.items():
        line = next(x for x in lines if x.split() and x.split()[0] == alias)
        assert line.endswith(f"= {target}")
