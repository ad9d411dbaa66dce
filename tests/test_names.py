"""One name per quantity (issue 27): the renamed JSON keys and their aliases for one release."""
from __future__ import annotations

import json

import pytest

from multihead.planner import names, plan


@pytest.fixture(scope="module")
def gpu_plan():
    return plan("Llama-3.1-8B", tokens=32768, device="H100-SXM", gpus=2)


def test_every_old_key_still_reads_with_the_new_value(gpu_plan):
    d = json.loads(gpu_plan.to_json())
    expect = {"num_kv_heads": 8, "num_attention_heads": 32, "num_hidden_layers": 32, "hidden_size": 4096,
              "tensor_parallel_size": 2}
    for old, new in names.RENAMED.items():
        assert d[new] == expect[new], new                  # the new name, the model's own number
        assert d[old] == d[new], old                       # the old key: same value, one release
        assert getattr(gpu_plan, old) == getattr(gpu_plan, new) == expect[new], old


def test_an_alias_never_hides_a_field():
    """An old name is no longer a field anywhere in the plan, so an alias cannot shadow a new value."""
    from dataclasses import fields

    from multihead.planner.plan import Compute, Inputs, Memory, Outcome, Parameters
    current = {f.name for part in (Inputs, Parameters, Memory, Compute, Outcome) for f in fields(part)}
    assert not current & set(names.RENAMED) and set(names.RENAMED.values()) <= current


def test_serving_gib_keys_have_byte_twins(gpu_plan):
    s = gpu_plan.to_dict()["serving"]
    for gib, twin in names.SERVING_BYTES.items():
        assert s[twin] == round(s[gib] * 2 ** 30), gib
    assert s["physical_memory_bytes"] > s["requested_bytes"] > s["kv_cache_pool_bytes"] > 0


def test_the_serving_command_writes_the_byte_twins_too(capsys):
    from multihead.cli import main
    assert main(["serving", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "H100", "--max-model-len", "8192", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)["serving"]
    assert s["weights_bytes"] == round(s["weights_gib"] * 2 ** 30) and "kv_cache_pool_bytes" in s
