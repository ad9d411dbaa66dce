"""Issue 11 (reliability): one test per item, named after it. Crash reproducers run in a
subprocess, so a regression fails its test instead of killing pytest.

Items owned by other modules are tested next to them: 6 and 9 in test_checker.py; 7, 10, 14's
plan parts, 18's plan parts and 19's float99 / --effective-tflops in the planner tests; 11, 13,
16, 17 and 14/18's heads/generate/perplexity parts in the hf / heads / validate tests;
tests/test_cli_table.py holds every command x bad value.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
import torch

import multihead as mh
from multihead.kernels import BACKENDS, fast_native
from conftest import attention_fp64

ROOT = Path(__file__).resolve().parents[1]
NATIVE = fast_native.library() is not None


def run_py(code: str, timeout: float = 600, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter from the repository root (this checkout's package)."""
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, env=full_env,
                          capture_output=True, text=True, timeout=timeout)


def rand(*shape, dtype=torch.float32, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


# 1. The C decode path allocated its buffers with the default dtype/device while C writes fp32.
def test_item01_default_dtype_and_device_decode_no_segfault():
    r = run_py("""
        import torch, multihead as mh
        torch.manual_seed(0)
        for dt in (torch.bfloat16, torch.float16, torch.float64):
            torch.set_default_dtype(dt)
            m = mh.MultiHeadAttention(576, 9, 3)
            x = torch.randn(1, 8, 576)
            y = m(x, is_causal=True)
            m.backend = "reference"
            ref = m(x, is_causal=True)
            tol = 1e-10 if dt == torch.float64 else 3e-2
            assert y.dtype == dt and torch.isfinite(y).all(), dt
            assert (y.double() - ref.double()).abs().max() < tol, (dt, (y - ref).abs().max())
        torch.set_default_dtype(torch.float32)
        q, k, v = torch.randn(1, 9, 1, 64), torch.randn(1, 3, 40, 64), torch.randn(1, 3, 40, 64)
        ref = mh.attention(q, k, v, is_causal=True, backend="reference")
        torch.set_default_device("meta")
        out = mh.attention(q, k, v, is_causal=True, backend="fast_decode")
        m = mh.MultiHeadAttention(576, 9, 3)          # parameters on meta: runs, no crash
        assert m(torch.randn(1, 8, 576), is_causal=True).device.type == "meta"
        torch.set_default_device(None)
        assert out.device.type == "cpu" and (out - ref).abs().max() < 1e-5
        print("ok")
    """)
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr[-2000:]


# 2. fast_prefill's causal limits were created on the default device (null for C: all visible).
def test_item02_fast_prefill_keeps_causal_under_default_device():
    r = run_py("""
        import torch, multihead as mh
        torch.set_num_threads(1)
        q, k, v = (torch.randn(1, 4, 300, 64) for _ in range(3))
        ref = mh.attention(q, k, v, is_causal=True, backend="reference")
        torch.set_default_device("meta")
        out = mh.attention(q, k, v, is_causal=True, backend="fast_prefill")
        torch.set_default_device(None)
        err = (out - ref).abs().max().item()
        assert err < 1e-5, err
        print("ok")
    """)
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr[-2000:]


def _poison_cases():
    for backend in BACKENDS:
        for name in "qkv":
            for value in (float("nan"), float("inf"), float("-inf")):
                for tq in (1, 70):
                    yield backend, name, value, tq


# 3. NaN/Inf in q/k/v must come out as non-finite wherever the float64 reference is non-finite.
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_item03_nan_and_inf_are_never_hidden(dtype):
    hidden = []
    for backend, name, value, tq in _poison_cases():
        t = {"q": rand(1, 4, tq, 64, dtype=dtype, seed=1), "k": rand(1, 2, 200, 64, dtype=dtype, seed=2),
             "v": rand(1, 2, 200, 64, dtype=dtype, seed=3)}
        t[name][0, 1, 0 if name == "q" else 5, 3] = value       # a key every query sees
        for causal in (False, True):
            out = mh.attention(t["q"], t["k"], t["v"], is_causal=causal, backend=backend)
            ref, _ = attention_fp64(t["q"], t["k"], t["v"], is_causal=causal)
            bad = ~torch.isfinite(ref) & torch.isfinite(out.double())
            if bad.any():
                hidden.append((backend, name, value, tq, causal, int(bad.sum())))
            fine = torch.isfinite(ref)
            assert torch.allclose(out.double()[fine], ref[fine], atol=2e-2, rtol=0), (backend, name, value)
    assert not hidden, hidden


# 4. A truncated cached .so killed the process (SIGBUS); a garbage one was never rebuilt.
@pytest.mark.skipif(not NATIVE, reason=f"C kernel unavailable: {fast_native.why_unavailable}")
def test_item04_corrupt_cached_kernel_is_rebuilt(tmp_path):
    # One interpreter walks through every corruption (the module's state is reset between
    # loads); a SIGBUS would end it with a signal and fail the test, not kill pytest. The files
    # are corrupted as a crash between runs would leave them (the process's own mapping of an
    # earlier load is a different inode and stays valid; truncating a mapped file in place
    # would kill any process, which is why builds only ever rename new files into place).
    # The first build runs the real compiler. The five rebuilds that follow run a stand-in for it
    # ($CC, which fast_native honours) that logs its call and writes a copy of that first build to
    # the -o path: what is tested is the cache's detect-remove-rebuild-verify-load, and each
    # corruption must cause exactly one build (a real compile is ~2 s of CPU; five were most of
    # this test's time).
    fake_cc = tmp_path / "fake-cc"
    fake_cc.write_text('#!/bin/sh\necho "$@" >> "$FAKE_CC_LOG"\n'
                       'while [ $# -gt 0 ]; do [ "$1" = -o ] && cp "$FAKE_CC_SO" "$2"; shift; done\n')
    fake_cc.chmod(0o755)
    r = run_py("""
        import os, shutil, torch, multihead as mh
        from pathlib import Path
        from multihead.kernels import fast_native as f

        def load():
            f._lib, f._tried, f.why_unavailable = None, False, None
            assert f.library() is not None, f.why_unavailable
            q, k, v = torch.randn(1, 4, 1, 64), torch.randn(1, 2, 50, 64), torch.randn(1, 2, 50, 64)
            d = mh.attention(q, k, v, backend="fast_decode") - mh.attention(q, k, v, backend="reference")
            assert d.abs().max() < 1e-5

        def builds():
            log = Path(os.environ["FAKE_CC_LOG"])
            return len(log.read_text().splitlines()) if log.exists() else 0

        load()                                        # the real compiler
        native = f._cache_dir()
        (so,) = native.glob("*.so")
        sidecar = so.with_name(so.name + ".sha256")
        shutil.copy(so, os.environ["FAKE_CC_SO"])
        os.environ["CC"] = os.environ["FAKE_CC"]
        def replace(data):      # a new file (inode): the copy this process has mapped stays intact
            Path(str(so) + ".new").write_bytes(data)
            os.replace(str(so) + ".new", so)

        load()
        assert builds() == 0                          # an intact cache is not rebuilt
        for corrupt in (lambda: replace(so.read_bytes()[:4096]), lambda: replace(os.urandom(20000)),
                        lambda: sidecar.unlink(), lambda: sidecar.write_text("0" * 64)):
            n = builds()
            corrupt()
            load()
            assert builds() == n + 1, n
            assert sidecar.read_text() == f._digest(so)
        stale = native / ".tmp-999999999-x"          # a killed build's folder (no such pid)
        stale.mkdir()
        so.unlink()
        load()
        assert builds() == 5 and not stale.exists()
        print("ok")
    """, env={"MULTIHEAD_CACHE": str(tmp_path / "cache"), "FAKE_CC": str(fake_cc),
              "FAKE_CC_LOG": str(tmp_path / "cc.log"), "FAKE_CC_SO": str(tmp_path / "first-build.so")})
    assert r.returncode == 0 and "ok" in r.stdout, (r.returncode, r.stderr[-2000:])


# 5. finfo.min float masks (Hugging Face padding) must give the average, like SDPA, on every backend.
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64])
def test_item05_finfo_min_mask_rows_average_like_sdpa(dtype):
    q, k, v = rand(1, 2, 40, 64, dtype=dtype), rand(1, 2, 40, 64, dtype=dtype, seed=1), rand(1, 2, 40, 64, dtype=dtype, seed=2)
    mask = torch.zeros(1, 1, 40, 40, dtype=dtype)
    mask[..., :20, :] = torch.finfo(dtype).min          # rows 0-19: every key min-masked
    mask[..., 20:, 30:] = torch.finfo(dtype).min         # rows 20-39: keys 30-39 min-masked
    sdpa = torch.nn.functional.scaled_dot_product_attention(q.double(), k.double(), v.double(),
                                                            attn_mask=mask.double())
    for backend in ["auto", *BACKENDS]:
        out = mh.attention(q, k, v, mask, backend=backend).double()
        if dtype != torch.float16:     # fp16's min (-65504) is not absorbed by fp32 scores: exact is softmax(s)
            assert torch.allclose(out[..., :20, :], v.double().mean(2, keepdim=True).expand(1, 2, 20, 64),
                                  atol=2e-2), backend
        assert torch.allclose(out, sdpa, atol=2e-2), backend


# 8. softmax with a tiny temperature was NaN (x / 1e-45 = inf, inf - inf = NaN).
@pytest.mark.parametrize("temperature", [1e-45, 1e-50, 1e-300, 1e-8])
def test_item08_softmax_tiny_temperature_is_never_nan(temperature):
    x = torch.tensor([2.0, 1.0, 0.0])
    assert mh.softmax(x, temperature=temperature).tolist() == [1.0, 0.0, 0.0]
    assert mh.softmax(torch.tensor([2.0, 2.0, 0.0]), temperature=temperature).tolist() == [0.5, 0.5, 0.0]
    ls = mh.log_softmax(x, temperature=temperature)
    assert ls[0] == 0 and not torch.isnan(ls).any()
    lse = mh.logsumexp(x, temperature=temperature)
    assert torch.isclose(lse.double(), torch.tensor(2.0 / temperature, dtype=torch.float64), rtol=1e-6) \
        or (lse == float("inf") and 2.0 / temperature > 3.4e38)
    keep = torch.tensor([False, True, True])
    assert mh.softmax(torch.tensor([1000.0, 1.0, 0.0]), temperature=temperature, mask=keep).tolist() == [0, 1, 0]
    drop = torch.tensor([float("-inf"), 0.0, 0.0])
    assert mh.softmax(torch.tensor([1000.0, 1.0, 0.0]), temperature=temperature, mask=drop).tolist() == [0, 1, 0]
    for dt in (torch.float16, torch.bfloat16, torch.float64):
        assert not torch.isnan(mh.softmax(x.to(dt), temperature=temperature)).any()


def test_item08_softmax_moderate_temperature_matches_torch():
    x = rand(4, 33, dtype=torch.float64)
    for t in (0.01, 0.3, 7.0):
        assert torch.allclose(mh.softmax(x, temperature=t), torch.softmax(x / t, -1))
        assert torch.allclose(mh.logsumexp(x, temperature=t), torch.logsumexp(x / t, -1))


# 12. A child forked after threaded work hung on its next call.
def test_item12_fork_after_threads_does_not_hang():
    # The sizes only need to put each call on its threads: 4x the smallest call that fast_decode
    # (SERIAL_ELEMENTS) and fast_prefill (PARALLEL_MIN_PAIRS) hand to worker threads, asserted here
    # so that the test cannot quietly turn single-threaded (8192 keys, 16x, took 3x the CPU).
    r = run_py("""
        import os, torch, multihead as mh
        from multihead.kernels import fast_decode, fast_prefill
        torch.set_num_threads(2)
        q, k, v = torch.randn(1, 8, 1, 64), torch.randn(1, 2, 2048, 64), torch.randn(1, 2, 2048, 64)
        qp = torch.randn(1, 8, 1024, 64)
        assert 2 * 2048 * 2 * 64 >= 4 * fast_decode.SERIAL_ELEMENTS
        assert 8 * 1024 * 2048 >= 4 * fast_prefill.PARALLEL_MIN_PAIRS
        a = torch.randn(512, 512)
        def work():
            mh.attention(q, k, v, backend="fast_decode")
            mh.attention(qp, k, v, backend="fast_prefill")
            (a @ a).exp().sum()
        work()
        pid = os.fork()
        if pid == 0:
            work()
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        assert status == 0, status
        work()
        assert torch.get_num_threads() == 2
        print("ok")
    """, timeout=300)
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr[-2000:]


def test_item12_overlapping_fast_prefill_calls_restore_thread_count():
    before = torch.get_num_threads()
    q, k, v = rand(1, 4, 1024, 64), rand(1, 4, 1024, 64, seed=1), rand(1, 4, 1024, 64, seed=2)
    ref = mh.attention(q, k, v, is_causal=True, backend="reference")
    errors = []

    def call():
        for _ in range(3):
            errors.append((mh.attention(q, k, v, is_causal=True, backend="fast_prefill") - ref).abs().max().item())

    threads = [threading.Thread(target=call) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert torch.get_num_threads() == before
    assert max(errors) < 1e-5


# 14 (demo part). `demo --tokens 1e9` died in the allocator.
def test_item14_demo_tokens_out_of_range_refused(capsys):
    from multihead.cli import main
    for bad in ("1e9", "0", "-3", "nan", "inf", "", "x"):
        assert main(["demo", "--tokens", bad]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "argument --tokens" in err and "Traceback" not in err, err


# 15. MULTIHEAD_MAX_SCORE_BYTES: parsed in one place, errors name it; explicit decode is guarded.
@pytest.mark.parametrize("value, expect", [("", 2 * 1024**3), ("1e9", 10**9), ("123", 123), ("2_000", 2000),
                                           ("abc", None), ("-5", None), ("1.5", None), ("inf", None)])
def test_item15_max_score_bytes_env_parsing(value, expect, monkeypatch):
    from multihead._env import env_int
    monkeypatch.setenv("MULTIHEAD_MAX_SCORE_BYTES", value)
    if expect is None:
        with pytest.raises(ValueError, match=r"^MULTIHEAD_MAX_SCORE_BYTES: expected a whole number >= 0"):
            env_int("MULTIHEAD_MAX_SCORE_BYTES", 2 * 1024**3)
    else:
        assert env_int("MULTIHEAD_MAX_SCORE_BYTES", 2 * 1024**3) == expect


def test_item15_max_score_bytes_env_read_by_functional():
    # One fresh interpreter imports multihead.functional twice: with a bad value the import fails
    # (and leaves no module behind), then, with a good one, the module is executed again and reads
    # it. (A second interpreter for the bad value cost another ~1.4 s of `import torch`.)
    r = run_py("""
        import os, sys
        try:
            import multihead.functional
        except ValueError as err:
            print(f"ValueError: {err}")
        assert "multihead.functional" not in sys.modules
        os.environ["MULTIHEAD_MAX_SCORE_BYTES"] = "1e9"
        import multihead.functional as f
        print(f.max_score_bytes())
    """, env={"MULTIHEAD_MAX_SCORE_BYTES": "-5"})
    assert r.returncode == 0, r.stderr[-2000:]
    first, last = r.stdout.strip().splitlines()
    assert first.startswith("ValueError: MULTIHEAD_MAX_SCORE_BYTES:") and last == "1000000000", r.stdout


def test_item15_explicit_decode_backend_has_memory_guard():
    from multihead.functional import score_limit
    q, k = torch.empty(1, 32, 16, 128), torch.empty(1, 8, 10**6, 128)
    with score_limit(10**9):
        for backend in ("decode", "reference"):
            with pytest.raises(ValueError, match=f"backend: '{backend}' would materialize"):
                mh.attention(q, k, k, backend=backend)


# 19 (KVCache / MultiHeadAttention parts).
@pytest.mark.parametrize("dtype", [torch.int64, torch.bool, torch.complex64])
def test_item19_kvcache_update_refuses_non_float(dtype):
    cache = mh.KVCache(batch=1, n_kv_heads=2, max_tokens=8, head_dim=4)
    good = torch.zeros(1, 2, 1, 4)
    bad = torch.zeros(1, 2, 1, 4, dtype=dtype)
    with pytest.raises(ValueError, match="k_new: expected a floating-point tensor"):
        cache.update(0, bad, good)
    with pytest.raises(ValueError, match="v_new: expected a floating-point tensor"):
        cache.update(0, good, bad)
    assert cache.length(0) == 0


def test_item19_bogus_backend_refused_at_construction():
    with pytest.raises(ValueError, match="backend: expected 'auto' or one of"):
        mh.MultiHeadAttention(64, 4, backend="bogus")
    assert mh.MultiHeadAttention(64, 4, backend="tiled").backend == "tiled"


# 20. The cache folder: one resolver; "~" expanded; XDG honoured; killed builds cleaned.
def test_item20_cache_dir_resolution(monkeypatch, tmp_path):
    from multihead import paths
    from multihead.measure import calibrate
    from multihead.kernels import fast_native as fn
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MULTIHEAD_CACHE", "~/x")
    assert paths.cache_dir() == tmp_path / "home" / "x"
    monkeypatch.setenv("MULTIHEAD_CACHE", "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert paths.cache_dir("native") == tmp_path / "xdg" / "multihead" / "native"
    assert fn._cache_dir() == paths.cache_dir("native")
    assert calibrate.default_profile_path() == paths.cache_dir("profile.json")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/dir")       # the XDG spec: ignore it
    assert paths.cache_dir() == tmp_path / "home" / ".cache" / "multihead"


def test_item20_atomic_build_leaves_nothing_on_failure(tmp_path):
    from multihead import paths
    dest = tmp_path / "out.bin"
    with pytest.raises(RuntimeError):
        with paths.atomic_build(dest) as tmp:
            tmp.write_bytes(b"half")
            raise RuntimeError("killed")
    assert list(tmp_path.iterdir()) == []
    with paths.atomic_build(dest) as tmp:
        tmp.write_bytes(b"whole")
    assert dest.read_bytes() == b"whole" and [p.name for p in tmp_path.iterdir()] == ["out.bin"]


# 21. torch.compile(mh.attention, fullgraph=True): the fast paths are torch.library custom ops.
# In this process (a graph break or a failed trace raises; nothing here can crash it): a child
# interpreter cost ~1.5 s of `import torch` on top of the ~1.9 s the compiles take.
@pytest.mark.slow
def test_item21_torch_compile_fullgraph():
    rng = torch.Generator().manual_seed(21)
    k, v = torch.randn(1, 2, 300, 64, generator=rng), torch.randn(1, 2, 300, 64, generator=rng)
    try:
        with torch._dynamo.config.patch(cache_size_limit=8):
            f = torch.compile(mh.attention, fullgraph=True, backend="eager")
            for tq, backend in ((1, "auto"), (1, "fast_decode"), (300, "fast_prefill")):
                q = torch.randn(1, 8, tq, 64, generator=rng)
                out = f(q, k, v, is_causal=True, backend=backend)
                ref = mh.attention(q, k, v, is_causal=True, backend="reference")
                assert (out - ref).abs().max() < 1e-5, backend
    finally:
        torch._dynamo.reset()             # no compiled code or guards left for later tests


def test_item21_custom_ops_are_registered_with_fake_kernels():
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        q, k, v = torch.empty(2, 8, 5, 64), torch.empty(2, 2, 9, 64), torch.empty(2, 2, 9, 32, dtype=torch.float32)
        for op in (torch.ops.multihead.fast_decode, torch.ops.multihead.fast_prefill):
            out, lse = op(q, k, v, None, True, 0.125)
            assert out.shape == (2, 8, 5, 32) and lse.shape == (2, 8, 5)


# ---------------------------------------------------------------------------------------------
# Issue 26 (reliability round 3): one test per item, named test_r3_itemNN_*. The web items
# (1-4, 10, 11, 16) are tested in tests/test_web_api.py.
# ---------------------------------------------------------------------------------------------
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from attention_oracle import oracle  # noqa: E402
from multihead.kernels import paged  # noqa: E402

PAGED = settings(max_examples=150, deadline=None, derandomize=True,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _paged_reference(q, kp, vp, table, seqlens, leftpad, causal, scale, window=(-1, -1), softcap=0.0):
    """The float64 gather reference: each sequence's keys copied out of the pool by its own
    table row (token t is in page table[b, t // P] at slot t % P), then plain attention."""
    P = kp.shape[2]
    outs, lses = [], []
    for b in range(q.shape[0]):
        t = torch.arange(int(leftpad[b]), int(seqlens[b]))
        ids = table[b].long()[t // P]
        kb = kp.double()[ids, :, t % P].transpose(0, 1).unsqueeze(0)       # (1, H_kv, n, d)
        vb = vp.double()[ids, :, t % P].transpose(0, 1).unsqueeze(0)
        if kb.shape[2] == 0:
            outs.append(torch.zeros(1, q.shape[1], q.shape[2], vp.shape[-1], dtype=torch.float64))
            lses.append(torch.full((1, q.shape[1], q.shape[2]), float("-inf"), dtype=torch.float64))
            continue
        o, lse = oracle(q[b:b + 1].double(), kb, vb, None, causal, scale, window, softcap)
        outs.append(o)
        lses.append(lse)
    return torch.cat(outs), torch.cat(lses)


@st.composite
def _paged_problems(draw):
    """Any block table the API accepts: ids anywhere in the pool, shared between sequences,
    repeated within a row, identical rows, permuted; lengths and left padding per sequence."""
    B = draw(st.integers(1, 4))
    H_kv, G = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    P = draw(st.sampled_from([1, 2, 3, 4, 8]))
    n_pages = draw(st.integers(1, 10))
    max_pages = draw(st.integers(1, 6))
    shape = draw(st.sampled_from(["random", "shared_prefix", "identical", "repeated", "permuted"]))
    ids = st.integers(0, n_pages - 1)
    if shape == "identical":
        row = draw(st.lists(ids, min_size=max_pages, max_size=max_pages))
        table = [row] * B
    elif shape == "shared_prefix":
        k = draw(st.integers(0, max_pages))
        prefix = draw(st.lists(ids, min_size=k, max_size=k))
        table = [prefix + draw(st.lists(ids, min_size=max_pages - k, max_size=max_pages - k)) for _ in range(B)]
    elif shape == "repeated":
        page = draw(ids)
        table = [[page] * max_pages for _ in range(B)]
    elif shape == "permuted":
        perm = draw(st.permutations(range(n_pages)))
        table = [[perm[(b * max_pages + i) % n_pages] for i in range(max_pages)] for b in range(B)]
    else:
        table = [draw(st.lists(ids, min_size=max_pages, max_size=max_pages)) for _ in range(B)]
    T_max = max_pages * P
    seqlens = [draw(st.integers(0, T_max)) for _ in range(B)]
    leftpad = [draw(st.integers(0, n)) for n in seqlens]
    return dict(B=B, H_kv=H_kv, G=G, P=P, n_pages=n_pages, table=table, seqlens=seqlens, leftpad=leftpad,
                Tq=draw(st.sampled_from([1, 1, 2, 3, 5])), causal=draw(st.booleans()),
                dtype=draw(st.sampled_from([torch.float32, torch.float64])),
                backend=draw(st.sampled_from(["auto", *BACKENDS])), d=draw(st.sampled_from([4, 8, 16])),
                seed=draw(st.integers(0, 2**16)), min_strided=draw(st.sampled_from([0, 8, 10**9])),
                mods=draw(st.sampled_from([{}, {}, {}, dict(softcap=5.0), dict(window_size=(2, 0))])))


# 5. Paged attention kept one owner per page id: sequences sharing a page (prefix caching), identical
# tables and a page repeated within a table silently lost the other uses' keys (errors of 0.35-1.01).
@PAGED
@given(_paged_problems())
def test_r3_item05_paged_attention_any_block_table(p):
    g = torch.Generator().manual_seed(p["seed"])
    B, H_kv, H, d, P = p["B"], p["H_kv"], p["H_kv"] * p["G"], p["d"], p["P"]
    kp = torch.randn(p["n_pages"], H_kv, P, d, generator=g).to(p["dtype"])
    vp = torch.randn(p["n_pages"], H_kv, P, d + 1, generator=g).to(p["dtype"])
    q = torch.randn(B, H, p["Tq"], d, generator=g).to(p["dtype"])
    table = torch.tensor(p["table"], dtype=torch.int32)
    seqlens = torch.tensor(p["seqlens"], dtype=torch.int32)
    leftpad = torch.tensor(p["leftpad"], dtype=torch.int32)
    old, paged.MIN_STRIDED = paged.MIN_STRIDED, p["min_strided"]     # every level strided / as shipped / gathered
    try:
        out, lse = mh.attention_with_kvcache(q, kp, vp, cache_seqlens=seqlens, cache_leftpad=leftpad,
                                             block_table=table, is_causal=p["causal"], return_lse=True,
                                             backend=p["backend"], **p["mods"])
    finally:
        paged.MIN_STRIDED = old
    ref, ref_lse = _paged_reference(q, kp, vp, table, seqlens, leftpad, p["causal"], d ** -0.5,
                                    p["mods"].get("window_size", (-1, -1)), p["mods"].get("softcap", 0.0))
    tol = 1e-10 if p["dtype"] == torch.float64 else 2e-5
    assert (out.double() - ref).abs().max() <= tol, (out.double() - ref).abs().max()
    finite = torch.isfinite(ref_lse)
    assert torch.equal(torch.isfinite(lse), finite)
    if finite.any():
        assert (lse.double()[finite] - ref_lse[finite]).abs().max() <= 10 * tol
    assert lse.dtype == (torch.float64 if p["dtype"] == torch.float64 else torch.float32)


@pytest.mark.parametrize("table", [[[0, 1, 2, 3], [0, 1, 4, 5]], [[0, 1, 2, 3], [0, 1, 2, 3]],
                                   [[3, 3, 4, 5], [0, 1, 2, 6]]], ids=["shared", "identical", "repeated"])
@pytest.mark.parametrize("tq,causal", [(1, False), (3, True)])
@pytest.mark.parametrize("backend", ["auto", *BACKENDS])
def test_r3_item05_paged_attention_issue_tables(table, tq, causal, backend):
    """The issue's own reproducers: seqlens [60, 50], pages of 16."""
    g = torch.Generator().manual_seed(5)
    kp, vp = torch.randn(2, 8, 2, 16, 32, generator=g)
    q = torch.randn(2, 4, tq, 32, generator=g)
    table, seqlens = torch.tensor(table, dtype=torch.int32), torch.tensor([60, 50], dtype=torch.int32)
    out = mh.attention_with_kvcache(q, kp, vp, cache_seqlens=seqlens, block_table=table, is_causal=causal,
                                    backend=backend)
    ref, _ = _paged_reference(q, kp, vp, table, seqlens, [0, 0], causal, 32 ** -0.5)
    assert (out.double() - ref).abs().max() < 2e-5


# 18 (varlen part). An all-empty float64 varlen call returned its lse in float32.
def test_r3_item18_empty_fp64_varlen_lse_is_fp64():
    q = torch.zeros(0, 4, 8, dtype=torch.float64)
    k = torch.zeros(5, 2, 8, dtype=torch.float64)
    cu_q, cu_k = torch.tensor([0, 0], dtype=torch.int32), torch.tensor([0, 5], dtype=torch.int32)
    out, lse = mh.attention_varlen(q, k, k.clone(), cu_q, cu_k, return_lse=True)
    assert out.dtype == torch.float64 and lse.dtype == torch.float64 and tuple(lse.shape) == (4, 0)
    out, lse = mh.attention_varlen(q.float(), k.float(), k.float(), cu_q, cu_k, return_lse=True)
    assert lse.dtype == torch.float32


# 18 (library part). Index tensors on the meta device raised NotImplementedError / RuntimeError;
# KVCache(max_tokens=2**40) raised the allocator's raw RuntimeError (or built a 2**36-entry free list).
@pytest.mark.parametrize("where", ["cu_seqlens_q", "cu_seqlens_k", "block_table", "cache_seqlens", "cache_leftpad"])
def test_r3_item18_meta_index_tensors_are_named_value_errors(where):
    meta = dict(device="meta")
    if where.startswith("cu_"):
        q, k = torch.randn(5, 4, 8), torch.randn(7, 2, 8)
        cu = {"cu_seqlens_q": torch.tensor([0, 5]), "cu_seqlens_k": torch.tensor([0, 7])}
        cu[where] = cu[where].to(**meta)
        call = lambda: mh.attention_varlen(q, k, k, cu["cu_seqlens_q"], cu["cu_seqlens_k"])  # noqa: E731
    else:
        args = dict(cache_seqlens=torch.tensor([3]), block_table=torch.zeros(1, 2, dtype=torch.int32),
                    cache_leftpad=torch.tensor([0]))
        args[where] = args[where].to(**meta)
        kp = torch.randn(3, 2, 4, 8)
        call = lambda: mh.attention_with_kvcache(torch.randn(1, 4, 1, 8), kp, kp.clone(), **args)  # noqa: E731
    with pytest.raises(ValueError, match=rf"^{where}: a meta tensor has no values"):
        call()


@pytest.mark.parametrize("kw", [dict(max_tokens=2**40), dict(max_tokens=2**40, page_size=16),
                                dict(max_tokens=2**70)])
def test_r3_item18_kvcache_too_large_is_refused_before_allocation(kw):
    with pytest.raises(ValueError, match=r"^max_tokens: K and V need [\d,.]+ GiB .* more than the"):
        mh.KVCache(1, 8, head_dim=128, **kw)
    assert mh.KVCache(1, 2, head_dim=8, max_tokens=2**40, device="meta").k.device.type == "meta"


# Items 6, 7, 8, 14, 15 and 18's config part: ONE reader for config files (multihead.cost.spec.config_file)
# used by plan, serving and the page's uploads; every sizing field checked before per-layer work.
LLAMA = {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
         "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256,
         "max_position_embeddings": 131072, "torch_dtype": "bfloat16"}
PLAN = ["--tokens", "1000", "--gpu", "H100-SXM"]
SERVING = ["--gpu", "H100-SXM", "--max-model-len", "4096"]


def _cli(argv, capsys):
    from multihead.cli import main
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _cli_in_child(tmp_path, calls: list[list[str]], timeout: float = 60) -> list[list]:
    """[rc, stderr] of ``multihead.cli.main(argv)`` for each argv, in ONE child process with 3 GiB of
    address space and a time limit: a call that blocks or builds a 10**9-entry list fails its test
    instead of hanging pytest or the machine."""
    code = f"""
        import contextlib, io, json, resource, sys
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
        from multihead.cli import main
        results = []
        for argv in {calls!r}:
            err = io.StringIO()
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
                try:
                    rc = main(argv)
                except BaseException as e:
                    rc, _ = 1, err.write(f"{{type(e).__name__}}: {{e}}")
            results.append([rc, err.getvalue()])
        print(json.dumps(results))
    """
    full_env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=tmp_path, env=full_env,
                       capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, r.stderr[-2000:]
    import json
    return json.loads(r.stdout.strip().splitlines()[-1])


def _one_line_exit_2(rc, err, *needles):
    assert rc == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, (rc, err[-1500:])
    for needle in needles:
        assert needle in err, (needle, err)


# 7. A model path naming a FIFO hung plan/serving for ever; /dev/zero was read without bound.
def test_r3_item07_fifo_and_devices_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "folder").mkdir()
    os.mkfifo(tmp_path / "folder" / "config.json")           # a model folder whose config.json is a FIFO
    calls = [[cmd, path, *args] for path in ("fifo", "/dev/zero", "folder") for cmd, args in
             (("plan", PLAN), ("serving", SERVING))]
    for (rc, err), argv in zip(_cli_in_child(tmp_path, calls, timeout=60), calls):
        kind = "a character device" if argv[1] == "/dev/zero" else "a FIFO"
        _one_line_exit_2(rc, err, "is not a regular file", kind)


def test_r3_item07_reader_refuses_special_files_and_caps_size(tmp_path):
    from multihead.cost.spec.config_file import MAX_CONFIG_BYTES, read_config_file
    os.mkfifo(tmp_path / "fifo")
    for path, needle in ((tmp_path / "fifo", "a FIFO"), ("/dev/zero", "a character device"),
                         (tmp_path, "does not exist"), (tmp_path / "nope.json", "does not exist")):
        with pytest.raises(ValueError, match=f"^model: .*{needle}"):
            read_config_file(path)
    big = tmp_path / "big.json"
    big.write_text('{"a": "' + "x" * MAX_CONFIG_BYTES + '"}')
    with pytest.raises(ValueError, match=r"big.json is [\d,]+ bytes, more than the"):
        read_config_file(big)


# 8. num_hidden_layers 1e9 in gemma2 (sliding_window), qwen3_moe and qwen2 (use_sliding_window)
# built the per-layer lists before the 100,000 bound (a hang with memory growing).
@pytest.mark.parametrize("family", [
    dict(model_type="gemma2", sliding_window=4096),
    dict(model_type="qwen3_moe", num_experts=8, num_experts_per_tok=2, moe_intermediate_size=768),
    dict(model_type="qwen2", use_sliding_window=True, sliding_window=4096),
    dict(model_type="qwen2_moe", num_experts=8, num_experts_per_tok=2, moe_intermediate_size=768),
    dict(model_type="deepseek_v3", n_routed_experts=8, num_experts_per_tok=2, moe_intermediate_size=768,
         kv_lora_rank=512, qk_rope_head_dim=64, qk_nope_head_dim=128, v_head_dim=128),
    dict(model_type="llama4_text", num_local_experts=8, num_experts_per_tok=1, attention_chunk_size=8192)],
    ids=lambda f: f["model_type"])
def test_r3_item08_huge_layer_counts_refused_before_per_layer_work(tmp_path, family):
    import json
    for layers in (10**9, 1e9):
        (tmp_path / f"{layers}.json").write_text(json.dumps({**LLAMA, **family, "num_hidden_layers": layers}))
    calls = [[cmd, f"{layers}.json", *args] for layers in (10**9, 1e9) for cmd, args in
             (("plan", PLAN), ("serving", SERVING))]
    for rc, err in _cli_in_child(tmp_path, calls, timeout=60):
        _one_line_exit_2(rc, err, ".json: num_hidden_layers: expected an integer in 1..100,000, got 1000000000")


# 14. serving on a config that is a JSON list/string/null, or whose text_config is not an object:
# AttributeError tracebacks (plan refused them).
@pytest.mark.parametrize("content, needle", [
    ("[1, 2]", "expected a JSON object with HF config fields, got a list"),
    ('"llama"', "got a string"), ("null", "got null"), ("3", "got a number"),
    ('{"model_type": "gemma3", "text_config": 5}', "text_config: expected an object"),
    ('{"model_type": "gemma3", "text_config": [1]}', "text_config: expected an object"),
    ('{"model_type": "llava", "text_config": {}, "vision_config": "x"}', "vision_config: expected an object"),
])
@pytest.mark.parametrize("cmd", ["plan", "serving"])
def test_r3_item14_config_structure_refused_by_name(tmp_path, capsys, content, needle, cmd):
    path = tmp_path / "cfg.json"
    path.write_text(content)
    rc, _, err = _cli([cmd, str(path), *(PLAN if cmd == "plan" else SERVING)], capsys)
    _one_line_exit_2(rc, err, "cfg.json", needle)


# 15. A config nested 50,000 deep: RecursionError traceback (plan, serving), 500 on the page.
@pytest.mark.parametrize("content", ["[" * 50_000 + "]" * 50_000, '{"a":' * 50_000 + "1" + "}" * 50_000,
                                     '{"text_config": ' + "[" * 65 + "]" * 65 + "}"])
@pytest.mark.parametrize("cmd", ["plan", "serving"])
def test_r3_item15_deep_nesting_refused_by_name(tmp_path, capsys, content, cmd):
    path = tmp_path / "deep.json"
    path.write_text(content)
    rc, _, err = _cli([cmd, str(path), *(PLAN if cmd == "plan" else SERVING)], capsys)
    _one_line_exit_2(rc, err, "deep.json nests", "levels deep, more than the 64")


def test_r3_item15_content_reader_is_the_file_reader(tmp_path):
    """The page's uploads go through parse_config_text, the function read_config_file ends in."""
    from multihead.cost.spec.config_file import parse_config_text, read_config_file
    for text in ("[" * 100 + "]" * 100, "[1]", '{"text_config": 5}', '{"hidden_size": NaN}',
                 '{"hidden_size": 1' + "0" * 5000 + "}", LLAMA_TEXT_BAD):
        (tmp_path / "c.json").write_text(text)
        with pytest.raises(ValueError) as from_file:
            read_config_file(tmp_path / "c.json")
        with pytest.raises(ValueError) as from_text:
            parse_config_text(text, str(tmp_path / "c.json"))
        assert str(from_file.value) == str(from_text.value)
    assert parse_config_text(str.encode(__import__("json").dumps(LLAMA)), "x") == LLAMA


LLAMA_TEXT_BAD = '{"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, ' \
                 '"quantization_config": {"quant_method": "gptq", "bits": 0}}'


# 6. Garbage quantization and sizing fields were accepted (GPTQ bits 0 planned an 8B Llama at 2.09 GiB).
@pytest.mark.parametrize("extra, needle", [
    ({"quantization_config": {"quant_method": "gptq", "bits": 0, "group_size": 128}},
     "quantization_config.bits: expected one of 2, 3, 4, 8 bits, got 0"),
    ({"quantization_config": {"quant_method": "gptq", "bits": 1000}}, "quantization_config.bits: expected one of"),
    ({"quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 0}},
     "quantization_config.group_size: expected -1 (per channel) or a positive integer, got 0"),
    ({"quantization_config": {"quant_method": "gptq", "bits": True}}, "quantization_config.bits"),
    ({"quantization_config": {"quant_method": "awq", "bits": 4, "group_size": -5}}, "quantization_config.group_size"),
    ({"quantization_config": {"quant_method": "fp8", "weight_block_size": "x"}},
     "quantization_config.weight_block_size: expected a pair of positive integers"),
    ({"quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 0]}}, "weight_block_size"),
    ({"quantization_config": {"quant_method": "bitsandbytes", "load_in_4bit": "maybe"}},
     "quantization_config.load_in_4bit: expected true or false, got 'maybe'"),
    ({"quantization_config": {"quant_method": "bitsandbytes"}}, "exactly one of load_in_4bit / load_in_8bit"),
    ({"quantization_config": {"quant_method": "bitsandbytes", "load_in_4bit": True,
                              "bnb_4bit_quant_type": "int3"}}, "bnb_4bit_quant_type"),
    ({"quantization_config": {"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {
        "num_bits": 0, "type": "int", "strategy": "channel"}}}}}, "weights.num_bits: expected one of"),
    ({"quantization_config": {"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {
        "num_bits": 4, "type": "int", "strategy": "group", "group_size": 0}}}}}, "weights.group_size"),
    ({"model_type": "qwen3_moe", "num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 768,
      "decoder_sparse_step": -1}, "decoder_sparse_step: expected an integer in 1..100,000, got -1"),
    ({"model_type": "qwen3_moe", "num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 768,
      "mlp_only_layers": "all"}, "mlp_only_layers: expected a list of layer indices, got 'all'"),
    ({"model_type": "qwen3_moe", "num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 768,
      "mlp_only_layers": [0, 32]}, "mlp_only_layers: layer 32 is outside 0..31"),
    ({"rope_scaling": {"rope_type": "zzz", "factor": 2.0}}, "rope_scaling.rope_type: 'zzz' is not a rope type"),
    ({"model_type": "qwen2", "use_sliding_window": "yes"}, "use_sliding_window: expected true or false"),
    ({"sliding_window": 0}, "sliding_window: expected an integer in 1.."),
    ({"num_key_value_heads": 8.0}, "num_key_value_heads: expected an integer"),
])
@pytest.mark.parametrize("cmd", ["plan", "serving"])
def test_r3_item06_sizing_fields_validated_by_name(tmp_path, capsys, extra, needle, cmd):
    import json
    path = tmp_path / "q.json"
    path.write_text(json.dumps({**LLAMA, **extra}))
    rc, _, err = _cli([cmd, str(path), *(PLAN if cmd == "plan" else SERVING)], capsys)
    _one_line_exit_2(rc, err, "q.json: ", needle)


def test_r3_item06_good_quantization_still_read():
    from multihead.cost.spec.quantization import from_config
    assert from_config({"quant_method": "gptq", "bits": 3, "group_size": -1}).group_size is None
    assert from_config({"quant_method": "fp8", "weight_block_size": [128, 128]}).group_size == 16384
    assert from_config({"quant_method": "bitsandbytes", "load_in_8bit": True, "load_in_4bit": False}).bits == 8


# 18 (config part). A 5,001-digit integer's message named no file or field.
@pytest.mark.parametrize("cmd", ["plan", "serving"])
def test_r3_item18_huge_integer_names_file_and_field(tmp_path, capsys, cmd):
    path = tmp_path / "big.json"
    path.write_text('{"model_type": "llama", "text_config": {"hidden_size": ' + "9" * 5001 + "}}")
    rc, _, err = _cli([cmd, str(path), *(PLAN if cmd == "plan" else SERVING)], capsys)
    _one_line_exit_2(rc, err, "big.json", "'text_config.hidden_size' is an integer of 5,001 digits")


# 9. `multihead check --timeout T` took 36 s on a target holding the GIL (a 30 s grace on top), a
# target that forked a helper and exited was reported as `timeout` after 36-43 s (the helper held
# the event pipe open), and a target whose import hangs waited a fixed 120 s.
def _check_cli(target: str, timeout: float) -> tuple[int, dict | str, float]:
    """(exit code, the --json report or stderr, wall seconds) of `python -m multihead check`."""
    import json
    import time
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "multihead", "check", target, "--timeout", str(timeout), "--json"],
                       cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                       timeout=200)
    wall = time.monotonic() - t0
    return r.returncode, json.loads(r.stdout) if r.returncode == 1 else r.stderr, wall


def test_r3_item09_check_timeout_kills_a_target_holding_the_gil():
    code, report, wall = _check_cli("tests/hostile_targets.py:holds_the_gil_on_long_keys", 3)
    assert code == 1 and report["causes"] == ["timeout"], report
    finding = next(f for f in report["findings"] if f["check"] == "timeout")
    assert "probe long_keys did not finish within 3 s" in finding["evidence"]
    # the parent killed it GRACE_S (1 s) after --timeout from the probe's start; the upper bound
    # leaves room for a loaded machine's scheduling and still fails on the old 30 s grace
    assert 3 <= finding["metrics"]["killed_after_s"] <= 20, finding
    assert wall < 60, wall             # a bound on runaway waiting (36 s of grace before), not a timing claim


def test_r3_item09_check_reports_the_exit_of_a_target_that_forks_a_helper():
    code, report, wall = _check_cli("tests/hostile_targets.py:forks_a_helper_and_exits", 30)
    assert code == 1 and report["causes"] == ["exit"], report
    finding = next(f for f in report["findings"] if f["check"] == "exit")
    assert "exit status 3" in finding["evidence"] and "left a process running (killed)" in finding["evidence"]
    assert wall < 30, wall             # reported at the exit, not after the 30 s --timeout


def test_r3_item09_check_bounds_a_hanging_import_by_timeout():
    code, err, wall = _check_cli("tests/hostile_import_hangs.py:attention", 2)
    assert code == 2 and "importing tests/hostile_import_hangs.py:attention did not finish within 2 s" in err, err
    assert "Traceback" not in err and wall < 60, wall      # was a fixed 120 s


# 18 (check part). A target returning [1, 2, 3] was said to have "returned int".
def test_r3_item18_check_names_a_returned_list():
    from multihead.checker.adapters import CheckError
    from multihead.checker.check import check_attention
    import hostile_targets
    with pytest.raises((CheckError, ValueError), match=r"returned a list whose first item is int, expected a tensor"):
        check_attention(hostile_targets.returns_a_list_of_ints)


# 12. torch.compile(mh.attention, fullgraph=True) on a prefill shape raised `Unsupported:
# ContextVar.get` (functional.max_score_bytes) for auto / reference / decode and window / softcap /
# ALiBi calls. Small shapes: dynamo's tracing is what is tested (backend="eager", no codegen).
@pytest.mark.slow
def test_r3_item12_torch_compile_fullgraph_prefill():
    from multihead.functional import score_limit
    rng = torch.Generator().manual_seed(12)
    q = torch.randn(1, 8, 300, 64, generator=rng)
    k, v = torch.randn(2, 1, 2, 300, 64, generator=rng)
    slopes = torch.rand(8, generator=rng)
    cases = [dict(backend="auto"), dict(backend="reference"), dict(backend="decode"),
             dict(window_size=(64, 0)), dict(softcap=30.0), dict(alibi_slopes=slopes)]
    try:
        with torch._dynamo.config.patch(cache_size_limit=16):
            for kw in cases:
                torch._dynamo.reset()
                f = torch.compile(mh.attention, fullgraph=True, backend="eager")
                out = f(q, k, v, is_causal=True, **kw)
                ref = mh.attention(q, k, v, is_causal=True, **kw)
                assert (out - ref).abs().max() < 1e-5, kw
        # the limit still holds for a compiled call (read while tracing); without fullgraph the
        # refusal is the ValueError of an eager call
        torch._dynamo.reset()
        f = torch.compile(mh.attention, backend="eager")
        with score_limit(1000), pytest.raises(ValueError, match="over the limit of 1,000 bytes"):
            f(q, k, v, is_causal=True, backend="reference")
    finally:
        torch._dynamo.reset()


# 13. GPU figures of 1e300 (ZeroDivisionError, `Infinity` in --json, "cannot convert float NaN");
# efficiencies of 5e-324 printed `Infinity` seconds. Every GPU figure flag is bounded to a physical
# range (multihead.values, the same for the request), and the JSON writer never writes non-finite.
GPU_FIGURES = ["--gpu-memory-gb", "80", "--effective-tflops", "100", "--bandwidth-tbps", "2"]


@pytest.mark.parametrize("cmd, flag", [(c, f) for c in ("plan", "serving") for f in (
    "--gpu-memory-gb", "--effective-tflops", "--bandwidth-tbps", "--flops-efficiency", "--bandwidth-efficiency")
    if c == "plan" or "efficiency" not in f])        # serving takes no efficiency flags
@pytest.mark.parametrize("value", ["1e300", "5e-324", "1e-300", "0"])
def test_r3_item13_gpu_figures_bounded(capsys, flag, value, cmd):
    base = ["plan", "Llama-3.1-8B", "--tokens", "8192"] if cmd == "plan" else ["serving", "Qwen/Qwen3-8B"]
    figures = [] if "efficiency" in flag else [a for i, a in enumerate(GPU_FIGURES) if GPU_FIGURES[i - (i % 2)] != flag]
    rc, out, err = _cli(base + figures + [flag, value, "--json"], capsys)
    _one_line_exit_2(rc, err, f"argument {flag}: expected a finite number in [")


@pytest.mark.parametrize("cmd", ["plan", "serving"])
@pytest.mark.parametrize("edge", ["lo", "hi"])
def test_r3_item13_json_at_the_bounds_is_finite(capsys, cmd, edge):
    import json
    from multihead import values
    figs = {"--gpu-memory-gb": values.GPU_MEMORY_GB, "--effective-tflops": values.EFFECTIVE_TFLOPS,
            "--bandwidth-tbps": values.BANDWIDTH_TBPS}
    argv = [a for flag, r in figs.items() for a in (flag, repr(getattr(r, edge)))]
    base = ["plan", "Llama-3.1-8B", "--tokens", "8192"] if cmd == "plan" else ["serving", "Qwen/Qwen3-8B"]
    rc, out, err = _cli(base + argv + ["--json"], capsys)
    assert "Traceback" not in err and rc in (0, 2), (rc, err)
    if rc == 0:
        json.loads(out, parse_constant=lambda c: pytest.fail(f"{c} in the --json output"))


def test_r3_item13_the_json_writer_refuses_non_finite():
    from multihead import jsonout
    assert jsonout.dumps({"a": [1.0, 2]}) == '{"a": [1.0, 2]}'
    for bad, where in (({"plan": {"time": [1.0, float("inf")]}}, "plan.time[1]"), ([float("nan")], "[0]"),
                       (float("-inf"), "(top level)")):
        with pytest.raises(ValueError, match=rf"^{re.escape(where)}: .* is not a finite number"):
            jsonout.dumps(bad)


# 17. gpu-time --measurements with a hostile table: {} KeyError 'rows'; an unknown gpu or source
# KeyError; a list or string value TypeError; tp 0 / value 0 ZeroDivisionError; NaN in -> NaN out.
_ROW = {"id": "r1", "source": "s", "gpu": "H100-SXM", "tp": 1, "model": "Llama-3.1-8B", "weights": "bf16",
        "kv": "bf16", "batch": 1, "mode": "static", "input_len": 128, "output_len": 128,
        "metric": "decode_tokens_per_s", "value": 100.0}
_TABLE = {"sources": {"s": {"engine_family": "vllm"}}, "rows": [_ROW]}


@pytest.mark.parametrize("table, needle", [
    ({}, "missing 'sources'"), ({"sources": {}}, "missing 'rows'"), ([1], "expected a JSON object"),
    ({**_TABLE, "rows": []}, "rows: expected a non-empty list"),
    ({**_TABLE, "rows": [5]}, "rows[0]: expected an object"),
    ({**_TABLE, "rows": [{**_ROW, "gpu": "TPU-v9"}]}, "rows[0] (r1).gpu: 'TPU-v9' is neither a catalog GPU"),
    ({**_TABLE, "rows": [{**_ROW, "source": "nope"}]}, "rows[0] (r1).source: 'nope' is not a key of sources"),
    ({**_TABLE, "rows": [{**_ROW, "model": "GPT-9"}]}, "rows[0] (r1).model: 'GPT-9' is neither"),
    ({**_TABLE, "rows": [{**_ROW, "value": [1, 2]}]}, "rows[0] (r1).value: expected a finite number > 0"),
    ({**_TABLE, "rows": [{**_ROW, "value": "fast"}]}, "rows[0] (r1).value: expected a finite number > 0"),
    ({**_TABLE, "rows": [{**_ROW, "value": 0}]}, "rows[0] (r1).value: expected a finite number > 0 (a measurement), got 0"),
    ({**_TABLE, "rows": [{**_ROW, "tp": 0}]}, "rows[0] (r1).tp: expected an integer in 1..4,096, got 0"),
    ({**_TABLE, "rows": [{**_ROW, "batch": "8"}]}, "rows[0] (r1).batch: expected an integer"),
    ({**_TABLE, "rows": [{**_ROW, "metric": "vibes"}]}, "rows[0] (r1).metric: expected one of"),
    ({**_TABLE, "rows": [{**_ROW, "weights": "int3"}]}, "rows[0] (r1).weights: expected one of"),
    ({**_TABLE, "rows": [{**_ROW, "kv": "fp7"}]}, "rows[0] (r1).kv: expected one of"),
    ({**_TABLE, "rows": [{k: v for k, v in _ROW.items() if k != "input_len"}]}, "rows[0] (r1): missing 'input_len'"),
    ({**_TABLE, "rows": [_ROW, _ROW]}, "rows[1] (r1).id: given twice"),
    ({**_TABLE, "sources": {"s": {}}}, "sources.s.engine_family: expected a string"),
    ({**_TABLE, "devices": {"X": {"base": "H100-SXM", "bandwidth_tbps": 0}}}, "devices.X.bandwidth_tbps"),
    ({**_TABLE, "devices": {"X": {"base": "nope"}}}, "devices.X.base: expected a catalog GPU"),
    ({**_TABLE, "models": {"M": {"config": {"hidden_size": "x"}, "source": "x"}}},
     "models.M.config: hidden_size: expected an integer"),
])
def test_r3_item17_hostile_measurement_tables_are_named(tmp_path, capsys, table, needle):
    import json
    path = tmp_path / "m.json"
    path.write_text(json.dumps(table))
    rc, out, err = _cli(["gpu-time", "--measurements", str(path), "--json"], capsys)
    _one_line_exit_2(rc, err, "measurements: ", needle)


def test_r3_item17_nan_in_a_table_is_refused(tmp_path, capsys):
    path = tmp_path / "m.json"
    path.write_text(__import__("json").dumps(_TABLE).replace("100.0", "NaN"))
    rc, out, err = _cli(["gpu-time", "--measurements", str(path), "--json"], capsys)
    _one_line_exit_2(rc, err, "m.json holds NaN, which is not JSON")
    path.write_text(__import__("json").dumps(_TABLE))
    rc, out, err = _cli(["gpu-time", "--measurements", str(path), "--json"], capsys)   # the valid one runs
    assert rc == 0, err
    __import__("json").loads(out, parse_constant=lambda c: pytest.fail(f"{c} in the output"))


# 18 (serving part). `serving --output-len 5000 --max-model-len 4096` named input-len.
@pytest.mark.parametrize("lengths, name", [(["--output-len", "5000"], "output-len"),
                                           (["--input-len", "5000"], "input-len"),
                                           (["--input-len", "3000", "--output-len", "3000"], "input-len + output-len")])
@pytest.mark.parametrize("cmd", ["plan", "serving"])
def test_r3_item18_request_lengths_name_the_argument_given(capsys, lengths, name, cmd):
    base = ["plan", "Qwen3-8B"] if cmd == "plan" else ["serving", "Qwen/Qwen3-8B"]
    rc, _, err = _cli(base + ["--max-model-len", "4096", *lengths], capsys)
    _one_line_exit_2(rc, err, f"error: {name}: ", "exceed max-model-len 4,096")


# Found by this round's config fuzz (tests/test_fuzz.py::test_fuzz_hostile_configs_*): the vision
# tower's fields reached int()/float() unchecked in serving (TypeError tracebacks, a ZeroDivisionError
# for pixel_shuffle_ratio 0), an explicit null in them crashed, and a rope factor of 1e-300 gave a
# ZeroDivisionError in the position-interpolation fallback.
_LLAMA4_MM = {"model_type": "llama4", "text_config": {**LLAMA, "model_type": "llama4_text", "num_local_experts": 16,
                                                      "num_experts_per_tok": 1, "attention_chunk_size": 8192},
              "vision_config": {"model_type": "llama4_vision_model", "hidden_size": 1408, "intermediate_size": 5632,
                                "num_hidden_layers": 34, "patch_size": 14, "image_size": 336,
                                "pixel_shuffle_ratio": 0.5}}


@pytest.mark.parametrize("vision, needle", [
    ({"hidden_size": [1]}, "vision_config.hidden_size: expected an integer"),
    ({"num_hidden_layers": {"a": 1}}, "vision_config.num_hidden_layers: expected an integer"),
    ({"pixel_shuffle_ratio": 0}, "vision_config.pixel_shuffle_ratio: expected a number in (0, 1]"),
    ({"patch_size": 0}, "vision_config.patch_size: expected an integer"),
    ({"image_size": 2**70}, "vision_config.image_size: expected an integer"),
    ({"model_type": 5}, "vision_config.model_type: expected a string"),
])
def test_r3_fuzz_vision_fields_named(tmp_path, capsys, vision, needle):
    import json
    path = tmp_path / "mm.json"
    cfg = {**_LLAMA4_MM, "vision_config": {**_LLAMA4_MM["vision_config"], **vision}}
    path.write_text(json.dumps(cfg))
    rc, _, err = _cli(["serving", str(path), *SERVING], capsys)
    _one_line_exit_2(rc, err, "mm.json: ", needle)


def test_r3_fuzz_null_vision_fields_take_defaults(tmp_path, capsys):
    import json
    path = tmp_path / "mm.json"
    cfg = {**_LLAMA4_MM, "vision_config": {**_LLAMA4_MM["vision_config"], "pixel_shuffle_ratio": None,
                                           "intermediate_size": None}}
    path.write_text(json.dumps(cfg))
    rc, out, err = _cli(["serving", str(path), *SERVING, "--json"], capsys)
    assert rc in (0, 2) and "Traceback" not in err, err
    if rc == 0:
        json.loads(out)


@pytest.mark.parametrize("factor", [1e-300, 0.5, 1e9, "2"])
def test_r3_fuzz_rope_factor_bounded(tmp_path, capsys, factor):
    import json
    path = tmp_path / "r.json"
    path.write_text(json.dumps({**LLAMA, "rope_scaling": {"rope_type": "linear", "factor": factor}}))
    rc, _, err = _cli(["plan", str(path), "--tokens", "500000", "--gpu", "H100-SXM"], capsys)
    _one_line_exit_2(rc, err, "r.json: rope_scaling.factor: expected a number in 1..1e6")


# -- round 4 of hostile input (helper "hunt"): what round 3's fixes missed ----------------------------
# A subnormal --request-rate split over replicas was 0 (ZeroDivisionError traceback in --search);
# the GPU figures' subnormal values are round 3's item 13 (test_r3_item13_*).
def test_r4_subnormal_request_rate_is_refused_by_name(capsys):
    rc, out, err = _cli(["plan", "Llama-3.1-8B", "--tokens", "8192", "--search", "--gpu", "H100-SXM,A100-80GB",
                         "--request-rate", "5e-324", "--json"], capsys)
    _one_line_exit_2(rc, err, "--request-rate", "1e-06")
    rc, out, err = _cli(["plan", "Llama-3.1-8B", "--tokens", "8192", "--search", "--gpu", "H100-SXM,A100-80GB",
                         "--request-rate", "1e-6", "--json"], capsys)
    assert rc == 0, err


def test_r4_library_refuses_subnormal_device_figures():
    from multihead.cost.time.operating_point import _check_load
    from multihead.planner.inputs import resolve_device
    for kw in ({"effective_tflops": 5e-324}, {"bandwidth_tbps": 1e-310}):
        with pytest.raises(ValueError, match=next(iter(kw)).replace("_", "-")):
            resolve_device(None, gpu_memory_gb=80, **{"effective_tflops": 100, "bandwidth_tbps": 2, **kw})
    with pytest.raises(ValueError, match="flops-efficiency"):
        resolve_device("H100-SXM", flops_efficiency=5e-324)
    with pytest.raises(ValueError, match="request-rate"):
        _check_load(None, 5e-324)


def test_r4_head_dim_zero_and_0d_query_are_named_value_errors():
    """The decode fast path ran before the checks: d = 0 divided by sqrt(0) (ZeroDivisionError), a
    0-d q read q.shape[-1] (IndexError)."""
    z = torch.randn(1, 2, 4, 0)
    with pytest.raises(ValueError, match="q: expected B, H and d >= 1"):
        mh.attention(torch.randn(1, 2, 3, 0), z, z)
    with pytest.raises(ValueError, match="q: expected 4 dims"):
        mh.attention(torch.tensor(1.0), torch.randn(1, 2, 4, 8), torch.randn(1, 2, 4, 8))


@pytest.mark.parametrize("shape, dim", [((0,), -1), ((2, 0), -1), ((0, 3), 0), ((3, 0, 2), 1)])
def test_r4_softmax_of_an_empty_row_is_like_torch(shape, dim):
    """mh.softmax / log_softmax / logsumexp over an empty dim raised amax's IndexError; torch gives an
    empty tensor (softmax, log_softmax) and -inf (logsumexp)."""
    x = torch.randn(*shape, dtype=torch.float64)
    for ours, theirs in ((mh.softmax, torch.softmax), (mh.log_softmax, torch.log_softmax)):
        out = ours(x, dim)
        assert out.shape == theirs(x, dim).shape and out.dtype == x.dtype
    assert torch.equal(mh.logsumexp(x, dim), torch.logsumexp(x, dim))


# A config's partial_rotary_factor reached float() unchecked (the rotary cache's width): null, a list
# or an object gave a TypeError traceback in plan / serving and a 500 on the page.
@pytest.mark.parametrize("cmd", ["plan", "serving"])
@pytest.mark.parametrize("value", [[], {}, [1, 2], "0.5", 0, 2, True])
def test_r4_partial_rotary_factor_is_checked_by_name(tmp_path, capsys, cmd, value):
    import json
    path = tmp_path / "p.json"
    path.write_text(json.dumps({**LLAMA, "partial_rotary_factor": value}))
    rc, _, err = _cli([cmd, str(path), *(PLAN if cmd == "plan" else SERVING)], capsys)
    _one_line_exit_2(rc, err, "p.json: partial_rotary_factor: expected a number in (0, 1]")


@pytest.mark.parametrize("value", [None, 0.5, 1])
def test_r4_partial_rotary_factor_null_or_a_fraction_is_read(tmp_path, capsys, value):
    import json
    path = tmp_path / "p.json"
    path.write_text(json.dumps({**LLAMA, "partial_rotary_factor": value}))
    rc, _, err = _cli(["serving", str(path), *SERVING], capsys)
    assert rc == 0, err
