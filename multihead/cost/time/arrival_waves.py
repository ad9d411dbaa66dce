"""Requests that arrive in waves: the closed loop of a fixed-concurrency benchmark kept in step.

A benchmark client at concurrency c (``vllm bench serve --max-concurrency``, SGLang's ``bench_serving``,
genai-perf, InferenceX's harness) starts its first c requests together. When every request asks for about the
same number of output tokens (fixed ``--random-output-len``, ``ignore_eos``), they also finish within a few steps
of each other, so the next c requests arrive together again: the loop stays in step, wave after wave. Mean value
analysis (``timing.prefill_queue``) assumes the opposite extreme, arrivals spread evenly over a request's life.

One wave, ``c`` prompts of ``input_len`` tokens arriving at once:

- the engine prefills them ``k`` at a time (its token budget, ``prefill_batching.prompts_per_step``), ``nb = c / k``
  batches of ``T(k)`` seconds each (``timing.prefill(setup, input_len, batch=k)``, interpolated for fractional k);
- a prompt of the j-th batch gets its first token after j batches: mean TTFT = fixed + T(k) (nb + 1) / 2;
- the nb - j batches after its own interrupt its decoding: (nb - 1) / 2 batches on average, spread over its
  output_len - 1 steps. SGLang pauses decoding for a prefill batch (prefill first): all of the wave's later batches
  come before the request's second token, each costing all of T(k). Where decode tokens share the prefill's step
  (vLLM V1, TensorRT-LLM: mixed steps) a batch costs the decoding requests T(k) - step, their own step being in it,
  and each such step is one of the request's own output_len - 1 steps: a request that is done decoding is not
  interrupted, so it meets at most output_len - 1 of them (``mean_interruptions``).

At c = 1 the wave is one prompt: fixed + T(1), the same as the evenly spread loop. The fitted constant
``arrival_waves`` (Constants, 0-1) is the share of the wave picture in the served times: TTFT and TPOT are
(1 - w) x evenly spread + w x waves. How closely a harness keeps its requests in step (random output lengths with a
range ratio, client think time) is not stated by the measurements, so it is fitted, not derived. A request-rate
(open, Poisson) load does not come in waves: ``operating_point`` times it without this term.
"""
from __future__ import annotations

from multihead.cost.time import prefill_batching as pb


def wave_ttft_tpot(setup, c: int, input_len: int, one_s: float, step_s: float, fixed_s: float,
                   output_len: int, batch_s=None) -> tuple[float, float]:
    """(TTFT, TPOT) in seconds of c requests arriving together (module docstring): ``one_s`` one prompt's prefill,
    ``step_s`` a decode step of the c requests, ``fixed_s`` the request's fixed cost before its first token;
    ``batch_s(b)``: seconds of a prefill of b prompts (default: timing.prefill of the setup)."""
    batch_s = batch_s or pb.batch_seconds(setup, input_len, one_s)

    k = pb.prompts_per_step(setup, input_len, c)
    t_k = min(k * one_s, pb.interpolate(batch_s, k))     # a batch is never slower than its prompts one by one
    batches = c / k
    _, mixed, _ = pb.token_budget(setup)
    interrupt = pb.interruption(t_k, step_s, mixed)
    ttft = fixed_s + t_k * (batches + 1.0) / 2.0
    steps = max(output_len - 1, 0)
    met = mean_interruptions(batches - 1.0, steps if mixed else None)
    tpot = step_s + met * interrupt / max(steps, 1)
    return ttft, tpot


def mean_interruptions(later: float, cap: float | None = None) -> float:
    """Mean number of a wave's prefill batches after a request's own that it meets: ``later`` = nb - 1 batches
    after the first one's, the request's own position spread evenly over [0, later] (mean later / 2); ``cap``: at
    most that many (a request decoding in mixed steps meets one batch per step and stops after its last one):
    the mean of min(x, cap) over x uniform in [0, later]: cap - cap^2 / (2 later) once later > cap."""
    later = max(0.0, later)
    if cap is None or later <= cap:
        return later / 2.0
    return cap - cap * cap / (2.0 * later)


def blend(share: float, spread: tuple[float, float], waves: tuple[float, float]) -> tuple[float, float]:
    """(TTFT, TPOT): (1 - share) x the evenly spread loop's + share x the waves'."""
    return tuple((1.0 - share) * a + share * b for a, b in zip(spread, waves))
