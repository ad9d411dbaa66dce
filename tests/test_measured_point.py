"""``plan --measured``: one run of the deployment being planned scales the GPU-time model's prefill and decode phases
(cost/time/measured_point.py). The point's text and the bench result files, the fit (it reproduces the run; a
factor moves with its own time), the scaled phases, the intervals of a scaled plan, the request's refusals."""
import dataclasses
import json
import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cli_process
from multihead import cost, messages
from multihead.cost.time import measured_point as M
from multihead.cost.time import timing, timing_intervals
from multihead.planner.request import PlanRequest


# -- the point's text ----------------------------------------------------------------------------------------------
def test_parse_reads_keys_units_and_aliases():
    p = M.parse("concurrency=16, input_len=1024,output_len=512,ttft=250ms,itl=30000us,throughput=900")
    assert p == M.MeasuredPoint(concurrency=16, input_len=1024, output_len=512, ttft_s=0.25, tpot_s=0.03,
                                output_tokens_per_s=900.0)
    assert M.parse("request_rate=2.5,ttft=0.4").ttft_s == 0.4 and M.parse("request_rate=2.5,ttft=0.4").request_rate == 2.5
    assert M.parse("max_concurrency=4,tpot=1.5min").tpot_s == 90.0
    assert M.parse(p.text()) == p                                        # the text a plan echoes reads back the same


@pytest.mark.parametrize("text,says", [
    ("", "expected KEY=VALUE"), ("foo", "expected KEY=VALUE"), ("concurrency=16,speed=3", "unknown key 'speed'"),
    ("ttft=3parsecs", "unknown unit 'parsecs'"), ("tpot=0.1us", "between 1 us and 24 h"),
    ("concurrency=1.5,ttft=1", "whole number"), ("concurrency=0,ttft=1", "whole number"),
    ("concurrency=4,request_rate=2,ttft=1", "not both"), ("concurrency=4", "at least one of ttft, tpot, throughput"),
    ("ttft=1,ttft=2", "ttft given twice"), ("ttft=1,itl=2ms,tpot=3ms", "tpot given twice"),
    ("throughput=5ms", "plain number"), ("request_rate=1e9,ttft=1", "request_rate must be"), ("x" * 301, "300"),
    ("concurrency=1e400,ttft=1", "whole number"), ("input_len=1e999,concurrency=2,ttft=1", "whole number"),
    ("ttft=150ms,tpot=20ms", "give the run's load"), ("request_rate=4,throughput=900", "give tpot"),
])
def test_bad_points_are_refused_naming_the_argument(text, says):
    with pytest.raises(ValueError) as err:
        M.parse(text)
    assert str(err.value).startswith("measured: ") and says in str(err.value)


# -- bench result files ---------------------------------------------------------------------------------------------
VLLM = {"backend": "vllm", "request_rate": "inf", "max_concurrency": 16, "duration": 60.2, "completed": 160,
        "total_input_tokens": 163840, "total_output_tokens": 81920, "output_throughput": 1360.8,
        "mean_ttft_ms": 120.0, "median_ttft_ms": 110.0, "mean_tpot_ms": 18.0, "mean_itl_ms": 18.1,
        "input_lens": [1024] * 160, "output_lens": [512] * 160}


def test_a_vllm_bench_result_reads_as_its_point(tmp_path):
    f = tmp_path / "vllm.json"
    f.write_text(json.dumps(VLLM))
    assert M.read_bench_result(f) == ("concurrency=16,input_len=1024,output_len=512,ttft=120ms,tpot=18ms,"
                                      "throughput=1360.8")


def test_sglang_json_lines_read_their_last_run(tmp_path):
    f = tmp_path / "sglang.jsonl"
    first = {"backend": "sglang", "request_rate": 4.0, "max_concurrency": None, "completed": 10,
             "total_input_tokens": 5000, "total_output_tokens": 4000, "mean_ttft_ms": 80.0, "mean_tpot_ms": 9.0,
             "output_throughput": 400.0}
    f.write_text(json.dumps(first) + "\n" + json.dumps({**first, "request_rate": 8.0, "mean_ttft_ms": 95.5}) + "\n")
    assert M.read_bench_result(f) == "request_rate=8,input_len=500,output_len=400,ttft=95.5ms,tpot=9ms,throughput=400"


def test_a_run_that_sent_every_request_at_once_is_refused(tmp_path):
    """Both benchmarks' defaults (--request-rate inf, no --max-concurrency) send all requests at once: no steady load
    to fit at, so the file is refused rather than read as one request in flight."""
    f = tmp_path / "burst.json"
    f.write_text(json.dumps({**VLLM, "max_concurrency": None}))
    with pytest.raises(ValueError, match="sent all its requests at once"):
        M.read_bench_result(f)
    f.write_text(json.dumps({**VLLM, "max_concurrency": None, "request_rate": float("inf")}))   # SGLang's Infinity
    with pytest.raises(ValueError, match="sent all its requests at once"):
        M.read_bench_result(f)


@pytest.mark.parametrize("content,says", [("not json", "not a vLLM or SGLang bench result"),
                                          ("[1, 2]", "expected a JSON object"),
                                          ('{"completed": 3}', "has none of mean_ttft_ms")])
def test_files_that_are_not_bench_results_are_refused(tmp_path, content, says):
    f = tmp_path / "x.json"
    f.write_text(content)
    with pytest.raises(ValueError, match=says):
        M.read_bench_result(f)


def test_a_bench_file_is_bounded(tmp_path, monkeypatch):
    f = tmp_path / "big.json"
    f.write_text(json.dumps(VLLM))
    monkeypatch.setattr(M, "MAX_FILE_BYTES", 100)
    with pytest.raises(ValueError, match="over the 100 a bench result takes"):
        M.read_bench_result(f)


# -- the scaled phases ----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def setup():
    gpu = timing.make_gpu("H100-SXM", cost.gpu_catalog()["H100-SXM"])
    return timing.Setup(cost.catalog_model("Llama-3.1-8B"), gpu, timing.load_constants())


def test_the_factors_scale_each_phases_total_and_nothing_else(setup):
    scaled = dataclasses.replace(setup, measured_scale=(2.0, 0.5))
    assert timing.prefill(scaled, 2048).total_s == pytest.approx(2.0 * timing.prefill(setup, 2048).total_s, rel=1e-12)
    assert timing.prefill(scaled, 512, batch=4).total_s == pytest.approx(
        2.0 * timing.prefill(setup, 512, batch=4).total_s, rel=1e-12)
    assert timing.decode_step(scaled, 8, 4096).total_s == pytest.approx(
        0.5 * timing.decode_step(setup, 8, 4096).total_s, rel=1e-12)
    assert timing.decode_step(scaled, 8, 4096).memory_s == timing.decode_step(setup, 8, 4096).memory_s   # terms kept
    same = dataclasses.replace(setup, measured_scale=(1.0, 1.0))
    assert timing.serving_point(same, 16, 1024, 256) == timing.serving_point(setup, 16, 1024, 256)


# -- the fit --------------------------------------------------------------------------------------------------------
def _plan(measured=None, **kw):
    req = PlanRequest(model="Llama-3.1-8B", gpu="H100-SXM", max_model_len=8192, input_len=1024, output_len=512,
                      concurrency=kw.pop("concurrency", 16), measured=measured, **kw)
    from multihead import planner
    return planner.report(req)["serving"]


def test_the_fit_reproduces_the_measured_run_at_its_own_load():
    s = _plan("concurrency=16,ttft=150ms,tpot=20ms")
    m = s["measured"]
    assert m["reproduced"]["ttft_s"] == pytest.approx(0.150, rel=1e-4)
    assert m["reproduced"]["tpot_s"] == pytest.approx(0.020, rel=1e-4)
    assert s["at"]["ttft_s"] == pytest.approx(0.150, rel=1e-4) and s["at"]["tpot_s"] == pytest.approx(0.020, rel=1e-4)
    plain = _plan()
    assert m["predicted"]["tpot_s"] == pytest.approx(plain["at"]["tpot_s"], rel=1e-12)     # the unscaled model's
    assert m["point"] == {"concurrency": 16, "request_rate": None, "input_len": 1024, "output_len": 512,
                          "ttft_s": 0.15, "tpot_s": 0.02, "output_tokens_per_s": None}
    # the model's own prediction as the "measurement": factors 1
    own = f"concurrency=16,ttft={plain['at']['ttft_s']!r},tpot={plain['at']['tpot_s']!r}"
    m1 = _plan(own)["measured"]
    assert m1["prefill_factor"] == pytest.approx(1.0, abs=1e-6) and m1["decode_factor"] == pytest.approx(1.0, abs=1e-6)


def test_throughput_stands_for_tpot_and_other_loads_follow_the_scaled_model():
    plain = _plan()
    thr = plain["at"]["output_tokens_per_s"] / 1.5                          # 1.5x slower decode than the model
    s = _plan(f"concurrency=16,throughput={thr!r}")
    assert s["measured"]["decode_factor"] > 1.3 and s["measured"]["prefill_factor"] == 1.0
    assert s["at"]["output_tokens_per_s"] == pytest.approx(thr, rel=1e-4)
    other = _plan(f"concurrency=16,throughput={thr!r}", concurrency=64)["at"]
    assert other["tpot_s"] > _plan(concurrency=64)["at"]["tpot_s"] * 1.2     # the scaled model at another load


@settings(max_examples=12, deadline=None)
@given(st.floats(0.5, 4.0), st.floats(1.05, 3.0))
def test_a_slower_measured_decode_never_gives_a_smaller_decode_factor(k, more):
    plain = _plan()["at"]
    a = _plan(f"concurrency=16,tpot={plain['tpot_s'] * k!r}")["measured"]["decode_factor"]
    b = _plan(f"concurrency=16,tpot={plain['tpot_s'] * k * more!r}")["measured"]["decode_factor"]
    assert b > a


@pytest.mark.parametrize("k_ttft,k_tpot", [(1.0, 0.9), (1.0, 0.5), (0.5, 0.5), (1.5, 1.3), (3.0, 2.0)])
def test_the_fit_reproduces_a_point_at_a_request_rate_near_saturation(k_ttft, k_tpot):
    """At 8 requests/s (the model runs ~117 of 288 slots) TPOT moves ~2.5x faster than the decode factor: a plain
    fixed-point update overshot, oscillated into overload and refused points the model can reproduce."""
    plain = _plan(concurrency=None, request_rate=8.0)["at"]
    assert not plain["overloaded"]
    m = f"request_rate=8,ttft={plain['ttft_s'] * k_ttft!r},tpot={plain['tpot_s'] * k_tpot!r}"
    s = _plan(m, concurrency=None, request_rate=8.0)
    assert s["measured"]["reproduced"]["ttft_s"] == pytest.approx(plain["ttft_s"] * k_ttft, rel=1e-3)
    assert s["measured"]["reproduced"]["tpot_s"] == pytest.approx(plain["tpot_s"] * k_tpot, rel=1e-3)


def test_a_point_far_from_the_model_is_refused_by_name():
    with pytest.raises(ValueError, match=r"^measured: the point needs a decode \(TPOT\) factor of .* outside 0.02-50"):
        _plan("concurrency=16,tpot=100s")


def test_a_scaled_plan_uses_the_measured_intervals():
    s, plain = _plan("concurrency=16,ttft=150ms,tpot=20ms"), _plan()
    assert "MEASURED.md" in s["at"]["interval"]["how"] and "MEASURED.md" not in plain["at"]["interval"]["how"]
    table = timing_intervals.load_intervals(timing_intervals.MEASURED_INTERVAL_FILE)
    _, fam = timing_intervals.lookup(table, "dense", "decode", "vllm")
    assert s["at"]["tpot_s_low"] == pytest.approx(s["at"]["tpot_s"] / fam["r_high"], rel=1e-12)
    assert s["at"]["tpot_s_high"] == pytest.approx(s["at"]["tpot_s"] / fam["r_low"], rel=1e-12)
    width = lambda d: d["tpot_s_high"] / d["tpot_s_low"]                  # noqa: E731
    assert width(s["at"]) < width(plain["at"])


def test_a_wide_measured_interval_says_so_in_both_languages():
    table = {"level": 0.8, "kind": "measured", "rule": {}, "how": "h",
             "families": {"all": {"r_low": 0.2, "r_high": 4.0, "documents": 5}}}
    iv = timing_intervals.add_intervals_for({"ttft_s": 1.0}, "moe", "sglang", table)["interval"]
    assert iv["how"] == "h" and iv["caution"].startswith("the prefill interval spans 20x even scaled to the measured")
    zh = messages.plan_texts({"serving": {"interval": iv}}, "zh")["serving_cautions"]
    assert zh[0].startswith("即使按实测点缩放，首 token 延迟（TTFT）的 80% 区间上下仍相差 20 倍")


# -- the request ----------------------------------------------------------------------------------------------------
def test_the_request_checks_the_point_and_refuses_it_for_a_search():
    with pytest.raises(ValueError, match="^measured: expected KEY=VALUE"):
        PlanRequest(model="Llama-3.1-8B", measured="/etc/passwd")            # a page sends text; never a file
    with pytest.raises(ValueError, match="^measured: a point measured on one deployment"):
        PlanRequest(model="Llama-3.1-8B", search=True, slo="tpot=50ms", concurrency=8, measured="concurrency=8,ttft=1s")
    r = PlanRequest.from_json({"model": "Llama-3.1-8B", "measured": "concurrency=4,tpot=20ms"})
    assert r.measured == "concurrency=4,tpot=20ms"


def test_cli_file_and_text_give_the_same_plan(tmp_path):
    f = tmp_path / "run.json"
    f.write_text(json.dumps(VLLM))
    args = ["plan", "Llama-3.1-8B", "--gpu", "H100-SXM", "--max-model-len", "8192", "--concurrency", "32", "--json"]
    by_file = cli_process.run([*args, "--measured", str(f)])
    by_text = cli_process.run([*args, "--measured", M.read_bench_result(f)])
    assert by_file.returncode == 0 and by_text.returncode == 0, by_file.stderr
    a, b = json.loads(by_file.stdout)["serving"], json.loads(by_text.stdout)["serving"]
    assert a["measured"]["decode_factor"] == b["measured"]["decode_factor"] and a["at"] == b["at"]
    assert not math.isclose(a["measured"]["decode_factor"], 1.0)
    bad = cli_process.run([*args, "--measured", "ttft=3parsecs"])
    assert bad.returncode == 2 and bad.stderr.strip().splitlines()[-1].startswith(
        "multihead plan: error: argument --measured: unknown unit 'parsecs'") and "Traceback" not in bad.stderr


def test_a_point_the_two_factors_cannot_reproduce_is_an_error_not_a_fit():
    """A predict whose TTFT does not move with the prefill factor (all waiting, say): the iteration cannot close the
    gap, and the plan says so instead of scaling by whatever the last step left."""
    def predict(scale):
        return {"ttft_s": 1.0, "tpot_s": 0.01 * scale[1], "output_tokens_per_s": 100.0 / scale[1],
                "request_latency_s": 2.0}
    with pytest.raises(ValueError, match=r"^measured: the model scaled by two factors does not reproduce"):
        M.fit(predict, M.MeasuredPoint(concurrency=4, ttft_s=2.0, tpot_s=0.02), iterations=5)
    ok = M.fit(predict, M.MeasuredPoint(concurrency=4, tpot_s=0.02))
    assert ok["prefill"] == 1.0 and ok["decode"] == pytest.approx(2.0) and ok["reproduced"]["tpot_s"] == pytest.approx(0.02)


def test_a_run_whose_clients_queue_is_refused():
    """Clients beyond the engine's slots wait in its queue: such a run's TTFT is mostly the wait, and two factors
    fitted to it say nothing about prefill (the review's case: TTFT x1.3 fitted as prefill x3.3, decode x0.06)."""
    with pytest.raises(ValueError, match=r"^measured: at concurrency 5,000 this deployment runs fewer at once"):
        _plan("concurrency=5000,input_len=1024,output_len=512,ttft=2s,tpot=40ms")


@pytest.mark.parametrize("arg,says", [("foo", "got 'foo' (or a vLLM / SGLang bench result file)"),
                                      ("a" * 5000, "at most 300 characters"), ("missing.json", "cannot read")])
def test_the_cli_argument_says_what_it_takes(arg, says):
    import argparse

    from multihead.cli.gpu_time import measured_arg
    with pytest.raises(argparse.ArgumentTypeError, match=re.escape(says)):
        measured_arg(arg)


def test_the_cli_reads_a_bench_file_of_any_name(tmp_path):
    from multihead.cli.gpu_time import measured_arg
    f = tmp_path / "run.txt"
    f.write_text(json.dumps(VLLM))
    assert measured_arg(str(f)) == M.read_bench_result(f)
    swept = tmp_path / "concurrency=16" / "result.json"          # a sweep's folders named key=value
    swept.parent.mkdir()
    swept.write_text(json.dumps(VLLM))
    assert measured_arg(str(swept)) == M.read_bench_result(swept)


def test_a_name_no_file_system_takes_is_an_error_naming_the_argument():
    import argparse

    from multihead.cli.gpu_time import measured_arg
    with pytest.raises(argparse.ArgumentTypeError, match="cannot read .*not a file name"):
        measured_arg("run\x00.json")


def test_errors_name_the_keys_as_the_user_wrote_them():
    with pytest.raises(ValueError, match="^measured: throughput takes a plain number, got 5ms$"):
        M.parse("concurrency=1,throughput=5ms")
    with pytest.raises(ValueError, match="^measured: throughput given twice$"):
        M.parse("concurrency=1,throughput=1,throughput=2")
    with pytest.raises(ValueError, match="^measured: tpot given twice$"):
        M.parse("concurrency=1,itl=1ms,tpot=2ms")


@pytest.mark.parametrize("make", [
    lambda: M.parse(""), lambda: M.parse("foo"), lambda: M.parse("x" * 301), lambda: M.parse("speed=3,ttft=1"),
    lambda: M.parse("concurrency=1,ttft=3parsecs"), lambda: M.parse("concurrency=1,tpot=0.1us"),
    lambda: M.parse("concurrency=1,throughput=5ms"), lambda: M.parse("concurrency=1,ttft=1,ttft=2"),
    lambda: M.parse("concurrency=1.5,ttft=1"), lambda: M.parse("request_rate=1e9,ttft=1"),
    lambda: M.parse("concurrency=1,throughput=1e12"), lambda: M.parse("concurrency=4,request_rate=2,ttft=1"),
    lambda: M.parse("concurrency=4"), lambda: M.parse("ttft=1"), lambda: M.parse("request_rate=2,throughput=100"),
    lambda: PlanRequest(model="Llama-3.1-8B", search=True, slo="tpot=50ms", concurrency=8, measured="concurrency=1,ttft=1s"),
    lambda: _plan("concurrency=16,tpot=100s"), lambda: _plan("concurrency=5000,input_len=1024,output_len=512,ttft=2s"),
])
def test_every_measured_error_a_page_can_show_has_chinese(make):
    """The page shows a refused point beside its field in the page's language: each message is a catalogue entry
    (matched, as the request's other errors are), so Chinese mode never shows 'not yet translated' for it."""
    with pytest.raises(ValueError) as err:
        make()
    zh = messages.translate(str(err.value), "zh")
    assert zh is not None and zh.startswith("measured："), str(err.value)
