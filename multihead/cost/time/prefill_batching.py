"""Prompts prefilled together: the engine's prefill token budget and the closed-loop queue of batched prefills.

Serving engines do not prefill one waiting prompt at a time. A scheduler step takes every waiting prompt that
fits a token budget (chunking the last one when it does not fit whole):

- vLLM V1 schedules up to ``max_num_batched_tokens`` tokens per step, the running requests' decode tokens and
  the waiting prompts' (chunked) prefill tokens together. Its default for the OpenAI server is 8192 on a GPU of
  at least 70 GiB that is not an A100, else 2048 (``EngineArgs.get_batch_defaults`` in vllm/engine/arg_utils.py;
  the A100 exception is from vLLM PR #17885). The decode tokens of the running requests take part of the budget.
- vLLM V0 (no chunked prefill by default below 32K context) prefills the waiting prompts together up to
  ``max_num_batched_tokens`` = max(max_model_len, 2048) tokens, in steps of their own (vllm/config.py,
  SchedulerConfig); the model's context length stands for max_model_len.
- SGLang builds a prefill batch of waiting requests up to ``chunked_prefill_size`` tokens (and
  ``max_prefill_tokens``, 16384 by default), run as a step of its own (decode pauses; mixed chunks are off by
  default): 2048 below 35 GB of GPU memory, 8192 below 160 GB (H100, H200, A100), 16384 above (B200, MI300X)
  (python/sglang/srt/server_args.py, ``ServerArgs.__post_init__``).
- TensorRT-LLM's in-flight batching holds up to ``max_num_tokens`` tokens a step, 8192 by default (the LLM API's
  and ``trtllm-build``'s default), context and generation requests together.
- gpt-fast serves one request: no batch.

For a large MoE/MLA model on many GPUs a short prompt's prefill is bound by reading the weights and by the
forward's fixed costs, so a step of k prompts costs far less than k single prefills; timing.prefill(setup, T,
batch=k) times it.

The queue (``batched_prefill_queue``): c requests in a closed loop, each in turn prefilled (the prefill stage) and
decoded (the rest of its life, ``think_s``). Mean value analysis as timing.prefill_queue does for one prompt at a
time, with the prefill stage as a batch server: an arriving prompt joins the prompts already waiting, so the batch
it forms holds b = min(k, 1 + Q) prompts (Q the mean queue it finds, by the arrival theorem the queue of the loop
with c - 1 requests), and each prompt costs the server T(b) / b. With k = 1 (a budget below two prompts) it is
timing.prefill_queue exactly. Its first token then waits for the batch in service to end (half of it when the
server is busy, share U), for the full batches of the prompts queued ahead of it beyond its own batch, and for its
own batch:

    TTFT - fixed = U T(b_s) / 2 + max(0, W + 1 - k) / k * T(k) + T(min(k, W + 1)),   W = max(0, Q - U b_s)

(b_s = max(1, min(b, Q / U)) the batch in service, which holds only prompts the arrival found, so U b_s <= Q;
W the prompts waiting outside it), which at k = 1 is timing's one + wait = S (1 + Q - U/2). When batching saves
nothing (T(b) = b T(1)) it is T(1) (1 + Q - U b_s / 2), never above one at a time.
Fractional batches interpolate T linearly between the integer batches around them.
"""
from __future__ import annotations

import math

BUDGET_SOURCES = {
    "vllm@v1": "vLLM V1 max_num_batched_tokens (OpenAI server default: 8192 on >= 70 GiB GPUs other than A100, "
               "else 2048; vllm/engine/arg_utils.py get_batch_defaults), decode tokens included",
    "vllm@v0": "vLLM V0 max_num_batched_tokens = max(max_model_len, 2048) (SchedulerConfig; no chunked prefill below "
               "32K context)",
    "sglang": "SGLang chunked_prefill_size (2048 below 35 GB, 8192 below 160 GB, else 16384; server_args.py), at most "
              "max_prefill_tokens 16384",
    "tensorrt-llm": "TensorRT-LLM max_num_tokens 8192 (LLM API / trtllm-build default)",
    "gpt-fast": "gpt-fast: one request, no batch",
}
GIB = 1024 ** 3


def _gpu_gib(gpu) -> float:
    mem = getattr(gpu, "reported_memory_bytes", 0.0) or getattr(gpu, "memory_bytes", 0.0)
    return mem / GIB


def token_budget(setup) -> tuple[float, bool, str]:
    """(tokens one step may prefill, whether the running requests' decode tokens share that budget, its source)
    of ``setup``'s engine and version family at its GPU's memory (module docstring)."""
    engine = setup.engine
    gib = _gpu_gib(setup.gpu)
    if engine == "vllm":
        key = setup.cost_key
        if key.endswith("v0"):
            ctx = getattr(setup.spec, "max_position_embeddings", None) or 2048
            return float(max(ctx, 2048)), False, BUDGET_SOURCES["vllm@v0"]
        big = gib >= 70 and "a100" not in setup.gpu.name.lower()
        return (8192.0 if big else 2048.0), True, BUDGET_SOURCES["vllm@v1"]
    if engine == "sglang":
        mib = gib * 1024        # server_args compares the GPU's memory in MiB: gpu_mem < 35 * 1024, < 160 * 1024
        size = 2048 if mib < 35 * 1024 else 8192 if mib < 160 * 1024 else 16384
        return float(min(size, 16384)), False, BUDGET_SOURCES["sglang"]
    if engine == "tensorrt-llm":
        return 8192.0, True, BUDGET_SOURCES["tensorrt-llm"]
    return 0.0, False, BUDGET_SOURCES.get(engine, f"{engine}: no batch")


def prompts_per_step(setup, input_len: int, concurrency: int) -> float:
    """k: prompts of ``input_len`` tokens one step prefills, at least 1 and at most ``concurrency`` (the budget
    less the other running requests' decode tokens where they share it, over the prompt's length; the engines
    chunk the prompt that does not fit whole, so k is not rounded)."""
    budget, shared, _ = token_budget(setup)
    if shared:
        budget -= max(0, concurrency - 1)
    return max(1.0, min(float(concurrency), budget / max(1, input_len)))


def batch_seconds(setup, input_len: int, one_s: float):
    """``batch_s(b)``: seconds of one prefill of b prompts of ``input_len`` tokens (timing.prefill(batch=b)), each
    computed once; ``one_s`` is b = 1's, already known to the caller."""
    from multihead.cost.time.timing import prefill
    cache = {1: one_s}

    def batch_s(b: int) -> float:
        if b not in cache:
            cache[b] = prefill(setup, input_len, batch=b).total_s
        return cache[b]
    return batch_s


def interruption(batch_s: float, step_s: float, mixed: bool) -> float:
    """Seconds a prefill step of ``batch_s`` costs the requests that are decoding: all of it where decode pauses
    for the prefill (SGLang), less the decode step it carries where the two share a step (vLLM V1, TensorRT-LLM)."""
    return max(0.0, batch_s - step_s) if mixed else batch_s


def interpolate(batch_s, b: float) -> float:
    """T(b) at a fractional batch: linear between the integer batches around it (``batch_s(int) -> seconds``)."""
    lo = max(1, math.floor(b))
    if b <= lo:
        return batch_s(lo)
    w = b - lo
    return (1 - w) * batch_s(lo) + w * batch_s(lo + 1)


def batched_prefill_queue(c: int, batch_s, k: float, think_s: float) -> dict:
    """The closed loop of c requests with batched prefills (module docstring): ``batch_s(b)`` the seconds of a
    prefill of b prompts (b integer >= 1), ``k`` prompts per step at most, ``think_s`` each request's time outside
    the prefill stage. Returns {"ttft_s": TTFT less the request's fixed cost and the decode-step alignment,
    "wait_s": its part spent waiting for other prompts' prefills, "busy": U, "per_prompt_s": T(b)/b, "batch": b}."""
    one = batch_s(1)
    k = max(1.0, float(k))

    def per_prompt(queue: float) -> tuple[float, float]:
        b = min(k, 1.0 + queue)
        return b, min(one, interpolate(batch_s, b) / b)     # (a batch is never slower than its prompts one by one)

    queue = throughput = 0.0
    for n in range(1, c):
        _, s = per_prompt(queue)
        residence = s * (1.0 + queue)
        throughput = n / (residence + think_s)
        queue = throughput * residence
    b, s = per_prompt(queue)
    busy = min(1.0, throughput * s)
    # the batch in service holds prompts the arrival found: at most queue / busy of them on average, at least one
    served = max(1.0, min(b, queue / busy)) if busy > 0 else 1.0
    waiting = max(0.0, queue - busy * served)
    own_batch = min(k, waiting + 1.0)
    t_b, t_k = interpolate(batch_s, served), interpolate(batch_s, k)
    ahead = busy * t_b / 2.0 + max(0.0, waiting + 1.0 - k) / k * t_k
    own = interpolate(batch_s, own_batch)
    return {"ttft_s": ahead + own, "wait_s": ahead + own - one, "busy": busy, "per_prompt_s": s, "batch": b}
