"""The serving answer for a user's question: the account, a one-line verdict and the launch command.
When the request does not fit, the planner's one search (planner/search.py) finds the settings that
do, cheapest first, and names the one the command is for.

Names follow vLLM's flags. "Chunked prefill" here is the engine's: the same full attention over
the whole request, computed ``max_num_batched_tokens`` tokens per step, so the prefill workspace
is bounded and nothing of the document is lost; it is not cutting the document into pieces that
never see each other (the planner's lossy "chunks").
"""
from __future__ import annotations

import dataclasses
from importlib import resources

from multihead.catalog import entries
from multihead.cost.serving import EngineArgs, ServingAccount, account
from multihead.cost.serving_fit import load_fit
from multihead.cost.serving_shape import shape_for
from multihead.engines import LaunchPlan, command

KV_DTYPES = ("auto", "fp8", "fp8_e4m3", "fp8_e5m2")
DTYPES = ("auto", "bfloat16", "float16", "float32")
ENGINE_DTYPE = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}     # cost.units name -> vLLM's
GPUS_PER_NODE = 8       # the engines' one node (the launch command's nodes)


GPU_MEMORY_JSON = resources.files("multihead.cost") / "catalog" / "gpu_memory.json"


def gpu_memory_catalog() -> dict[str, dict]:
    """Name -> physical memory entry (catalog/gpu_memory.json); a new dict, shared entries (read-only)."""
    return entries(GPU_MEMORY_JSON)


def gpu_memory_bytes(name: str) -> tuple[str, int]:
    """(catalog name, physical bytes as the device reports them) for a GPU name, case-insensitive;
    'H100' means the SXM part."""
    cat = gpu_memory_catalog()
    keys = {k.lower(): k for k in cat}
    low = name.lower()
    key = keys.get(low) or keys.get(f"{low}-sxm") or keys.get(low.removesuffix("-sxm"))
    if key is None:
        raise ValueError(f"gpu: unknown GPU {name!r} (known: {', '.join(cat)})")
    return key, cat[key]["bytes"]


@dataclasses.dataclass(frozen=True)
class Request(EngineArgs):
    """A serving question in vLLM's terms: the engine's numeric flags (EngineArgs) plus the model,
    the GPU and the flags named by strings. The KV and activation bytes are resolved from
    ``kv_cache_dtype`` / ``dtype`` by ``serving_account``."""
    model: str = ""
    gpu: str = "H100-SXM"
    kv_cache_dtype: str = "auto"
    dtype: str = "auto"
    quantization: str | None = None


def serving_account(cfg: dict, req: Request, gpu_bytes: float | None = None,
                    spec=None) -> tuple[ServingAccount, str]:
    """The account of ``cfg`` under ``req``; returns it with the resolved serving dtype (vLLM's name).
    Precision follows the cost model (cost.precision.resolve: --dtype auto serves float32
    checkpoints in bf16; --quantization over the checkpoint's quantization_config). ``spec``: the
    ModelSpec when the caller has one (a plan's, overrides included); ``gpu_bytes``: physical memory
    when the GPU is not a catalog name."""
    from multihead.cost.precision import resolve
    from multihead.cost.serving_shape import read_spec
    from multihead.cost.units import dtype_bytes
    if req.kv_cache_dtype not in KV_DTYPES:
        raise ValueError(f"kv-cache-dtype: expected one of {', '.join(KV_DTYPES)}, got {req.kv_cache_dtype!r}")
    if req.dtype not in DTYPES:
        raise ValueError(f"dtype: expected one of {', '.join(DTYPES)}, got {req.dtype!r}")
    spec = spec or read_spec(cfg, req.model)
    prec = resolve(spec, None if req.dtype == "auto" else req.dtype,
                   "fp8" if req.kv_cache_dtype.startswith("fp8") else None, req.quantization)
    shape = shape_for(cfg, req.model, prec.weights, req.tensor_parallel_size, prec.quantization, spec)
    args = dataclasses.replace(req, kv_cache_dtype_bytes=dtype_bytes(prec.kv),
                               activation_dtype_bytes=dtype_bytes(prec.activation))
    total = gpu_bytes if gpu_bytes is not None else gpu_memory_bytes(req.gpu)[1]
    return account(shape, args, load_fit(), total), ENGINE_DTYPE.get(prec.weights, prec.weights)


def launch_plan(req: Request, dtype: str) -> LaunchPlan:
    return LaunchPlan(req.model, req.tensor_parallel_size, req.pipeline_parallel_size, GPUS_PER_NODE,
                      req.gpu_memory_utilization, req.max_model_len, req.max_num_batched_tokens,
                      req.max_num_seqs if req.max_num_seqs != 1024 else None, req.kv_cache_dtype, dtype,
                      req.quantization, req.block_size if req.block_size != 16 else None)


def verdict(a: ServingAccount, req: Request) -> str:
    gpus = req.tensor_parallel_size * req.pipeline_parallel_size
    where = f"{gpus}x {req.gpu}" + (f" (TP {req.tensor_parallel_size} x PP {req.pipeline_parallel_size})"
                                    if req.pipeline_parallel_size > 1 else "")
    if not a.fits:
        return f"does not fit on {where}: {a.reason}"
    return (f"fits on {where}: {a.max_concurrency:.2f} requests of {req.max_model_len:,} tokens at once "
            f"({a.kv_cache_tokens:,} KV-cache tokens, {a.kv_cache_gib:.2f} GiB KV per GPU); "
            f"prefill runs as chunked prefill of {req.max_num_batched_tokens:,} tokens per step, "
            f"full attention over the whole request (nothing is cut)")


def answer(cfg: dict, req: Request, emit: str | None = "vllm", input_len: int | None = None,
           output_len: int | None = None, device=None, launch: Request | None = None, **account_kw) -> dict:
    """The whole serving answer as one JSON-ready dict (the ``serving`` object); the time keys
    (TTFT, TPOT, tokens/s at max concurrency: cost/serving_time.py) for requests of ``input_len``
    prompt and ``output_len`` new tokens (defaults: serving_time.request_lengths). ``account_kw``:
    ``spec`` / ``gpu_bytes`` for serving_account; ``device``: a plan's DeviceSpec, whose figures time it;
    ``launch``: the setting the command is for (the planner's search picks it when ``req`` does not
    fit: planner/search.py, which also adds the ``fallbacks`` list)."""
    from multihead.cost.serving_time import time_keys
    a, dtype = serving_account(cfg, req, **account_kw)
    out = {**a.to_json(), "gpu": req.gpu, "dtype": dtype, "kv_cache_dtype": req.kv_cache_dtype,
           "tensor_parallel_size": req.tensor_parallel_size,
           "pipeline_parallel_size": req.pipeline_parallel_size,
           "gpu_memory_utilization": req.gpu_memory_utilization,
           "max_num_batched_tokens": req.max_num_batched_tokens, "verdict": verdict(a, req),
           "prefill": "chunked prefill: full attention, max_num_batched_tokens tokens per step (no document cut)"}
    try:
        out.update(time_keys(cfg, req, out, input_len, output_len, spec=account_kw.get("spec"), device=device))
    except ValueError as err:
        if input_len is not None or output_len is not None:
            raise                          # the user's own lengths: bad input
        out.update({"time": None, "time_note": f"no time: {err}"})    # e.g. max_model_len 1: no default split
    launch = launch or req
    if emit:
        cmd = command(emit, launch_plan(launch, dtype))
        out["command"] = {"engine": emit, "text": cmd.render(), "argv": cmd.argv, "nodes": cmd.nodes,
                          "note": cmd.note, "for": "the request" if launch == req else "the first fallback"}
    return out
