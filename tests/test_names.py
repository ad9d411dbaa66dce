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
        assert isinstance(s[twin], int) and abs(s[twin] / 2 ** 30 - s[gib]) <= 0.5e-4 + 1e-9, gib
    assert s["physical_memory_bytes"] > s["requested_bytes"] > s["kv_cache_pool_bytes"] > 0


@pytest.mark.parametrize("engine", ["vllm", "sglang", "tensorrt-llm"])
def test_byte_twins_are_the_exact_bytes_not_the_rounded_gib(engine):
    """Audit (docs) finding 9: the twins were rebuilt from the GiB rounded to 1e-4, so an explicit 80 GB
    read 79,999,993,591 B in the serving object beside the plan's 80,000,000,000."""
    d = plan("example-13b-gqa8", tokens=128_000, passes=3, gpu_memory_gb=80, effective_tflops=100,
             bandwidth_tbps=2, options={"serving": {"engine": engine}}).to_dict()
    s = d["serving"]
    assert s["engine"] == engine
    assert s["physical_memory_bytes"] == d["gpu_memory_bytes"] == 80_000_000_000
    if engine == "vllm":
        assert s["requested_bytes"] == 72_000_000_000                     # 0.9 x 80 GB, exactly
        # the same quantity here: one GPU's weights, params x 2 B, no replicated buffer on this model
        # (in general the serving figure is per GPU as the engine loads it: docs/planner.md "JSON")
        assert s["weights_bytes"] == d["weights_bytes"] == 26_000_000_000
    assert all(isinstance(s[t], int) for t in names.SERVING_BYTES.values())


def test_the_serving_command_writes_the_byte_twins_too(capsys):
    from multihead.cli import main
    assert main(["serving", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "H100", "--max-model-len", "8192", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)["serving"]
    assert abs(s["weights_bytes"] / 2 ** 30 - s["weights_gib"]) <= 0.5e-4 and "kv_cache_pool_bytes" in s
