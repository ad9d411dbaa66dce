"""`multihead serving`: the user's case in one command, the JSON contract, bad input, the log table."""
import json
import shlex

import pytest

from multihead.cli import main
from multihead.fits import serving_validate as V
from multihead.fits.serving_report import write_report

USER = ["serving", "meta-llama/Llama-3.1-70B-Instruct", "--gpu", "H100", "--tensor-parallel-size", "4",
        "--max-model-len", "131072"]
KEYS = {"kv_cache_tokens", "max_concurrency", "kv_cache_gib", "weights_gib", "activation_gib", "non_torch_gib",
        "max_model_len_fit"}


def _json(capsys, argv):
    assert main(argv + ["--json"]) == 0
    return json.loads(capsys.readouterr().out)["serving"]


def test_users_case_bf16_and_fp8_kv(capsys):
    bf16 = _json(capsys, USER)
    fp8 = _json(capsys, USER + ["--kv-cache-dtype", "fp8"])
    assert KEYS <= set(bf16) and bf16["fits"] and bf16["reason"] is None
    # the issue: vLLM's own accounting gives about 3 (bf16 KV) and 6-7 (fp8 KV)
    assert 2.5 <= bf16["max_concurrency"] <= 4.0
    assert 6.0 <= fp8["max_concurrency"] <= 7.5
    assert fp8["kv_cache_tokens"] == pytest.approx(2 * bf16["kv_cache_tokens"], rel=0.001)
    assert bf16["weights_gib"] == pytest.approx(131.4 / 4, rel=0.01)      # 70.6B params in bf16, over 4 GPUs
    argv = shlex.split(fp8["command"]["text"])
    assert argv[:3] == ["vllm", "serve", "meta-llama/Llama-3.1-70B-Instruct"]
    assert argv[argv.index("--kv-cache-dtype") + 1] == "fp8"
    assert argv[argv.index("--tensor-parallel-size") + 1] == "4"
    assert argv[argv.index("--max-model-len") + 1] == "131072"


def test_text_output_has_heading_verdict_and_command(capsys):
    assert main(USER + ["--emit", "sglang"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Serving (vLLM v0.19 accounting, per GPU)")
    assert "Verdict: fits on 4x H100-SXM" in out and "python -m sglang.launch_server" in out
    assert "Launch (sglang, the request):" in out
    assert "chunked prefill" in out


@pytest.mark.parametrize("extra, needle", [
    (["--tensor-parallel-size", "3"], "tensor-parallel-size"),
    (["--pipeline-parallel-size", "200"], "pipeline-parallel-size"),
    (["--gpu-memory-utilization", "1.5"], "gpu-memory-utilization"),
    (["--gpu-memory-utilization", "0"], "gpu-memory-utilization"),
    (["--gpu", "Z80"], "gpu"),
])
def test_bad_input_exits_2_with_one_line(capsys, extra, needle):
    assert main(USER + extra) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_gpu_without_memory_for_one_request_exits_2_like_vllm(capsys):
    argv = ["serving", "meta-llama/Llama-3.1-70B-Instruct", "--gpu", "L40S", "--tensor-parallel-size", "4",
            "--max-model-len", "131072"]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert "To serve at least one request with the models's max seq len (131072)" in captured.err
    assert "Traceback" not in captured.err
    assert "Fallbacks that fit, cheapest first" in captured.out
    # the length cut comes last; 82,256 tokens since vLLM's L40S defaults (2048 tokens / 256 seqs,
    # arg_utils get_batch_defaults) and the PCIe communicator figure are modelled
    assert captured.out.index("--max-model-len 82256") > captured.out.index("--tensor-parallel-size 8 (8 GPUs)")


def test_predicted_accounts_meet_the_acceptance_on_every_log():
    """From config.json alone (in-sample fit): mean |error| <= 3 %, max <= 10 %, on all 33 logs."""
    result = V.validate()
    s = result["summary"]["predicted"]
    assert s["rows"] == 33 and s["meets_acceptance"], s


def test_validate_writes_the_table(tmp_path, monkeypatch):
    from multihead.fits import serving_fit
    monkeypatch.setattr(V, "held_out_fits", lambda rows: {m: serving_fit.load_fit() for m, *_ in rows})
    summary = write_report(tmp_path / "serving")
    table = (tmp_path / "serving" / "table.md").read_text()
    assert summary["predicted"]["rows"] == 33
    assert table.count("\n| ") >= 33 + 4 and "codellama-codellama-7b-h--h100-80gb--tp1pp1dp1--8192.log" in table


def test_model_from_a_config_folder_and_the_planner_catalog(tmp_path, capsys):
    from multihead.cost.spec.lookup import hf_id
    from multihead.fits.serving_fit import catalog_config
    folder = tmp_path / "qwen3-8b"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(catalog_config("Qwen/Qwen3-8B")))
    out = _json(capsys, ["serving", str(folder), "--max-model-len", "32768"])
    assert shlex.split(out["command"]["text"])[2] == str(folder)         # vllm serve takes the folder
    assert hf_id("https://huggingface.co/Qwen/Qwen2.5-72B/blob/main/config.json", "x") == "Qwen/Qwen2.5-72B"
    assert hf_id("meta-llama/Llama-3.1-8B config.json (figures.md)", "x") == "meta-llama/Llama-3.1-8B"
    assert hf_id("the reference text's running example", "example") == "example"


def test_list_names_configs_and_gpus(capsys):
    assert main(["serving", "--list"]) == 0
    out = capsys.readouterr().out
    assert "meta-llama/Llama-3.1-70B-Instruct" in out and "H100-SXM" in out and "79.19 GiB" in out
