"""Flags that contradict each other, or belong to another engine or to the search, are refused by name
(exit 2, one line) instead of being ignored or read two ways by two accounts (an audit's findings)."""
from __future__ import annotations

import json

import pytest

from multihead.cli import main

BASE = ["plan", "Llama-3.1-8B"]


def _refused(capsys, *argv: str) -> str:
    code = main([*BASE, *argv])
    out = capsys.readouterr()
    err = out.err.strip()
    assert code == 2 and not out.out and "Traceback" not in err and len(err.splitlines()) == 1
    return err


@pytest.mark.parametrize("argv, names", [
    (["--kv-dtype", "int4", "--kv-cache-dtype", "fp8"], "kv-dtype"),
    (["--weights-dtype", "int4", "--quantization", "fp8"], "weights-dtype"),
    (["--dtype", "float16", "--weights-dtype", "bf16"], "weights-dtype"),
    (["--engine", "vllm", "--mem-fraction-static", "0.5"], "mem-fraction-static"),
    (["--engine", "sglang", "--kv-cache-free-gpu-memory-fraction", "0.5"], "kv-cache-free-gpu-memory-fraction"),
    (["--slo", "ttft=2s"], "slo"),
    (["--price", "H100=2"], "price"),
    (["--params", "1.5"], "--params"),
    (["--gpus", "2", "--expert-parallel-size", "2"], "expert-parallel-size"),
    (["--tokens", "4096", "--max-model-len", "2048"], "tokens"),
    (["--tokens", "128000", "--max-model-len", "16384", "--chunks", "4"], "tokens"),
])
def test_contradictions_are_refused_by_name(capsys, argv, names):
    assert names in _refused(capsys, *argv)


@pytest.mark.parametrize("argv", [
    ["--weights-dtype", "int4", "--quantization", "gptq"], ["--weights-dtype", "fp8", "--quantization", "fp8"],
    ["--weights-dtype", "bf16", "--dtype", "bfloat16"], ["--weights-dtype", "int4", "--dtype", "float16"],
    ["--kv-dtype", "fp8", "--kv-cache-dtype", "fp8_e5m2"], ["--params", "8e9"],
    ["--tokens", "128000", "--max-model-len", "16384", "--chunks", "8"],
])
def test_agreeing_flags_still_plan(capsys, argv):
    main([*BASE, *argv, "--json"])
    assert json.loads(capsys.readouterr().out)["tokens"] > 0


SEARCH = ["--search", "--concurrency", "16", "--input-len", "4096", "--output-len", "512", "--slo", "ttft=2s",
          "--objective", "cost", "--json"]


@pytest.mark.parametrize("price", ["H100=0.01", "h100-sxm=0.01"])
def test_prices_take_the_gpu_aliases(capsys, price):
    main([*BASE, *SEARCH, "--price", price])
    prices = json.loads(capsys.readouterr().out)["search"]["prices"]
    assert prices["H100-SXM"] == {"usd_per_hour": 0.01, "source": "--price"}


@pytest.mark.parametrize("price, said", [("FOO=3", "unknown GPU"), ("H100=2,H100=3", "given twice")])
def test_unknown_or_repeated_prices_are_refused(capsys, price, said):
    assert said in _refused(capsys, *SEARCH, "--price", price)


def test_a_stated_gpu_memory_sizes_the_engine_account_too(capsys):
    """--gpu-memory-gb over a catalog GPU: the engine's account budgets that memory, labelled as given
    (it used the catalog's 80 GB while the text's account used 40)."""
    main([*BASE, "--gpu", "H100", "--gpu-memory-gb", "40", "--json"])
    d = json.loads(capsys.readouterr().out)
    physical = next(t for t in d["serving"]["terms"] if t["name"] == "physical memory")
    assert physical["gib"] == pytest.approx(40e9 / 2 ** 30, abs=0.01) and "as given" in physical["source"]
    assert d["gpu_memory_bytes"] == 40e9
    main([*BASE, "--gpu", "H100", "--json"])
    physical = next(t for t in json.loads(capsys.readouterr().out)["serving"]["terms"] if t["name"] == "physical memory")
    assert "catalog" in physical["source"]


def test_a_decision_says_when_the_two_accounts_disagree(capsys):
    """The text's case on 40 GB: the engine's account takes chunks of ~42,667 tokens that the memory table
    puts over its usable memory; the decision names both and which one it read, in English and Chinese."""
    from multihead.messages import translate
    main(["plan", "example-13b-gqa8", "--tokens", "128000", "--passes", "3", "--gpu-memory-gb", "40",
          "--effective-tflops", "100", "--bandwidth-tbps", "2", "--json"])
    d = json.loads(capsys.readouterr().out)
    assert d["decision"] == "chunked" and d["chunked"]["fits"] is False
    assert "the two accounts disagree here" in d["reason"]
    assert "两本账在这里不一致" in translate(d["reason"], "zh")


def test_serving_takes_a_catalog_gpu_with_its_memory_overridden_as_plan_does(capsys):
    """Review: plan took --gpu A100-80GB --gpu-memory-gb 40, serving refused it; both give one account now."""
    argv = ["meta-llama/Llama-3.1-8B", "--gpu", "A100-80GB", "--gpu-memory-gb", "40", "--json"]
    main(["plan", *argv])
    plan = json.loads(capsys.readouterr().out)["serving"]
    assert main(["serving", *argv]) == 0
    serving = json.loads(capsys.readouterr().out)["serving"]
    assert serving["kv_cache_tokens"] == plan["kv_cache_tokens"] and serving["ttft_s"] == plan["ttft_s"]


@pytest.mark.parametrize("kw, flags", [({"quantization": "fp8"}, ["--quantization", "fp8"]),
                                       ({"weights_dtype": "int4"}, ["--weights-dtype", "int4"])])
def test_the_library_serves_the_precision_it_plans_as_the_cli_does(capsys, kw, flags):
    """Review: mh.plan(..., quantization='fp8') planned fp8 weights but served bf16 ones (16.1 GB) and
    launched without --quantization; the CLI passed it on."""
    import multihead as mh
    lib = mh.plan("Llama-3.1-8B", device="H100", tokens=8192, **kw).to_dict()
    main(["plan", "Llama-3.1-8B", "--gpu", "H100", "--tokens", "8192", *flags, "--json"])
    cli = json.loads(capsys.readouterr().out)
    assert lib["serving"]["weights_bytes"] == cli["serving"]["weights_bytes"] < 0.6 * 16.06e9
    assert lib["serving"]["command"]["text"] == cli["serving"]["command"]["text"]


def test_the_library_refuses_a_serving_precision_that_disagrees_and_reads_null_as_unset():
    """Second review: a serving option set to None dropped the planned fp8 (bf16 served again), and the
    library took contradictions the CLI refuses."""
    import multihead as mh
    d = mh.plan("Llama-3.1-8B", device="H100", tokens=8192, quantization="fp8",
                options={"serving": {"quantization": None}}).to_dict()
    assert d["serving"]["weights_bytes"] < 0.6 * 16.06e9 and "--quantization fp8" in d["serving"]["command"]["text"]
    for kw in ({"quantization": "fp8", "options": {"serving": {"quantization": "awq"}}},
               {"weights_dtype": "int4", "quantization": "fp8"}):
        with pytest.raises(ValueError, match="disagrees"):
            mh.plan("Llama-3.1-8B", device="H100", tokens=8192, **kw)
