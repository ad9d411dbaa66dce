"""One serving operating point: how fast requests run at a stated load (``serving.at``).

The load is either a closed loop of ``concurrency`` requests in flight (a benchmark client with N
users: each sends its next request when the last one finished) or an open loop of
``request_rate`` requests per second arriving as a Poisson process (independent users). Requests
have ``input_len`` prompt and ``output_len`` new tokens; ``data_parallel_size`` replicas of the
model sit behind a router that spreads the requests evenly.

What a replica can run at once is the smallest of the requests it is given, the engine's
``max_num_seqs`` and the requests the KV pool holds (``kv_capacity_requests``); the rest wait in
the engine's queue (vLLM and SGLang queue them; when growing contexts outgrow the pool, vLLM
preempts running requests and recomputes them later, which this model does not time).

The times of a running batch come from the one GPU time model (cost/time/timing.py: serving_point and
its decode step and prefill); this module only adds the load:

* closed loop, n <= slots: ``timing.serving_point`` at n (prefills interleaved with decoding,
  prompts queued for the prefills ahead of them by mean value analysis);
* closed loop, n > slots: the slots run as above; by Little's law each request spends
  n / X in the system, X the slots' request throughput, and the difference is queueing before its
  first token (TTFT grows, TPOT does not);
* open loop (Poisson): prefills form an M/D/1 queue (utilisation rho = rate x one prefill; mean
  wait rho S / (2 (1 - rho)), Pollaczek-Khinchine with deterministic service); while a request
  decodes, the prefills of arrivals take a share rho of the time, so TPOT = step / (1 - rho); the
  decode batch is the requests in decode by Little's law, solved as a fixed point. A rate at or
  above what the replicas can serve is "overloaded": the queue grows without bound and no time
  is given.
"""
from __future__ import annotations

import math

from multihead.cost.time import timing
from multihead.messages import say

ARRIVALS = {"closed": "closed loop: each of N clients sends its next request when the last one ends",
            "poisson": "open loop: Poisson arrivals at the stated rate (M/D/1 prefill queue, Little's law "
                       "for the decode batch)"}


def _check_load(concurrency, request_rate) -> None:
    if (concurrency is None) == (request_rate is None):
        raise ValueError("concurrency: give exactly one of concurrency (closed loop) and request-rate (open loop)")
    if concurrency is not None and (isinstance(concurrency, bool) or not isinstance(concurrency, int)
                                    or not 1 <= concurrency <= 1 << 20):
        raise ValueError(f"concurrency: expected an integer in [1, {1 << 20}], got {concurrency!r}")
    if request_rate is not None and (isinstance(request_rate, bool) or not isinstance(request_rate, (int, float))
                                     or not math.isfinite(request_rate) or not 1e-6 <= request_rate <= 1e6):
        # from 1e-6 (one request in 11.6 days): a subnormal rate split over replicas was 0 (ZeroDivisionError)
        raise ValueError(f"request-rate: expected requests per second in [1e-06, 1e6], got {request_rate!r}")


def slots(max_num_seqs: int, kv_capacity_requests: float) -> int:
    """Requests one replica runs at once: max_num_seqs, or fewer when the KV pool holds fewer."""
    if kv_capacity_requests >= max_num_seqs:
        return int(max_num_seqs)
    return max(0, int(math.floor(kv_capacity_requests)))


def _closed_replica(setup: timing.Setup, n: int, input_len: int, output_len: int, cap: int,
                    cache: dict) -> dict:
    """Metrics of one replica with n requests in flight (closed loop), at most ``cap`` running."""
    b = min(n, cap)
    key = ("closed", b)
    if key not in cache:
        cache[key] = timing.serving_point(setup, b, input_len, output_len)
    p = cache[key]
    if n <= b:
        return {"n": n, "running": b, "queued": 0, "ttft_s": p.ttft_s, "tpot_s": p.tpot_s,
                "request_latency_s": p.request_latency_s, "requests_per_s": b / p.request_latency_s,
                "decode_bound": p.decode_bound}
    x = b / p.request_latency_s              # requests per second the running slots complete
    response = n / x                         # Little's law over the n requests in the loop
    wait = response - p.request_latency_s
    return {"n": n, "running": b, "queued": n - b, "ttft_s": p.ttft_s + wait, "tpot_s": p.tpot_s,
            "request_latency_s": response, "requests_per_s": x, "decode_bound": p.decode_bound}


def _step_s(setup: timing.Setup, batch: float, context: int, cache: dict) -> tuple[float, str]:
    """Decode step time at a fractional mean batch: linear between the integer batches around it."""
    lo = max(1, math.floor(batch))
    hi = max(lo, math.ceil(batch))
    out = []
    for b in dict.fromkeys((lo, hi)):
        key = ("step", b)
        if key not in cache:
            ph = timing.decode_step(setup, b, context)
            cache[key] = (ph.total_s, ph.bound)
        out.append(cache[key])
    if len(out) == 1 or batch <= lo:
        return out[0]
    w = batch - lo
    return (1 - w) * out[0][0] + w * out[1][0], out[1][1]


def _open_replica(setup: timing.Setup, rate: float, input_len: int, output_len: int, cap: int,
                  cache: dict) -> dict:
    """Metrics of one replica fed Poisson arrivals at ``rate`` requests/s (see the module doc)."""
    if "prefill" not in cache:
        cache["prefill"] = timing.prefill(setup, input_len).total_s
    one = cache["prefill"]
    fixed = setup.constants.request_overhead_s
    rho = rate * one
    overloaded = {"n": None, "running": cap, "queued": None, "ttft_s": None, "tpot_s": None,
                  "request_latency_s": None, "requests_per_s": None, "decode_bound": None, "overloaded": True}
    if rho >= 1.0 or cap < 1:
        return overloaded
    context = input_len + output_len // 2
    steps = max(output_len - 1, 0)
    decoding = 1.0
    for _ in range(200):                     # the fixed point n = rate * decode time is a contraction here
        step, bound = _step_s(setup, decoding, context, cache)
        tpot = step / (1.0 - rho)
        new = max(1.0, rate * steps * tpot)
        if new > cap:
            return overloaded
        if abs(new - decoding) <= 1e-6 * new:
            decoding = new
            break
        decoding = 0.5 * (decoding + new)
    step, bound = _step_s(setup, decoding, context, cache)
    tpot = step / (1.0 - rho)
    wait = rho * one / (2.0 * (1.0 - rho))
    ttft = fixed + one + wait + 0.5 * (1.0 - rho) * step
    latency = ttft + steps * tpot
    return {"n": rate * latency, "running": decoding, "queued": rate * wait, "ttft_s": ttft, "tpot_s": tpot,
            "request_latency_s": latency, "requests_per_s": rate, "decode_bound": bound}


def evaluate(setup: timing.Setup, input_len: int, output_len: int, *, concurrency: int | None = None,
             request_rate: float | None = None, data_parallel_size: int = 1, max_num_seqs: int = 1024,
             kv_capacity_requests: float = math.inf, cache: dict | None = None) -> dict:
    """The ``serving.at`` object: metrics at one load, over all ``data_parallel_size`` replicas.

    ``kv_capacity_requests``: requests of input_len + output_len tokens one replica's KV pool holds.
    ``cache``: a dict reused across calls with the same setup and lengths (the search passes one).
    Times are means over requests; throughputs are totals over the replicas.
    """
    _check_load(concurrency, request_rate)
    for name, v in (("input-len", input_len), ("output-len", output_len), ("data-parallel-size", data_parallel_size),
                    ("max-num-seqs", max_num_seqs)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name}: expected a positive integer, got {v!r}")
    cache = {} if cache is None else cache
    cap = slots(max_num_seqs, kv_capacity_requests)
    dp = data_parallel_size
    if concurrency is not None:
        base, extra = divmod(concurrency, dp)       # the router: `extra` replicas get one request more
        groups = [(n, k) for n, k in ((base + 1, extra), (base, dp - extra)) if k and n]
        if cap < 1:
            parts = []
        else:
            parts = [(_closed_replica(setup, n, input_len, output_len, cap, cache), k) for n, k in groups]
    else:
        parts = [(_open_replica(setup, request_rate / dp, input_len, output_len, cap, cache), dp)]
    gpus = setup.tp * setup.pp * dp
    out = {"arrival": "closed" if concurrency is not None else "poisson",
           "arrival_model": ARRIVALS["closed" if concurrency is not None else "poisson"],
           "concurrency": concurrency, "request_rate": request_rate, "input_len": input_len,
           "output_len": output_len, "data_parallel_size": dp, "gpus": gpus,
           "slots_per_replica": cap, "max_num_seqs": max_num_seqs}
    if not parts or any(p.get("overloaded") for p, _ in parts):
        why = say("load.no_request") if cap < 1 else say("load.unbounded")
        return {**out, "overloaded": True, "note": why, "kv_pool_holds": cap >= 1, "running": None, "queued": None,
                **{k: None for k in ("ttft_s", "tpot_s", "itl_s", "request_latency_s", "output_tokens_per_s",
                                     "output_tokens_per_s_per_gpu", "requests_per_s", "decode_bound")}}
    rps = sum(p["requests_per_s"] * k for p, k in parts)
    mean = {key: sum(p[key] * p["requests_per_s"] * k for p, k in parts) / rps
            for key in ("ttft_s", "tpot_s", "request_latency_s")}
    queued = sum(p["queued"] * k for p, k in parts)
    running = sum(p["running"] * k for p, k in parts)
    note = ""
    if concurrency is not None and queued:
        note = say("load.queued", queued=f"{queued:,}", concurrency=f"{concurrency:,}", cap=f"{cap:,}",
                   max_num_seqs=f"{max_num_seqs:,}", pool=f"{kv_capacity_requests:,.1f}")
    tokens = rps * output_len
    holds = queued == 0 if concurrency is not None else True    # open loop: the queue is for prefills
    return {**out, "overloaded": False, "note": note, "kv_pool_holds": holds,
            "running": running, "queued": queued, "ttft_s": mean["ttft_s"], "tpot_s": mean["tpot_s"],
            "itl_s": mean["tpot_s"], "request_latency_s": mean["request_latency_s"],
            "output_tokens_per_s": tokens, "output_tokens_per_s_per_gpu": tokens / gpus, "requests_per_s": rps,
            "decode_bound": parts[0][0]["decode_bound"]}
