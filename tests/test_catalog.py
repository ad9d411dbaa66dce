"""multihead.catalog.read_json, the one cached reader of catalog JSON, and what `plan --json` imports."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from multihead.catalog import RACY_NS, entries, read_json


def _config_and_id(name):
    """(raw config.json, `vllm serve` id) of a model name: the one model door."""
    from multihead.cost.spec.lookup import find_model
    found = find_model(name)
    return found.config, found.model_id


def _age(path, seconds: float) -> int:
    """Set the file's mtime ``seconds`` in the past (past the racy window); returns it in ns."""
    t = time.time_ns() - int(seconds * 1e9)
    os.utime(path, ns=(t, t))
    return t


def test_a_file_is_parsed_once_per_version(tmp_path):
    path = tmp_path / "table.json"
    path.write_text(json.dumps({"a": 1, "_note": "x"}))
    _age(path, 100)
    first = read_json(path)
    assert first == {"a": 1, "_note": "x"} and read_json(str(path)) is first     # str or Path: one file
    path.write_text(json.dumps({"a": 22, "_note": "x"}))                        # a rewrite: new size
    _age(path, 100)
    assert read_json(path) == {"a": 22, "_note": "x"}
    path.write_text(json.dumps({"a": 33, "_note": "x"}))                        # same size, new mtime
    _age(path, 50)
    assert read_json(path) == {"a": 33, "_note": "x"}


def test_a_file_written_moments_ago_is_parsed_on_every_read(tmp_path):
    """A same-size rewrite inside the file system's timestamp tick keeps (mtime, size, inode): a file
    modified less than RACY_NS ago is never served from the cache. (Stamped a minute ahead here, so
    that a paused test process cannot age it out of the window.)"""
    path = tmp_path / "fit.json"
    path.write_text('{"v": 1}')
    assert time.time_ns() - path.stat().st_mtime_ns < RACY_NS       # as written
    mtime = _age(path, -60)
    a = read_json(path)
    assert a == {"v": 1} and read_json(path) is not a
    path.write_text('{"v": 2}')
    os.utime(path, ns=(mtime, mtime))           # the same (mtime, size, inode) as the first version
    assert read_json(path) == {"v": 2}


def test_entries_are_a_new_dict_of_shared_values(tmp_path):
    path = tmp_path / "gpus.json"
    path.write_text(json.dumps({"_comment": "notes", "G1": {"memory_gb": 80}, "G2": {"memory_gb": 24}}))
    _age(path, 100)
    one, two = entries(path), entries(path)
    assert one == {"G1": {"memory_gb": 80}, "G2": {"memory_gb": 24}} and one is not two
    assert one["G1"] is two["G1"]               # shared, hence read-only (the docstring says so)
    one.pop("G1")                               # a caller may filter its own top-level dict
    assert "G1" in entries(path)


def test_the_catalogs_read_through_it():
    from multihead import cost
    from multihead.fits import serving_fit
    from multihead.cost.time import timing
    for path, lookup in ((cost.time.device.GPUS_JSON, cost.gpu_catalog), (cost.spec.lookup.MODELS_JSON, cost.model_catalog),
                         (cost.time.device.GPU_MEMORY_JSON, lambda: entries(cost.time.device.GPU_MEMORY_JSON))):
        raw = json.loads(path.read_text())
        assert lookup() == {k: v for k, v in raw.items() if not k.startswith("_")}, path
    assert cost.time.device.interconnect_catalog() == json.loads((timing.CATALOG / "interconnect.json").read_text())
    # ... and through the cache: the shared entries come back as the same objects
    assert cost.gpu_catalog()["H100-SXM"] is cost.gpu_catalog()["H100-SXM"]
    assert entries(cost.time.device.GPU_MEMORY_JSON)["H100-SXM"] is entries(cost.time.device.GPU_MEMORY_JSON)["H100-SXM"]
    assert timing.interconnect_catalog() is timing.interconnect_catalog()
    assert cost.model_names() == list(cost.model_catalog())
    assert serving_fit.load_runs() == json.loads((serving_fit.CATALOG / "vllm_runs.json").read_text())["runs"]
    c1, c2 = timing.load_constants(), timing.load_constants()
    assert c1 == c2 and c1.layer_overhead_s is not c2.layer_overhead_s      # each Constants owns its tables


def test_configs_handed_out_are_the_callers_own():
    """transformers (v5) adds rope_theta into a config's rope_scaling in place: a config taken from
    the catalog must not carry such an edit into the next plan in the process."""
    from multihead import cost
    from multihead.fits.serving_fit import catalog_config
    mine = cost.model_catalog()["Llama-3.1-8B"]["config"]
    mine["rope_scaling"]["rope_theta"] = 1.0
    mine["num_key_value_heads"] = 1
    assert "rope_theta" not in cost.model_catalog()["Llama-3.1-8B"]["config"]["rope_scaling"]
    spec = cost.catalog_model("Llama-3.1-8B")
    assert spec.num_kv_heads == 8 and "rope_theta" not in spec.rope_scaling.raw
    for config in (_config_and_id("Llama-3.1-8B")[0], catalog_config("Qwen/Qwen3-8B"), _config_and_id("Qwen/Qwen3-8B")[0]):
        config["rope_scaling"] = {"edited": True}
        config["num_key_value_heads"] = 1
    assert _config_and_id("Llama-3.1-8B")[0]["rope_scaling"] == spec.rope_scaling.raw
    assert catalog_config("Qwen/Qwen3-8B") == _config_and_id("Qwen/Qwen3-8B")[0] != config


def test_plan_json_imports_neither_torch_nor_numpy_nor_rich():
    """`multihead plan --json` (the web page's and scripts' call) loads no array or table library:
    numpy only fits (fits/serving_fit.py), rich only draws the text tables (planner/rendering.py)."""
    code = ("import contextlib, io, json, sys; from multihead.cli import main; out = io.StringIO()\n"
            "with contextlib.redirect_stdout(out):\n"
            "    rc = main(['plan', 'example-13b-gqa8', '--gpu', 'A100-80GB', '--tokens', '128000', '--json'])\n"
            "print(rc, json.loads(out.getvalue())['tokens'],"
            " sorted(m for m in ('torch', 'numpy', 'rich', 'scipy', 'matplotlib') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "0 128000 []"
