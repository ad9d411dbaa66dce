"""The lesson's section endpoints (web/lesson_api.py), the quiz's reply parser and the message
catalogue (multihead/messages.py): numbers against multihead's own functions and the text."""
from __future__ import annotations

import json
import math

import pytest
import torch
from fastapi.testclient import TestClient

from multihead import messages
from multihead.softmax_ops import softmax, softmax_jacobian
from multihead.web import quiz
from multihead.web.app import create_app


@pytest.fixture(scope="module")
def client():
    return TestClient(create_app(), base_url="http://127.0.0.1:8000", raise_server_exceptions=False)   # its own Host name


def post(client, path, body=None):
    r = client.post(path, json=body or {})
    assert r.status_code == 200, r.text
    return r.json()


def test_jacobian_reproduces_section_3_1(client):
    r = post(client, "/api/lesson/jacobian", {"logits": [0, 11.3], "d_k": 128})
    assert r["raw"]["max_offdiag"] == pytest.approx(1.2e-5, rel=0.05)          # the text: 1.2e-5
    assert r["scaled"]["max_offdiag"] == pytest.approx(0.2, abs=0.01)          # the text: about 0.2
    assert [round(p, 2) for p in r["scaled"]["probs"]] == [0.27, 0.73]
    J = softmax_jacobian(softmax(torch.tensor([0, 11.3], dtype=torch.float64)))
    assert r["raw"]["jacobian"] == J.tolist()
    assert all(abs(s) < 1e-12 for s in r["raw"]["row_sums"])
    curve = r["curve"]
    assert curve["offdiag"][0] == 0.25 and curve["offdiag"] == sorted(curve["offdiag"], reverse=True)


def test_variance_is_d_k(client):
    r = post(client, "/api/lesson/variance", {"d_k": 128, "samples": 20000, "seed": 1})
    assert r["var"] == pytest.approx(128, rel=0.05) and r["std_scaled"] == pytest.approx(1, rel=0.03)
    assert r["share_over_fp16"] > 0.2 and r["share_over_fp16_scaled"] < 1e-3
    assert sum(r["hist"]) == 20000
    assert [round(s / math.sqrt(d), 1) for d, s in zip(r["curve"]["d_k"], r["curve"]["std"])] == [1.0] * 11 or \
        all(abs(s / math.sqrt(d) - 1) < 0.1 for d, s in zip(r["curve"]["d_k"], r["curve"]["std"]))


def test_gqa_grouping_read_off_multihead_attention(client):
    r = post(client, "/api/lesson/gqa", {"heads": 8, "kv_heads": 2})
    assert r["reads"] == [0, 0, 0, 0, 1, 1, 1, 1]        # h // (H / H_kv), not h % H_kv
    assert post(client, "/api/lesson/gqa", {"heads": 4, "kv_heads": 1})["kind"] == "MQA"
    bad = client.post("/api/lesson/gqa", json={"heads": 8, "kv_heads": 3})
    assert bad.status_code == 400 and bad.json()["field"] == "kv_heads" and "divide" in bad.json()["error"]


def test_accounts_4d2_for_any_head_count(client):
    r = post(client, "/api/lesson/accounts", {"d_model": 512, "heads": 8, "tokens": 1024})
    many, one = r["rows"]
    assert many["params"] == one["params"] == 4 * 512 ** 2
    assert many["attention_flops"] == one["attention_flops"] == 4 * 1024 ** 2 * 512
    assert many["score_elements"] == 8 * one["score_elements"]


def test_normalize_calibration_shapes(client):
    n = post(client, "/api/lesson/normalize", {"logits": [2, 1, -1.5]})
    assert n["negative"] and min(n["divided"]) < 0 and min(n["softmax"]) > 0
    c = post(client, "/api/lesson/calibration", {"logits": [2, 1, 0]})
    assert len({row["argmax"] for row in c["rows"]}) == 1
    assert c["rows"][0]["probs"][0] > 0.95 and c["rows"][-1]["probs"][0] < 0.45
    s = post(client, "/api/lesson/shapes", {"batch": 2, "tokens": 5, "d_model": 16, "heads": 4})
    assert [st["shape"] for st in s["steps"]][-1] == [2, 5, 16]
    assert s["row_sum_max_error"] < 1e-12 and s["upper_max"] == 0
    assert s["matches_multihead_attention"] < 1e-12
    assert s["wrong_reshape_shape"] == [2, 5, 16] and s["wrong_reshape_max_diff"] > 0.01


def test_notes_two_heads_and_exercise(client):
    r = client.get("/api/lesson/notes").json()
    assert [round(x, 2) for x in r["two_heads"]["concat"][0]] == [0.67, 0.33, 0, 0]
    assert r["two_heads"]["concat_uniform"][0] == [0.5, 0.5, 0, 0]           # the text's 5.2 figure
    assert r["exercise_9_2"]["other"] == pytest.approx(4.54e-5, rel=1e-3)


@pytest.mark.parametrize("body,field,words", [
    ({"logits": [0, None]}, "logits", "empty"), ({"d_k": 0}, "d_k", "between 1 and 65536"),
    ({"logits": [1]}, "logits", "enter 2 to 6 numbers"), ({"nope": 1}, "nope", "not a parameter"),
])
def test_errors_in_the_users_words(client, body, field, words):
    r = client.post("/api/lesson/jacobian", json=body)
    assert r.status_code == 400 and r.json()["field"] == field and words in r.json()["error"]
    assert "Input should" not in r.json()["error"] and "pydantic" not in r.json()["error"]


@pytest.mark.parametrize("reply,value", [
    ("163840 B", 163840), ("4*4096^2", 67108864), ("4 × 4096²", 67108864), ("163,840", 163840), ("1/4", 0.25),
    ("25%", 0.25), ("160 KiB", 163840), ("4.54e-5", 4.54e-5), ("(2+2)*4096**2", 67108864), ("0.9999", 0.9999),
])
def test_quiz_reads_equivalent_forms(reply, value):
    assert quiz.parse_number(reply) == pytest.approx(value, rel=1e-12)


@pytest.mark.parametrize("reply", ["__import__('os')", "2**99999", "1e400", "", "1,2", "abs(1)", "9" * 100, "x"])
def test_quiz_refuses_what_is_not_arithmetic(reply):
    with pytest.raises(ValueError, match="answer: expected a number"):
        quiz.parse_number(reply)


def test_quiz_takes_the_texts_rounding_and_corrects_its_0_00003(client):
    assert client.post("/api/check", json={"id": "ex2b", "answer": "0.9999"}).json()["correct"] is True
    r = client.post("/api/check", json={"id": "ex2c", "answer": "0.00003"}).json()
    assert r["correct"] is False and "0.00003" in r["explain"]["en"] and "4.54e-05" in r["explain"]["en"]
    assert client.post("/api/check", json={"id": "q3", "answer": "163840 B"}).json()["correct"] is True
    assert client.post("/api/check", json={"id": "ex3b", "answer": "4*4096^2"}).json()["correct"] is True


CASES = [
    ["example-13b-gqa8", "--tokens", "128000", "--passes", "3", "--gpu-memory-gb", "80", "--effective-tflops", "100",
     "--bandwidth-tbps", "2"],
    ["example-13b-gqa8", "--tokens", "128000", "--gpu-memory-gb", "40", "--effective-tflops", "100", "--bandwidth-tbps", "2"],
    ["example-13b-gqa8", "--tokens", "128000", "--gpu-memory-gb", "40", "--effective-tflops", "100", "--bandwidth-tbps", "2",
     "--chunks", "8"],
    ["Llama-3.1-8B", "--tokens", "500000", "--gpu", "H100-SXM"],
    ["GPT-2", "--tokens", "5000", "--gpu", "A100-80GB", "--chunks", "2"],
    ["Llama-2-70B", "--tokens", "128000", "--gpu", "RTX-4090"],
]


def run_cli(argv):
    """`multihead <argv>` in this process: (exit code, stdout, stderr) (the page no longer runs the CLI)."""
    import contextlib
    import io

    from multihead.cli import main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    return rc, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("argv", CASES, ids=lambda a: " ".join(a[:3]))
def test_every_decision_reason_has_chinese(argv):
    rc, out, err = run_cli(["plan", *argv, "--json"])
    assert rc == 0, err
    plan = json.loads(out)
    en = messages.plan_texts(plan, "en")
    assert en["reason"] == plan["reason"]
    zh = messages.plan_texts(plan, "zh")
    assert zh["reason"] and not any(w in zh["reason"] for w in ("need", "fits", "chunk", "usable"))
    assert all(f["action"] and f["text"] for f in zh["fallbacks"])
    assert messages.parse(plan["reason"]) is not None
    # the English the CLI prints is the catalogue's English: rendering the parse gives the same line
    assert messages.render(messages.parse(plan["reason"]), "en") == plan["reason"]


def test_the_texts_case_has_no_untranslated_string():
    rc, out, _ = run_cli(["plan", *CASES[0], "--json"])
    zh = messages.plan_texts(json.loads(out), "zh")
    assert zh["untranslated"] == [] and all(zh["warnings"]) and zh["serving_verdict"]


def test_cli_errors_translate():
    for line in ["argument --tokens: expected an integer in [1, 1099511627776], got '0' (see multihead plan --help)",
                 "tokens: expected --tokens T (or --max-model-len; a positive integer)",
                 "tokens: expected an integer in [1, 1099511627776], got 'abc'",
                 "gpu_memory_gb: expected a finite number in (0, 1e+06], got inf",
                 "kv_cache_dtype: expected one of auto, fp8, fp8_e4m3, fp8_e5m2, got 'fp4'",
                 "tokens: give tokens (--tokens T) or max_model_len; the model states no training length "
                 "(max_position_embeddings) to default to"]:
        zh = messages.translate(line, "zh")
        assert zh and "expected" not in zh
    assert messages.translate("something no entry has", "zh") is None


def test_no_formula_in_any_page_script():
    """Every script under web/static draws; none computes (the lesson's new files included)."""
    from pathlib import Path
    static = Path(__file__).resolve().parents[1] / "multihead" / "web" / "static"
    scripts = sorted(static.glob("*.js"))
    assert {p.name for p in scripts} >= {"common.js", "plan_view.js", "planner.js", "lesson.js", "lesson_i18n.js"}
    for js in scripts:
        text = js.read_text()
        for banned in ("Math.exp", "Math.log(", "Math.sqrt", "Math.pow", "**"):
            assert banned not in text, f"{js.name} computes with {banned}"


def test_messages_endpoint(client):
    rc, out, _ = run_cli(["plan", *CASES[1], "--json"])
    r = post(client, "/api/messages", {"lang": "zh", "plan": json.loads(out),
                                       "error": "tokens: expected --tokens T (or --max-model-len; a positive integer)"})
    assert "最少分段" in r["plan"]["reason"] and r["error"].startswith("tokens：")
    assert r["plan"]["engine_message"]                         # vLLM's own words, quoted, not translated
    odd = post(client, "/api/messages", {"lang": "zh", "plan": {"fallbacks": [{"name": "kv_quantization", "effect": {"options": [{}]}}]}})
    assert odd["plan"]["fallbacks"][0]["text"] is None         # a shape it cannot read: untranslated, not a 500
    for body, field in (({"lang": "fr"}, "lang"), ({"lang": "zh", "x": 1}, "x"), ({"lang": "zh", "plan": [1]}, "plan")):
        bad = client.post("/api/messages", json=body)
        assert bad.status_code == 400 and bad.json()["field"] == field


def test_lesson_bodies_are_bounded_and_named(client):
    for path, body, field in (("/api/lesson/variance", {"d_k": 4096}, "d_k"), ("/api/lesson/variance", {"samples": 10**6}, "samples"),
                              ("/api/lesson/normalize", {"logits": 5}, "logits"), ("/api/lesson/normalize", {"logits": [1] * 9}, "logits"),
                              ("/api/lesson/shapes", {"tokens": 65}, "tokens"), ("/api/lesson/accounts", {"d_model": 8, "heads": 3}, "heads")):
        r = client.post(path, json=body)
        assert r.status_code == 400 and r.json()["field"] == field, (path, body, r.text)
    assert client.post("/api/lesson/gqa", content=b"[1]", headers={"content-type": "application/json"}).json()["field"] == "body"


@pytest.mark.parametrize("verdict", [
    "fits on 2x H100-SXM (TP 2 x PP 2) per replica, 2 replicas (8 GPUs in all): 3.00 requests of 8,192 tokens at once "
    "(100 SGLang max_total_num_tokens, 2.00 GiB KV per GPU); prefill runs as chunked prefill of 8,192 tokens per step, "
    "full attention over the whole request (nothing is cut)",
    "fits on 1x H100-SXM: 2.17 requests of 128,000 tokens at once (277,456 KV-cache tokens, 42.34 GiB KV per GPU); "
    "prefill runs as chunked prefill of 8,192 tokens per step, full attention over the whole request (nothing is cut)",
])
def test_serving_verdicts_translate(verdict):
    zh = messages.translate(verdict, "zh")
    assert zh and "fits" not in zh and "replica" not in zh and "per step" not in zh


def test_message_catalogue_is_torch_free():
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-c", "import sys, multihead.messages; print('torch' in sys.modules)"],
                       capture_output=True, text=True, timeout=120)
    assert r.stdout.strip() == "False", r.stderr


def test_every_catalogue_entry_has_both_languages_and_the_same_parameters():
    import string
    for msg_id, entry in messages.CATALOGUE.items():
        assert set(entry) == {"en", "zh"}, msg_id
        en = {f for _, f, _, _ in string.Formatter().parse(entry["en"]) if f}
        zh = {f for _, f, _, _ in string.Formatter().parse(entry["zh"]) if f}
        assert zh <= en, (msg_id, zh - en)            # Chinese may leave out a quoted engine message
        assert all(n in messages.NESTED for n in en if n.startswith("_")), msg_id


# -- a crafted line costs linear time (review fix) ----------------------------------------------------
_CRAFTED = ("import sys; from multihead import messages as M; "
            "u = 'a (weights a + KV a + workspace a) of a usable: it fits, so read all a'; "
            "s = 'one full pass needs ' + u * 55 + ' tokens at once and keep every cross-referencX'; "
            "assert len(s) < 4000; print(M.translate(s, 'zh'))")


def test_a_crafted_line_does_not_backtrack_for_ever():
    """Lazy values between repeated literals backtracked polynomially (degree 6 for the single-pass
    reason): a 2,000-character line took 10 s, this 3,900-character one minutes, and /api/messages
    matched it in the server's event loop. A hang guard (60 s, where the match now takes well under
    a second), not a timing."""
    import subprocess
    import sys
    run = subprocess.run([sys.executable, "-c", _CRAFTED], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and run.stdout.strip() == "None", run.stderr


def test_messages_refuses_shapes_no_plan_has(client):
    for plan in ({"warnings": 5}, {"warnings": ["x"] * 65}, {"fallbacks": {"a": 1}}):
        bad = client.post("/api/messages", json={"lang": "zh", "plan": plan})
        assert bad.status_code == 400 and bad.json()["field"] == "plan", bad.text
    odd = post(client, "/api/messages", {"lang": "zh", "plan": {"reason": 5, "warnings": [None, 3, "x" * 5000]}})
    assert odd["plan"]["reason"] is None and odd["plan"]["warnings"] == [None, None, None]
