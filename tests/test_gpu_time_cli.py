"""``multihead gpu-time MODEL``: one serving point from the inputs a user states, with 80% intervals."""
import json
from pathlib import Path

import pytest

from multihead.cli import main


def _json(capsys, *argv):
    assert main(["gpu-time", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_point_has_times_intervals_and_inputs(capsys):
    out = _json(capsys, "Llama-3.1-8B", "--gpu", "H100-SXM", "--concurrency", "8", "--input-len", "1024",
                "--output-len", "256")
    for k in ("ttft_s", "tpot_s", "request_latency_s", "output_tokens_per_s"):
        assert out[f"{k}_low"] < out[f"{k}_high"] and out[k] > 0
    assert out["engine"] == "vllm" and out["version_family"] == "v1-async" and out["batching"] == "continuous"
    assert out["interval"]["level"] == 0.8


def test_engine_version_changes_the_family(capsys):
    new = _json(capsys, "Llama-3.1-8B", "--engine-version", "0.10.2")
    old = _json(capsys, "Llama-3.1-8B", "--engine-version", "0.6.3")
    assert (new["version_family"], old["version_family"]) == ("v1", "v0")
    assert new["tpot_s"] != old["tpot_s"]


def test_static_batching_prefills_together(capsys):
    cont = _json(capsys, "Llama-3.1-8B", "--concurrency", "16")
    stat = _json(capsys, "Llama-3.1-8B", "--concurrency", "16", "--batching", "static")
    assert stat["ttft_s"] > cont["ttft_s"]


def test_data_parallel_replicas_share_the_requests(capsys):
    one = _json(capsys, "Llama-3.1-8B", "--concurrency", "32")
    two = _json(capsys, "Llama-3.1-8B", "--concurrency", "32", "--data-parallel-size", "2")
    assert two["requests_per_replica"] == 16 and two["output_tokens_per_s"] > one["output_tokens_per_s"]


def test_expert_parallel_and_dp_attention(capsys):
    out = _json(capsys, "Qwen/Qwen3-30B-A3B", "-tp", "4", "--expert-parallel-size", "4", "--engine", "sglang",
                "--data-parallel-size", "4", "--enable-dp-attention", "--concurrency", "64")
    assert out["enable_dp_attention"] and out["tpot_s"] > 0


@pytest.mark.parametrize("argv, flag", [
    (["Llama-3.1-8B", "--expert-parallel-size", "2", "-tp", "2"], "expert-parallel-size"),
    (["Llama-3.1-8B", "--enable-dp-attention", "--engine", "sglang"], "enable-dp-attention"),
    (["Llama-3.1-8B", "--enable-dp-attention", "--data-parallel-size", "2", "-tp", "2"], "enable-dp-attention"),
    (["Llama-3.1-8B", "--engine-version", "newest"], "engine_version"),
    (["Qwen/Qwen3-30B-A3B", "-tp", "4", "--expert-parallel-size", "3"], "expert-parallel-size"),
])
def test_refusals_are_one_line_naming_the_flag(capsys, argv, flag):
    assert main(["gpu-time", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert flag in err and "\n" not in err and "Traceback" not in err


def test_plan_takes_batching_and_expert_parallel_size(capsys):
    base = ["plan", "Qwen/Qwen3-30B-A3B", "--gpu", "H100-SXM", "--gpus", "2", "--max-model-len", "4096",
            "--input-len", "1024", "--output-len", "1024", "--concurrency", "32", "--json"]
    runs = {}
    for extra in ([], ["--batching", "static"], ["--expert-parallel-size", "2"]):
        assert main([*base, *extra]) == 0
        runs[tuple(extra)] = json.loads(capsys.readouterr().out)["serving"]["at"]
    assert runs[("--batching", "static")]["ttft_s"] > runs[()]["ttft_s"]       # the batch's prompts together
    assert runs[("--expert-parallel-size", "2")]["tpot_s"] >= runs[()]["tpot_s"]  # the slowest GPU's experts
    assert runs[()]["ttft_s_low"] < runs[()]["ttft_s"] < runs[()]["ttft_s_high"]


def test_plan_refuses_expert_parallel_for_a_dense_model_by_name(capsys):
    assert main(["plan", "Llama-3.1-8B", "--gpu", "H100-SXM", "--gpus", "2", "--max-model-len", "4096",
                 "--expert-parallel-size", "2", "--json"]) == 2
    out = capsys.readouterr()          # refused (session 17's audit), no longer a plan without its times
    assert not out.out and "expert-parallel-size" in out.err and "no routed experts" in out.err


# -- setups no engine runs are refused by the planner's own checks (audit finding 7) ---------------------

@pytest.mark.parametrize("argv, flag", [
    (["Qwen/Qwen3-8B", "-tp", "3"], "tensor-parallel-size: expected a divisor of heads=32"),     # plan refuses it too
    (["SmolLM2-135M", "-tp", "2"], "tensor-parallel-size: expected a divisor of heads=9"),
    (["Llama-3.1-405B", "--gpu", "L4"], "gpu:"),                          # ~756 GiB of bf16 weights on 22 GiB
    (["Llama-3.1-405B", "--gpu", "L4", "--engine", "gpt-fast"], "gpu:"),
    (["Qwen/Qwen3-8B", "--input-len", "10000000"], "input-len:"),         # past the model's 40,960 positions
    (["Qwen/Qwen3-8B", "--input-len", "40705"], "input-len:"),            # 40,705 + 256 = one past them
    (["Qwen/Qwen3-8B", "--gpu", "L4", "--input-len", "30000"], "input-len:"),   # within positions, not in L4's KV
])
def test_setups_that_cannot_run_are_refused_by_name(capsys, argv, flag):
    assert main(["gpu-time", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert flag in err and "\n" not in err and "Traceback" not in err and "TTFT" not in err, err


def test_the_refusal_bounds_are_the_accounts_not_stricter(capsys):
    """Just inside each bound still predicts: the model's positions (40,960) and the KV pool of one L4."""
    from multihead.cost.serving.answer import Request, serving_account
    from multihead.cost.spec.lookup import find_model
    assert _json(capsys, "Qwen/Qwen3-8B", "--input-len", "40704")["ttft_s"] > 0      # 40,704 + 256 = 40,960
    found = find_model("Qwen/Qwen3-8B")
    fit = serving_account(found.config, Request(model=found.model_id, gpu="L4", max_model_len=30256),
                          spec=found.spec)[0].max_model_len_fit                      # the account's longest request
    assert 256 < fit < 30256
    assert _json(capsys, "Qwen/Qwen3-8B", "--gpu", "L4", "--input-len", str(fit - 256))["ttft_s"] > 0
    assert main(["gpu-time", "Qwen/Qwen3-8B", "--gpu", "L4", "--input-len", str(fit - 256 + 64)]) == 2


# -- flags the mode would ignore are refused by name (audit finding 8) -------------------------------------

@pytest.mark.parametrize("argv, flags", [
    (["--gpu", "A100-SXM"], "--gpu"),
    (["--gpu", "H100-SXM"], "--gpu"),                                    # typed, even at the default value
    (["--concurrency", "5"], "--concurrency"),
    (["-tp", "2", "--input-len", "512"], "--tensor-parallel-size, --input-len"),
    (["--enable-dp-attention"], "--enable-dp-attention"),
    (["--cv", "--fit"], "--fit"),
    (["Llama-3.1-8B", "--fit"], "--fit"),
    (["Llama-3.1-8B", "--cv"], "--cv"),
    (["Llama-3.1-8B", "--measurements", str(Path(__file__).parents[1] / "reports/gpu-time/measurements.json")],
     "--measurements"),
])
def test_flags_that_do_not_apply_to_the_mode_are_refused(capsys, argv, flags):
    assert main(["gpu-time", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err.split("error: ", 1)[1].startswith(flags + ":") and "\n" not in err, err


def test_out_without_fit_or_with_model_writes_nothing(capsys, tmp_path):
    for argv in (["Llama-3.1-8B", "--fit", "--out", str(tmp_path / "r")], ["--out", str(tmp_path / "r")]):
        assert main(["gpu-time", *argv]) == 2
        assert "--out" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_gpu_time_says_when_vllm_would_queue_part_of_the_load(capsys):
    """gpu-time times N requests in flight; on an L40S vLLM admits 256 per replica by default, so 300 is
    said to queue 44 (serving --concurrency times that queue); on an H100 (1,024) nothing is said."""
    l40s = _json(capsys, "Qwen/Qwen3-8B", "--gpu", "L40S", "--concurrency", "300", "--input-len", "1024",
                 "--output-len", "256")
    assert "256 sequences" in l40s["queue_note"] and "44 of the 300" in l40s["queue_note"]
    h100 = _json(capsys, "Qwen/Qwen3-8B", "--gpu", "H100", "--concurrency", "300", "--input-len", "1024",
                 "--output-len", "256")
    assert "queue_note" not in h100
