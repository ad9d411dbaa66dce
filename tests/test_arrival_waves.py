"""Session 12: a fixed-concurrency benchmark's requests arriving in waves (cost/time/arrival_waves.py,
timing.ARRIVAL_WAVES, Constants.arrival_waves): a wave computed by hand, one request unchanged, the share's
blend, the fit's free parameter, and monotonicity by hypothesis."""
import dataclasses

import pytest
from hypothesis import given, settings, strategies as st

from multihead import cost
from multihead.cost.time import arrival_waves as aw
from multihead.cost.time import prefill_batching as pb
from multihead.cost.time import timing
from multihead.fits import timing_validation as tv

LLAMA = cost.catalog_model("Llama-3.1-8B")
DSR1 = tv._spec("DeepSeek-R1", tv.load_table())


def _gpu(name):
    return timing.make_gpu(name, cost.gpu_catalog()[name])


def _setup(spec=LLAMA, gpu="H100-SXM", tp=1, engine="vllm", share=0.5, **kw):
    c = dataclasses.replace(timing.load_constants(), arrival_waves=share)
    return timing.Setup(spec, _gpu(gpu), c, tp=tp, engine=engine, **kw)


@pytest.fixture
def waves_on(monkeypatch):
    monkeypatch.setattr(timing, "ARRIVAL_WAVES", True)


def test_wave_by_hand_sglang_pauses_decoding():
    """SGLang on B200: 16384-token batches, prompts of 4096 tokens -> k = 4 prompts per batch; c = 16 -> 4
    batches. With T(4) = 0.2 s, fixed 0.01 s, step 0.03 s, 101 output tokens: TTFT = 0.01 + 0.2 (4 + 1) / 2 =
    0.51 s; TPOT = 0.03 + (4 - 1) / 2 * 0.2 / 100 = 0.033 s (a paused decode pays all of T(k))."""
    s = _setup(DSR1, "B200", 8, "sglang")
    assert pb.prompts_per_step(s, 4096, 16) == 4.0
    ttft, tpot = aw.wave_ttft_tpot(s, 16, 4096, one_s=0.06, step_s=0.03, fixed_s=0.01, output_len=101,
                                   batch_s=lambda b: {4: 0.2}.get(b, 0.06 * b))
    assert ttft == pytest.approx(0.51)
    assert tpot == pytest.approx(0.033)


def test_wave_by_hand_mixed_steps_credit_the_decode_step():
    """vLLM V1 on H100: 8192 tokens a step less the 7 other requests' decode tokens, prompts of 2000 tokens ->
    k = 8185 / 2000 = 4.0925; c = 8 -> 8 / 4.0925 = 1.95480 batches. T(k) interpolated between T(4) = 0.4 and
    T(5) = 0.5: 0.40925. TTFT = 0.005 + 0.40925 (1.954795 + 1) / 2 = 0.609625 s; the decoding requests lose
    T(k) - step = 0.37925 per batch: TPOT = 0.03 + 0.477398 * 0.37925 / 99 = 0.031829 s."""
    s = _setup()
    k = pb.prompts_per_step(s, 2000, 8)
    assert k == pytest.approx(4.0925)
    ttft, tpot = aw.wave_ttft_tpot(s, 8, 2000, one_s=0.1, step_s=0.03, fixed_s=0.005, output_len=100,
                                   batch_s=lambda b: 0.1 * b)
    nb = 8 / k
    assert ttft == pytest.approx(0.005 + 0.40925 * (nb + 1) / 2)
    assert ttft == pytest.approx(0.609625, rel=1e-5)
    assert tpot == pytest.approx(0.03 + (nb - 1) / 2 * 0.37925 / 99)
    assert tpot == pytest.approx(0.031829, rel=1e-4)


def test_blend_is_linear_in_the_share():
    assert aw.blend(0.0, (1.0, 2.0), (3.0, 5.0)) == (1.0, 2.0)
    assert aw.blend(1.0, (1.0, 2.0), (3.0, 5.0)) == (3.0, 5.0)
    assert aw.blend(0.25, (1.0, 2.0), (3.0, 5.0)) == pytest.approx((1.5, 2.75))


@pytest.mark.parametrize("spec,gpu,tp,engine", [(LLAMA, "H100-SXM", 1, "vllm"), (DSR1, "B200", 8, "sglang"),
                                                (DSR1, "H200-SXM", 8, "tensorrt-llm")])
def test_one_request_and_the_switch(monkeypatch, spec, gpu, tp, engine):
    """One request is one wave of one prompt: unchanged. With the switch off (or a share of 0) nothing changes
    at any concurrency; on, a wave of 32 requests waits longer for its first token."""
    s = _setup(spec, gpu, tp, engine, share=0.6)
    monkeypatch.setattr(timing, "ARRIVAL_WAVES", False)
    off1, off32 = timing.serving_point(s, 1, 1000, 500), timing.serving_point(s, 32, 1000, 500)
    monkeypatch.setattr(timing, "ARRIVAL_WAVES", True)
    on1, on32 = timing.serving_point(s, 1, 1000, 500), timing.serving_point(s, 32, 1000, 500)
    assert (on1.ttft_s, on1.tpot_s) == (off1.ttft_s, off1.tpot_s)
    assert on32.ttft_s > off32.ttft_s
    zero = dataclasses.replace(s, constants=dataclasses.replace(s.constants, arrival_waves=0.0))
    z32 = timing.serving_point(zero, 32, 1000, 500)
    assert (z32.ttft_s, z32.tpot_s) == (off32.ttft_s, off32.tpot_s)


def test_the_share_is_fitted_only_with_the_switch(monkeypatch):
    table = tv.load_table()
    fitted = {**table, "rows": [r for r in table["rows"] if tv.split_of(r) in tv.FIT_SPLITS]}
    monkeypatch.setattr(timing, "ARRIVAL_WAVES", False)
    assert ("arrival_waves", None) not in tv.free_parameters(fitted)
    monkeypatch.setattr(timing, "ARRIVAL_WAVES", True)
    assert ("arrival_waves", None) in tv.free_parameters(fitted)
    assert tv.SCALARS["arrival_waves"] == (1e-3, 1.0)


CASES = [(LLAMA, "H100-SXM", 1, "vllm"), (LLAMA, "A100-80GB", 1, "vllm"), (DSR1, "B200", 8, "sglang"),
         (DSR1, "H200-SXM", 8, "tensorrt-llm")]


@settings(max_examples=30, deadline=None)
@given(case=st.sampled_from(CASES), c=st.integers(1, 200), inp=st.integers(32, 9000), out=st.integers(2, 3000),
       share=st.floats(0.0, 1.0))
def test_wave_ttft_grows_with_concurrency_and_the_share(case, c, inp, out, share):
    """A wave of one more request never reaches its first token sooner, and never sooner than one prompt's
    prefill; its TPOT is never below the plain decode step. The served TTFT lies between the evenly spread
    loop's and the wave's, whatever the share; aggregate tokens/s stays positive and finite."""
    spec, gpu, tp, engine = case
    s = _setup(spec, gpu, tp, engine, share=share)
    step = timing.decode_step(s, c, inp + out // 2).total_s
    one = timing.prefill(s, inp).total_s
    fixed = s.constants.request_overhead_s
    t1, p1 = aw.wave_ttft_tpot(s, c, inp, one, step, fixed, out)
    t2, _ = aw.wave_ttft_tpot(s, c + 1, inp, one, timing.decode_step(s, c + 1, inp + out // 2).total_s, fixed, out)
    assert t2 >= t1 * (1 - 1e-9)
    assert t1 >= fixed + one * (1 - 1e-9) and p1 >= step * (1 - 1e-12)
    old = timing.ARRIVAL_WAVES
    try:
        timing.ARRIVAL_WAVES = False
        spread = timing.serving_point(s, c, inp, out)
        timing.ARRIVAL_WAVES = True
        blended = timing.serving_point(s, c, inp, out)
    finally:
        timing.ARRIVAL_WAVES = old
    lo, hi = sorted((spread.ttft_s, t1)) if c > 1 else (spread.ttft_s, spread.ttft_s)
    assert lo * (1 - 1e-9) <= blended.ttft_s <= hi * (1 + 1e-9)
    assert 0 < blended.output_tokens_per_s < float("inf")


def test_mean_interruptions_by_hand():
    """Later batches spread evenly over [0, 6]: mean 3; at most 2 met (a mixed-step request decoding 2 more
    steps): the mean of min(x, 2) over [0, 6] is (2 * 6 - 2^2 / 2) / 6 = 10 / 6; none met with nothing to decode."""
    assert aw.mean_interruptions(6.0) == pytest.approx(3.0)
    assert aw.mean_interruptions(6.0, 2.0) == pytest.approx(10 / 6)
    assert aw.mean_interruptions(6.0, 6.0) == aw.mean_interruptions(6.0, 100.0) == pytest.approx(3.0)
    assert aw.mean_interruptions(6.0, 0.0) == 0.0 and aw.mean_interruptions(-0.5) == 0.0


@settings(max_examples=60, deadline=None)
@given(later=st.floats(0.0, 1e4), cap=st.floats(0.0, 1e4), more=st.floats(0.0, 1e3))
def test_mean_interruptions_bounded_and_monotone(later, cap, more):
    """Never more than the cap or half the later batches; never fewer with more batches or a higher cap."""
    m = aw.mean_interruptions(later, cap)
    assert 0.0 <= m <= min(cap, later / 2.0) + 1e-9
    assert aw.mean_interruptions(later + more, cap) >= m - 1e-9
    assert aw.mean_interruptions(later, cap + more) >= m - 1e-9


def test_a_short_output_on_mixed_steps_meets_few_batches(monkeypatch):
    """vLLM V1 carries decode tokens in the prefill's step: a request that decodes only 1 more token meets at most
    one later batch of its wave (k prompts, the engine's budget), so at 64 requests its TPOT is at most one such
    step. SGLang, which prefills the whole wave first, charges every later batch: (nb - 1) / 2 of them."""
    monkeypatch.setattr(timing, "ARRIVAL_WAVES", True)
    for engine, capped in (("vllm", True), ("sglang", False)):
        s = _setup(LLAMA, "H100-SXM", 1, engine, share=1.0)
        p = timing.serving_point(s, 64, 4000, 2)
        k = pb.prompts_per_step(s, 4000, 64)
        t_k = min(k * p.prefill_s, pb.interpolate(pb.batch_seconds(s, 4000, p.prefill_s), k))
        _, mixed, _ = pb.token_budget(s)
        assert mixed == capped and 64 / k > 3          # several later batches to meet
        per_batch = pb.interruption(t_k, p.decode_step_s, mixed)
        met = 1.0 - 1.0 / (2.0 * (64 / k - 1)) if capped else (64 / k - 1) / 2
        assert p.tpot_s == pytest.approx(p.decode_step_s + met * per_batch, rel=1e-9), engine
