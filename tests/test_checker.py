"""The checker: the float64 reference, no false alarms on correct implementations, every bug in
the catalogue (tests/broken_impls.py) caught and named, bad targets rejected cleanly, the CLI."""
from __future__ import annotations

import functools
import io
import json
import os
import sys

import pytest
import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.dirname(__file__))
import broken_impls  # noqa: E402
from broken_paths import CORRECT_PATHS, PATH_BUGS  # noqa: E402

import multihead  # noqa: E402
from multihead.checker import CheckError, check_attention  # noqa: E402
from multihead.checker import probes  # noqa: E402
from multihead.checker.probes import fit_scale  # noqa: E402
from multihead.checker.reference import causal_mask, expand_kv, reference_attention  # noqa: E402
from multihead.cli import main  # noqa: E402

HERE = os.path.dirname(__file__)


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """The test process is ours: one intra-op thread, because on the shared 2-core machine
    OpenMP barriers under load cost more than the probes (the checker itself changes no
    thread setting)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _failed(report) -> set[str]:
    return {f.check for f in report.failures}


# -- the float64 reference ---------------------------------------------------------------------------
@pytest.mark.parametrize("H,H_kv,Tq,Tk", [(4, 4, 6, 6), (4, 2, 6, 6), (6, 1, 3, 7)])
def test_reference_matches_sdpa(H, H_kv, Tq, Tk):
    g = torch.Generator().manual_seed(0)
    q = torch.randn(2, H, Tq, 8, generator=g, dtype=torch.float64)
    k, v = (torch.randn(2, H_kv, Tk, 8, generator=g, dtype=torch.float64) for _ in range(2))
    mask = torch.rand(2, 1, Tq, Tk, generator=g) < 0.7
    mask[..., 0] = True
    kr, vr = expand_kv(k, H), expand_kv(v, H)
    for kwargs, ours in (({}, {}), ({"attn_mask": mask}, {"mask": mask}), ({"scale": 0.3}, {"scale": 0.3})):
        want = F.scaled_dot_product_attention(q, kr, vr, **kwargs)
        assert torch.allclose(reference_attention(q, k, v, **ours), want, atol=1e-12)
    # torch SDPA aligns top-left: with Tq != Tk the reference's top-left option must agree with it.
    want = F.scaled_dot_product_attention(q, kr, vr, is_causal=True)
    got = reference_attention(q, k, v, is_causal=True, align="top-left")
    assert torch.allclose(got[:, :, :min(Tq, Tk)], want[:, :, :min(Tq, Tk)], atol=1e-12)


def test_reference_conventions():
    assert causal_mask(2, 5).tolist() == [[True] * 4 + [False], [True] * 5]           # bottom-right
    assert causal_mask(2, 5, "top-left").tolist() == [[True] + [False] * 4, [True] * 2 + [False] * 3]
    k = torch.arange(2.0).view(1, 2, 1, 1)
    assert expand_kv(k, 4).flatten().tolist() == [0, 0, 1, 1]      # h // G
    assert expand_kv(k, 4, "tile").flatten().tolist() == [0, 1, 0, 1]   # h % H_kv, the bug
    q = torch.randn(1, 1, 2, 4)
    out = reference_attention(q, q, q, mask=torch.tensor([[False, False], [True, True]]))
    assert out[0, 0, 0].abs().max() == 0 and torch.isfinite(out).all()   # an empty row gives 0, not NaN


def test_fit_scale_recovers_a_known_scale():
    g = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(1, 2, 16, 32, generator=g, dtype=torch.float64) * 0.5 for _ in range(3))
    for s in (1.0, 32 ** -0.5, 1 / 32):
        est, resid = fit_scale(reference_attention(q, k, v, scale=s), q, k, v)
        assert abs(est / s - 1) < 1e-4 and resid < 1e-6


# -- no false alarms -----------------------------------------------------------------------------------
def einsum_attention(q, k, v, attn_mask=None, is_causal=False, scale=None):
    """A plain, correct einsum implementation (GQA by repeat_interleave, causal bottom-right,
    masked scores set to finfo.min like transformers' masks)."""
    H, d, Tq, Tk = q.shape[1], q.shape[-1], q.shape[2], k.shape[2]
    k, v = k.repeat_interleave(H // k.shape[1], 1), v.repeat_interleave(H // v.shape[1], 1)
    s = torch.einsum("bhqd,bhkd->bhqk", q, k) * (d ** -0.5 if scale is None else scale)
    keep = torch.ones(Tq, Tk, dtype=torch.bool)
    if is_causal:
        keep = torch.arange(Tk)[None, :] <= torch.arange(Tq)[:, None] + (Tk - Tq)
    if attn_mask is not None:
        keep = keep & attn_mask
    s = s.masked_fill(~keep, torch.finfo(s.dtype).min)
    return torch.einsum("bhqk,bhkd->bhqd", torch.softmax(s, -1), v)


class TorchMHA(nn.Module):
    """nn.MultiheadAttention behind the MultiHeadAttention interface. nn.MultiheadAttention's
    bool mask means True = masked, the opposite of ours, so the wrapper inverts it."""

    def __init__(self, d_model: int = 64, n_heads: int = 4, fastpath: bool = True):
        super().__init__()
        self.mha = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
        self.d_model, self.n_heads, self.n_kv_heads, self.fastpath = d_model, n_heads, n_heads, fastpath

    def forward(self, x, *, attn_mask=None, is_causal=False):
        B, T, _ = x.shape
        keep = torch.ones(B, 1, T, T, dtype=torch.bool)
        if is_causal:
            keep = keep & torch.ones(T, T, dtype=torch.bool).tril()
        if attn_mask is not None:
            keep = keep & attn_mask
        masked = (~keep).expand(B, self.n_heads, T, T).reshape(B * self.n_heads, T, T)   # True = masked
        before = torch.backends.mha.get_fastpath_enabled()
        torch.backends.mha.set_fastpath_enabled(self.fastpath)
        try:
            return self.mha(x, x, x, attn_mask=masked, need_weights=False)[0]
        finally:
            torch.backends.mha.set_fastpath_enabled(before)


def test_sdpa_passes_and_its_top_left_alignment_is_reported():
    report = check_attention(F.scaled_dot_product_attention)
    assert report.passed and not report.failures, str(report)
    align = report.finding("causal_alignment")
    assert align.status == "info" and "top-left" in align.evidence and align.metrics["alignment"] == "top-left"
    assert "enable_gqa" in report.finding("gqa_grouping").evidence   # GQA through enable_gqa=True
    # Claiming the KV-cache convention turns top-left into a failure; claiming top-left passes.
    claim = check_attention(F.scaled_dot_product_attention, expect_alignment="bottom-right")
    assert _failed(claim) == {"causal_alignment"}
    assert check_attention(F.scaled_dot_product_attention, expect_alignment="top-left").finding(
        "causal_alignment").status == "pass"


@pytest.mark.parametrize("dtype", ["float64", "bfloat16", "float16"])
def test_sdpa_passes_in_other_dtypes(dtype):
    report = check_attention(F.scaled_dot_product_attention, dtype=dtype)
    assert report.passed, str(report)
    assert report.dtype == dtype


@pytest.mark.parametrize("backend", ["reference", "tiled", "decode", "auto", "fast_decode", "fast_prefill"])
def test_multihead_backends_pass(backend):
    fn = functools.partial(multihead.attention, backend=backend)
    report = check_attention(fn, expect_alignment="bottom-right", name=backend)
    assert report.passed and all(f.status == "pass" for f in report.findings), str(report)


def test_einsum_and_baseline_pass():
    for fn in (einsum_attention, broken_impls.correct):
        report = check_attention(fn, expect_alignment="bottom-right")
        assert report.passed, str(report)
    # finfo.min masks give fully masked rows the mean of V: finite, reported, not a failure.
    assert check_attention(einsum_attention).finding("fully_masked_rows").status == "info"


def test_multihead_module_passes():
    import multihead.layers as layers
    report = check_attention(layers.MultiHeadAttention)          # built as (d_model=64, n_heads=4, n_kv_heads=2)
    assert report.signature == "module" and report.passed, str(report)
    assert {f.check for f in report.findings if f.status == "pass"} >= {
        "head_layout", "causal_mask", "mask_polarity", "fully_masked_rows", "batch_independence", "overflow"}
    assert check_attention(broken_impls.SimpleMHA(48, 6, 2)).passed


def test_nn_multiheadattention_wrapped():
    report = check_attention(TorchMHA(fastpath=False))
    assert report.passed, str(report)
    # A real finding, not a false alarm: nn.MultiheadAttention's inference fast path (eval +
    # no_grad) returns NaN for a query row whose keys are all masked (torch 2.13, CPU). Every other
    # check passes with the same wrapper.
    fast = check_attention(TorchMHA(fastpath=True))
    assert _failed(fast) == {"fully_masked_rows"}, str(fast)
    assert "inf/NaN" in fast.finding("fully_masked_rows").evidence


@pytest.mark.xdist_group("transformers")          # on the worker that has transformers loaded
def test_transformers_attention_functions():
    # One test, so that only one xdist worker pays for importing transformers' Llama module.
    # transformers is installed by `make setup` ([models] extra): an ImportError here is a failure, not a skip.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers.integrations.sdpa_attention import sdpa_attention_forward
    from transformers.models.llama.modeling_llama import eager_attention_forward

    for fn in (eager_attention_forward, sdpa_attention_forward):
        report = check_attention(fn)
        assert report.signature == "hf" and report.passed, str(report)
        assert report.finding("gqa_grouping").status == "pass"      # via module.num_key_value_groups
    # eager returns its weights: their rows are checked too.
    assert "returned weights" in check_attention(eager_attention_forward).finding("normalization").evidence
    # A real finding: eager computes its softmax in float32, where finfo(float64).min is -inf, so
    # a fully masked row is softmax(-inf, ..., -inf) = NaN; the rest is fp32-accurate (INFO).
    report = check_attention(eager_attention_forward, dtype="float64")
    assert _failed(report) == {"fully_masked_rows"} and "inf/NaN" in report.finding("fully_masked_rows").evidence
    assert report.finding("reference").status == "info"


def test_multihead_hf_function_passes():
    from multihead.hf import multihead_attention_forward

    assert check_attention(multihead_attention_forward, signature="hf").passed


# -- the paths (issue 15): every planted path bug is the root finding; correct paths pass -----------------
# Each planted bug is checked ONCE (a check costs ~0.3 s of CPU) and that report is held to all
# three claims: the root finding, the words of its evidence, and (for what issue 15 found) that
# no check older than the path probes fails on it.
PATH_EVIDENCE = {
    "packed_gqa_causal_folded": ("gqa_masks", "built over the G*Tq rows of packed GQA"),
    "online_no_rescale": ("long_keys", "not rescaled by exp(m_old - m_new)"),
    "tail_block_dropped": ("long_keys", "last partial block of"),
    "query_tail_dropped": ("long_keys", "only query rows 576..599 are wrong: the last partial tile of query rows"),
    "padding_first_sequence": ("padding", "sequence 1 is computed with the padding of sequence 0"),
    "mask_flattened_head_major": ("padding", "computed with the padding of sequence"),
    "split_k_merge_unweighted": ("decode", "right on short caches (Tk <= 45), wrong on every long one"),
    "decode_ignores_mask": ("decode", "the mask is ignored at Tq = 1"),
    "decode_first_cache": ("decode", "sequences 1 of 2"),
    "decode_hides_self": ("causal_alignment", "but not itself (key 39): off by one on every decode step"),
    "mixed_alignment": ("causal_alignment", "mixed: bottom-right at Tq=1, Tk=40 but top-left at Tq=3, Tk=8"),
    "float_mask_as_bool": ("additive_mask", "read as bool"),
    "bias_scaled": ("additive_mask", "multiplied by the softmax scale"),
    "bf16_accumulates_in_bf16": ("dtypes", "bfloat16 Tq=4, Tk=4000"),
    "gqa_shift_groups": ("gqa_grouping", "H=6, H_kv=2 (G=3)"),
    "online_nan_masked_block": ("padding", "inf/NaN only in the left-padded sequence(s) [1] at Tk=900"),
}
# What issue 15 found: these bugs pass every check that existed before the path probes.
HIDDEN_FROM_SHORT_PROBES = {"packed_gqa_causal_folded", "online_no_rescale", "padding_first_sequence",
                            "split_k_merge_unweighted", "tail_block_dropped", "bf16_accumulates_in_bf16",
                            "float_mask_as_bool", "bias_scaled"}


def test_every_planted_path_bug_has_its_evidence_words():
    assert set(PATH_EVIDENCE) == set(PATH_BUGS) and HIDDEN_FROM_SHORT_PROBES <= set(PATH_BUGS)


@pytest.mark.parametrize("name", sorted(PATH_BUGS))
def test_path_bug_is_caught_as_its_root(name):
    fn, signature, expected, kwargs = PATH_BUGS[name]
    report = check_attention(fn, signature=signature, **kwargs)
    assert not report.passed
    assert {f.check for f in report.causes} == expected, str(report)
    check, words = PATH_EVIDENCE[name]
    assert words in report.finding(check).evidence
    if name in HIDDEN_FROM_SHORT_PROBES:
        basic = {p.__name__.removeprefix("probe_") for p in probes.BASIC_PROBES}
        assert not {f.check for f in report.failures} & basic, str(report)


@pytest.mark.parametrize("name", sorted(CORRECT_PATHS))
def test_correct_fixtures_compute_float64_in_float64(name):
    """The float64 contract (docs/checker.md): a fixture that claims to be correct computes float64
    inputs in float64, so its error is float64 rounding (~1e-15 here), not float32's (~1e-6, which
    a CPU's SIMD width decides whether it stays under any fixed bound: issue 25)."""
    g = torch.Generator().manual_seed(5)
    for Tq, Tk in ((4, 4000), (1, 300), (13, 13)):
        q, k, v = (torch.randn(1, 4, T, 8, generator=g, dtype=torch.float64) for T in (Tq, Tk, Tk))
        k, v = k[:, :2], v[:, :2] + 3.0
        out = CORRECT_PATHS[name](q, k, v, is_causal=Tq == Tk)
        assert out.dtype == torch.float64
        err = (out - reference_attention(q, k, v, is_causal=Tq == Tk)).abs().max().item()
        assert err < 1e-12, (name, Tq, Tk, err)


@pytest.mark.parametrize("name", sorted(CORRECT_PATHS))
def test_correct_paths_pass(name):
    report = check_attention(CORRECT_PATHS[name], expect_alignment="bottom-right")
    assert report.passed and not report.failures, str(report)
    # nothing flagged either: float64 inputs (the dtypes probe) computed at float64 accuracy
    assert all(f.status == "pass" for f in report.findings), str(report)
    tried = {row["dimension"]: " ".join(row["tried"]) for row in report.coverage}
    for value in ("GQA G=3 (odd)", "MQA", "padding per sequence", "additive bias", "decode Tq = 1", "long (> 256)",
                  "max grows late", "split-K", "B > 1", "bfloat16"):
        assert value in " ".join(tried.values()), value


# -- the catalogue of broken implementations ---------------------------------------------------------
# The words each bug's evidence must hold (checked on the same report as its root cause).
EVIDENCE = {
    "no_scale": ("scale", "1/sqrt(d_k) is missing"),
    "scale_by_d": ("scale", "divides by d_k instead of sqrt(d_k)"),
    "no_max_subtraction": ("overflow", "inf/NaN"),
    "causal_leak": ("causal_mask", "the future leaks into the past"),
    "inverted_mask": ("mask_polarity", "polarity inverted"),
    "nan_masked_rows": ("fully_masked_rows", "inf/NaN"),
    "top_left_causal": ("causal_alignment", "aligned top-left, but bottom-right was expected"),
    "causal_offset_by_one": ("causal_alignment", "sees keys j <= i + 4"),
    "gqa_tile": ("gqa_grouping", "h % H_kv"),
    "hf_gqa_tile": ("gqa_grouping", "h % H_kv"),
    "hf_reshape_output": ("head_independence", "heads are mixed"),
    "weights_not_normalized": ("normalization", "times it (must be 1)"),
    "reshape_without_transpose": ("head_layout", "without a transpose"),
}


@pytest.mark.parametrize("name", sorted(broken_impls.BUGS))
def test_broken_implementation_is_caught_and_named(name):
    fn, signature, expected, kwargs = broken_impls.BUGS[name]
    report = check_attention(fn, signature=signature, **kwargs)
    assert not report.passed
    assert expected <= _failed(report)
    # The report names the bug: the failures it puts first are exactly the planted ones.
    assert {f.check for f in report.causes} == expected, str(report)
    text = str(report)
    for f in report.causes:
        assert f"FAIL {f.check}" in text and f.symptom[:40] in " ".join(text.split())
    assert report.to_dict()["causes"] == [f.check for f in report.causes]
    if name in EVIDENCE:
        check, words = EVIDENCE[name]
        assert words in report.finding(check).evidence


def test_evidence_table_names_planted_bugs():
    assert set(EVIDENCE) <= set(broken_impls.BUGS)


@pytest.mark.parametrize("dtype", ["float64", "bfloat16", "float16"])
def test_other_dtypes_no_false_alarm_and_same_names(dtype):
    for fn in (broken_impls.correct, broken_impls.SimpleMHA):
        assert check_attention(fn, dtype=dtype).passed
    for name in ("no_scale", "no_max_subtraction", "inverted_mask", "gqa_tile", "causal_leak", "leaky_module",
                 "reshape_and_no_max"):
        fn, signature, expected, kwargs = broken_impls.BUGS[name]
        report = check_attention(fn, signature=signature, dtype=dtype, **kwargs)
        assert {f.check for f in report.causes} == expected, (name, str(report))


def test_top_left_is_information_without_a_claim():
    report = check_attention(broken_impls.top_left_causal)
    assert report.passed and report.finding("causal_alignment").status == "info"


def test_missing_scale_is_fatal_in_fp16_only_without_max_subtraction():
    # no_scale subtracts the max, so its fp16 output stays finite; the textbook formula does not.
    assert check_attention(broken_impls.no_scale).finding("overflow").passed
    ev = check_attention(broken_impls.no_scale_no_max).finding("overflow").evidence
    assert "float32, logits ~300" in ev and "float16, logits ~20" in ev


# -- adapters ------------------------------------------------------------------------------------------
def test_function_without_gqa_support_gets_repeated_heads():
    def mha_only(q, k, v, attn_mask=None, is_causal=False, scale=None):
        if k.shape[1] != q.shape[1]:
            raise ValueError("H_kv must equal H")
        return broken_impls.correct(q, k, v, attn_mask, is_causal, scale)

    report = check_attention(mha_only)
    assert report.passed
    assert report.finding("gqa_grouping").status == "skip"
    assert any("repeat_interleave" in n for n in report.notes)


def test_function_without_mask_or_causal_arguments_skips_those_checks():
    def plain(q, k, v):
        return broken_impls.correct(q, k, v)

    report = check_attention(plain)
    assert report.passed
    for check in ("causal_mask", "mask_polarity", "fully_masked_rows"):
        assert report.finding(check).status == "skip"


def test_tuple_output_and_renamed_arguments():
    def flash_style(q, k, v, mask=None, causal=False, softmax_scale=None):
        out = broken_impls.correct(q, k, v, mask, causal, softmax_scale)
        return out, None

    report = check_attention(flash_style, expect_alignment="bottom-right")
    assert report.passed and report.finding("scale").passed and "obeyed" in report.finding("scale").evidence


def test_module_instance_is_not_modified():
    mod = broken_impls.SimpleMHA(32, 4, 2).train()
    before = {k: v.clone() for k, v in mod.state_dict().items()}
    check_attention(mod, dtype="float64")
    assert mod.training and all(torch.equal(before[k], v) for k, v in mod.state_dict().items())
    assert next(mod.parameters()).dtype == torch.float32


@pytest.mark.parametrize("target,words", [
    (42, "expected a callable"),
    (lambda x: x, "takes (x)"),
    (lambda q, k, v: q[..., :1], "returned shape"),
    (lambda q, k, v: "nope", "returned str"),
    (lambda q, k, v: 1 / 0, "ZeroDivisionError"),
])
def test_unusable_functions_raise_check_error(target, words):
    with pytest.raises(CheckError) as err:
        check_attention(target, signature="sdpa")
    assert words in str(err.value)


def test_module_without_mask_arguments_skips_those_checks():
    class NoMask(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = broken_impls.SimpleMHA(32, 4)
            self.d_model, self.n_heads, self.n_kv_heads = 32, 4, 4

        def forward(self, x):
            return self.inner(x)

    report = check_attention(NoMask())
    assert report.passed
    assert {f.check for f in report.findings if f.status == "skip"} >= {"causal_mask", "mask_polarity",
                                                                         "fully_masked_rows"}
    assert report.finding("head_layout").status == "pass"


def test_unusable_modules_raise_check_error():
    class NeedsConfig(nn.Module):
        def __init__(self, config):
            super().__init__()

    class WrongShape(nn.Module):
        d_model = 8

        def forward(self, x, *, attn_mask=None, is_causal=False):
            return x[..., :2]

    with pytest.raises(CheckError, match="config"):
        check_attention(NeedsConfig)
    with pytest.raises(CheckError, match="expected the same shape"):
        check_attention(WrongShape())
    with pytest.raises(ValueError, match="signature"):
        check_attention(F.scaled_dot_product_attention, signature="flash")
    with pytest.raises(ValueError, match="dtype"):
        check_attention(F.scaled_dot_product_attention, dtype="int8")


def test_report_is_deterministic_and_serializable():
    a = check_attention(broken_impls.gqa_tile_inverted_mask).to_dict()
    b = check_attention(broken_impls.gqa_tile_inverted_mask).to_dict()
    a.pop("seconds"), b.pop("seconds")
    assert a == b
    json.loads(json.dumps(a), parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))


# -- CLI ----------------------------------------------------------------------------------------------
# End to end, `multihead check` starts a child process (~1.3 s of CPU each: torch's import), so each
# path through the parent runs once here: a pass (text), a failure (--json), a bad target (exit 2), a
# target that ends the process, one that hangs. Variants of what the child reports run the child's
# own code (isolate.serve) in this process, with the options the CLI's parser builds.
def test_cli_exit_codes_and_json(capsys, monkeypatch):
    from rich.console import Console

    from multihead.checker.report import Report

    monkeypatch.chdir(os.path.dirname(HERE))
    assert main(["check", "torch.nn.functional:scaled_dot_product_attention"]) == 0
    out = capsys.readouterr().out
    assert "all checks passed" in out and "top-left" in out

    assert main(["check", "tests/broken_impls.py:no_scale", "--json"]) == 1
    d = json.loads(capsys.readouterr().out)
    assert d["passed"] is False and d["causes"] == ["scale"]
    scale = next(f for f in d["findings"] if f["check"] == "scale")    # the checks' order: determinism first
    assert scale["symptom"].startswith("Without 1/sqrt(d_k)")
    # the JSON holds the whole report: rendered again, it reads as the CLI's text of a failure
    console = Console(file=io.StringIO(), width=120)
    Report.from_dict(d).render(console)
    text = console.file.getvalue()
    assert "FAIL scale" in text and "What users see" in text and "Fix" in text and "1/sqrt(d_k)" in text


# A bad target is reported on one line, exit 2, wherever it is found: end to end for a target that
# imports but cannot be called as attention; the other kinds through the child's code below.
def test_cli_bad_target_exits_2_without_traceback(capsys, monkeypatch):
    monkeypatch.chdir(os.path.dirname(HERE))
    assert main(["check", "math:sqrt"]) == 2
    err = capsys.readouterr().err
    assert "target: math:sqrt: an sdpa-style function takes (q, k, v" in err and "Traceback" not in err
    assert err.startswith("multihead check: error:") and err.count("\n") == 1


# A malformed spec is refused by the parser: no child process is started.
@pytest.mark.parametrize("target,words", [
    ("tests/no_such_file.py:fn", "argument target: no such file 'tests/no_such_file.py'"),
    ("torch.nn.functional", "argument target: expected package.module:name"),
    (":fn", "argument target: expected package.module:name"),
])
def test_cli_malformed_target_is_refused_at_parse_time(capsys, monkeypatch, target, words):
    from multihead.checker import isolate

    monkeypatch.chdir(os.path.dirname(HERE))
    monkeypatch.setattr(isolate.subprocess, "Popen", lambda *a, **k: pytest.fail("a child process was started"))
    assert main(["check", target]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err and err.startswith("multihead check: error:")
    assert err.count("\n") == 1


# The other failures the child reports, through the child's own code (isolate.serve) run in this
# process with the options the CLI's parser builds: the same message the CLI prints after
# "multihead check: error: " (the end-to-end case above shows that hand-over).
@pytest.mark.parametrize("target,words", [
    ("no_such_package.mod:fn", "cannot import 'no_such_package.mod'"),
    ("torch.nn.functional:no_such_name", "has no attribute 'no_such_name'"),
    ("torch.nn.functional:scaled_dot_product_attentoin", "did you mean scaled_dot_product_attention?"),
    ("math:pi", "target: math:pi: expected a callable"),
    ("os:getcwd", "raised TypeError"),
    ("torch.nn:MultiheadAttention", "wrap a module that takes (query, key, value)"),
])
def test_child_reports_a_bad_target_as_one_error(monkeypatch, target, words):
    from multihead.checker.isolate import serve
    from multihead.cli import build_parser
    from multihead.cli.check import options

    monkeypatch.chdir(os.path.dirname(HERE))
    monkeypatch.setattr(sys, "path", list(sys.path))        # load_target may add the working folder
    args = build_parser().parse_args(["check", target])
    events = []
    assert serve(args.target, options(args) | {"timeout": args.timeout}, lambda **e: events.append(e)) == 2
    # before the error only progress events (the setup's probe and call events name a call that hangs)
    assert events[-1]["event"] == "error" and {e["event"] for e in events[:-1]} <= {"loaded", "probe", "call"}
    message = events[-1]["message"]
    assert words in message and message.startswith("target: ") and "Traceback" not in message


def test_cli_builds_module_classes_with_given_sizes(monkeypatch):
    """--d-model/--heads/--kv-heads reach the child (isolate.serve, run here) and size the module."""
    from multihead.checker.isolate import serve
    from multihead.cli import build_parser
    from multihead.cli.check import options

    monkeypatch.chdir(os.path.dirname(HERE))
    monkeypatch.setattr(sys, "path", list(sys.path))
    args = build_parser().parse_args(["check", "tests/broken_impls.py:SimpleMHA", "--d-model", "48", "--heads", "6",
                                      "--kv-heads", "3"])
    events = []
    assert serve(args.target, options(args) | {"timeout": args.timeout}, lambda **e: events.append(e)) == 0
    report = events[-1]["report"]
    assert events[-1]["event"] == "report" and report["passed"]
    assert "D=48, H=6, H_kv=3" in report["notes"][0]


def test_catalogue_covers_every_check():
    from multihead.checker import CATALOGUE
    from multihead.checker.check import _probes

    probed = {c for sig in ("sdpa", "module") for c, _ in _probes(sig)} | {"timeout", "exit", "input_mutation"}
    assert probed == set(CATALOGUE)
    caught = set().union(*(exp for _, _, exp, _ in list(broken_impls.BUGS.values()) + list(PATH_BUGS.values())))
    # every specific check has a planted bug that trips it (timeout / exit / input_mutation: hostile_targets;
    # determinism / finite_output: the audit tests at the end of this file)
    assert caught == set(CATALOGUE) - {"reference", "timeout", "exit", "input_mutation", "determinism",
                                       "finite_output"}
    assert all(s.title and s.user_sees and s.fix for s in CATALOGUE.values())


# -- isolation, time limit, hostile targets (issue 11 items 6, 9, 18; issue 15) ---------------------------
# os._exit ends the child without a report: the parent names the probe in flight. (sys.exit is
# caught inside the child, in-process: test_library_timeout_and_exit_in_process.)
def test_cli_a_target_that_exits_is_a_failure(capsys, monkeypatch):
    monkeypatch.chdir(os.path.dirname(HERE))
    assert main(["check", "tests/hostile_targets.py:os_exits_zero", "--json"]) == 1
    d = json.loads(capsys.readouterr().out)
    assert d["passed"] is False and "exit" in d["causes"]
    evidence = next(f["evidence"] for f in d["findings"] if f["check"] == "exit")
    assert "the process ended (exit status 0) during probe fully_masked_rows" in evidence


def test_cli_a_hanging_target_is_stopped_and_named(capsys, monkeypatch):
    monkeypatch.chdir(os.path.dirname(HERE))
    assert main(["check", "tests/hostile_targets.py:hangs_on_long_keys", "--timeout", "2", "--json"]) == 1
    d = json.loads(capsys.readouterr().out)
    timeout = next(f for f in d["findings"] if f["check"] == "timeout")
    assert "probe long_keys did not finish within 2 s" in timeout["evidence"] and "Tk=2048" in timeout["evidence"]
    assert d["causes"] == ["timeout"]


@pytest.mark.parametrize("argv,words", [
    (["--device", "meta"], "device: 'meta' tensors have shapes but no values"),
    (["--device", "cuda:0"], "torch.cuda.is_available() is False"),
    (["--timeout", "0"], "--timeout: expected a finite number in (0, 3600]"),
    (["--heads", "0"], "--heads: expected an integer in [1, 256]"),
])
def test_cli_bad_options_blame_the_option_not_the_target(capsys, argv, words):
    assert main(["check", "torch.nn.functional:scaled_dot_product_attention", *argv]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err


def test_input_mutation_is_its_own_finding_not_a_causal_leak():
    sys.path.insert(0, HERE)
    import hostile_targets

    report = check_attention(hostile_targets.scales_q_in_place)
    assert {f.check for f in report.causes} == {"input_mutation"}, str(report)
    assert report.finding("causal_mask").status == "pass"
    assert "q changed by the call" in report.finding("input_mutation").evidence


def test_a_crash_on_a_legal_shape_is_a_finding():
    import hostile_targets

    report = check_attention(hostile_targets.crashes_on_odd_lengths)
    assert not report.passed
    assert "raised IndexError" in report.finding("long_keys").evidence and "a legal input" in \
        report.finding("long_keys").evidence


def test_library_timeout_and_exit_in_process():
    import hostile_targets

    report = check_attention(hostile_targets.hangs_on_long_keys, timeout=1.0)
    assert report.finding("timeout").status == "fail" and report.finding("dtypes").status == "skip"
    report = check_attention(hostile_targets.exits_zero)
    assert [f.check for f in report.causes] == ["exit"]
    assert "called sys.exit(0)" in report.finding("exit").evidence


def test_the_checker_leaves_the_thread_count_alone():
    torch.set_num_threads(2)
    check_attention(F.scaled_dot_product_attention)
    assert torch.get_num_threads() == 2
    torch.set_num_threads(1)


def test_coverage_table_in_text_and_json(capsys, monkeypatch):
    def mha_no_float_masks(q, k, v, attn_mask=None, is_causal=False, scale=None):
        if k.shape[1] != q.shape[1]:
            raise ValueError("H_kv must equal H")
        if attn_mask is not None and attn_mask.dtype != torch.bool:
            raise TypeError("attn_mask: bool only")
        return F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, is_causal=is_causal, scale=scale)

    report = check_attention(mha_no_float_masks)
    assert report.passed
    rows = {r["dimension"]: r for r in report.to_dict()["coverage"]}
    assert set(rows) == {"heads", "mask", "query_vs_keys", "key_length", "score_pattern", "batch", "dtype"}
    missing = {m["value"]: m["why"] for m in rows["heads"]["not_tried"]}
    assert "takes only H_kv == H" in missing["GQA G=3 (odd)"]
    missing = {m["value"]: m["why"] for m in rows["mask"]["not_tried"]}
    assert "TypeError: attn_mask: bool only" in missing["additive bias"]
    assert report.finding("additive_mask").status == "skip"
    text = str(report)
    assert "coverage: what the probes tried" in text and "not tried (see the coverage table)" in text
    assert "additive bias" in text.split("not tried (see the coverage table)")[1]


def test_a_function_that_refuses_more_queries_than_keys_passes():
    """A KV-cache kernel may assert Tq <= Tk: the probes never need Tq > Tk (the self-reference
    repeats a lone key), so such a function passes instead of failing on the checker's own calls."""
    def cache_kernel(q, k, v, attn_mask=None, is_causal=False, scale=None, enable_gqa=False):
        if q.shape[2] > k.shape[2]:
            raise ValueError("Tq must not exceed Tk")
        return F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, is_causal=is_causal, scale=scale,
                                              enable_gqa=enable_gqa)

    report = check_attention(cache_kernel)
    assert report.passed, str(report)
    rows = {r["dimension"]: r for r in report.coverage}
    assert not any("Tq > Tk" in t for t in rows["query_vs_keys"]["tried"])


def test_probe_threads_run_with_the_callers_thread_count():
    """Each probe runs in a fresh thread; a fresh thread starts from OpenMP's default team size
    (the core count), not the caller's. The checker gives it the caller's count, so its calls run
    as they would in the caller's thread (at 1 thread a check costs about half the CPU)."""
    import ctypes

    path = os.path.join(os.path.dirname(torch.__file__), "lib", "libgomp.so.1")
    if not os.path.exists(path):
        pytest.skip(f"torch is not built with GNU OpenMP here (no {path}): the count cannot be read")
    gomp = ctypes.CDLL(path, mode=os.RTLD_NOLOAD)
    seen = []

    def recorded(q, k, v, attn_mask=None, is_causal=False, scale=None, enable_gqa=False):
        seen.append(gomp.omp_get_max_threads())
        return F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, is_causal=is_causal, scale=scale,
                                              enable_gqa=enable_gqa)

    assert torch.get_num_threads() == 1                  # the module's one_thread fixture
    assert check_attention(recorded).passed
    assert seen and set(seen) == {1}


def test_cli_parent_imports_no_torch_for_a_cpu_check():
    """`multihead check` imports torch in the child only (one ~1.3 s import per check, not two);
    the parent needs it just to check a --device other than cpu."""
    import subprocess

    code = ("import sys\n"
            "import multihead.checker.isolate as isolate\n"
            "def stop(*a):\n    print('reached run_isolated')\n    raise SystemExit(0)   # stop before the child\n"
            "isolate.run_isolated = stop\n"
            "from multihead.cli import main\n"
            "try:\n    main(['check', 'torch.nn.functional:scaled_dot_product_attention'])\n"
            "except SystemExit:\n    pass\n"
            "print(sorted(m for m in ('torch', 'numpy') if m in sys.modules))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       cwd=os.path.dirname(HERE), env={**os.environ, "PYTHONPATH": os.path.dirname(HERE)})
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split("\n")[:2] == ["reached run_isolated", "[]"], r.stdout


def test_float64_check_sees_a_target_that_stores_in_float32():
    """float64 probes draw inputs with full float64 mantissas (reference.normal): a target that
    rounds them through float32 is reported as not reaching float64 accuracy (with inputs drawn in
    float32 it passed at 1e-16)."""
    def stores_in_float32(q, k, v, attn_mask=None, is_causal=False, scale=None):
        q, k, v = (t.float().double() for t in (q, k, v))
        return broken_impls.correct(q, k, v, attn_mask, is_causal, scale)

    low = check_attention(stores_in_float32, dtype="float64").finding("reference")
    assert low.status == "info" and "float64 in, float32 accuracy" in low.evidence, low.evidence
    assert check_attention(broken_impls.correct, dtype="float64").finding("reference").status == "pass"


# -- the float64 contract, on both SIMD paths (issue 25) ----------------------------------------------
_FLOAT64_CONTRACT = r"""
import json, sys, torch
sys.path.insert(0, "tests")
torch.set_num_threads(1)
from broken_paths import correct_packed_gqa
from multihead.checker import check_attention

def in_float32(q, k, v, attn_mask=None, is_causal=False, scale=None):
    # the issue's old fixture: float64 inputs computed in float32, rounded back
    m = attn_mask.float() if attn_mask is not None and attn_mask.is_floating_point() else attn_mask
    return correct_packed_gqa(q.float(), k.float(), v.float(), m, is_causal, scale).to(q.dtype)

out = {"capability": torch.backends.cpu.get_cpu_capability()}
for name, fn in (("correct", correct_packed_gqa), ("in_float32", in_float32)):
    r = check_attention(fn, dtype="float64", expect_alignment="bottom-right")
    out[name] = {"passed": r.passed, "status": {f.check: f.status for f in r.findings},
                 "dtypes": check_attention(fn, expect_alignment="bottom-right").finding("dtypes").status}
print(json.dumps(out))
"""


@pytest.mark.parametrize("capability", ["avx2", "default"])
def test_float64_contract_on_both_simd_paths(capability):
    """A float64 input computed in float64 passes every check with no flag; the same kernel computing
    it in float32 is flagged (INFO: float64 in, float32 accuracy) and fails nothing, under the AVX2
    kernels and torch's scalar ones alike (ATEN_CPU_CAPABILITY; the AVX-512 path is the default run's)."""
    import subprocess
    env = dict(os.environ, ATEN_CPU_CAPABILITY=capability)
    proc = subprocess.run([sys.executable, "-c", _FLOAT64_CONTRACT], capture_output=True, text=True, timeout=300,
                          env=env, cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["capability"] == ("DEFAULT" if capability == "default" else "AVX2")
    ok, low = got["correct"], got["in_float32"]
    assert ok["passed"] and set(ok["status"].values()) == {"pass"} and ok["dtypes"] == "pass", ok
    assert low["passed"] and low["status"]["reference"] == "info" and low["dtypes"] == "info", low
    for check in ("gqa_masks", "long_keys", "decode", "padding", "additive_mask"):
        assert low["status"][check] == "info", (check, low)


def test_module_whose_head_width_is_d(capsys):
    """Issue 25 item 4: `d` read as the model width gave x [2, 3, 16] to a module of width 64 (exit 2,
    a matmul shape error, no word of what was assumed). Now each width the module suggests is tried
    against it, and the report says which one it took."""
    # an instance (D = 4 x 16); the class is built with d=64 (its `d` parameter filled as a width), D = 256
    for target, D, d in ((broken_impls.HeadWidthD(), 64, 16), (broken_impls.HeadWidthD, 256, 64)):
        report = check_attention(target, signature="module")
        assert report.passed, str(report)
        assert any(f"model width D={D}, from the first Linear's in_features" in n and f"D={d} (attribute d)" in n
                   for n in report.notes), report.notes
    path = os.path.join(os.path.dirname(__file__), "broken_impls.py")
    assert main(["check", f"{path}:HeadWidthD", "--signature", "module"]) == 0
    assert "D=256" in capsys.readouterr().out


# -- the audit of `multihead check` (/tmp/audit-check findings 1-5, 9-11) --------------------------------
def _sdpa_weights(q, k, v, attn_mask, is_causal, scale, diagonal_offset=0):
    """Plain float32 softmax(q k^T * scale) with a bottom-right causal mask moved by diagonal_offset
    (0 right, -1 hides the diagonal); returns the scores' softmax and v expanded to H heads."""
    H, Tq, Tk = q.shape[1], q.shape[2], k.shape[2]
    k, v = k.repeat_interleave(H // k.shape[1], 1), v.repeat_interleave(H // v.shape[1], 1)
    s = (q.float() @ k.float().transpose(-1, -2)) * (q.shape[-1] ** -0.5 if scale is None else scale)
    if is_causal:
        keep = torch.ones(Tq, Tk, dtype=torch.bool).tril(Tk - Tq + diagonal_offset)
        s = s.masked_fill(~keep, float("-inf"))
    if attn_mask is not None:
        s = s.masked_fill(~attn_mask, float("-inf")) if attn_mask.dtype == torch.bool else s + attn_mask
    return torch.softmax(s, -1), v.float()


def dropout_left_on(q, k, v, attn_mask=None, is_causal=False, scale=None):
    w, v = _sdpa_weights(q, k, v, attn_mask, is_causal, scale)
    w = F.dropout(w.nan_to_num(0.0), p=0.1, training=True)            # BUG: dropout at inference
    return (w @ v).to(q.dtype)


def causal_hides_diagonal(q, k, v, attn_mask=None, is_causal=False, scale=None):
    w, v = _sdpa_weights(q, k, v, attn_mask, is_causal, scale, diagonal_offset=-1)   # BUG: tril(-1)
    return (w.nan_to_num(0.0) @ v).to(q.dtype)


def causal_hides_diagonal_nan(q, k, v, attn_mask=None, is_causal=False, scale=None):
    w, v = _sdpa_weights(q, k, v, attn_mask, is_causal, scale, diagonal_offset=-1)   # BUG: tril(-1), row 0 NaN
    return (w @ v).to(q.dtype)


def returns_nan(q, k, v, attn_mask=None, is_causal=False, scale=None):
    return torch.full_like(q, float("nan"))                              # BUG


def fp16_everywhere(q, k, v, attn_mask=None, is_causal=False, scale=None):
    H, Tq, Tk = q.shape[1], q.shape[2], k.shape[2]
    k, v = k.repeat_interleave(H // k.shape[1], 1), v.repeat_interleave(H // v.shape[1], 1)
    qh, kh, vh = q.half(), k.half(), v.half()                           # BUG: computes in fp16 whatever comes in
    s = (qh @ kh.transpose(-1, -2)) * (q.shape[-1] ** -0.5 if scale is None else scale)
    if is_causal:
        s = s.masked_fill(~torch.ones(Tq, Tk, dtype=torch.bool).tril(Tk - Tq), float("-inf"))
    if attn_mask is not None:
        s = s.masked_fill(~attn_mask, float("-inf")) if attn_mask.dtype == torch.bool else s + attn_mask
    return (torch.softmax(s, -1).nan_to_num(0.0) @ vh).to(q.dtype)     # a float32 bias: RuntimeError in s @ v


class DropoutMHA(nn.Module):
    """A correct module with nn.Dropout on the weights: right in eval mode, random in training mode."""

    def __init__(self, d_model: int = 64, n_heads: int = 4, n_kv_heads: int = 4, always: bool = False):
        super().__init__()
        self.d_model, self.n_heads, self.n_kv_heads, self.always = d_model, n_heads, n_kv_heads, always
        self.qkv, self.o = nn.Linear(d_model, 3 * d_model), nn.Linear(d_model, d_model)
        self.drop = nn.Dropout(0.1)

    def forward(self, x, *, attn_mask=None, is_causal=False):
        B, T, D = x.shape
        q, k, v = (t.view(B, T, self.n_heads, -1).transpose(1, 2) for t in self.qkv(x).chunk(3, -1))
        w, v = _sdpa_weights(q, k, v, attn_mask, is_causal, None)
        w = w.nan_to_num(0.0)
        # BUG when always=True: dropout whatever the mode
        w = F.dropout(w, 0.1, training=True) if self.always else self.drop(w)
        return self.o((w @ v).to(x.dtype).transpose(1, 2).reshape(B, T, D))


def test_audit1_a_target_that_hangs_on_its_first_call_is_a_timeout_in_process():
    """check_attention's setup (the first calls, which learn what the target accepts) ran outside
    the watchdog: a target hanging there hung the caller forever, whatever `timeout` said."""
    import threading
    import time

    release = threading.Event()

    def hangs(q, k, v, attn_mask=None, is_causal=False, scale=None):
        release.wait(60)                      # released at the end of the test (the thread is a daemon)
        return F.scaled_dot_product_attention(q, k, v)

    t0 = time.monotonic()
    try:
        report = check_attention(hangs, timeout=1.0)
    finally:
        wall = time.monotonic() - t0
        release.set()
    assert wall < 30, wall                    # was: blocked until the target returned (60 s here, forever in the audit)
    assert [f.check for f in report.causes] == ["timeout"], str(report)
    evidence = report.finding("timeout").evidence
    assert "setup" in evidence and "did not finish within 1 s" in evidence and "Tq=3, Tk=3, d=8" in evidence
    assert report.finding("reference").status == "skip" and not report.passed


def test_audit2_a_target_that_exits_on_its_first_call_is_an_exit_finding_in_process():
    import hostile_targets

    report = check_attention(hostile_targets.exits_on_first_call)    # was: SystemExit(0) out of check_attention
    assert [f.check for f in report.causes] == ["exit"] and not report.passed
    assert "called sys.exit(0)" in report.finding("exit").evidence and "setup" in report.finding("exit").evidence


def test_audit9_cli_setup_exit_and_hang_name_the_stage_and_the_call(capsys, monkeypatch):
    monkeypatch.chdir(os.path.dirname(HERE))
    assert main(["check", "tests/hostile_targets.py:exits_on_first_call", "--json"]) == 1
    d = json.loads(capsys.readouterr().out)
    exit_ = next(f for f in d["findings"] if f["check"] == "exit")
    assert "during setup" in exit_["evidence"] and "during probe ," not in exit_["evidence"], exit_
    assert "Tq=3, Tk=3, d=8" in exit_["evidence"]
    assert main(["check", "tests/hostile_targets.py:hangs_on_first_call", "--timeout", "2", "--json"]) == 1
    d = json.loads(capsys.readouterr().out)
    timeout = next(f for f in d["findings"] if f["check"] == "timeout")
    # answered by the child's own watchdog (the call sleeps, releasing the GIL): no GIL excuse, the call named
    assert "setup" in timeout["evidence"] and "Tq=3, Tk=3, d=8" in timeout["evidence"], timeout
    assert "GIL" not in timeout["evidence"] and "(setup)" not in timeout["evidence"]


def test_audit9_a_child_killed_for_holding_the_gil_names_the_call_in_flight(capsys, monkeypatch):
    monkeypatch.chdir(os.path.dirname(HERE))
    assert main(["check", "tests/hostile_targets.py:holds_the_gil_on_long_keys", "--timeout", "2", "--json"]) == 1
    timeout = next(f for f in json.loads(capsys.readouterr().out)["findings"] if f["check"] == "timeout")
    assert "probe long_keys did not finish within 2 s; the call in flight: B=2, H=2, H_kv=2, Tq=4, Tk=2048" in \
        timeout["evidence"] and "holds the GIL" in timeout["evidence"], timeout


def test_audit3_dropout_left_on_is_named_nondeterministic_not_three_other_bugs():
    report = check_attention(dropout_left_on)
    assert [f.check for f in report.causes] == ["determinism"], str(report)
    assert "nondeterministic: dropout or randomness left on" in report.finding("determinism").evidence
    assert "model.eval()" in report.finding("determinism").fix


def test_audit3_a_module_in_training_mode_is_checked_in_eval_mode_and_says_so():
    report = check_attention(DropoutMHA())                     # an instance, in training mode as built
    assert report.passed, str(report)
    assert report.finding("determinism").status == "info"
    assert "differs from eval mode" in report.finding("determinism").evidence
    assert any("training mode" in n and ".eval()" in n for n in report.notes), report.notes
    report = check_attention(DropoutMHA(always=True))          # dropout whatever the mode: .eval() cannot help
    assert [f.check for f in report.causes] == ["determinism"], str(report)


def test_audit4_a_causal_mask_hiding_the_diagonal_is_the_root_cause():
    report = check_attention(causal_hides_diagonal, expect_alignment="bottom-right")
    assert [f.check for f in report.causes] == ["causal_mask"], str(report)
    assert "normalization" in {f.check for f in report.failures}       # a consequence: row 0 has no key
    assert "hides the diagonal too" in report.finding("causal_mask").evidence
    report = check_attention(causal_hides_diagonal_nan, expect_alignment="bottom-right")
    # row 0 left NaN: the causal mask is still the cause (and the NaN of fully masked rows a second bug)
    assert {f.check for f in report.causes} == {"causal_mask", "fully_masked_rows"}, str(report)
    evidence = report.finding("causal_mask").evidence
    assert "leaks into the past" not in evidence and "hides the diagonal too" in evidence and "inf/NaN" in evidence


def test_audit5_long_keys_states_the_pattern_its_evidence_shows():
    report = check_attention(causal_hides_diagonal, expect_alignment="bottom-right")
    evidence = report.finding("long_keys").evidence
    # only the causal case fails, while Tk = 1000, 2900 and 333 (not multiples of 64) pass
    assert "only the case(s) with is_causal fail" in evidence and "multiple of 64" not in evidence, evidence


def test_audit10_nan_everywhere_is_one_cause_not_head_or_batch_mixing():
    report = check_attention(returns_nan)
    assert [f.check for f in report.causes] == ["finite_output"], str(report)
    assert "every output is NaN" in report.finding("finite_output").evidence
    for check in ("head_independence", "batch_independence", "gqa_grouping"):
        assert report.finding(check).status == "skip" and "mixed" not in report.finding(check).evidence


def test_audit11_normalization_range_has_digits_and_crashes_count_alike():
    report = check_attention(fp16_everywhere)
    evidence = report.finding("normalization").evidence
    assert "1..1 times" not in evidence and "1.0000" in evidence, evidence
    # the same RuntimeError (a float32 bias added to fp16 scores) is a crash in both checks
    for check in ("decode", "additive_mask"):
        f = report.finding(check)
        assert f.status == "fail" and "RuntimeError" in f.evidence and "a legal input" in f.evidence, f


class _InferenceOnly(nn.Module):
    """A correct module that refuses training mode (review: the determinism check's .train() call failed it)."""

    def __init__(self, d_model: int = 64, n_heads: int = 4):
        super().__init__()
        self.d_model, self.n_heads = d_model, n_heads
        self.qkv, self.o = nn.Linear(d_model, 3 * d_model), nn.Linear(d_model, d_model)

    def forward(self, x, attn_mask=None, is_causal=False):
        if self.training:
            raise RuntimeError("inference-only module: call .eval()")
        B, T, D = x.shape
        q, k, v = (t.view(B, T, self.n_heads, -1).transpose(1, 2) for t in self.qkv(x).chunk(3, -1))
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, is_causal=is_causal)
        return self.o(y.transpose(1, 2).reshape(B, T, D))


def test_review_an_inference_only_module_is_not_failed_by_the_training_mode_comparison():
    report = check_attention(_InferenceOnly().eval())
    det = next(f for f in report.findings if f.check == "determinism")
    assert det.status == "info" and "not compared" in det.evidence and "RuntimeError" in det.evidence
    assert not [f.check for f in report.findings if f.status == "fail"]
