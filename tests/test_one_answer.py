"""Issue 27's acceptance: one request, one answer, from every door.

Over the catalog x a few GPUs x lengths, the library (``planner.plan``), ``multihead plan --json``,
``multihead serving --json`` and the page's API function give the same answer to the same request:
the same one-pass decision as the engine's account, the same serving numbers, and one time per
quantity (the plan's prefill is the GPU-time model's phase, the serving section's TTFT the same
phase at the prompt's length plus the request overhead).
"""
from __future__ import annotations

import json

import pytest

from multihead.cli import main
from multihead.cost import model_names
from multihead.cost.time import timing
from multihead.planner import plan, report
from multihead.planner.request import PlanRequest

GPUS = ("H100-SXM", "A100-40GB", "L40S")
LENGTHS = (8192, 131072)
SAME = ("fits", "max_concurrency", "kv_cache_tokens", "max_model_len_fit", "num_gpu_blocks", "weights_gib",
        "kv_cache_gib", "ttft_s", "tpot_s", "prefill_s", "output_tokens_per_s")


def _cli(argv: list[str], capsys) -> dict | str:
    """The command's JSON, or its one-line refusal (before anything is printed)."""
    main(argv)                     # `serving` exits 2 after printing when one request does not fit
    out = capsys.readouterr()
    return json.loads(out.out) if out.out else out.err.split("error: ", 1)[-1]


def _cases():
    for name in model_names():
        for gpu in GPUS:
            for T in LENGTHS:
                yield name, gpu, T


def _library(name, gpu, T):
    try:
        return plan(name, tokens=T, device=gpu)
    except ValueError as err:      # a model the planner refuses by name: every door must refuse it
        return err


@pytest.mark.parametrize("gpu", GPUS)
def test_plan_cli_serving_cli_and_library_agree(gpu, capsys):
    compared = 0
    for name, g, T in _cases():
        if g != gpu:
            continue
        p = _library(name, g, T)
        if isinstance(p, ValueError):
            continue
        lib = p.to_dict()
        cli = _cli(["plan", name, "--tokens", str(T), "--gpu", g, "--json"], capsys)
        assert cli == json.loads(json.dumps(lib)), (name, g, T)              # plan CLI == library, every key
        req = PlanRequest(model=name, tokens=T, gpu=g)                        # the request type's door
        assert json.loads(json.dumps(report(req))) == cli, (name, g, T)
        s = lib["serving"]
        served = _cli(["serving", name, "--gpu", g, "--max-model-len", str(T), "--json"], capsys)
        assert isinstance(served, dict), (name, served)     # one model door: no name refused by one door only
        served = served["serving"]
        for key in SAME:
            if key in s or key in served:
                assert served.get(key) == s.get(key), (name, g, T, key)       # serving CLI == the plan's section
        # the one-pass decision is the engine's account: the plan's fits and the section's agree
        assert p.decided_by == "engine" and lib["fits"] == s["fits"], (name, g, T)
        if s["fits"]:
            assert lib["decision"] == "single_pass" or lib["positions"]["learned"], (name, g, T)
        elif s["max_model_len_fit"] > 0:
            assert lib["decision"] == "chunked" and -(-T // lib["chunks"]) <= s["max_model_len_fit"], (name, g, T)
        # one time model: prefill_seconds is the GPU-time model's phase; the section's prefill_s the
        # same phase at its prompt's length
        ts = p.accounts.setup
        assert lib["prefill_seconds"] == timing.prefill(ts, T).total_s, (name, g, T)
        if s.get("prefill_s") is not None and s["pipeline_parallel_size"] == 1:
            assert s["prefill_s"] == pytest.approx(timing.prefill(ts, s["input_len"]).total_s, rel=1e-12)
        compared += 1
    assert compared >= 10


def test_the_page_api_gives_the_library_answer():
    from multihead.web import plan_api
    for name, g, T in [("Llama-3.1-8B", "H100-SXM", 32768), ("Llama-3.1-8B", "A100-40GB", 131072),
                       ("Llama-3.1-70B", "H100-SXM", 131072)]:
        page = plan_api.plan_json({"model": name, "gpu": g, "tokens": T})
        lib = json.loads(plan(name, tokens=T, device=g).to_json())
        assert page == lib, (name, g, T)


def test_the_issue_cases_have_one_answer():
    """The cases issue 27 lists, each now answered once."""
    big = plan("Llama-3.1-70B", tokens=131072, device="H100-SXM", gpus=4, kv_dtype="fp8")
    s = big.to_dict()["serving"]
    ts = big.accounts.setup
    assert big.prefill_seconds == timing.prefill(ts, 131072).total_s
    assert s["prefill_s"] == pytest.approx(timing.prefill(ts, s["input_len"]).total_s, rel=1e-12)
    assert abs(big.prefill_seconds / s["prefill_s"] - 1) < 0.02          # was 31.84 s vs 17.61 s
    small = plan("Llama-3.1-8B", tokens=32768, device="H100-SXM")
    one = small.to_dict()["serving"]
    c = ts.constants.request_overhead_s
    assert one["ttft_s_one_request"] == pytest.approx(c + timing.prefill(small.accounts.setup, one["input_len"]).total_s)
    assert abs(small.prefill_seconds / one["ttft_s_one_request"] - 1) < 0.1     # was 2.1 s vs 1,152 ms
    card = plan("Llama-3.1-8B", tokens=131072, device="A100-40GB")
    assert card.to_dict()["serving"]["fits"] and card.decision == "single_pass" and card.fits   # was "2 chunks"
    heavy = plan("Llama-3.1-70B", tokens=131072, device="H100-SXM")
    first = heavy.to_dict()["serving"]["fallbacks"][0]["flags"]
    assert first == ["--tensor-parallel-size 2", "--quantization fp8"]
    assert f"cheapest: {' '.join(first)}" in heavy.reason                 # the decision reads the same search
    more = next(f for f in heavy.fallbacks if f.name == "more_gpus")
    same = [r for r in heavy.accounts.engine.found if r[0].quantization is None and r[0].kv_cache_dtype == "auto"]
    assert more.effect["gpus"] == same[0][0].tensor_parallel_size == 4    # precision kept: the search's TP 4
