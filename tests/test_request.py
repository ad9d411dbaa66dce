"""PlanRequest (planner/request.py): one validated request for the CLI, the page and the library."""
from __future__ import annotations

import json

import pytest

from multihead import planner
from multihead.cli import main
from multihead.planner.request import FIELDS, PlanRequest


@pytest.mark.parametrize("options,field", [
    ({"tokens": True}, "tokens"), ({"tokens": 1.5}, "tokens"), ({"tokens": [1]}, "tokens"), ({"tokens": "abc"}, "tokens"),
    ({"tokens": 10**400}, "tokens"), ({"tokens": "9" * 5001}, "tokens"), ({"tokens": 0}, "tokens"),
    ({"gpu_memory_gb": float("inf")}, "gpu_memory_gb"), ({"gpu_memory_gb": float("nan")}, "gpu_memory_gb"),
    ({"effective_tflops": 1e300}, "effective_tflops"), ({"bandwidth_tbps": "1e5000"}, "bandwidth_tbps"),
    ({"causal_skip": "no"}, "causal_skip"), ({"causal_skip": 1}, "causal_skip"),
    ({"kv_cache_dtype": "fp4"}, "kv_cache_dtype"), ({"block_size": 7}, "block_size"),
    ({"gpu_memory_utilization": 0}, "gpu_memory_utilization"), ({"htm": "x.html"}, "htm"),
    ({"gpus": 2, "tensor_parallel_size": 2}, "tensor_parallel_size"),
    ({"data_parallel_size": 0}, "data_parallel_size"), ({"engine": "trt"}, "engine"),
    ({"mem_fraction_static": 2}, "mem_fraction_static"), ({"batching": "dynamic"}, "batching"),
    ({"expert_parallel_size": 3}, "expert_parallel_size"),
    ({"concurrency": 0}, "concurrency"), ({"request_rate": -2.0}, "request_rate"),
        ({"concurrency": 8, "request_rate": 2.0}, "concurrency"), ({"gpu": "H100,MI300X"}, "gpu"),
        ({"search": True, "slo": "x" * 201}, "slo"), ({"search": True, "objective": "speed"}, "objective"),
    ({"enable_dp_attention": True}, "enable_dp_attention"),
])
def test_bad_values_are_one_line_naming_the_field(options, field):
    with pytest.raises(ValueError) as err:
        PlanRequest.from_json({"model": "GPT-2", **options})
    message = str(err.value)
    assert "\n" not in message and message.split(":", 1)[0] == field, message


def test_text_numbers_read_the_same_everywhere():
    a = PlanRequest.from_json({"model": "GPT-2", "tokens": "1e3", "max_position": "1_000", "block_size": "16"})
    b = PlanRequest(model="GPT-2", tokens=1000.0, max_position=1000, block_size=16)
    assert a == b and a.tokens == 1000 and isinstance(a.tokens, int)


def test_aliases_name_one_field():
    r = PlanRequest.from_json({"model": "GPT-2", "gpus": 4, "memory_utilization": 0.8, "device": "H100"})
    assert (r.tensor_parallel_size, r.gpu_memory_utilization, r.gpu) == (4, 0.8, "H100-SXM")
    assert set(FIELDS) >= {"model", "tokens", "max_model_len", "input_len", "output_len", "gpu", "gpu_memory_gb",
                           "effective_tflops", "bandwidth_tbps", "tensor_parallel_size", "pipeline_parallel_size",
                           "data_parallel_size", "expert_parallel_size", "enable_dp_attention", "kv_cache_dtype",
                           "quantization", "dtype", "gpu_memory_utilization", "max_num_seqs", "engine",
                           "engine_version", "batching", "concurrency", "request_rate"}
    assert PlanRequest().engine == "vllm" and PlanRequest().engine_version is None
    assert PlanRequest().batching == "continuous"


def test_from_json_never_names_a_server_path(tmp_path):
    (tmp_path / "config.json").write_text('{"model_type": "llama"}')
    for model in (str(tmp_path / "config.json"), str(tmp_path), "../x", "/dev/zero"):
        with pytest.raises(ValueError, match="^model: unknown model"):
            PlanRequest.from_json({"model": model})
    with pytest.raises(ValueError, match="^gpu: .*never a file"):
        PlanRequest.from_json({"model": "GPT-2", "gpu": str(tmp_path / "profile.json")})


@pytest.mark.parametrize("name", ["Llama-3.1-70B", "Qwen/Qwen3-8B"])
def test_a_page_catalog_name_never_reads_a_like_named_folder_of_the_server(tmp_path, monkeypatch, name):
    """The page's catalog name is the catalog's model even when the server runs in a folder holding
    a model folder of that name (a huggingface-cli --local-dir download): before, the plan read that
    folder's config.json (a 1.5B model for 'Llama-3.1-70B') and named its path."""
    from multihead.planner.search import search_report
    small = PlanRequest.from_json({"model": "Qwen/Qwen2.5-Math-1.5B"})
    folder = tmp_path / name
    folder.mkdir(parents=True)
    from multihead.cost.serving.fitted import catalog_config
    (folder / "config.json").write_text(json.dumps(catalog_config(small.model)))
    want = planner.report(PlanRequest.from_json({"model": name, "gpu": "H100-SXM", "tokens": 4096}))
    monkeypatch.chdir(tmp_path)
    got = planner.report(PlanRequest.from_json({"model": name, "gpu": "H100-SXM", "tokens": 4096}))
    assert got["params"] == want["params"] and "config.json" not in str(got.get("model"))
    assert got["serving"]["kv_cache_tokens"] == want["serving"]["kv_cache_tokens"]
    req = PlanRequest.from_json({"model": name, "gpu": "H100-SXM", "concurrency": 2, "input_len": 1000,
                                 "gpus_max": 2, "search": True})
    assert search_report(req)["search"]["results"][0]["kv_cache_tokens"] > 0
    # the CLI still reads a path first (its documented rule)
    assert planner.report(PlanRequest(model=name, gpu="H100-SXM", tokens=4096))["params"] != want["params"]


def _cli_json(capsys, argv) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("model,gpu,length", [
    ("Llama-3.1-8B", "H100", 32768), ("Qwen/Qwen2.5-7B-Instruct", "A100-80GB", 16384),
    ("Mixtral-8x7B", "H200-SXM", 8192), ("meta-llama/Llama-3.1-70B-Instruct", "H100-SXM", 131072),
])
def test_plan_serving_page_and_library_give_one_answer(capsys, model, gpu, length):
    """Issue 27: the same request through `plan`, `serving`, the page and the library."""
    from fastapi.testclient import TestClient

    from multihead.web.app import create_app
    tp = ["-tp", "4"] if "70B" in model else []
    library = planner.report(PlanRequest(model=model, gpu=gpu, max_model_len=length,
                                         tensor_parallel_size=4 if tp else 1))
    cli_plan = _cli_json(capsys, ["plan", model, "--gpu", gpu, "--max-model-len", str(length), *tp, "--json"])
    assert cli_plan == library and library["tokens"] == length and library["device"] == gpu_name(gpu)
    main(["serving", model, "--gpu", gpu, "--max-model-len", str(length), *tp, "--json"])
    assert json.loads(capsys.readouterr().out)["serving"] == library["serving"]
    page = TestClient(create_app(), base_url="http://127.0.0.1").post(
        "/api/plan", json={"options": {"model": model, "gpu": gpu, "max_model_len": length, "gpus": 4 if tp else 1}})
    assert page.status_code == 200 and page.json() == library


def gpu_name(gpu: str) -> str:
    return "H100-SXM" if gpu == "H100" else gpu


def test_one_default_gpu_policy(capsys):
    assert _cli_json(capsys, ["plan", "GPT-2", "--json"])["device"] == "H100-SXM"
    assert planner.report(PlanRequest(model="GPT-2"))["tokens"] == 1024          # the training length
    with pytest.raises(ValueError, match="missing --bandwidth-tbps"):
        planner.report(PlanRequest(model="GPT-2", gpu_memory_gb=80, effective_tflops=100))


def _catalog_cases():
    from multihead.cost import model_names
    return [(m, g, n) for m in model_names() for g, n in (("H100", 4096), ("L40S", 32768))]


@pytest.mark.parametrize("model,gpu,length", _catalog_cases())
def test_every_catalog_model_one_answer_from_all_four_doors(capsys, model, gpu, length):
    """plan --json, serving --json, /api/plan and planner.report for the same request (issue 27)."""
    library = planner.report(PlanRequest(model=model, gpu=gpu, max_model_len=length))
    assert _cli_json(capsys, ["plan", model, "--gpu", gpu, "--max-model-len", str(length), "--json"]) == library
    rc = main(["serving", model, "--gpu", gpu, "--max-model-len", str(length), "--json"])
    out = capsys.readouterr()
    if rc == 0:
        assert json.loads(out.out)["serving"] == library["serving"]
    else:                      # the engine would not start: serving says so (exit 2), the plan's section agrees
        assert rc == 2 and library["serving"]["fits"] is False and "does not fit" in out.err
    page = _page().post("/api/plan", json={"options": {"model": model, "gpu": gpu, "max_model_len": length}})
    assert page.status_code == 200 and page.json() == library


_CLIENT = []


def _page():
    from fastapi.testclient import TestClient

    from multihead.web.app import create_app
    if not _CLIENT:
        _CLIENT.append(TestClient(create_app(), base_url="http://127.0.0.1"))
    return _CLIENT[0]


def _all_catalog_names() -> list[str]:
    """Every name a user can give from the catalogs: the planner's names and the catalog HF ids."""
    from multihead.cost import model_names
    from multihead.cost.spec.lookup import config_index
    return model_names() + list(config_index())


def _answer(capsys, argv) -> tuple[int, str, str]:
    rc = main(argv)
    out = capsys.readouterr()
    return rc, out.out, out.err.strip()


def test_plan_and_serving_accept_the_same_names_over_the_whole_catalog(capsys):
    """Issue 27: `plan` and `serving` resolve every catalog name (both catalogs) by the one model
    door: each either answers in both, or both refuse with the same line. The text's example
    (example-13b-gqa8: its config states no training length or intermediate_size; the entry states
    13e9 params) was refused by `serving` for the params its config lacks; it now answers with a
    length, and without one both refuse because no training length is stated."""
    for name in _all_catalog_names():
        plan_rc, plan_out, plan_err = _answer(capsys, ["plan", name, "--max-model-len", "4096", "--json"])
        serve_rc, serve_out, serve_err = _answer(capsys, ["serving", name, "--max-model-len", "4096", "--json"])
        assert plan_rc == 0, (name, plan_err)
        if serve_rc == 2:          # the engine would not start: the plan's own section says so
            assert json.loads(plan_out)["serving"]["fits"] is False and "does not fit" in serve_err, name
        else:
            assert serve_rc == 0 and json.loads(serve_out)["serving"] == json.loads(plan_out)["serving"], name
        p = _answer(capsys, ["plan", name, "--json"])
        s = _answer(capsys, ["serving", name, "--json"])
        if p[0] == 2:              # no length given and none stated: the same one-line refusal
            assert s[0] == 2 and p[2].split("error: ", 1)[1] == s[2].split("error: ", 1)[1], name
            assert "max_position_embeddings" in p[2], name
        else:
            assert p[0] == 0 and s[0] in (0, 2), (name, s[2])
    rc, _, err = _answer(capsys, ["serving", "example-13b-gqa8", "--gpu-memory-gb", "80", "--max-model-len", "8192",
                                  "--json"])
    assert rc == 0, err          # the account of a GPU by its memory alone reads the same model (stated params)
    rc, _, err = _answer(capsys, ["gpu-time", "example-13b-gqa8", "--gpu", "H100", "--json"])
    assert rc == 0, err          # was a TypeError traceback (no params from the raw config)


def test_a_config_file_is_read_once_per_plan(tmp_path, monkeypatch, capsys):
    """Issue 27: one plan reads its config.json once (the model door, cost.spec.lookup.find_model),
    whichever door asks: the request, `plan`, `serving`, the library; it was read twice (once for the
    ModelSpec, once for the serving account's raw config)."""
    from multihead.cost.spec import config_file
    from multihead.cost.spec.lookup import catalog_config
    folder = tmp_path / "my-model"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(catalog_config("Qwen/Qwen2.5-7B-Instruct")))
    reads = []
    real = config_file.read_json_file
    monkeypatch.setattr(config_file, "read_json_file", lambda *a, **k: reads.append(a[0]) or real(*a, **k))
    doors = [lambda: planner.report(PlanRequest(model=str(folder), tokens=32768)),
             lambda: planner.plan(str(folder), tokens=32768, device="H100-SXM").to_dict(),
             lambda: main(["plan", str(folder), "--tokens", "32768", "--json"]),
             lambda: main(["serving", str(folder), "--max-model-len", "32768", "--json"]),
             lambda: main(["serving", str(folder), "--gpu-memory-gb", "80", "--max-model-len", "32768", "--json"])]
    for door in doors:
        reads.clear()
        door()
        assert len(reads) == 1, reads
    capsys.readouterr()
    # and the library's plan of a path carries the raw config to the serving section (the vision
    # tower, the rope cache and the launch command read it), as the request's plan does
    assert planner.plan(str(folder), tokens=32768, device="H100-SXM").to_dict()["serving"] == \
        planner.report(PlanRequest(model=str(folder), tokens=32768))["serving"]
