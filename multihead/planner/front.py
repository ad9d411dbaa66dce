"""The planner's front door: a PlanRequest -> the Plan, its JSON, its memory curve.

``multihead plan``, ``multihead serving``, ``plan --html`` and the web page all call these; none of
them computes anything itself (they parse into a PlanRequest and print)::

    from multihead import planner
    from multihead.planner.request import PlanRequest
    req = PlanRequest(model="Qwen/Qwen2.5-7B-Instruct", gpu="H100", max_model_len=32768)
    p = planner.plan_request(req)          # the Plan (tables, --explain, --plot read it)
    planner.report(req)                    # the exact object `multihead plan --json` prints
    planner.curve(req)                     # memory per GPU vs context length: one plan, one call

Model names resolve in one place for every door (cost.spec.lookup.find_model, read once per plan):
a config.json path or model folder (where the request may name paths), a catalog HF id
(catalog/configs, e.g. ``meta-llama/Llama-3.1-70B-Instruct``), a planner catalog name
(catalog/models.json), or an uploaded config's content. GPU names resolve through cost.time.device.gpu_key ('H100' is H100-SXM).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path

from multihead.planner.request import DEFAULT_GPU, ENGINE_TO_PLAN_DTYPE, UPLOAD_LABEL, PlanRequest

_SERVING_KEYS = ("pipeline_parallel_size", "max_model_len", "max_num_batched_tokens", "max_num_seqs",
                 "kv_cache_dtype", "dtype", "block_size", "emit", "quantization", "input_len", "output_len", "engine",
                 "engine_version", "mem_fraction_static", "concurrency", "request_rate", "data_parallel_size",
                 "expert_parallel_size", "enable_dp_attention", "batching", "kv_cache_free_gpu_memory_fraction", "measured")


def request_model(req: PlanRequest):
    """The request's model (cost.spec.lookup.ResolvedModel: spec, raw config, `vllm serve` id), read
    once by the one model door (find_model; the page: catalog names only), or from its uploaded
    content; None for a model given by flags alone."""
    from multihead.cost.spec.hf_config import read_config
    from multihead.cost.spec.lookup import ResolvedModel, find_model
    if req.config is not None:
        label = req.model or UPLOAD_LABEL
        spec = read_config(copy.deepcopy(req.config), name=label, source=label)
        return ResolvedModel(spec, copy.deepcopy(req.config), str(Path(label).parent) if "/" in label else label)
    if req.model is None:
        return None
    return find_model(req.model, paths=not req.names_only)


def _device(req: PlanRequest):
    """The request's GPU under the one default policy (module doc of planner/request.py)."""
    explicit = (req.gpu_memory_gb, req.effective_tflops, req.bandwidth_tbps)
    if req.gpu is None and all(v is None for v in explicit):
        return DEFAULT_GPU
    return req.gpu


def check_precision(req: PlanRequest) -> None:
    """The text's accounts read --weights-dtype / --kv-dtype, the engine's --quantization / --dtype /
    --kv-cache-dtype: both given and saying different things is refused by name (one precision per plan)."""
    from multihead.planner.launch import flag_weights
    w, kv, q, d = req.weights_dtype, req.kv_dtype, req.quantization, req.dtype
    if kv is not None and (req.kv_cache_dtype or "").startswith("fp8") and kv != "fp8":
        raise ValueError(f"kv-dtype: {kv} disagrees with kv-cache-dtype {req.kv_cache_dtype}; give one of them")
    if w is not None and q is not None and flag_weights(q) != w:
        raise ValueError(f"weights-dtype: {w} disagrees with quantization {q} ({flag_weights(q)} weights); "
                         "give one of them (a checkpoint quantized otherwise, e.g. 8-bit GPTQ: give its config.json, "
                         "whose quantization_config states its bits)")
    served = ENGINE_TO_PLAN_DTYPE.get(d or "auto")
    if w in ENGINE_TO_PLAN_DTYPE.values() and served is not None and served != w:
        raise ValueError(f"weights-dtype: {w} disagrees with dtype {d}; give one of them")


def serving_precision(req: PlanRequest) -> dict:
    """--weights-dtype in the engine's terms, so the serving account and the launch command serve the precision the
    three accounts assume: a quantizing value (fp8 / int8 / int4) is the --quantization it stands for
    (cost.spec.quantization.WEIGHTS_DTYPE_QUANT), a 16-bit or fp32 one the engine's --dtype; flags given win."""
    from multihead.cost.spec.quantization import WEIGHTS_DTYPE_QUANT
    w = req.weights_dtype
    if w in WEIGHTS_DTYPE_QUANT:
        return {} if req.quantization else {"quantization": WEIGHTS_DTYPE_QUANT[w]}
    engine = {v: k for k, v in ENGINE_TO_PLAN_DTYPE.items()}.get(w)
    return {"dtype": engine} if engine and req.dtype in (None, "auto") else {}


def plan_request(req: PlanRequest):
    """The Plan of a request (raises ValueError naming the field on bad input)."""
    from multihead import planner
    from multihead.planner.inputs import resolve_spec
    m = request_model(req)
    spec = resolve_spec(m.spec if m else None, params=req.params, layers=req.layers, heads=req.heads, kv_heads=req.kv_heads,
                        head_dim=req.head_dim, hidden=req.hidden, intermediate=req.intermediate, vocab=req.vocab,
                        max_position=req.max_position)
    tokens = req.tokens or req.max_model_len or spec.max_position_embeddings
    if tokens is None:
        raise ValueError("tokens: give tokens (--tokens T) or max_model_len; the model states no training "
                         "length (max_position_embeddings) to default to")
    if req.chunks is not None and req.chunks > tokens:
        raise ValueError(f"chunks: expected an integer from 1 to tokens={tokens}, got {req.chunks}")
    piece = -(-tokens // (req.chunks or 1))
    if req.max_model_len is not None and piece > req.max_model_len:    # the engine would refuse such a request
        raise ValueError(f"tokens: {'a chunk of ' if req.chunks else ''}{piece:,} tokens is past max-model-len "
                         f"{req.max_model_len:,}, the longest request an engine launched so accepts; give "
                         f"max-model-len >= {piece:,}, or chunks of at most {req.max_model_len:,} tokens")
    check_precision(req)
    kv_dtype = req.kv_dtype
    if kv_dtype is None and (req.kv_cache_dtype or "").startswith("fp8"):
        kv_dtype = "fp8"
    weights_dtype = req.weights_dtype
    if weights_dtype is None and req.quantization is None:
        weights_dtype = ENGINE_TO_PLAN_DTYPE.get(req.dtype)
    serving = {k: getattr(req, k) for k in _SERVING_KEYS if getattr(req, k) is not None}
    serving.update(serving_precision(req))
    if m is not None:
        serving["config"], serving["model_id"] = m.config, m.model_id
    return planner.plan(
        spec, tokens=tokens, batch=req.batch, passes=req.passes, chunks=req.chunks, weights_dtype=weights_dtype,
        kv_dtype=kv_dtype, quantization=req.quantization, device=_device(req), gpu_memory_gb=req.gpu_memory_gb,
        effective_tflops=req.effective_tflops, bandwidth_tbps=req.bandwidth_tbps,
        flops_efficiency=req.flops_efficiency, bandwidth_efficiency=req.bandwidth_efficiency,
        gpus=req.tensor_parallel_size, memory_utilization=req.gpu_memory_utilization, attention=req.attention,
        causal_skip=req.causal_skip, options={"serving": serving})


def report(req: PlanRequest) -> dict:
    """The object `multihead plan --json` prints for this request."""
    return plan_request(req).to_dict()


def context_grid(tokens: int, trained: int | None, points: int = 24) -> list[int]:
    """Context lengths for the memory curve: log-spaced from 1,024 to past T and the training length."""
    top = max(4 * tokens, 2 * (trained or 0), 8192)
    grid = {int(round(1024 * (top / 1024) ** (i / (points - 1)))) for i in range(points)}
    return sorted(grid | {tokens} | ({trained} if trained else set()))


def curve(req: PlanRequest, plan=None) -> dict:
    """Memory per GPU of one pass vs context length for the request's model and settings: one plan,
    then planner.memory_curve at each length, for this model's H_kv and for MHA (H_kv = H) and MQA
    (H_kv = 1) with the same weights (what `plan --plot` draws). Returns {"tokens", "curves": [{"label",
    "kv_heads", "this_model", "total_memory_bytes"}], "T", "trained_length", "usable_memory_bytes",
    "gpu_memory_bytes"}."""
    from multihead import planner
    p = plan or plan_request(req)
    spec = p.accounts.spec
    trained = spec.max_position_embeddings or None
    grid = context_grid(p.inputs.tokens, trained)
    curves = []
    for kv in sorted({spec.num_kv_heads, spec.num_heads, 1}, reverse=True):
        label = "MHA" if kv == spec.num_heads else ("MQA" if kv == 1 else f"GQA-{kv}")
        this = kv == spec.num_kv_heads
        curves.append({"label": label, "kv_heads": kv, "this_model": this,
                       "total_memory_bytes": planner.memory_curve(p, grid, None if this else kv)})
    return {"tokens": grid, "curves": curves, "T": p.inputs.tokens, "trained_length": trained,
            "usable_memory_bytes": p.inputs.usable_memory_bytes, "gpu_memory_bytes": p.inputs.gpu_memory_bytes}
