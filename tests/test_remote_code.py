"""A checkpoint that ships its own code (config.json ``auto_map``) is launched with the engines' trust-remote-code
flag, the one vLLM's logged Kimi-VL runs were started with (trust_remote_code=True in
../shared/data/vllm-startup-logs); every other catalog model is launched without it."""
import json

import pytest

from multihead.cli import main
from multihead.cost.spec.lookup import catalog_config
from multihead.engines import LaunchPlan, command
from multihead.planner.launch import needs_remote_code

FLAG = {"vllm": "--trust-remote-code", "sglang": "--trust-remote-code", "tensorrt-llm": "--trust_remote_code"}


def test_auto_map_is_what_decides():
    assert needs_remote_code({"auto_map": {"AutoConfig": "configuration_x.XConfig"}})
    assert not needs_remote_code({"model_type": "llama"}) and not needs_remote_code(None)
    assert not needs_remote_code({"auto_map": {}})


@pytest.mark.parametrize("engine", sorted(FLAG))
def test_each_engine_spells_the_flag_its_own_way(engine):
    on = command(engine, LaunchPlan("org/m", trust_remote_code=True, engine_version="1.2.0")).argv
    off = command(engine, LaunchPlan("org/m", engine_version="1.2.0")).argv
    assert FLAG[engine] in on and FLAG[engine] not in off
    assert not any("trust" in a for a in off)


def test_trtllm_0x_notes_instead_of_a_flag():
    cmd = command("tensorrt-llm", LaunchPlan("org/m", trust_remote_code=True, engine_version="0.18.2"))
    assert "--trust_remote_code" not in cmd.argv and "auto_map" in cmd.note


@pytest.mark.parametrize("model", ["moonshotai/Kimi-VL-A3B-Instruct", "moonshotai/Kimi-K2-Instruct",
                                   "deepseek-ai/DeepSeek-R1", "meta-llama/Llama-3.1-8B-Instruct", "zai-org/GLM-4.6"])
@pytest.mark.parametrize("engine", sorted(FLAG))
def test_serving_command_follows_the_catalog_config(model, engine, capsys):
    assert main(["serving", model, "--gpu", "B200", "--tensor-parallel-size", "8", "--max-model-len", "8192", "--engine", engine,
                 "--json"]) == 0
    argv = json.loads(capsys.readouterr().out)["serving"]["command"]["argv"]
    assert (FLAG[engine] in argv) == bool(catalog_config(model).get("auto_map"))


def test_kimi_vl_needs_remote_code():
    assert needs_remote_code(catalog_config("moonshotai/Kimi-VL-A3B-Instruct"))


def test_the_logged_kimi_vl_run_trusted_remote_code():
    """The vLLM start-up logs of Kimi-VL (../shared beside a session's checkout; not in a bare clone) were started
    with trust_remote_code=True, as the catalog's auto_map says they must be."""
    from pathlib import Path
    logs = Path(__file__).resolve().parents[2] / "shared" / "data" / "vllm-startup-logs"
    if not logs.is_dir():
        pytest.skip("no ../shared/data/vllm-startup-logs beside this checkout")
    kimi = list(logs.glob("moonshotai-kimi-vl-*.log"))
    assert kimi and all("trust_remote_code=True" in p.read_text(errors="replace") for p in kimi)
