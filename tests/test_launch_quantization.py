"""A launch command's --quantization is one the engine accepts (engines.checkpoint_for_quantization):

- vLLM refuses a flag that disagrees with the checkpoint's quantization_config ("Quantization method specified in the
  model config (fp8) does not match the quantization method specified in the `quantization` argument (awq)"), and
  loads AWQ / GPTQ / W8A8 only from a checkpoint quantized so; it quantizes a 16-bit checkpoint at load only to fp8 or
  bitsandbytes. SGLang: only fp8 at load, and no flag on a pre-quantized checkpoint (its quantization docs).
- So: a checkpoint quantized as asked gets no flag (the engine reads its config.json), a 16-bit checkpoint with an
  online method gets the flag, and anything else names a placeholder ($AWQ_CHECKPOINT) for the checkpoint the
  accounts assume, with a note; never `--quantization int8`, which neither engine's CLI has.
- --weights-dtype int4 / int8 / fp8 is the --quantization it stands for in the serving account and the command, as in
  the three accounts; an HF id named like a quantized copy of a catalog model is refused naming the plan for it."""
import re
import shlex

import pytest

from multihead.engines import CHECKPOINT_METHODS, LaunchPlan, checkpoint_for_quantization, command
from multihead.planner.front import report
from multihead.planner.launch import checkpoint_method, checkpoint_weights, flag_weights
from multihead.planner.request import PlanRequest

MODEL = "meta-llama/Llama-3.1-8B-Instruct"


def _plan(q, have=None, weights=None, model=MODEL):
    return LaunchPlan(model, max_model_len=8192, dtype="bfloat16", quantization=q, checkpoint_quantization=have,
                      checkpoint_weights=weights, quantization_weights=flag_weights(q))


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
@pytest.mark.parametrize("q,have,weights,flag,placeholder", [
    ("fp8", None, None, "fp8", False),                      # online FP8 from a 16-bit checkpoint
    ("fp8", "fp8", "fp8", None, False),                     # an FP8 checkpoint: the engine reads it, no flag
    ("awq", "awq", "int4", None, False),
    ("gptq", "gptq", "int4", None, False),
    ("int8", "w8a8_int8", "int8", None, False),
    ("mxfp4", "mxfp4", "fp4", None, False),
    # llm-compressor checkpoints say what they hold in config_groups, not in their method name
    ("int8", "compressed-tensors", "int8", None, False),    # W8A8 int8: detected, never `--quantization int8`
    ("fp8", "compressed-tensors", "fp8", None, False),      # FP8-dynamic: detected (vLLM refuses --quantization fp8)
    ("gptq", "compressed-tensors", "int4", None, False),    # W4A16
    ("int8", "compressed-tensors", "fp8", None, True),      # an FP8 checkpoint is not the int8 one asked for
    ("fp8", "compressed-tensors", "int8", None, True),
    ("int8", "compressed-tensors", None, None, True),       # weights not read: never assumed to match
    ("awq", None, None, None, True),                        # AWQ needs an AWQ checkpoint
    ("gptq", None, None, None, True),
    ("int8", None, None, None, True),
    ("mxfp4", None, None, None, True),
    ("awq", "fp8", "fp8", None, True),                      # a checkpoint quantized otherwise: refused by the engine
    ("gptq", "gptq_marlin", "int4", None, False),           # the engines' Marlin names of the same checkpoints
    ("fp8", "fbgemm_fp8", "fp8", None, False),              # FP8 by another tool: still the FP8 the accounts assume
    ("fp8", "modelopt", "fp8", None, False),
    ("gptq", "gptq", "int8", None, True),                   # 8-bit GPTQ: not the 4 bits --quantization gptq assumes
    ("bitsandbytes", "bitsandbytes", "int8", None, True),   # bnb 8-bit: not the nf4 the accounts assume
    ("gptq", "gptq", None, None, False),                    # weights not read: the method decides
])
def test_the_command_carries_a_flag_the_engine_accepts(engine, q, have, weights, flag, placeholder):
    cmd = command(engine, _plan(q, have, weights))
    argv = shlex.split(cmd.line)
    flags = dict(zip(argv, argv[1:]))
    assert flags.get("--quantization") == flag
    model = argv[2] if engine == "vllm" else flags["--model-path"]
    if placeholder:
        holder = f"${q.upper()}_CHECKPOINT"
        assert model == holder and f" {holder} " in cmd.line and "'$" not in cmd.line    # unquoted: the shell fills it
        assert f"--quantization {q}" in cmd.checkpoint_note and MODEL in cmd.checkpoint_note
        assert ("16-bit" in cmd.checkpoint_note) == (have is None)
        # the method matches but not the weights: the note says what the accounts assume; else why the engine refuses
        assert ("the accounts assume" in cmd.checkpoint_note) == (have is not None and have in CHECKPOINT_METHODS[q])
    else:
        assert model == MODEL and cmd.checkpoint_note == ""


def test_bitsandbytes_is_online_on_vllm_only():
    assert shlex.split(command("vllm", _plan("bitsandbytes")).line)[2] == MODEL
    assert "$BITSANDBYTES_CHECKPOINT" in command("sglang", _plan("bitsandbytes")).line


def test_no_quantization_and_tensorrt_llm_are_untouched():
    plan = _plan(None)
    assert checkpoint_for_quantization("vllm", plan) == (plan, "")
    plan = _plan("awq")
    assert checkpoint_for_quantization("tensorrt-llm", plan) == (plan, "")


def test_checkpoint_weights_read_config_groups():
    fp8 = {"quantization_config": {"quant_method": "compressed-tensors", "config_groups": {"group_0": {
        "weights": {"num_bits": 8, "type": "float", "strategy": "channel", "symmetric": True}}}}}
    int8 = {"quantization_config": {"quant_method": "compressed-tensors", "config_groups": {"group_0": {
        "weights": {"num_bits": 8, "type": "int", "strategy": "channel", "symmetric": True}}}}}
    assert checkpoint_weights(fp8) == "fp8" and checkpoint_weights(int8) == "int8"
    assert [flag_weights(q) for q in ("gptq", "awq", "fp8", "int8", "bitsandbytes", "mxfp4")] == \
        ["int4", "int4", "fp8", "int8", "int4", "fp4"]
    assert checkpoint_weights(None) is None and checkpoint_weights({"quantization_config": {"quant_method": "x"}}) is None


def test_checkpoint_method_reads_quantization_config():
    assert checkpoint_method(None) is None and checkpoint_method({}) is None
    assert checkpoint_method({"quantization_config": {"quant_method": "fp8"}}) == "fp8"
    assert checkpoint_method({"quantization_config": {"config_groups": {}, "format": "int-quantized"}}) == \
        "compressed-tensors"


def _serving(**kw):
    return report(PlanRequest(model=MODEL, max_model_len=8192, **kw))["serving"]


def test_a_catalog_checkpoint_and_the_plans_command_agree():
    """DeepSeek-V3-0324 is an FP8 checkpoint: --quantization awq asks for an AWQ one; fp8 needs no flag."""
    awq = report(PlanRequest(model="deepseek-ai/DeepSeek-V3-0324", quantization="awq", tensor_parallel_size=8,
                             max_model_len=8192))["serving"]["command"]
    assert awq["argv"][2] == "$AWQ_CHECKPOINT" and "quantized as fp8" in awq["note"]
    assert "--quantization" not in awq["argv"]
    own = _serving(quantization="fp8")["command"]
    assert own["argv"][2] == MODEL and own["argv"][own["argv"].index("--quantization") + 1] == "fp8"


@pytest.mark.parametrize("model,q,placeholder", [
    ("RedHatAI/Qwen2.5-7B-Instruct-fp8-dynamic", "fp8", False), ("RedHatAI/Qwen2.5-7B-Instruct-fp8-dynamic", "int8", True),
    ("RedHatAI/Qwen2.5-7B-Instruct-quantized.w8a8", "int8", False),
    ("RedHatAI/Qwen2.5-7B-Instruct-quantized.w8a8", "fp8", True)])
def test_catalog_compressed_tensors_checkpoints(model, q, placeholder):
    cmd = report(PlanRequest(model=model, quantization=q, max_model_len=8192))["serving"]["command"]
    assert "--quantization" not in cmd["argv"]
    assert (cmd["argv"][2] == f"${q.upper()}_CHECKPOINT") == placeholder and (cmd["argv"][2] == model) != placeholder


def test_the_search_prints_the_commands_note(capsys):
    """`plan --search` names the placeholder's checkpoint in its text too (the launch line alone would not say)."""
    from multihead.cli import main
    rc = main(["plan", MODEL, "--search", "--quantization", "awq", "--slo", "tpot=50ms", "--concurrency", "16",
               "--input-len", "2048", "--output-len", "512", "--gpu", "H100-SXM", "--gpus-max", "2", "--emit", "sglang"])
    out = capsys.readouterr().out
    assert rc == 0
    launch = out[out.index("Launch ("):]
    assert set(re.findall(r"\$[A-Z0-9]+_CHECKPOINT", launch)) == {"$AWQ_CHECKPOINT"}
    assert "in place of $AWQ_CHECKPOINT" in launch


def _searched(capsys, *flags) -> list[dict]:
    import json

    from multihead.cli import main
    rc = main(["plan", *flags, "--search", "--slo", "tpot=50ms", "--concurrency", "16", "--input-len", "2048",
               "--output-len", "512", "--gpu", "H100-SXM", "--gpus-max", "2", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0
    return out["search"]["results"] if "search" in out else out["results"]


@pytest.mark.parametrize("flags,quantizations,dtype,holder", [
    ((MODEL,), {None, "fp8"}, "bfloat16", False),                           # a 16-bit checkpoint: as is, or FP8 at load
    ((MODEL, "--weights-dtype", "int4"), {"gptq"}, "bfloat16", True),        # as plan takes it: a GPTQ checkpoint
    ((MODEL, "--weights-dtype", "fp16"), {None}, "float16", False),          # a stated 16-bit precision: as is
    (("RedHatAI/Qwen2.5-7B-Instruct-quantized.w8a8",), {None}, "bfloat16", False),   # a quantized checkpoint: as it is
])
def test_the_search_weighs_what_the_checkpoint_and_flags_allow(capsys, flags, quantizations, dtype, holder):
    results = _searched(capsys, *flags)
    assert results and {r["quantization"] for r in results} == quantizations
    argv = results[0]["command"]["argv"]
    assert argv[argv.index("--dtype") + 1] == dtype and ("$GPTQ_CHECKPOINT" in argv) == holder


@pytest.mark.parametrize("weights,flag", [("int4", "gptq"), ("int8", "int8"), ("fp8", "fp8")])
def test_weights_dtype_is_the_quantization_it_stands_for(weights, flag):
    by_dtype, by_flag = _serving(weights_dtype=weights), _serving(quantization=flag)
    assert by_dtype["weights_bytes"] == by_flag["weights_bytes"] < _serving()["weights_bytes"]
    assert by_dtype["command"]["argv"] == by_flag["command"]["argv"]


def test_weights_dtype_fp32_serves_float32():
    s = _serving(weights_dtype="fp32")
    assert s["weights_bytes"] == pytest.approx(2 * _serving()["weights_bytes"], rel=0.01)
    assert s["command"]["argv"][s["command"]["argv"].index("--dtype") + 1] == "float32"


@pytest.mark.parametrize("hf_id,base,flag", [
    ("cognitivecomputations/DeepSeek-V3-0324-AWQ", "deepseek-ai/DeepSeek-V3-0324", "awq"),
    ("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4", "Qwen/Qwen2.5-7B-Instruct", "gptq"),
    ("someone/Qwen3-8B-FP8", "Qwen/Qwen3-8B", "fp8"),
])
def test_a_quantized_copy_of_a_catalog_model_is_refused_naming_its_plan(hf_id, base, flag):
    with pytest.raises(ValueError, match=rf"^model: '{hf_id}' is not in the catalog; .* plan {base} "
                                         rf"--quantization {flag}, or give"):
        report(PlanRequest(model=hf_id))


@pytest.mark.parametrize("hf_id", ["someone/not-a-model-AWQ", "someone/Qwen3-8B-GPTQ-Int8"])
def test_an_unknown_id_with_a_suffix_is_refused_as_before(hf_id):
    """No plan is named where none fits: an unknown stem, or 8-bit GPTQ (--quantization gptq assumes 4 bits)."""
    with pytest.raises(ValueError, match="is neither a config.json path nor a catalog model or HF id"):
        report(PlanRequest(model=hf_id))
