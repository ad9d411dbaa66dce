"""The one configuration search: engine settings that serve a request, cheapest first.

One candidate type, the serving ``Request`` (cost/serving_answer.py: vLLM's flag names), one
evaluation, the engine's memory account (``serving_account``: the account the plan's one-pass
decision and its serving section read), and one order: fewest GPUs first (money), then the least
precision lost (quality: a KV dtype, then quantized weights). The plan's fallbacks (``more_gpus``,
``weight_quantization``, the decision's "see the fallbacks") and the serving section's
``fallbacks`` list are both read from this one result, so they cannot disagree.

A new search (another engine's flags, expert parallelism, a cheaper GPU) goes here: add the
candidates to ``candidates`` and, if it changes the order, a weight to ``LOSS``.
"""
from __future__ import annotations

import dataclasses

from multihead.cost.serving_answer import GPUS_PER_NODE, serving_account
from multihead.planner.launch import add_command
from multihead.planner.names import serving_bytes
# What each lever costs beyond GPUs: precision (quality) lost; the length (the request) is last.
LOSS = {"kv_cache_dtype": 1, "quantization": 2}
FLAGS = {"tensor_parallel_size": "--tensor-parallel-size", "pipeline_parallel_size": "--pipeline-parallel-size",
         "kv_cache_dtype": "--kv-cache-dtype", "quantization": "--quantization"}


def candidates(req, heads: int) -> list:
    """Combinations of: TP up to one node (dividing the heads), PP across nodes when a node is not
    enough, fp8 KV cache, fp8 weights; the request itself excluded."""
    tps = [t for t in (1, 2, 4, 8) if t >= req.tensor_parallel_size and heads % t == 0]
    out = []
    for tp in tps:
        for pp in ((req.pipeline_parallel_size,) if tp < GPUS_PER_NODE else (req.pipeline_parallel_size, 2, 4)):
            for kv in dict.fromkeys((req.kv_cache_dtype, "fp8")):
                for q in dict.fromkeys((req.quantization, "fp8")):
                    cand = dataclasses.replace(req, tensor_parallel_size=tp, pipeline_parallel_size=pp,
                                               kv_cache_dtype=kv, quantization=q)
                    if cand != req:
                        out.append(cand)
    return out


def cost(cand, base) -> tuple[int, int]:
    """(GPUs, precision lost): the search's order."""
    return (cand.tensor_parallel_size * cand.pipeline_parallel_size,
            sum(w for k, w in LOSS.items() if getattr(cand, k) != getattr(base, k)))


def changes(cand, base) -> list[str]:
    """The engine flags that differ from the request, as they are typed."""
    return [f"{flag} {getattr(cand, k)}" for k, flag in FLAGS.items() if getattr(cand, k) != getattr(base, k)]


def search(cfg: dict, req, heads: int, min_concurrency: float = 1.0, limit: int = 5, **account_kw) -> list[tuple]:
    """[(Request, ServingAccount)] that serve ``req`` at ``min_concurrency`` or more, cheapest first;
    under TP every KV figure is per GPU. ``account_kw``: ``spec`` / ``gpu_bytes`` for serving_account."""
    found = []
    for cand in candidates(req, heads):
        try:
            a, _ = serving_account(cfg, cand, **account_kw)
        except ValueError:
            continue                      # e.g. TP not dividing the KV heads
        if a.fits and a.max_concurrency >= min_concurrency:
            found.append((cost(cand, req), -a.max_concurrency, cand, a))
    found.sort(key=lambda f: (f[0], f[1]))
    return [(c, a) for _, _, c, a in found[:limit]]


def rows(found: list[tuple], req, account) -> list[dict]:
    """The serving object's ``fallbacks`` list: one row per found setting, then the length cut
    (it changes the request itself) when one shorter request would fit."""
    out = [{"flags": changes(c, req), "gpus": c.tensor_parallel_size * c.pipeline_parallel_size,
            "max_concurrency": f.max_concurrency, "kv_cache_tokens": f.kv_cache_tokens,
            "kv_cache_gib_per_gpu": f.kv_cache_gib} for c, f in found]
    if account.max_model_len_fit > 0:
        out.append({"flags": [f"--max-model-len {account.max_model_len_fit}"],
                    "gpus": req.tensor_parallel_size * req.pipeline_parallel_size, "max_concurrency": 1.0,
                    "kv_cache_tokens": None, "kv_cache_gib_per_gpu": account.kv_cache_gib,
                    "note": "shorter requests: a longer document must be cut"})
    return out


def answer(cfg: dict, req, emit: str | None = "vllm", heads: int | None = None, input_len: int | None = None,
           output_len: int | None = None, device=None, **account_kw) -> dict:
    """The serving object with the search's fallbacks when the request does not fit one request at
    once (``heads``: the model's query heads; None: no search), and the launch command for the
    request, or for the cheapest fallback."""
    from multihead.cost.serving_answer import answer as account_answer
    a, _ = serving_account(cfg, req, **account_kw)
    found = search(cfg, req, heads, **account_kw) if heads and (not a.fits or a.max_concurrency < 1) else None
    out = account_answer(cfg, req, input_len=input_len, output_len=output_len, device=device, **account_kw)
    add_command(out, req, emit, found[0][0] if found else None)
    if found is not None:
        out["fallbacks"] = rows(found, req, a)
    return serving_bytes(out)
