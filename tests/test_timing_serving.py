"""Time keys in the serving object: the user's case, defaults, refusals, the CLI."""
import json

import pytest

from multihead import cost
from multihead.cli import main
from multihead.cost.spec.lookup import find_model
from multihead.cost.serving import answer as S
from multihead.cost.time import serving_time as T
from multihead.cost.time import timing


def _config_and_id(name):
    """(raw config.json, `vllm serve` id) of a model name: the one model door."""
    found = find_model(name)
    return found.config, found.model_id


def answer(model="meta-llama/Llama-3.1-70B-Instruct", **kw):
    cfg, name = _config_and_id(model)
    req = S.Request(**{"tensor_parallel_size": 4, "max_model_len": 131072, "model": name, "gpu": "H100-SXM",
                       "kv_cache_dtype": "fp8", **kw})
    return S.answer(cfg, req)


def test_request_lengths():
    assert T.request_lengths(131072, None, None) == (131072 - 1024, 1024)
    assert T.request_lengths(2000, None, None) == (1500, 500)
    assert T.request_lengths(4096, 1000, 200) == (1000, 200)
    with pytest.raises(ValueError, match="input-len"):
        T.request_lengths(4096, 4000, 200)
    with pytest.raises(ValueError, match="output-len"):
        T.request_lengths(4096, 10, 0)


def test_users_case_llama31_70b_4xh100_128k_fp8_kv():
    out = answer()
    assert out["fits"] and out["concurrency"] == int(out["max_concurrency"]) >= 1
    for key in ("ttft_s", "tpot_s", "output_tokens_per_s", "decode_tokens_per_s"):
        assert out[key] > 0
    curve = out["curve"]
    assert [p["concurrency"] for p in curve][0] == 1 and curve[-1]["concurrency"] == out["concurrency"]
    tpots = [p["tpot_s"] for p in curve]
    assert tpots == sorted(tpots)
    assert all(p["output_tokens_per_s"] >= curve[0]["output_tokens_per_s"] for p in curve)
    # a 130k prompt is compute-bound: at least its linear FLOPs over the 4 GPUs' peak
    assert out["ttft_s_one_request"] > 4 * 70e9 * 130_048 / (4 * 989e12)


def test_does_not_fit_has_no_time():
    out = answer(tensor_parallel_size=1, kv_cache_dtype="auto")
    assert not out["fits"] and out["time"] is None and "no time" in out["time_note"]
    assert "ttft_s" not in out


def test_gpu_without_flops_figures_is_said_not_guessed():
    cfg, name = _config_and_id("meta-llama/Llama-3.1-70B-Instruct")
    good = answer()
    assert good["ttft_s"] > 0
    keys = T.time_keys(cfg, S.Request(tensor_parallel_size=4, max_model_len=131072, model=name, gpu="TPU-v5e"), good)
    assert keys["time"] is None and "gpu" in keys["time_note"]


def test_every_catalog_gpu_has_a_link():
    links = timing.interconnect_catalog()
    for name in cost.gpu_catalog():
        assert name in links["gpus"], name
        assert links["gpus"][name]["intra_node"] in links["links"]


def test_serving_cli_json_and_text(capsys):
    assert main(["serving", "meta-llama/Llama-3.1-70B-Instruct", "--gpu", "H100", "-tp", "4", "--max-model-len",
                 "131072", "--kv-cache-dtype", "fp8", "--input-len", "100000", "--output-len", "500", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["serving"]
    assert out["input_len"] == 100000 and out["output_len"] == 500 and out["tpot_s"] > 0
    assert main(["serving", "meta-llama/Llama-3.1-70B-Instruct", "--gpu", "H100", "-tp", "4", "--max-model-len",
                 "131072", "--kv-cache-dtype", "fp8"]) == 0
    text = capsys.readouterr().out
    assert "TTFT" in text and "TPOT" in text and "output tokens/s" in text


def test_serving_cli_bad_lengths_one_line(capsys):
    assert main(["serving", "meta-llama/Llama-3.1-70B-Instruct", "-tp", "4", "--max-model-len", "4096",
                 "--input-len", "4000", "--output-len", "500"]) == 2
    err = capsys.readouterr().err
    assert "input-len" in err and "Traceback" not in err


def test_time_plot_of_the_users_case(tmp_path):
    from multihead.planner import time_plot
    out = answer()
    fig = time_plot.time_figure(out)
    thr, tpot = fig.axes
    assert list(thr.lines[0].get_xdata()) == [p["concurrency"] for p in out["curve"]]
    assert list(tpot.lines[0].get_ydata()) == pytest.approx([p["tpot_s"] * 1e3 for p in out["curve"]])
    assert list(thr.lines[0].get_ydata()) == pytest.approx([p["output_tokens_per_s"] for p in out["curve"]])
    assert "tokens/s" in thr.get_ylabel() and "TPOT" in tpot.get_ylabel()
    written = time_plot.plot_plan_time({"serving": out}, tmp_path / "memory.png")
    assert written and (tmp_path / "memory-serving.png").stat().st_size > 0
    assert time_plot.plot_plan_time({}, tmp_path / "m.png") is None
    assert time_plot.plot_plan_time({"serving": {"time": None}}, tmp_path / "m.png") is None


def test_text_example_shows_the_texts_count_beside_the_causal_kernel(capsys):
    assert main(["plan", "example-13b-gqa8", "--tokens", "128000", "--passes", "3", "--gpu-memory-gb", "80",
                 "--effective-tflops", "100", "--bandwidth-tbps", "2"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "134.2 s" in text and "67.1 s" in text
    assert "(the text's count)" in text and "(causal kernel)" in text


def test_plan_carries_the_serving_times_and_the_request_flags(capsys):
    assert main(["plan", "Llama-3.1-70B", "--tokens", "131072", "--gpu", "H100-SXM", "--gpus", "4", "--kv-dtype", "fp8",
                 "--input-len", "100000", "--output-len", "2000", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)["serving"]
    assert (s["input_len"], s["output_len"]) == (100000, 2000)
    assert s["concurrency"] == int(s["max_concurrency"]) and s["ttft_s"] > 0 and s["tpot_s"] > 0
    assert s["output_tokens_per_s"] >= s["curve"][0]["output_tokens_per_s"]


def _plan_json(capsys, *argv) -> dict:
    assert main(["plan", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_text_example_with_explicit_figures_has_serving_times(capsys):
    """`make plan`: a GPU given by effective figures is timed with those figures as they are (efficiency 1),
    not refused: one request's TTFT is its causal prefill at 100 TFLOP/s plus the fixed request cost."""
    d = _plan_json(capsys, "example-13b-gqa8", "--tokens", "128000", "--passes", "3", "--gpu-memory-gb", "80",
                   "--effective-tflops", "100", "--bandwidth-tbps", "2")
    s = d["serving"]
    assert s["ttft_s"] > 0 and s["tpot_s"] > 0 and s["output_tokens_per_s"] > 0 and "time_note" not in s
    assert "flops_efficiency 1, bandwidth_efficiency 1" in s["time_constants"]
    c = timing.load_constants()
    inp = s["input_len"]
    linear = 2 * d["non_embedding_params"] * inp / 100e12
    attention = 4 * 40 * 128 * 40 * inp * (inp + 1) / 2 / 100e12        # causal pairs x 4 H d, 40 layers
    assert s["ttft_s_one_request"] == pytest.approx(linear + attention + c.request_overhead_s
                                                    + 40 * c.layer_overhead("vllm"), rel=0.02)


def test_measured_cpu_profile_has_no_gpu_time_and_says_why(capsys, tmp_path):
    from tests.test_devices import measured_spec, write_profile
    path = write_profile(measured_spec(), tmp_path / "p.json")
    d = _plan_json(capsys, "Llama-2-7B", "--tokens", "4096", "--device", str(path))
    assert d["decode_terms"] is None and "ttft_s" not in d["serving"]
    assert "CPU profile" in (d["serving"].get("reason") or d["serving"].get("time_note"))


def test_planner_tokens_per_second_is_the_communication_aware_decode_step(capsys):
    """The issue's example, Llama-2-7B batch 1 on 8 A100s: the old roofline said 959 tokens/s; the plan's
    contracted tokens_per_second now comes from cost/timing (one source), all-reduces included."""
    d8 = _plan_json(capsys, "Llama-2-7B", "--tokens", "4096", "--gpu", "A100-80GB", "--gpus", "8")
    d1 = _plan_json(capsys, "Llama-2-7B", "--tokens", "4096", "--gpu", "A100-80GB")
    t = d8["decode_terms"]
    c = timing.load_constants()
    link = timing.interconnect_catalog()["links"]["nvlink3"]["bandwidth_gbps"] * 1e9
    # 8 KB per all-reduce: the engine's one-stage kernel, latency + 7 peers' buffers
    one = c.allreduce_latency("nvlink3") + 7 * 4096 * 2 / (link * c.link_efficiency)
    assert t["link"] == "nvlink3" and t["comm_s"] == pytest.approx(2 * 32 * one) and d1["decode_terms"]["comm_s"] == 0
    assert d8["decode_seconds_per_token"] == pytest.approx(max(t["compute_s"], t["memory_s"]) + t["attention_s"] + t["dequant_s"]
                                                           + t["overhead_s"] + t["comm_s"])
    assert d8["tokens_per_second"] == pytest.approx(1 / d8["decode_seconds_per_token"])
    assert d8["tokens_per_second"] < 400 < 959                                     # communication and fixed costs
    assert d1["tokens_per_second"] < d8["tokens_per_second"] < 8 * d1["tokens_per_second"]
