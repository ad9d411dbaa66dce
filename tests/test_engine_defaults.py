"""The deployment the plan times is the one its launch command starts.

vLLM picks --max-num-seqs and --max-num-batched-tokens by version and GPU when they are not given
(cost/serving/vllm_versions.batch_defaults); the time model's slots per replica, the memory
account's profile run and the printed command must all read the same pair. A stated
--flops-efficiency / --bandwidth-efficiency is honoured whatever its value, and the rate grows
with it (an audit found 0.5 read as "not given" and 0.51 slower than 0.5).
"""
from __future__ import annotations

import json
import shlex

import pytest

from multihead.cli import main


def _json(capsys, *argv: str) -> dict:
    main([*argv, "--json"])
    return json.loads(capsys.readouterr().out)


def _flags(line: str) -> dict[str, str]:
    argv = shlex.split(line)
    return {a: argv[i + 1] for i, a in enumerate(argv) if a.startswith("--") and i + 1 < len(argv)}


def _launch(d: dict) -> str:
    return d["launch"]["vllm"]["command"] if "launch" in d else d["serving"]["launch"]["vllm"]["command"]


@pytest.mark.parametrize("gpu, seqs, tokens", [("L40S", 256, 2048), ("A100-80GB", 256, 2048), ("H100-SXM", 1024, 8192)])
def test_time_model_runs_the_sequences_vllm_runs_on_this_gpu(capsys, gpu, seqs, tokens):
    d = _json(capsys, "serving", "meta-llama/Llama-3.1-8B", "--gpu", gpu, "--max-model-len", "1280",
              "--input-len", "1024", "--output-len", "256", "--kv-cache-dtype", "fp8", "--concurrency", "300")
    s = d.get("serving", d)
    assert (s["max_num_seqs"], s["max_num_batched_tokens"]) == (seqs, tokens)
    at = s["at"]
    assert at["max_num_seqs"] == seqs
    assert at["queued"] == max(0, 300 - min(seqs, at["slots_per_replica"]))
    assert s["concurrency"] <= seqs           # "at max concurrency" runs no more than the engine admits


def test_a_stated_max_num_seqs_reaches_the_command_and_the_time_model(capsys):
    base = ["serving", "meta-llama/Llama-3.1-8B", "--gpu", "L40S", "--max-model-len", "1280", "--input-len", "1024",
            "--output-len", "256", "--kv-cache-dtype", "fp8", "--concurrency", "300"]
    default = _json(capsys, *base)
    stated = _json(capsys, *base, "--max-num-seqs", "512")
    assert stated.get("serving", stated)["at"]["max_num_seqs"] == 512
    assert stated.get("serving", stated)["at"]["ttft_s"] < default.get("serving", default)["at"]["ttft_s"]
    text_default = _launch_text(capsys, base)
    text_stated = _launch_text(capsys, [*base, "--max-num-seqs", "512"])
    assert "--max-num-seqs" not in _flags(text_default)        # vLLM's own default is what was timed
    assert _flags(text_stated)["--max-num-seqs"] == "512"


def _launch_text(capsys, argv: list[str]) -> str:
    main(argv)
    out = capsys.readouterr().out
    return next(line.strip() for line in out.splitlines() if line.strip().startswith("vllm serve"))


def test_v0_command_reproduces_the_profiled_batch(capsys):
    argv = ["serving", "meta-llama/Llama-3.1-8B", "--engine-version", "0.6", "--max-model-len", "1024"]
    d = _json(capsys, *argv)
    s = d.get("serving", d)
    profile = next(t for t in s["terms"] if "profile run" in t.get("source", ""))["source"]
    assert "2048 tokens / 256 seqs" in profile
    assert s["max_num_batched_tokens"] == 2048 and s["max_num_seqs"] == 256
    assert _flags(_launch_text(capsys, argv)).get("--max-num-batched-tokens") == "2048"


@pytest.mark.parametrize("flag, key", [("--flops-efficiency", "effective_tflops")])
def test_stated_efficiency_is_monotone_and_literal(capsys, flag, key):
    rates, prefill = [], []
    for e in ("0.49", "0.5", "0.51", "0.6", "0.8"):
        d = _json(capsys, "plan", "Llama-3.1-8B", "--tokens", "8192", flag, e)
        rates.append(d[key] / 989.0)              # H100-SXM's dense 16-bit peak, TFLOP/s (catalog)
        prefill.append(d["prefill_seconds"])
    assert rates == pytest.approx([0.49, 0.5, 0.51, 0.6, 0.8], rel=1e-3)
    assert prefill == sorted(prefill, reverse=True) and len(set(prefill)) == len(prefill)


def test_stated_bandwidth_efficiency_is_monotone(capsys):
    tpot = []
    for e in ("0.79", "0.8", "0.85", "0.95"):
        d = _json(capsys, "plan", "Llama-3.1-8B", "--tokens", "8192", "--bandwidth-efficiency", e)
        tpot.append(d["serving"]["tpot_s_one_request"])
    assert tpot == sorted(tpot, reverse=True) and len(set(tpot)) == len(tpot)


@pytest.mark.parametrize("flag, value, profile", [("--max-num-seqs", "1024", "2048 tokens / 1024 seqs"),
                                                   ("--max-num-batched-tokens", "8192", "8192 tokens / 256 seqs")])
def test_a_value_equal_to_an_old_default_is_still_given(capsys, flag, value, profile):
    """On an L40S vLLM picks 2048 / 256; a user who types 1024 or 8192 gets it, in the account and the
    command (a docs audit found them read as 'not given' and replaced by the GPU's default)."""
    argv = ["serving", "meta-llama/Llama-3.1-8B", "--gpu", "L40S", "--max-model-len", "8192", flag, value]
    d = _json(capsys, *argv)
    s = d.get("serving", d)
    assert profile in next(t for t in s["terms"] if "profile run" in t.get("source", ""))["source"]
    assert _flags(_launch_text(capsys, argv))[flag] == value


def test_a_search_row_launches_the_sequences_it_timed(capsys):
    d = _json(capsys, "plan", "Llama-3.1-8B", "--search", "--slo", "tpot=300ms", "--concurrency", "600",
              "--input-len", "1024", "--output-len", "256", "--gpu", "A100-80GB", "--gpus-max", "1", "--top", "3")
    rows = d["search"]["results"]
    assert rows
    for row in rows:
        assert _flags(row["command"]["text"])["--max-num-seqs"] == str(row["max_num_seqs"])
        assert row["at"]["max_num_seqs"] == row["max_num_seqs"]
