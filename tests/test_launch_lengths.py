"""Launch commands the engines accept (issue 25, items 1-3): a --max-model-len / --context-length
past the config's derived maximum only with the rope scaling override that makes it legal, built
from the model's own rope_scaling; else no command and a verdict that says why.

The engines' rules are re-implemented here, from their sources, independently of
multihead.cost.spec.positions, so the sweep checks our commands against the engines and not against
ourselves:
- vLLM ``_get_and_verify_max_len`` (vllm/config/model.py, github.com/vllm-project/vllm at 0052a5b):
  the smallest of the length keys; for a rope_scaling type other than su/longrope/llama3 (and not
  Gemma-3) times its factor, yarn from its original_max_position_embeddings.
- SGLang ``get_context_length`` (python/sglang/srt/hf_transformers_utils.py): the first length key
  times rope_scaling.factor, the factor taken as 1 when the scaling states
  original_max_position_embeddings or is llama3.
"""
from __future__ import annotations

import json
import shlex

import pytest

from multihead import cost
from multihead.catalog import read_json
from multihead.cost.serving import answer as S
from multihead.planner.search import answer as served   # the account + the fallback search + the command
from multihead.cost.spec.positions import extension_needed
from multihead.fits.serving_fit import CATALOG, catalog_config
from multihead.cost.serving.extras import gemma3_text_defaults, text_config

VLLM_KEYS = ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "model_max_length",
             "max_target_positions", "max_sequence_length", "max_seq_length", "seq_len")
SGLANG_KEYS = ("max_sequence_length", "seq_length", "max_seq_len", "model_max_length", "max_position_embeddings")
FLAG = {"vllm": ("--max-model-len", "--hf-overrides"), "sglang": ("--context-length", "--json-model-override-args")}


def _merged(cfg: dict, overrides: dict | None) -> dict:
    text = dict(text_config(cfg))
    if text.get("model_type") == "gemma3_text":     # transformers' Gemma3TextConfig defaults, as the engines load it
        text = dict(gemma3_text_defaults("gemma3_text", text))
    text.update(overrides or {})
    rs = text.get("rope_scaling")
    if isinstance(rs, dict) and "rope_type" not in rs and "type" in rs:
        text["rope_scaling"] = {**rs, "rope_type": rs["type"]}      # transformers' patch_rope_scaling
    return text


def vllm_max_len(cfg: dict, overrides: dict | None = None) -> float:
    c = _merged(cfg, overrides)
    lengths = [c[k] for k in VLLM_KEYS if c.get(k) is not None]
    derived = min(lengths) if lengths else float("inf")
    rs = c.get("rope_scaling")
    if rs and "gemma3" not in str(c.get("model_type", "")) and rs.get("rope_type") not in ("su", "longrope", "llama3"):
        if rs.get("rope_type") == "yarn":
            derived = rs["original_max_position_embeddings"]
        derived *= rs.get("factor", 1.0)
    return derived


def sglang_max_len(cfg: dict, overrides: dict | None = None) -> float:
    c = _merged(cfg, overrides)
    rs = c.get("rope_scaling")
    f = rs.get("factor", 1) if rs else 1
    if rs and ("original_max_position_embeddings" in rs or rs.get("rope_type") == "llama3"):
        f = 1
    for k in SGLANG_KEYS:
        if c.get(k) is not None:
            return int(f * c[k])
    return 2048


ENGINE_MAX = {"vllm": vllm_max_len, "sglang": sglang_max_len}


def parsed(out: dict) -> tuple[int, dict | None]:
    """(length flag, overrides object) read back from the command's text as a shell would split it."""
    engine = out["command"]["engine"]
    argv = shlex.split(out["command"]["text"].splitlines()[-1])
    length_flag, over_flag = FLAG[engine]
    length = int(argv[argv.index(length_flag) + 1])
    over = json.loads(argv[argv.index(over_flag) + 1]) if over_flag in argv else None
    return length, over


def _qwen(max_pos=32768, **over) -> dict:
    cfg = dict(cost.model_catalog()["Qwen2.5-7B"]["config"], max_position_embeddings=max_pos)
    cfg.update(over)
    return cfg


def _answer(cfg, tokens, engine="vllm", tp=1, model="m"):
    req = S.Request(tensor_parallel_size=tp, max_model_len=tokens, model=model, gpu="H100-SXM")
    return served(cfg, req, emit=engine, heads=text_config(cfg).get("num_attention_heads"))


# -- one test per scaling type ----------------------------------------------------------------------
SCALINGS = {
    # type: (rope_scaling, max_position_embeddings, model_type, the original length the factor grows over)
    "none": (None, 32768, "qwen2", 32768),
    "yarn": ({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}, 32768, "qwen2", 32768),
    "linear": ({"rope_type": "linear", "factor": 2.0}, 32768, "qwen2", 32768),
    "dynamic": ({"type": "dynamic", "factor": 2.0}, 32768, "qwen2", 32768),
    "llama3": ({"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                "original_max_position_embeddings": 8192}, 131072, "llama", 8192),
    "longrope": ({"rope_type": "longrope", "long_factor": [1.5] * 8, "short_factor": [1.0] * 8}, 131072, "phi3", None),
    "gemma3_linear": ({"rope_type": "linear", "factor": 8.0}, 131072, "gemma3_text", 16384),
}


@pytest.mark.parametrize("kind", sorted(SCALINGS))
def test_each_scaling_type_is_grown_in_its_own_kind(kind):
    rs, max_pos, model_type, original = SCALINGS[kind]
    cfg = _qwen(max_pos, model_type=model_type, **({"rope_scaling": rs} if rs else {}))
    spec = cost.read_config(cfg)
    allowed = vllm_max_len(cfg)
    T = int(allowed * 2.5)
    ext = extension_needed(spec, T)
    assert ext is not None and ext.covered == min(allowed, max_pos if kind == "gemma3_linear" else allowed)
    new = ext.overrides.get("rope_scaling")
    want = "yarn" if kind == "none" else ("linear" if kind == "gemma3_linear" else kind)
    if kind == "longrope":       # per-dimension factors are kept, only the length grows
        assert new is None and ext.overrides["max_position_embeddings"] == T
    else:
        assert new["rope_type"] == want, new
        assert original * new["factor"] >= T and original * (new["factor"] - 0.01) < T
        for key, value in (rs or {}).items():      # every other key of the model's own scaling is kept
            if key not in ("factor", "type"):
                assert new[key] == value, key
        if want in ("yarn", "llama3"):
            assert new["original_max_position_embeddings"] == original
    assert vllm_max_len(cfg) < T                        # the override is needed (vLLM's rule, which we follow)
    for engine, rule in ENGINE_MAX.items():             # and it is enough, for both engines
        assert T <= rule(cfg, ext.overrides), (engine, ext.overrides)
    assert "not guaranteed" in ext.note or "untested" in ext.note


def test_unknown_scaling_type_and_learned_positions_are_refused():
    cfg = _qwen(rope_scaling={"type": "mrope", "mrope_section": [16, 24, 24]})
    out = _answer(cfg, 65536)
    assert "command" not in out and out["verdict"].startswith("does not fit as asked") and "mrope" in out["verdict"]
    gpt2 = cost.model_catalog()["GPT-2"]["config"]
    out = _answer(gpt2, 4096)
    assert "command" not in out and "learned positions" in out["verdict"]


# -- one test per engine: the flag, parsed back ------------------------------------------------------
@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_each_engine_carries_the_override_it_needs(engine):
    """Issue 25 item 1: `serving Qwen/Qwen2.5-7B-Instruct --max-model-len 131072` (max_position_embeddings
    32768, no rope_scaling) printed `vllm serve ... --max-model-len 131072` with no --hf-overrides."""
    cfg = catalog_config("Qwen/Qwen2.5-7B-Instruct")
    assert text_config(cfg)["max_position_embeddings"] == 32768 and not text_config(cfg).get("rope_scaling")
    out = _answer(cfg, 131072, engine, model="Qwen/Qwen2.5-7B-Instruct")
    length, over = parsed(out)
    assert length == 131072 and over == out["positions"]["rope_override"]
    assert over["rope_scaling"] == {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}
    assert ENGINE_MAX[engine](cfg) < length <= ENGINE_MAX[engine](cfg, over)
    assert "not guaranteed" in out["command"]["note"] and "32,768" in out["verdict"]
    short = _answer(cfg, 32768, engine)                 # within the config: no override
    assert parsed(short) == (32768, None) and "positions" not in short


def _plan_json(capsys, *argv) -> dict:
    from multihead.cli import main
    assert main(["plan", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_plan_launch_keeps_llama31_scaling(capsys):
    """Issue 25 items 1-2: `plan Llama-3.1-8B --tokens 200000 --gpu H100-SXM` launched 200,000 tokens
    without --hf-overrides, and its snippet replaced the llama3 x8 scaling (original 8,192) by yarn
    over 131,072."""
    data = _plan_json(capsys, "Llama-3.1-8B", "--tokens", "200000", "--gpu", "H100-SXM")
    length, over = parsed(data["serving"])
    rs = over["rope_scaling"]
    assert length == 200_000 and rs["rope_type"] == "llama3" and rs["original_max_position_embeddings"] == 8192
    assert rs["factor"] == 24.42 and rs["low_freq_factor"] == 1.0 and rs["high_freq_factor"] == 4.0
    assert vllm_max_len(cost.model_catalog()["Llama-3.1-8B"]["config"], over) >= 200_000
    assert json.loads(data["positions"]["rope_scaling_snippet"]) == over          # the plan's own snippet agrees
    fb = next(f for f in data["fallbacks"] if f["name"] == "position_interpolation")
    assert json.loads(fb["effect"]["config_snippet"])["rope_scaling"]["rope_type"] == "llama3", fb


def test_mqa_label_is_the_per_gpu_ratio(capsys):
    """Issue 25 item 3: under TP 4 one KV head is replicated on each GPU, so MQA keeps the same per-GPU
    KV as GQA-4 (both 0.5x of H_kv 8 over 4 GPUs), not 0.125x."""
    data = _plan_json(capsys, "Qwen2.5-72B", "--gpu", "H100-SXM", "-tp", "4", "--tokens", "131072",
                      "--max-position", "32768")
    fb = next(f for f in data["fallbacks"] if f["name"] == "fewer_kv_heads")
    rows = {r["kv_heads"]: r for r in fb["effect"]["options"]}
    assert rows[1]["kv_cache_bytes"] == rows[4]["kv_cache_bytes"]
    assert rows[1]["kv_fraction_of_now"] == rows[4]["kv_fraction_of_now"] == pytest.approx(0.5)
    assert "H_kv 1 (MQA): KV 5.37 GB (0.5x)" in fb["text"], fb["text"]


# -- the sweep -------------------------------------------------------------------------------------
def _catalog() -> dict[str, dict]:
    out = {name: e["config"] for name, e in cost.model_catalog().items() if "config" in e}
    out.update({name: catalog_config(name) for name in read_json(CATALOG / "configs" / "index.json")})
    return out


LENGTHS = (4096, 32768, 131072, 200_000, 524_288, 1_048_576)


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_sweep_no_command_asks_for_a_length_its_config_cannot_serve(engine):
    """catalog x lengths up to 1M x 1, 2, 4, 8 GPUs: every emitted command's length is within what the
    engine derives from the config with the override the command carries."""
    emitted = overridden = 0
    for name, cfg in _catalog().items():
        heads = text_config(cfg).get("num_attention_heads")
        for T in LENGTHS:
            for tp in (1, 2, 4, 8):
                req = S.Request(tensor_parallel_size=tp, max_model_len=T, model=name, gpu="H100-SXM")
                try:
                    out = served(cfg, req, emit=engine, heads=heads)
                except ValueError:
                    continue                    # e.g. TP not dividing the heads: no command at all
                if "command" not in out:
                    assert out["verdict"].startswith(("does not fit", "fits")), out["verdict"]
                    continue
                length, over = parsed(out)
                emitted += 1
                overridden += over is not None
                assert length <= ENGINE_MAX[engine](cfg, over), (name, T, tp, length, over)
    assert emitted > 100 and overridden > 20, (emitted, overridden)


def test_search_commands_carry_the_override_too():
    """plan --search prints a launch line per result: the same rule holds there."""
    from multihead.planner.search import search_report
    from multihead.planner.request import PlanRequest
    cfg = catalog_config("Qwen/Qwen2.5-7B-Instruct")
    rep = search_report(PlanRequest(model="Qwen/Qwen2.5-7B-Instruct", max_model_len=131072, gpu="H100-SXM",
                                    search=True, top=3, concurrency=4))
    cmds = [r["command"] for r in rep["search"]["results"] if r.get("command")]
    assert cmds, list(rep)
    for cmd in cmds:
        length, over = parsed({"command": cmd})
        assert length == 131072 and length <= ENGINE_MAX[cmd["engine"]](cfg, over), cmd["text"]
