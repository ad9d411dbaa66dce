"""Search under a latency target (issue 29): the operating point, the SLO, the search against a
brute-force loop over `multihead plan --concurrency`, and the launch command parsed back."""
import dataclasses
import json
import math
import shlex

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from multihead.cli import main
from multihead.cost.time import operating_point as O
from multihead.cost.serving import answer as S
from multihead.cost.time.serving_time import setup_for
from multihead.planner import search as SE
from multihead.cost.spec.lookup import find_model


def _config_and_id(name):
    """(raw config.json, `vllm serve` id) of a model name: the one model door."""
    found = find_model(name)
    return found.config, found.model_id

MODEL = "Qwen/Qwen3-8B"


@pytest.fixture(scope="module")
def cfg():
    return _config_and_id(MODEL)


@pytest.fixture(scope="module")
def setup(cfg):
    c, name = cfg
    req = S.Request(model=name, gpu="H100-SXM", max_model_len=9216)
    _, dtype = S.serving_account(c, req)
    return setup_for(c, req, dtype)


# -- the operating point -------------------------------------------------------------------------------
def test_closed_loop_below_the_slots_is_the_time_models_serving_point(setup):
    from multihead.cost.time import timing
    at = O.evaluate(setup, 2048, 256, concurrency=8, kv_capacity_requests=100)
    p = timing.serving_point(setup, 8, 2048, 256)
    # the same numbers (up to the rounding of a request-weighted mean over one group)
    assert at["ttft_s"] == pytest.approx(p.ttft_s, rel=1e-12) and at["tpot_s"] == pytest.approx(p.tpot_s, rel=1e-12)
    assert at["itl_s"] == at["tpot_s"]
    assert at["output_tokens_per_s"] == pytest.approx(8 * 256 / p.request_latency_s)
    assert at["kv_pool_holds"] and at["queued"] == 0 and at["running"] == 8


def test_closed_loop_beyond_the_pool_queues_by_littles_law(setup):
    """12 clients, a pool of 4 requests: 4 run, 8 wait; each request's time in the system is
    N / X (X the 4 slots' completions per second) and the wait is added to TTFT only."""
    from multihead.cost.time import timing
    at = O.evaluate(setup, 2048, 256, concurrency=12, kv_capacity_requests=4.7)
    p4 = timing.serving_point(setup, 4, 2048, 256)
    x = 4 / p4.request_latency_s
    assert at["running"] == 4 and at["queued"] == 8 and not at["kv_pool_holds"]
    assert at["request_latency_s"] == pytest.approx(12 / x)
    assert at["ttft_s"] == pytest.approx(p4.ttft_s + 12 / x - p4.request_latency_s)
    assert at["tpot_s"] == p4.tpot_s
    assert at["requests_per_s"] * at["request_latency_s"] == pytest.approx(12)     # Little's law
    assert at["note"] == ("8 of 12 requests wait in the engine's queue: a replica runs at most 4 at once (max_num_seqs "
                          "1,024, KV pool 4.7 requests); their wait is in TTFT. Growing contexts beyond the pool are "
                          "preempted (vLLM), not timed here")


def test_the_loads_notes_are_catalogue_sentences_in_both_languages(setup):
    """The requested load's notes (queue, no request fits, unbounded queue) come from the message catalogue, so the
    page shows them in Chinese too (messages.plan_texts: serving_at_note)."""
    from multihead import messages
    queued = O.evaluate(setup, 2048, 256, concurrency=12, kv_capacity_requests=4.7)
    none = O.evaluate(setup, 2048, 256, concurrency=12, kv_capacity_requests=0.5)
    flood = O.evaluate(setup, 2048, 256, request_rate=1e6, kv_capacity_requests=4.7)
    assert none["overloaded"] and flood["overloaded"]
    zh = [messages.plan_texts({"serving": {"at": at}}, "zh") for at in (queued, none, flood)]
    assert [z["untranslated"] for z in zh] == [[], [], []]
    assert zh[0]["serving_at_note"] == ("12 个请求中有 8 个在引擎队列里等待：每个副本同时最多跑 4 个（max_num_seqs 1,024，"
                                        "KV 池容纳 4.7 个请求）；等待时间计入 TTFT。超出 KV 池的增长上下文会被抢占（vLLM），"
                                        "这里不计时")
    assert zh[1]["serving_at_note"] == "KV 池连一个 input_len + output_len 个 token 的请求都放不下"
    assert zh[2]["serving_at_note"] == "请求速率达到或超过了副本的服务能力：队列会无限增长"
    at = O.evaluate(setup, 2048, 256, concurrency=2, kv_capacity_requests=4.7)
    assert at["note"] == "" and messages.plan_texts({"serving": {"at": at}}, "zh")["serving_at_note"] is None


def test_max_num_seqs_limits_the_slots_like_the_pool(setup):
    a = O.evaluate(setup, 2048, 256, concurrency=12, max_num_seqs=4, kv_capacity_requests=1000)
    b = O.evaluate(setup, 2048, 256, concurrency=12, max_num_seqs=1024, kv_capacity_requests=4)
    assert a["slots_per_replica"] == b["slots_per_replica"] == 4
    assert a["ttft_s"] == pytest.approx(b["ttft_s"])


def test_replicas_split_the_load_evenly(setup):
    """5 clients over 2 replicas: one replica carries 3, the other 2; totals add, times are means."""
    from multihead.cost.time import timing
    at = O.evaluate(setup, 1024, 128, concurrency=5, data_parallel_size=2)
    p3, p2 = (timing.serving_point(setup, n, 1024, 128) for n in (3, 2))
    rps = 3 / p3.request_latency_s + 2 / p2.request_latency_s
    assert at["requests_per_s"] == pytest.approx(rps)
    assert at["output_tokens_per_s"] == pytest.approx(rps * 128)
    assert at["gpus"] == 2 and at["output_tokens_per_s_per_gpu"] == pytest.approx(rps * 128 / 2)
    w3, w2 = 3 / p3.request_latency_s, 2 / p2.request_latency_s
    assert at["tpot_s"] == pytest.approx((p3.tpot_s * w3 + p2.tpot_s * w2) / rps)


def test_open_loop_obeys_littles_law_and_the_md1_prefill_queue(setup):
    from multihead.cost.time import timing
    rate = 2.0
    at = O.evaluate(setup, 1024, 128, request_rate=rate)
    one = timing.prefill(setup, 1024).total_s
    rho = rate * one
    assert at["requests_per_s"] == rate and at["output_tokens_per_s"] == pytest.approx(rate * 128)
    assert at["queued"] == pytest.approx(rate * rho * one / (2 * (1 - rho)))       # Little on the M/D/1 wait
    # the decode batch is the requests decoding: rate x (output_len - 1) x TPOT, at the fixed point
    assert at["running"] == pytest.approx(rate * 127 * at["tpot_s"], rel=1e-4)
    assert at["arrival"] == "poisson" and "Poisson" in at["arrival_model"]


def test_a_rate_above_capacity_is_overloaded_with_no_times(setup):
    from multihead.cost.time import timing
    one = timing.prefill(setup, 4096).total_s
    at = O.evaluate(setup, 4096, 128, request_rate=1.01 / one)
    assert at["overloaded"] and at["ttft_s"] is None and "without bound" in at["note"]
    json.dumps(at, allow_nan=False)          # no Infinity in the JSON


@pytest.mark.parametrize("kw, needle", [
    ({}, "concurrency"), ({"concurrency": 2, "request_rate": 1.0}, "concurrency"), ({"concurrency": 0}, "concurrency"),
    ({"concurrency": True}, "concurrency"), ({"request_rate": math.inf}, "request-rate"),
    ({"request_rate": -1.0}, "request-rate"), ({"concurrency": 2, "data_parallel_size": 0}, "data-parallel-size"),
])
def test_bad_loads_are_named(setup, kw, needle):
    with pytest.raises(ValueError, match=needle):
        O.evaluate(setup, 1024, 128, **kw)


@settings(max_examples=40, deadline=None)
@given(c=st.integers(1, 300), extra=st.integers(1, 64), cap=st.floats(1, 400))
def test_more_concurrency_is_never_faster_per_request(setup, c, extra, cap):
    """Adding clients never lowers TTFT, TPOT or request latency, and never lowers throughput."""
    a = O.evaluate(setup, 2048, 256, concurrency=c, kv_capacity_requests=cap)
    b = O.evaluate(setup, 2048, 256, concurrency=c + extra, kv_capacity_requests=cap)
    for k in ("ttft_s", "tpot_s", "request_latency_s"):
        assert b[k] >= a[k] * (1 - 1e-12), k
    assert b["output_tokens_per_s"] >= a["output_tokens_per_s"] * (1 - 1e-12)


@settings(max_examples=30, deadline=None)
@given(r=st.floats(0.01, 20), f=st.floats(1.01, 3))
def test_a_higher_rate_is_never_faster_per_request(setup, r, f):
    a = O.evaluate(setup, 2048, 256, request_rate=r)
    b = O.evaluate(setup, 2048, 256, request_rate=r * f)
    if b["overloaded"]:
        return
    assert not a["overloaded"]
    for k in ("ttft_s", "tpot_s", "request_latency_s"):
        assert b[k] >= a[k] * (1 - 1e-9), k


# -- the SLO and prices --------------------------------------------------------------------------------
def test_slo_parses_units():
    s = SE.parse_slo("ttft=2s, tpot=50ms,e2e=1.5min")
    assert (s.ttft_s, s.tpot_s, s.request_latency_s) == (2.0, pytest.approx(0.05), 90.0)
    assert SE.parse_slo("itl=30000us").tpot_s == pytest.approx(0.03)
    assert SE.parse_slo("tpot=0.05").tpot_s == 0.05
    assert SE.parse_slo(None).targets() == {}


@pytest.mark.parametrize("text", ["tpot=50parsecs", "tpot", "speed=3s", "tpot=-5ms", "tpot=50ms,tpot=40ms",
                                  "ttft=1e9s", "ttft=0s", "tpot==5ms"])
def test_bad_slos_are_refused_by_name(text):
    with pytest.raises(ValueError, match="^slo: "):
        SE.parse_slo(text)


@pytest.mark.parametrize("extra, needle", [
    (["--slo", "tpot=50parsecs"], "slo"), (["--slo", "latency=3s"], "slo"), (["--objective", "speed"], "objective"),
    (["--price", "H100-SXM=free"], "price"), (["--gpus-max", "0"], "gpus-max"), (["--gpu", "Z80"], "gpu"),
])
def test_bad_search_flags_exit_2_naming_the_flag(capsys, extra, needle):
    argv = ["plan", "Llama-3.1-8B", "--search", "--concurrency", "4", "--input-len", "1024"] + extra
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_search_needs_a_load(capsys):
    assert main(["plan", "Llama-3.1-8B", "--search", "--input-len", "1024"]) == 2
    assert "concurrency" in capsys.readouterr().err


def test_cost_objective_needs_a_price_for_every_gpu(cfg):
    c, name = cfg
    work = SE.Workload(input_len=1024, output_len=128, concurrency=4, objective="cost")
    with pytest.raises(ValueError, match="^price: no price for H20"):
        SE.search(c, name, work, SE.Space(gpus=("H20",), gpus_max=1))
    r = SE.search(c, name, dataclasses.replace(work, prices={"H20": 1.5}), SE.Space(gpus=("H20",), gpus_max=1))
    assert r["prices"]["H20"] == {"usd_per_hour": 1.5, "source": "--price"}


def test_catalog_prices_have_a_source_and_date():
    prices = SE.gpu_prices()
    assert {"H100-SXM", "MI300X", "A100-80GB"} <= set(prices)
    for name, p in prices.items():
        assert 0 < p["usd_per_hour"] < 100 and p["source"].startswith("https://") and p["date"][:4] == "2026", name


# -- the search against a brute-force loop over `multihead plan --concurrency` -------------------------
SMALL = SE.Space(gpus=("L40S",), gpus_max=4, tensor_parallel_sizes=(1, 2, 4), pipeline_parallel_sizes=(1,),
                 quantizations=(None, "fp8"), kv_cache_dtypes=("auto", "fp8"), max_num_seqs=(2, 1024),
                 data_parallel=False)
LOAD = dict(input_len=3072, output_len=256, concurrency=6)


def _plan_at(capsys, c: SE.Candidate) -> dict | None:
    """`multihead plan MODEL --concurrency N ... --json` for one configuration: its serving.at."""
    argv = ["plan", PLAN_MODEL, "--gpu", c.gpu, "--tensor-parallel-size", str(c.tensor_parallel_size),
            "--tokens", str(LOAD["input_len"] + LOAD["output_len"]), "--input-len", str(LOAD["input_len"]),
            "--output-len", str(LOAD["output_len"]), "--concurrency", str(LOAD["concurrency"]),
            "--kv-cache-dtype", c.kv_cache_dtype, "--max-num-seqs", str(c.max_num_seqs), "--json"]
    if c.quantization:
        argv += ["--quantization", c.quantization]
    assert main(argv) == 0
    serving = json.loads(capsys.readouterr().out)["serving"]
    return serving.get("at") if serving.get("fits") else None


PLAN_MODEL = "Qwen3-8B"          # the planner catalog's name for the same config


def test_search_keeps_exactly_what_a_loop_over_plan_keeps_in_the_same_order(capsys):
    c, name = _config_and_id(PLAN_MODEL)
    slo = SE.parse_slo("tpot=40ms,ttft=3s")
    work = SE.Workload(**LOAD, slo=slo, objective="throughput")
    got = SE.search(c, name, work, SMALL, top=1000)
    kept = []
    for cand in SMALL.candidates():
        at = _plan_at(capsys, cand)
        if at is None or at["overloaded"] or at["queued"]:
            continue
        if at["tpot_s"] <= 0.040 and at["ttft_s"] <= 3.0:
            kept.append((-at["output_tokens_per_s_per_gpu"], cand.gpus, at["tpot_s"], cand, at))
    kept.sort(key=lambda k: k[:3])
    mine = [r for r in got["results"] if r["meets_slo"]]
    assert len(kept) >= 2, "the small space should hold several passing configurations"
    want = [(k[3].tensor_parallel_size, k[3].quantization, k[3].kv_cache_dtype) for k in kept]
    # max_num_seqs 2 queues 4 of the 6 clients, so only 1024 passes: one row per configuration
    assert [(r["tensor_parallel_size"], r["quantization"], r["kv_cache_dtype"]) for r in mine] == want
    for r, k in zip(mine, kept):
        for key in ("ttft_s", "tpot_s", "output_tokens_per_s"):
            assert r["at"][key] == pytest.approx(k[4][key], rel=1e-9), key
    assert got["candidates"] == len(SMALL.candidates()) == 24


def test_the_users_question_in_one_call(cfg):
    """Llama-3.1-70B, 16 concurrent 8k-token chats, TPOT under 50 ms, on H100s: an answer, every
    result meeting the SLO runs all 16 at once, and the fewest-GPU winner comes first."""
    c, name = _config_and_id("meta-llama/Llama-3.1-70B-Instruct")
    work = SE.Workload(input_len=8192, output_len=1024, concurrency=16, slo=SE.parse_slo("tpot=50ms"))
    r = SE.search(c, name, work, SE.Space(gpus=("H100-SXM",), gpus_max=8), top=20)
    ok = [x for x in r["results"] if x["meets_slo"]]
    assert ok and ok[0] is r["results"][0]
    assert [x["gpus"] for x in ok] == sorted(x["gpus"] for x in ok)
    for x in ok:
        assert x["at"]["tpot_s"] <= 0.050 and x["at"]["kv_pool_holds"] and x["at"]["queued"] == 0
    assert r["candidates"] > 100 and r["pareto"] and r["seconds"] > 0
    json.dumps({"search": r}, allow_nan=False)
    # every time carries its 80% interval; "within the band" means the throughput intervals overlap
    best = ok[0]["at"]
    for x in ok:
        a = x["at"]
        for k in ("ttft_s", "tpot_s", "output_tokens_per_s"):
            # every shipped family's interval holds ratio 1 (tests/test_timing_intervals.py), so it holds the
            # prediction itself
            assert a[f"{k}_low"] <= a[k] <= a[f"{k}_high"], k
        if x["within_band_of_best"]:
            assert x["gpus"] == ok[0]["gpus"]
            assert a["output_tokens_per_s_low"] / x["gpus"] <= best["output_tokens_per_s_high"] / ok[0]["gpus"]
            assert best["output_tokens_per_s_low"] / ok[0]["gpus"] <= a["output_tokens_per_s_high"] / x["gpus"]
    assert any(x["within_band_of_best"] is False for x in ok[1:]), "some result should be distinguishable"


def test_nothing_meets_an_impossible_slo_and_the_closest_miss_is_named(cfg):
    c, name = cfg
    work = SE.Workload(input_len=1024, output_len=128, concurrency=4, slo=SE.parse_slo("tpot=0.1ms"))
    r = SE.search(c, name, work, SE.Space(gpus=("L4",), gpus_max=2))
    assert r["meeting_slo"] == 0 and not any(x["meets_slo"] for x in r["results"])
    miss = r["closest_miss"]
    assert miss["binding"] == "tpot" and miss["over_target"]["tpot"] > 1


def test_the_pareto_front_is_not_dominated(cfg):
    c, name = cfg
    r = SE.search(c, name, SE.Workload(input_len=2048, output_len=256, concurrency=8),
                  SE.Space(gpus=("H100-SXM", "L40S"), gpus_max=4))
    front = r["pareto"]
    assert len(front) >= 2
    for a in front:
        for b in front:
            if a is not b:
                assert not (b["tpot_s"] <= a["tpot_s"] and b["output_tokens_per_s_per_gpu"] >
                            a["output_tokens_per_s_per_gpu"])


# -- launch commands parse back ------------------------------------------------------------------------
def _flags(argv):
    out, i = {}, 0
    while i < len(argv):
        if argv[i].startswith("--") and i + 1 < len(argv) and not argv[i + 1].startswith("--"):
            out[argv[i]] = argv[i + 1]
            i += 2
        else:
            i += 1
    return out


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_every_result_command_parses_back_into_its_configuration(cfg, engine):
    c, name = cfg
    r = SE.search(c, name, SE.Workload(input_len=2048, output_len=256, concurrency=32),
                  SE.Space(gpus=("H100-SXM",), gpus_max=16), emit=engine, top=30)
    names = {"vllm": ("--tensor-parallel-size", "--pipeline-parallel-size", "--data-parallel-size",
                      "--kv-cache-dtype", "--quantization", "--max-num-seqs"),
             "sglang": ("--tp-size", "--pp-size", "--dp-size", "--kv-cache-dtype", "--quantization",
                        "--max-running-requests")}[engine]
    kv = {"vllm": {"auto": "auto", "fp8": "fp8"}, "sglang": {"auto": "auto", "fp8": "fp8_e4m3"}}[engine]
    assert any(x["data_parallel_size"] > 1 for x in r["results"])
    for x in r["results"]:
        f = _flags(shlex.split(x["command"]["text"].splitlines()[-1]))
        per_launch = int(f.get(names[2], 1))
        launches, rest = divmod(x["data_parallel_size"], per_launch)
        assert rest == 0, "identical launches add up to the replicas asked"
        assert int(f[names[0]]) == x["tensor_parallel_size"] and int(f.get(names[1], 1)) == x["pipeline_parallel_size"]
        assert per_launch * x["tensor_parallel_size"] * x["pipeline_parallel_size"] <= 8
        assert f[names[3]] == kv[x["kv_cache_dtype"]] and f.get(names[4]) == x["quantization"]
        assert int(f.get(names[5], 1024)) == x["max_num_seqs"]
        if launches > 1:
            assert f"{launches} launches" in x["command"]["text"]


def test_data_parallel_replicas_in_one_node_and_beyond():
    from multihead.engines import LaunchPlan, command
    one = command("vllm", LaunchPlan("m", tensor_parallel_size=2, data_parallel_size=4))
    assert _flags(one.argv)["--data-parallel-size"] == "4" and one.nodes == 1 and not one.setup
    two = command("vllm", LaunchPlan("m", tensor_parallel_size=2, data_parallel_size=8))
    assert _flags(two.argv)["--data-parallel-size"] == "4" and two.nodes == 2 and "2 launches" in two.setup[0]
    sg = command("sglang", LaunchPlan("m", tensor_parallel_size=4, data_parallel_size=2))
    assert _flags(sg.argv)["--dp-size"] == "2"
    big = command("vllm", LaunchPlan("m", tensor_parallel_size=8, pipeline_parallel_size=2, data_parallel_size=2))
    assert "--data-parallel-size" not in big.argv and big.nodes == 4 and "2 launches" in big.setup[0]
    three = command("vllm", LaunchPlan("m", tensor_parallel_size=4, data_parallel_size=3))
    assert "--data-parallel-size" not in three.argv and "3 launches of 1 replica" in three.setup[0]
    with pytest.raises(ValueError, match="data-parallel-size"):
        command("vllm", LaunchPlan("m", data_parallel_size=0))


# -- plan and serving at a load ------------------------------------------------------------------------
def test_serving_and_plan_report_the_asked_point_and_add_it_to_the_curve(capsys):
    base = ["--gpu", "H100-SXM", "--input-len", "8192", "--output-len", "1024", "--concurrency", "12", "--json"]
    assert main(["serving", "meta-llama/Llama-3.1-70B-Instruct", "-tp", "4", "--max-model-len", "9216"] + base) == 0
    serving = json.loads(capsys.readouterr().out)["serving"]
    assert main(["plan", "Llama-3.1-70B", "-tp", "4", "--tokens", "9216"] + base) == 0
    plan = json.loads(capsys.readouterr().out)["serving"]
    for s in (serving, plan):
        at = s["at"]
        assert at["concurrency"] == 12 and set(at) >= {"ttft_s", "tpot_s", "itl_s", "request_latency_s",
                                                      "output_tokens_per_s", "output_tokens_per_s_per_gpu",
                                                      "requests_per_s", "kv_pool_holds"}
        assert 12 in [p["concurrency"] for p in s["curve"]]
        assert [p["concurrency"] for p in s["curve"]] == sorted(p["concurrency"] for p in s["curve"])
    assert serving["at"]["tpot_s"] == pytest.approx(plan["at"]["tpot_s"], rel=1e-9)


def test_docs_search_quotes_what_the_commands_print():
    """Every output block in docs/search.md is what its command prints now (scripts/doc_outputs.py)."""
    import importlib.util
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location("doc_outputs", root / "scripts" / "doc_outputs.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    text = (root / "docs" / "search.md").read_text(encoding="utf-8")
    assert len(list(mod.MARK.finditer(text))) == 3
    stale = mod.stale_blocks(text)
    assert not stale, f"stale output of {stale[0][0]!r}: run python scripts/doc_outputs.py docs/search.md"


# -- the winner's command is the one the serving answer would print (review fixes) ---------------------
def _argv_flag(argv, name):
    return argv[argv.index(name) + 1] if name in argv else None


@pytest.mark.parametrize("engine,flag", [("vllm", "--hf-overrides"), ("sglang", "--json-model-override-args")])
def test_a_search_past_the_configs_length_launches_with_the_rope_override(engine, flag):
    """Qwen2.5-7B-Instruct states 32,768 positions: a search for 100k-token requests must emit the
    override that makes the engine accept --max-model-len / --context-length (issue 25, item 1),
    as `multihead serving` does for the same length; before, the search's command had none."""
    from multihead.cost.spec.positions import engine_max_len
    from multihead.cost.serving.shape import read_spec
    c, name = _config_and_id("Qwen/Qwen2.5-7B-Instruct")
    work = SE.Workload(input_len=100_000, output_len=1000, concurrency=2)
    r = SE.search(c, name, work, SE.Space(gpus=("H100-SXM",), gpus_max=1, engines=(engine,)), top=3)
    assert r["results"]
    spec = read_spec(c, name)
    for x in r["results"]:
        argv = x["command"]["argv"]
        raw = _argv_flag(argv, flag)
        assert raw is not None, f"no {flag} in {x['command']['text']}"
        length = int(_argv_flag(argv, "--max-model-len" if engine == "vllm" else "--context-length"))
        assert length == 101_000 and engine_max_len(spec, engine, json.loads(raw)) >= length
        assert "quality" in x["command"]["note"]


def test_a_search_for_a_length_no_override_reaches_is_refused_by_name():
    c, name = _config_and_id("Qwen/Qwen2.5-7B-Instruct")
    c = {**c, "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}}   # a type that cannot be grown
    work = SE.Workload(input_len=100_000, output_len=1000, concurrency=2)
    with pytest.raises(ValueError, match="^max_model_len: .*past the 32,768 positions"):
        SE.search(c, name, work, SE.Space(gpus=("H100-SXM",), gpus_max=1))


def test_an_sglang_search_command_states_the_fraction_its_account_used(cfg):
    """The SGLang account sizes the pool at SGLang's default --mem-fraction-static for the GPU and TP;
    the emitted command must carry that fraction and chunk (as `serving --engine sglang --emit sglang`
    does), not vLLM's 0.9 utilization."""
    c, name = cfg
    work = SE.Workload(input_len=2048, output_len=256, concurrency=4)
    r = SE.search(c, name, work, SE.Space(gpus=("H100-SXM",), gpus_max=2, engines=("sglang",)), top=4)
    assert r["results"]
    for x in r["results"]:
        req = S.Request(model=name, gpu=x["gpu"], tensor_parallel_size=x["tensor_parallel_size"],
                        quantization=x["quantization"], kv_cache_dtype=x["kv_cache_dtype"],
                        max_num_seqs=x["max_num_seqs"], max_model_len=r["max_model_len"], engine="sglang")
        from multihead.planner.launch import add_command
        want = add_command(S.answer(c, req), req, "sglang")
        assert x["kv_cache_tokens"] == want["kv_cache_tokens"]
        got, ref = x["command"]["argv"], want["command"]["argv"]
        for flag in ("--mem-fraction-static", "--chunked-prefill-size", "--context-length"):
            assert _argv_flag(got, flag) == _argv_flag(ref, flag), flag


def test_a_search_space_is_bounded_before_it_is_built(capsys):
    """--gpus-max 4096 over the default GPUs is 2.5 million configurations (27 s only to list them
    here, minutes and gigabytes to evaluate, on the page's computing pool too): refused by name at once."""
    for space in (SMALL, SE.Space(gpus=("H100-SXM",), gpus_max=16), SE.Space(gpus_max=12, data_parallel=False)):
        assert space.count() == len(space.candidates())
    assert SE.Space(gpus_max=4096).count() > SE.MAX_CANDIDATES
    rc = main(["plan", "Llama-3.1-70B", "--search", "--concurrency", "16", "--input-len", "1024",
               "--output-len", "128", "--gpus-max", "4096"])
    err = capsys.readouterr().err
    assert rc == 2 and "gpus-max" in err and "2,531,328 configurations" in err


def test_the_cost_band_compares_costs_not_rates():
    """Two GPUs with the same predicted tokens/s per GPU but prices 3x apart are told apart by the
    cost objective (their $/Mtok intervals do not overlap); before, the per-GPU rate bands were
    compared whatever the objective, so the 3x dearer one was 'within the band of the best'."""
    def result(price, gpus=1):
        at = {"output_tokens_per_s": 1000.0, "output_tokens_per_s_low": 900.0, "output_tokens_per_s_high": 1100.0}
        return {"meets_slo": True, "gpus": gpus, "usd_per_hour": price * gpus, "at": at}
    cheap, dear, same = result(1.0), result(3.0), result(1.1)
    SE._mark_band([cheap, dear, same], "cost")
    assert cheap["within_band_of_best"] and same["within_band_of_best"] and dear["within_band_of_best"] is False
    SE._mark_band([cheap, dear], "throughput")
    assert dear["within_band_of_best"] is True          # the same rate: throughput cannot tell them apart


def test_the_closest_miss_names_the_queue_when_every_configuration_queues():
    """3,000 clients on at most 2 H100s: every configuration queues (max_num_seqs or the KV pool) and
    so misses; the closest miss said 'ttft 0.02x its target; binding: ttft' (a target it meets)."""
    c, name = _config_and_id("meta-llama/Llama-3.1-8B-Instruct")
    work = SE.Workload(input_len=1000, output_len=100, concurrency=3000, slo=SE.parse_slo("ttft=600s"))
    r = SE.search(c, name, work, SE.Space(gpus=("H100-SXM",), gpus_max=2))
    assert r["meeting_slo"] == 0
    miss = r["closest_miss"]
    assert miss["binding"] in ("kv_pool", "max_num_seqs") and miss["at"]["queued"] > 0
