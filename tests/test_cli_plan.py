"""`multihead plan` end to end: the README command, the acceptance flags, JSON, explain, plot, bad input."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from multihead.cli import main

GPU = ["--gpu-memory-gb", "80", "--effective-tflops", "100", "--bandwidth-tbps", "2"]
ACCEPTANCE = ["plan", "--params", "13e9", "--layers", "40", "--heads", "40", "--kv-heads", "8", "--head-dim", "128",
              "--tokens", "128000", *GPU]


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_readme_main_job_prints_the_decision(capsys):
    # the Makefile's `make plan` command
    code, out, _ = run(["plan", "example-13b-gqa8", "--tokens", "128000", "--passes", "3", *GPU], capsys)
    assert code == 0
    assert "Decision: ONE FULL PASS" in out
    assert "163.84 KB" in out and "20.97 GB" in out and "26.00 GB" in out
    assert "134.2 s" in out and "402.7 s" in out and "16.8 s" in out and "10.49 ms" in out
    assert "cross-chunk references" in out


def test_acceptance_flags_json(capsys):
    code, out, _ = run([*ACCEPTANCE, "--json"], capsys)
    assert code == 0
    d = json.loads(out)
    assert d["kv_cache_bytes_per_token"] == 163840
    assert d["kv_cache_bytes"] == pytest.approx(21e9, rel=0.01)
    assert d["score_matrix_bytes_per_layer"] == pytest.approx(1.3e12, rel=0.01)
    assert d["attention_flops"] == pytest.approx(1.3e16, rel=0.04)
    assert d["attention_prefill_seconds"] == pytest.approx(134, abs=0.5)
    assert d["chunked"]["chunks"] == 8 and d["chunked"]["attention_prefill_seconds"] == pytest.approx(17, abs=0.3)
    assert d["decode_kv_read_seconds"] == pytest.approx(0.0105, rel=0.01)
    assert d["weights_bytes"] == pytest.approx(26e9)
    assert d["fits"] is True and d["decision"] == "single_pass" and d["chunks"] == 1
    assert isinstance(d["warnings"], list) and isinstance(d["fallbacks"], list)


def test_three_passes_and_mha_and_small_card(capsys):
    code, out, _ = run([*ACCEPTANCE, "--passes", "3", "--json"], capsys)
    assert json.loads(out)["attention_prefill_seconds_all_passes"] == pytest.approx(400, rel=0.01)
    code, out, _ = run([*ACCEPTANCE, "--kv-heads", "40", "--json"], capsys)
    d = json.loads(out)
    assert code == 0 and d["kv_cache_bytes"] == pytest.approx(105e9, rel=0.01) and d["fits"] is False
    argv = [a if a != "80" else "40" for a in ACCEPTANCE]
    code, out, _ = run([*argv, "--json"], capsys)
    d = json.loads(out)
    assert code == 0 and d["decision"] == "chunked" and d["chunks"] > 1


def test_explain_lists_the_formulas(capsys):
    code, out, _ = run([*ACCEPTANCE, "--explain"], capsys)
    assert code == 0
    assert "2*40*8*128*2 B = 163,840 B" in out
    assert "4*128,000^2*5120*40*1" in out
    assert "20.97 GB / 2 TB/s = 10.49 ms" in out


def test_plot_writes_a_png(tmp_path, capsys):
    import matplotlib.image
    path = tmp_path / "memory.png"
    code, out, _ = run([*ACCEPTANCE, "--plot", str(path), "--json"], capsys)
    assert code == 0 and json.loads(out)["decision"] == "single_pass"
    assert matplotlib.image.imread(path).shape[:2] == (600, 960)      # decoded: 8 x 5 inches at 120 dpi


def test_memory_figure_holds_the_plans_numbers():
    """The --plot figure's data: one curve per H_kv (40, 8, 1) whose gaps are the KV bytes alone
    (2 * 40 layers * H_kv * 128 * 2 B per token), this plan's total at T on the model's curve,
    the GPU's 80 GB as a line and T marked."""
    from multihead import planner
    from multihead.planner.rendering import memory_figure
    p = planner.plan("example-13b-gqa8", tokens=128000, gpu_memory_gb=80, effective_tflops=100, bandwidth_tbps=2)
    ax = memory_figure(p).axes[0]
    curves = {line.get_label(): line for line in ax.get_lines() if len(line.get_xdata()) > 2}
    assert sorted(curves) == ["GQA-8 (H_kv=8, this model)", "MHA (H_kv=40)", "MQA (H_kv=1)"]
    xs = list(curves["MHA (H_kv=40)"].get_xdata())
    assert 128000 in xs and xs == sorted(xs)
    at_t = {name: line.get_ydata()[xs.index(128000)] for name, line in curves.items()}
    assert at_t["GQA-8 (H_kv=8, this model)"] == pytest.approx(p.to_dict()["total_memory_bytes"] / 1e9)
    kv_per_head = 2 * 40 * 128 * 2 * 128000 / 1e9            # GB of K and V per KV head at T
    assert at_t["MHA (H_kv=40)"] - at_t["GQA-8 (H_kv=8, this model)"] == pytest.approx(32 * kv_per_head)
    assert at_t["GQA-8 (H_kv=8, this model)"] - at_t["MQA (H_kv=1)"] == pytest.approx(7 * kv_per_head)
    flat = {line.get_label(): line for line in ax.get_lines() if len(line.get_xdata()) <= 2}
    assert list(flat["GPU memory 80 GB"].get_ydata()) == [80, 80]
    assert list(flat["this plan: T = 128,000"].get_xdata()) == [128000, 128000]
    assert ax.get_xscale() == "log" and "context length" in ax.get_xlabel()


def test_catalog_gpu_and_list(capsys):
    code, out, _ = run(["plan", "Llama-3.1-8B", "--tokens", "131072", "--gpu", "H100-SXM", "--kv-dtype", "fp8",
                        "--json"], capsys)
    d = json.loads(out)
    assert code == 0 and d["kv_dtype"] == "fp8" and d["device"] == "H100-SXM"
    assert d["kv_cache_bytes"] == 2 * 32 * 8 * 128 * 131072 * 1
    code, out, _ = run(["plan", "--list"], capsys)
    assert code == 0 and "Gemma-2-9B" in out and "MI300X" in out


@pytest.mark.parametrize("argv, needle", [
    (["--tokens", "-5"], "argument --tokens: expected an integer in [1, "),
    (["--kv-heads", "7"], "kv_heads: expected a divisor of heads=40"),
    (["--gpus", "3"], "tensor_parallel_size: expected a divisor of heads=40"),
    (["--chunks", "0"], "chunks"),
])
def test_bad_values_exit_2(argv, needle, capsys):
    code, out, err = run([*ACCEPTANCE, *argv], capsys)
    assert code == 2 and needle in err and "Traceback" not in err


def test_bad_names_suggest_close_matches(tmp_path, capsys):
    code, _, err = run(["plan", "Lama-2-7B", "--tokens", "100", *GPU], capsys)
    assert code == 2 and "did you mean" in err and "Llama-2-7B" in err
    code, _, err = run(["plan", "Llama-2-7B", "--tokens", "100", "--gpu", "H100-SMX"], capsys)
    assert code == 2 and "did you mean" in err and "H100-SXM" in err
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({"hidden_size": 4096, "num_hidden_layers": 32}))
    code, _, err = run(["plan", str(cfg), "--tokens", "100", *GPU], capsys)
    assert code == 2 and "num_attention_heads" in err
    code, _, err = run(["plan", "--layers", "40", "--heads", "40", "--tokens", "100", *GPU], capsys)
    assert code == 2 and "--head-dim" in err and "--params" in err
    code, out, _ = run(["plan", "Llama-2-7B", "--json"], capsys)    # T defaults to the training length
    assert code == 0 and json.loads(out)["tokens"] == 4096 and json.loads(out)["device"] == "H100-SXM"
    code, _, err = run(["plan", "--layers", "4", "--heads", "4", "--head-dim", "64", "--params", "1e8"], capsys)
    assert code == 2 and "tokens" in err                      # no training length to default to
    code, _, err = run(["plan", "Llama-2-7B", "--tokens", "100", "--gpu-memory-gb", "80"], capsys)
    assert code == 2 and "--effective-tflops" in err


def test_console_entry_point_runs():
    proc = subprocess.run([sys.executable, "-m", "multihead", *ACCEPTANCE, "--json"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["decision"] == "single_pass"
