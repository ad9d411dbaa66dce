"""Session 8: waiting prompts prefilled together up to the engine's token budget (cost/time/prefill_batching.py,
timing.PREFILL_BATCHING): the budgets by engine and GPU memory, a 2-request queue computed by hand, the k = 1
case equal to one prompt at a time, and monotonicity by hypothesis."""
import pytest
from hypothesis import given, settings, strategies as st

from multihead import cost
from multihead.cost.time import prefill_batching as pb
from multihead.cost.time import timing
from multihead.fits import timing_validation as tv

TABLE = tv.load_table()
DSR1 = tv._spec("DeepSeek-R1", TABLE) if "DeepSeek-R1" in TABLE["models"] else cost.catalog_model("DeepSeek-R1")
LLAMA = cost.catalog_model("Llama-3.1-8B")


def _gpu(name):
    return timing.make_gpu(name, cost.gpu_catalog()[name])


def _setup(spec=LLAMA, gpu="H100-SXM", tp=1, engine="vllm", **kw):
    return timing.Setup(spec, _gpu(gpu), timing.load_constants(), tp=tp, engine=engine, **kw)


def test_token_budgets_by_engine_version_and_gpu_memory():
    # vLLM V1, OpenAI server: 8192 on >= 70 GiB GPUs other than A100, else 2048; decode tokens share the budget
    assert pb.token_budget(_setup(gpu="H100-SXM"))[:2] == (8192.0, True)
    assert pb.token_budget(_setup(gpu="A100-80GB"))[:2] == (2048.0, True)
    # vLLM V0: max(max_model_len, 2048), prefill steps of their own
    v0 = pb.token_budget(_setup(engine_version="0.6.3"))
    assert v0[:2] == (float(max(LLAMA.max_position_embeddings, 2048)), False)
    # SGLang chunked_prefill_size: 8192 below 160 GB (H100, H200), 16384 above (B200, MI300X)
    assert pb.token_budget(_setup(gpu="H100-SXM", engine="sglang"))[:2] == (8192.0, False)
    assert pb.token_budget(_setup(gpu="H200-SXM", engine="sglang"))[:2] == (8192.0, False)
    assert pb.token_budget(_setup(gpu="B200", engine="sglang"))[:2] == (16384.0, False)
    assert pb.token_budget(_setup(gpu="MI300X", engine="sglang"))[:2] == (16384.0, False)
    assert pb.token_budget(_setup(engine="tensorrt-llm"))[:2] == (8192.0, True)
    assert pb.token_budget(_setup(engine="gpt-fast"))[0] == 0.0
    for s in (_setup(), _setup(engine="sglang"), _setup(engine="tensorrt-llm")):
        assert pb.token_budget(s)[2]        # each with its source


def test_prompts_per_step_by_hand():
    # vLLM V1 on H100: (8192 - 2 decode tokens) / 1000 = 8.19 prompts, capped at the 3 requests
    assert pb.prompts_per_step(_setup(), 1000, 3) == 3.0
    # 64 requests: (8192 - 63) / 1000 = 8.129
    assert pb.prompts_per_step(_setup(), 1000, 64) == pytest.approx(8.129)
    # SGLang on B200: 16384 / 4000 = 4.096 (no decode tokens in its prefill batch)
    assert pb.prompts_per_step(_setup(gpu="B200", engine="sglang"), 4000, 64) == pytest.approx(4.096)
    # a prompt longer than the budget: one at a time (chunked), and gpt-fast never batches
    assert pb.prompts_per_step(_setup(), 20000, 64) == 1.0
    assert pb.prompts_per_step(_setup(engine="gpt-fast"), 100, 64) == 1.0


def test_two_requests_by_hand():
    """T(1) = 1.0 s, T(2) = 1.2 s, T(3) = 1.4 s, think 10 s, k = 3. Loop (n = 1, empty queue): b = 1, s = 1,
    residence 1, X = 1/11, Q = 1/11. Final: b = 1 + 1/11 = 1.090909, T(b) = 1 + 0.090909 * 0.2 = 1.018182,
    s = T(b)/b = 0.933333, U = X s = 0.084848; the batch in service b_s = min(b, Q / U) = min(1.090909, 1.071429)
    = 1.071429, T(b_s) = 1.014286; W = Q - U b_s = 0; its own batch 1 prompt: T(1) = 1; ahead U T(b_s) / 2 =
    0.043030. TTFT - fixed = 1.043030 (one at a time: S (1 + Q - U/2) = 1 + 0.090909 - 0.045455 = 1.045455)."""
    times = {1: 1.0, 2: 1.2, 3: 1.4}
    q = pb.batched_prefill_queue(2, times.__getitem__, 3, 10.0)
    assert q["batch"] == pytest.approx(1.090909, abs=1e-6)
    assert q["per_prompt_s"] == pytest.approx(0.933333, abs=1e-6)
    assert q["busy"] == pytest.approx(0.084848, abs=1e-6)
    assert q["ttft_s"] == pytest.approx(1.043030, abs=1e-6)
    assert q["wait_s"] == pytest.approx(0.043030, abs=1e-6)
    wait, busy = timing.prefill_queue(2, 1.0, 10.0)
    assert 1.0 + wait == pytest.approx(1.045455, abs=1e-6) and q["ttft_s"] < 1.0 + wait


def test_three_requests_arriving_into_a_saturated_server_by_hand():
    """Think 0 (every request back at once), T(b) = 1 + 0.1 (b - 1), k = 3, c = 3. n = 1: b = 1, s = 1, R = 1,
    X = 1, Q = 1. n = 2: b = 2, s = 1.1 / 2 = 0.55, R = 0.55 * 2 = 1.1, X = 2 / 1.1, Q = 2. Final: b = 3,
    s = 1.2 / 3 = 0.4, U = min(1, X s) = 0.727273; the batch in service b_s = min(3, Q / U) = 2.75, T(b_s) = 1.175;
    W = 2 - 0.727273 * 2.75 = 0 -> own batch of 1, T(1) = 1; ahead U T(b_s) / 2 = 0.427273: TTFT - fixed =
    1.427273."""
    q = pb.batched_prefill_queue(3, lambda b: 1 + 0.1 * (b - 1), 3, 0.0)
    assert q["busy"] == pytest.approx(0.727273, abs=1e-6)
    assert q["ttft_s"] == pytest.approx(1.427273, abs=1e-6)


@settings(max_examples=60, deadline=None)
@given(c=st.integers(2, 200), one=st.floats(1e-3, 2.0), think=st.floats(0.0, 100.0))
def test_one_prompt_per_step_is_the_one_at_a_time_queue(c, one, think):
    q = pb.batched_prefill_queue(c, lambda b: one * b, 1, think)
    wait, busy = timing.prefill_queue(c, one, think)
    assert q["ttft_s"] == pytest.approx(one + wait, rel=1e-9, abs=1e-12)
    assert q["busy"] == pytest.approx(busy, rel=1e-9, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(c=st.integers(2, 200), one=st.floats(1e-3, 2.0), think=st.floats(0.0, 100.0), k=st.floats(1.0, 64.0),
       share=st.floats(0.0, 1.0))
def test_batched_never_slower_than_one_at_a_time(c, one, think, k, share):
    """T(b) = one * (share + (1 - share) b): a part of the prefill shared by the batch (weights, fixed costs)."""
    q = pb.batched_prefill_queue(c, lambda b: one * (share + (1 - share) * b), k, think)
    wait, _ = timing.prefill_queue(c, one, think)
    assert q["ttft_s"] <= (one + wait) * (1 + 1e-9)


def test_no_saving_from_batching_two_requests_in_lockstep():
    """Think 0, T(b) = b (batching saves nothing), k = 2, c = 2: Q = 1, U = 1, b = 2, but the batch in service
    holds only the one prompt found (b_s = Q / U = 1): ahead 1/2, own T(1) = 1, TTFT 1.5 as one at a time (before
    b_s the in-service batch was taken as b = 2 and TTFT came out 2.0, above one at a time)."""
    q = pb.batched_prefill_queue(2, float, 2.0, 0.0)
    wait, _ = timing.prefill_queue(2, 1.0, 0.0)
    assert q["ttft_s"] == pytest.approx(1.5) == pytest.approx(1.0 + wait)


CASES = [(DSR1, "B200", 8, "sglang"), (LLAMA, "H100-SXM", 1, "vllm"), (DSR1, "H200-SXM", 8, "vllm")]


@pytest.mark.parametrize("spec,gpu,tp,engine", CASES)
def test_one_request_is_unchanged(monkeypatch, spec, gpu, tp, engine):
    s = _setup(spec, gpu, tp, engine)
    off = timing.serving_point(s, 1, 800, 300)
    monkeypatch.setattr(timing, "PREFILL_BATCHING", True)
    on = timing.serving_point(s, 1, 800, 300)
    assert on.ttft_s == off.ttft_s and on.tpot_s == off.tpot_s


@settings(max_examples=25, deadline=None)
@given(case=st.sampled_from(CASES), c=st.integers(1, 127), inp=st.integers(64, 6000), out=st.integers(16, 2000))
def test_ttft_non_decreasing_in_concurrency_and_never_above_one_at_a_time(case, c, inp, out):
    spec, gpu, tp, engine = case
    s = _setup(spec, gpu, tp, engine)
    old, waves = timing.PREFILL_BATCHING, timing.ARRIVAL_WAVES
    try:
        timing.ARRIVAL_WAVES = False        # the batched queue against the one-at-a-time queue, neither in waves
        timing.PREFILL_BATCHING = True
        lo, hi = timing.serving_point(s, c, inp, out), timing.serving_point(s, c + 1, inp, out)
        timing.PREFILL_BATCHING = False
        single = timing.serving_point(s, c + 1, inp, out)
    finally:
        timing.PREFILL_BATCHING, timing.ARRIVAL_WAVES = old, waves
    assert hi.ttft_s >= lo.ttft_s * (1 - 1e-9)
    _, mixed, _ = pb.token_budget(s)
    if not mixed:
        assert hi.ttft_s <= single.ttft_s * (1 + 1e-9)
    # Where decode tokens share the step with the prefill (vLLM V1, TensorRT-LLM) the batched path credits each
    # prefill with the decode step inside it, so requests come back to the queue sooner than one at a time
    # assumes; its TTFT may then sit a hair above (seen: Llama-3.1-8B on H100, c = 2, 200-token prompts,
    # 0.06928442 s vs 0.06928438 s). What holds there is the TPOT: never above one at a time.
    assert hi.tpot_s <= single.tpot_s * (1 + 1e-9)
