"""The launch command names what the engine loads: a model folder holding config.json.

A config given as a file under another name (my-model.json) is not a folder an engine loads; the
command names the $MODEL_DIR placeholder and says what to put there (an audit found it pointing at
the file's folder, which held other configs and no config.json)."""
from __future__ import annotations

import json
import shlex

import pytest

from multihead.cli import main
from multihead.cost.spec.lookup import MODEL_DIR, find_model

CONFIG = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 2048,
          "num_hidden_layers": 16, "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 8192,
          "vocab_size": 128256, "max_position_embeddings": 8192, "torch_dtype": "bfloat16"}


@pytest.mark.parametrize("engine", ["vllm", "sglang", "tensorrt-llm"])
def test_a_config_under_another_name_gets_the_placeholder_and_a_note(tmp_path, capsys, engine):
    path = tmp_path / "my-model.json"
    path.write_text(json.dumps(CONFIG))
    main(["plan", str(path), "--engine", engine, "--json"])
    cmd = json.loads(capsys.readouterr().out)["serving"]["command"]
    assert MODEL_DIR in shlex.split(cmd["text"].replace(MODEL_DIR, "'$MODEL_DIR'"))
    assert str(tmp_path) not in cmd["text"]
    assert MODEL_DIR in cmd["note"] and "config.json" in cmd["note"]


def test_a_folder_or_its_config_json_is_served_as_the_folder(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    assert find_model(tmp_path).model_id == str(tmp_path)
    assert find_model(tmp_path / "config.json").model_id == str(tmp_path)
