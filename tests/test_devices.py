"""The time model (multihead.cost: device, cpu_profile, attention_time): catalog roofline, measured-profile terms, profile files."""
from __future__ import annotations

import json

import pytest

from multihead.cost.counts import formulas as acc
from multihead.cost.time.attention_time import (attention_prefill_seconds, attention_seconds, decode_attention_seconds,
                                           decode_step_seconds)
from multihead.cost.time.cpu_profile import DecodeCosts, PrefillCosts, backend_for, device_to_profile, load_device, write_profile
from multihead.cost.time.device import DeviceSpec


def measured_spec(**extra) -> DeviceSpec:
    return DeviceSpec(
        name="test cpu", memory_bytes=16e9, bandwidth_bytes_per_s=40e9,
        matmul_flops={"fp32": 100e9, "bf16": 0.3e9}, flops_efficiency=1.0, bandwidth_efficiency=1.0,
        kind="measured", source="unit test",
        prefill={"fp32": PrefillCosts(80e9, 1e-9, 20e-9, 50e-6),
                 "fp32/reference": PrefillCosts(60e9, 2e-9, 0.0, 30e-6, skips_masked=False),
                 "fp32/tiled": PrefillCosts(80e9, 1e-9, 20e-9, 50e-6)},
        decode={"fp32": DecodeCosts(bytes_per_s=10e9, flops_per_s=50e9, overhead_s=40e-6)},
        extra={"date": "2026-01-01T00:00:00+00:00", "spread": {"median": 0.02}, **extra})


def test_catalog_gpu_is_the_plain_roofline():
    h100 = load_device("h100-sxm")                       # case-insensitive
    assert h100.kind == "catalog" and h100.source
    flops = 1e15
    assert attention_seconds(h100, flops, "bf16") == pytest.approx(flops / (989e12 * 0.5))
    # shape terms change nothing for a catalog GPU: it has only the F term
    assert attention_seconds(h100, flops, "bf16", head_dim=128, heads=40, tokens=128000, calls=40) == \
        pytest.approx(flops / (989e12 * 0.5))
    # decode: (KV + W) / (bandwidth * 0.8); decode FLOPs hidden under the memory traffic
    assert decode_step_seconds(h100, 21e9, 26e9, dtype="fp16", flops=1e12, calls=40) == \
        pytest.approx(47e9 / (3.35e12 * 0.8))


def test_running_example_decode_read():
    """figures.md: 21 GB of KV at 2 TB/s effective is ~10.5 ms per token."""
    spec = DeviceSpec("explicit", 80e9, 2e12, {"fp16": 100e12}, 1.0, 1.0, kind="explicit")
    assert decode_step_seconds(spec, 21e9, 0.0) == pytest.approx(10.5e-3)


def test_unknown_gpu_suggests_close_names():
    with pytest.raises(ValueError, match="H100-SXM"):
        load_device("H100-SMX")


def test_prefill_terms_add_up():
    spec = measured_spec()
    H, T, d = 8, 4096, 128
    flops = acc.attention_flops(1, H, T, T, d, causal=True)
    pairs = acc.causal_pairs(T, T)
    c = spec.prefill["fp32"]
    want = c.overhead_s + flops / c.flops_per_s + H * pairs * c.seconds_per_score + H * T * c.seconds_per_row
    assert attention_seconds(spec, flops, "fp32", head_dim=d, rows=H * T) == pytest.approx(want)
    # rows default from heads and tokens; causal inferred from the flops
    assert attention_seconds(spec, flops, "fp32", head_dim=d, heads=H, tokens=T) == pytest.approx(want)


def test_calls_multiply_the_overhead_and_rows():
    spec = measured_spec()
    one = attention_prefill_seconds(spec, n_heads=4, tq=1000, tk=1000, head_dim=64, dtype="fp32")
    three = attention_prefill_seconds(spec, n_heads=4, tq=1000, tk=1000, head_dim=64, dtype="fp32", layers=3)
    assert three == pytest.approx(3 * one)


def test_per_kernel_terms_follow_multihead_auto_choice():
    """With the selector named, the model charges the kernel attention(backend="auto") runs, and a
    kernel that computes masked scores is charged all Tq*Tk of them."""
    from multihead.functional import choose_backend
    spec = measured_spec(backend_selector="multihead.functional.choose_backend")
    small = dict(n_heads=2, tq=256, tk=256, head_dim=64, dtype="fp32")
    assert backend_for(spec, 1, 2, 256, 256, "fp32") == choose_backend(1, 2, 256, 256)
    ref = spec.prefill["fp32/reference"] if choose_backend(1, 2, 256, 256) == "reference" else None
    if ref is not None:
        scores = 2 * 256 * 256                            # all computed, then masked
        want = ref.overhead_s + 4 * 64 * scores / ref.flops_per_s + scores * ref.seconds_per_score
        assert attention_prefill_seconds(spec, **small) == pytest.approx(want)
    # without the selector the dtype's own terms serve every shape
    plain = measured_spec()
    c = plain.prefill["fp32"]
    pairs = acc.causal_pairs(256, 256)
    want = c.overhead_s + 4 * 64 * 2 * pairs / c.flops_per_s + 2 * pairs * c.seconds_per_score + 2 * 256 * c.seconds_per_row
    assert attention_prefill_seconds(plain, **small) == pytest.approx(want)


def test_decode_terms_add_up():
    spec = measured_spec()
    H, Hkv, d, Tk = 32, 8, 128, 65536
    kv = acc.kv_cache_bytes(1, Hkv, d, Tk, 4)
    flops = acc.attention_flops(1, H, 1, Tk, d)
    c = spec.decode["fp32"]
    want = c.overhead_s + kv / c.bytes_per_s + flops / c.flops_per_s
    assert decode_attention_seconds(spec, n_heads=H, n_kv_heads=Hkv, tk=Tk, head_dim=d, dtype="fp32") == pytest.approx(want)
    # weights stream at the measured read bandwidth
    assert decode_step_seconds(spec, kv, 1e9, dtype="fp32", flops=flops) == pytest.approx(want + 1e9 / 40e9)


def test_overlapped_decode_takes_the_longer_term(tmp_path):
    """A kernel whose reads and FMAs overlap is charged max(KV / BW, flops / F), not the sum; the
    flag survives the profile file."""
    spec = measured_spec()
    spec.decode["fp32"] = DecodeCosts(bytes_per_s=10e9, flops_per_s=50e9, overhead_s=40e-6, overlapped=True)
    c = spec.decode["fp32"]
    for H, Hkv in ((32, 8), (64, 2)):                       # read-bound (G=4), compute-bound (G=32)
        kv = acc.kv_cache_bytes(1, Hkv, 128, 65536, 4)
        flops = acc.attention_flops(1, H, 1, 65536, 128)
        want = c.overhead_s + max(kv / c.bytes_per_s, flops / c.flops_per_s)
        got = decode_attention_seconds(spec, n_heads=H, n_kv_heads=Hkv, tk=65536, head_dim=128, dtype="fp32")
        assert got == pytest.approx(want) and got < c.overhead_s + kv / c.bytes_per_s + flops / c.flops_per_s
    assert load_device(str(write_profile(spec, tmp_path / "p.json"))).decode["fp32"].overlapped


def test_decode_row_grouping_terms_round_trip_and_fall_back(tmp_path):
    spec = measured_spec()
    spec.decode["fp32/r4"] = DecodeCosts(bytes_per_s=12e9, flops_per_s=None, overhead_s=40e-6)
    back = load_device(str(write_profile(spec, tmp_path / "p.json")))
    assert back.decode == spec.decode
    kv = acc.kv_cache_bytes(1, 8, 128, 65536, 4)
    # GQA 32/8: 4 rows per KV head -> the r4 terms; MHA (1 row) has none -> the dtype's terms
    assert decode_attention_seconds(back, n_heads=32, n_kv_heads=8, tk=65536, head_dim=128,
                                    dtype="fp32") == pytest.approx(40e-6 + kv / 12e9)
    c = back.decode["fp32"]
    flops = acc.attention_flops(1, 8, 1, 65536, 128)
    assert decode_attention_seconds(back, n_heads=8, n_kv_heads=8, tk=65536, head_dim=128, dtype="fp32") == \
        pytest.approx(c.overhead_s + kv / c.bytes_per_s + flops / c.flops_per_s)


def test_profile_round_trip(tmp_path):
    spec = measured_spec(backend_selector=None, machine={"cpu": "x"})
    path = write_profile(spec, tmp_path / "sub" / "profile.json")
    back = load_device(str(path))
    assert back.kind == "measured" and back.name == spec.name
    assert back.matmul_flops == spec.matmul_flops
    assert back.bandwidth_bytes_per_s == spec.bandwidth_bytes_per_s
    assert back.prefill == spec.prefill and back.decode == spec.decode
    assert back.extra["machine"] == {"cpu": "x"} and back.extra["date"] == spec.extra["date"]
    assert device_to_profile(back) == device_to_profile(spec)
    for kw in (dict(n_heads=8, tq=2048, tk=2048, head_dim=128), dict(n_heads=9, tq=100, tk=100, head_dim=64)):
        assert attention_prefill_seconds(back, dtype="fp32", **kw) == attention_prefill_seconds(spec, dtype="fp32", **kw)


def test_minimal_profile_needs_only_the_roofline_fields(tmp_path):
    p = tmp_path / "min.json"
    p.write_text(json.dumps({"name": "m", "memory_bytes": 1e9, "bandwidth_bytes_per_s": 1e10,
                             "matmul_flops": {"float32": 1e11}}))
    spec = load_device(str(p))
    assert spec.matmul_flops == {"fp32": 1e11} and spec.flops_efficiency == 1.0
    assert attention_seconds(spec, 1e11, "fp32") == pytest.approx(1.0)


@pytest.mark.parametrize("mutate, message", [
    (lambda p: p.pop("name"), "'name'"),
    (lambda p: p.pop("bandwidth_bytes_per_s"), "lacks the field 'bandwidth_bytes_per_s'"),
    (lambda p: p.update(matmul_flops=[1, 2]), "'matmul_flops': expected an object"),
    (lambda p: p.update(matmul_flops={}), "'matmul_flops' is empty"),
    (lambda p: p.update(memory_bytes="lots"), "'memory_bytes': expected a finite number"),
    (lambda p: p.update(bandwidth_bytes_per_s=-1), "expected a positive number"),
    (lambda p: p["attention"]["prefill"]["fp32"].update(seconds_per_score=-1e-9), "seconds_per_score"),
    (lambda p: p["attention"]["prefill"]["fp32"].update(skips_masked="yes"), "expected true or false"),
    (lambda p: p["attention"].update(decode=3), "'decode': expected an object"),
])
def test_schema_errors_are_clear(tmp_path, mutate, message):
    prof = device_to_profile(measured_spec())
    mutate(prof)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(prof))
    with pytest.raises(ValueError, match=message):
        load_device(str(path))


def test_unreadable_profiles(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        load_device(str(tmp_path / "nope.json"))
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_device(str(bad))
    bad.write_text("[1, 2]")
    with pytest.raises(ValueError, match="expected a JSON object"):
        load_device(str(bad))


def test_plan_device_with_a_profile_file(tmp_path, capsys):
    """`multihead plan --device FILE` predicts through the same functions, for one layer and
    --params 0 exactly the devices model of the attention call and decode step."""
    from multihead.cli import main
    path = write_profile(measured_spec(), tmp_path / "p.json")
    argv = ["plan", "--layers", "1", "--params", "0", "--heads", "8", "--kv-heads", "2", "--head-dim", "128",
            "--tokens", "4096", "--weights-dtype", "fp32", "--kv-dtype", "fp32", "--device", str(path),
            "--causal-skip", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    spec = load_device(str(path))
    assert out["attention_prefill_seconds"] == pytest.approx(attention_prefill_seconds(
        spec, n_heads=8, tq=4096, tk=4096, head_dim=128, dtype="fp32", causal=True))
    assert out["decode_seconds_per_token"] == pytest.approx(decode_attention_seconds(
        spec, n_heads=8, n_kv_heads=2, tk=4096, head_dim=128, dtype="fp32"))
    # a catalog name still works the same way
    i = argv.index("--device")
    assert main(argv[:i] + ["--device", "H100-SXM"] + argv[i + 2:]) == 0
    assert json.loads(capsys.readouterr().out)["attention_prefill_seconds"] > 0


def test_one_record_per_gpu_for_the_planner_and_the_time_model():
    """The plan's device and the GPU its time model reads are the same record (issue 27), built by
    the one catalog door from the catalog's rows: datasheet, reported memory, links, matmul ceiling."""
    from multihead import cost, planner
    from multihead.cost.serving.answer import gpu_memory_bytes
    h100 = cost.catalog_gpu("H100")
    assert (h100.name, h100.bandwidth_bytes_per_s, h100.link, h100.link_bandwidth, h100.mamf_share) == \
        ("H100-SXM", 3.35e12, "nvlink4", 450e9, 0.801)
    assert h100.alu_flops == 67e12 and h100.reported_memory_bytes == gpu_memory_bytes("H100")[1]
    p = planner.plan("Llama-3.1-8B", tokens=8192, device="H100-SXM")
    assert p.accounts.setup.gpu is p.accounts.device
    capped = cost.catalog_gpu("A100-80GB@330W", {"base": "A100-80GB", "bandwidth_tbps": 1.7})
    assert (capped.name, capped.bandwidth_bytes_per_s, capped.link, capped.mamf_share) == \
        ("A100-80GB@330W", 1.7e12, "nvlink3", 0.859)


def test_a_gpu_without_fp16_or_fp32_figures_still_has_an_alu_rate():
    """Gaudi3 lists bf16 and fp8 only: the dequantization rate falls back to the 16-bit peak / 16
    (it was 0 there, and a quantized model's plan divided by zero)."""
    from multihead import cost, planner
    gaudi = cost.catalog_gpu("Gaudi3")
    assert gaudi.alu_flops == 1835e12 / 16
    p = planner.plan("gpt-oss-20b", tokens=8192, device="Gaudi3")
    assert p.prefill_seconds > 0


def test_a_catalog_gpu_without_a_reported_memory_row_is_refused_not_zero(monkeypatch):
    """Every catalog GPU has a reported-memory row; one without (a new gpus.json entry whose
    gpu_memory.json row was forgotten) is refused by name instead of serving 0 bytes."""
    from multihead import cost
    from multihead.cost.serving import answer
    from multihead.cost.time import device
    for name in cost.gpu_catalog():
        assert answer.gpu_memory_bytes(name)[1] > 0, name
    monkeypatch.setattr(device, "reported_memory", lambda key: {})
    with pytest.raises(ValueError, match=r"gpu: no reported memory for 'H100-SXM'"):
        answer.gpu_memory_bytes("H100")
