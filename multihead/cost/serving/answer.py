"""The serving answer for a user's question: the account, a one-line verdict and the times.
When the request does not fit, the planner's one search (planner/search.py) finds the settings that
do, cheapest first, and names the one the command is for.

Names follow vLLM's flags. "Chunked prefill" here is the engine's: the same full attention over
the whole request, computed ``max_num_batched_tokens`` tokens per step, so the prefill workspace
is bounded and nothing of the document is lost; it is not cutting the document into pieces that
never see each other (the planner's lossy "chunks").
"""
from __future__ import annotations

import dataclasses

from multihead.cost.serving.vllm import EngineArgs, ServingAccount, account
from multihead.cost.serving.fitted import load_fit
from multihead.cost.serving.shape import shape_for

KV_DTYPES = ("auto", "fp8", "fp8_e4m3", "fp8_e5m2")
DTYPES = ("auto", "bfloat16", "float16", "float32")
ENGINE_DTYPE = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}     # cost.spec.units name -> vLLM's
GPUS_PER_NODE = 8       # the engines' one node (the launch command's nodes)


def gpu_memory_bytes(name: str) -> tuple[str, int]:
    """(catalog name, physical bytes as the device reports them) for a GPU name, case-insensitive;
    'H100' means the SXM part: the GPU record's ``reported_memory_bytes`` (cost.catalog_gpu)."""
    from multihead.cost.time.device import gpu_catalog, gpu_key, reported_memory
    key = gpu_key(name)
    if key is None:
        raise ValueError(f"gpu: unknown GPU {name!r} (known: {', '.join(gpu_catalog())})")
    row = reported_memory(key)
    if not row.get("bytes"):      # never 0 bytes in silence: a catalog GPU must have its row
        raise ValueError(f"gpu: no reported memory for {key!r} (cost/catalog/gpu_memory.json has no row)")
    return key, row["bytes"]


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
    engine: str = "vllm"                     # "vllm" | "sglang" | "tensorrt-llm": whose account (PlanRequest.engine)
    engine_version: str | None = None        # None: the newest modelled of that engine
    mem_fraction_static: float | None = None  # SGLang's flag; None: SGLang's default for the GPU and TP
    data_parallel_size: int = 1              # replicas behind a router (each its own account and KV pool);
                                             # with enable_dp_attention: SGLang's --dp-size inside the TP group
    enable_dp_attention: bool = False        # SGLang's --enable-dp-attention (cost/serving/sglang.py)
    expert_parallel_size: int = 1            # the time model's (routed experts over the TP group; memory as TP)
    batching: str = "continuous"             # the time model's: "static" prefills a batch together
    measured: str | None = None              # one run of this deployment the times are scaled to (measured_point.py)
    kv_cache_free_gpu_memory_fraction: float | None = None   # TensorRT-LLM's; None: its default 0.9
    # the engine flags of ENGINE_DEFAULTS the caller set (the rest take the engine's own defaults, which
    # engine_batch resolves); None: a library caller's request, read as "those away from ENGINE_DEFAULTS"
    given: frozenset | None = None


ENGINES = ("vllm", "sglang", "tensorrt-llm")
ENGINE_DEFAULTS = {"max_num_batched_tokens": 8192, "max_num_seqs": 1024, "block_size": 16}   # the CLI's (vLLM v0.19)


def given_flags(req: Request) -> set[str]:
    """The engine flags (of ENGINE_DEFAULTS) the request sets: ``req.given`` when the caller said (the CLI,
    the page, the search: an explicit value equal to the default is still given), else those away from
    ENGINE_DEFAULTS. The rest take the engine's own defaults (engine_batch)."""
    given = getattr(req, "given", None)
    if given is not None:
        return set(given) & ENGINE_DEFAULTS.keys()
    return {k for k, v in ENGINE_DEFAULTS.items() if getattr(req, k) != v}


def gpu_is_pcie(name: str) -> bool:
    """True when the catalog's interconnect for ``name`` is PCIe (no NVLink switch between its GPUs)."""
    from multihead.cost.time.device import interconnect_catalog
    links = interconnect_catalog()["gpus"]
    return str(links.get(name, {}).get("intra_node", "")).startswith("pcie")


def engine_version(req: Request) -> str:
    """The version of ``req.engine`` the account models (a ValueError names a flag that is not modelled)."""
    if req.engine not in ENGINES:
        raise ValueError(f"engine: expected one of {', '.join(ENGINES)}, got {req.engine!r}")
    v = req.engine_version
    if v is not None and (not isinstance(v, str) or not 0 < len(v) <= 20 or not all(c.isalnum() or c in ".+-" for c in v)):
        raise ValueError("engine-version: expected a version such as 0.19 or 0.5.2")
    if req.engine == "sglang":
        from multihead.cost.serving.sglang import resolve
        return resolve(req.engine_version)
    if req.engine == "tensorrt-llm":
        from multihead.cost.serving.tensorrt_llm import resolve
        return resolve(req.engine_version)
    from multihead.cost.serving.vllm_versions import resolve
    return resolve(req.engine_version)


def serving_account(cfg: dict, req: Request, gpu_bytes: float | None = None,
                    spec=None) -> tuple[ServingAccount, str]:
    """The account of ``cfg`` under ``req``; returns it with the resolved serving dtype (vLLM's name).
    Precision follows the cost model (cost.precision.resolve: --dtype auto serves float32
    checkpoints in bf16; --quantization over the checkpoint's quantization_config). ``spec``: the
    ModelSpec when the caller has one (a plan's, overrides included); ``gpu_bytes``: physical memory
    when the GPU is not a catalog name."""
    from multihead.cost.spec.precision import resolve
    from multihead.cost.serving.shape import read_spec
    from multihead.cost.spec.units import dtype_bytes
    check_dp_attention(req)
    if req.kv_cache_dtype not in KV_DTYPES:
        raise ValueError(f"kv-cache-dtype: expected one of {', '.join(KV_DTYPES)}, got {req.kv_cache_dtype!r}")
    if req.dtype not in DTYPES:
        raise ValueError(f"dtype: expected one of {', '.join(DTYPES)}, got {req.dtype!r}")
    spec = spec or read_spec(cfg, req.model)
    if getattr(req, "expert_parallel_size", 1) > 1 and spec.moe is None:    # never a plan without its times
        raise ValueError(f"expert-parallel-size: {spec.name} has no routed experts to spread (a dense model: give 1)")
    prec = resolve(spec, None if req.dtype == "auto" else req.dtype,
                   "fp8" if req.kv_cache_dtype.startswith("fp8") else None, req.quantization)
    shape = shape_for(cfg, req.model, prec.weights, req.tensor_parallel_size, prec.quantization, spec)
    args = dataclasses.replace(req, kv_cache_dtype_bytes=dtype_bytes(prec.kv),
                               activation_dtype_bytes=dtype_bytes(prec.activation))
    total = gpu_bytes if gpu_bytes is not None else gpu_memory_bytes(req.gpu)[1]
    version = engine_version(req)
    dtype = ENGINE_DTYPE.get(prec.weights, prec.weights)
    if req.engine == "sglang":
        a = _sglang_account(cfg, shape, args, total)
    elif req.engine == "tensorrt-llm":
        a = _trtllm_account(shape, args, total)
    else:
        from multihead.cost.serving import vllm_versions as V
        shape, eargs = V.apply(version, shape, args, given_flags(req), req.gpu, total)
        # PCIe-only GPUs (no NVLink switch): no NVLS buffers, vLLM's custom all-reduce off beyond 2 PCIe
        # GPUs; the communicator figure is cost.serving.vllm.PCIE_COMM_GIB (sized on an SGLang L4 log, fitted)
        a = account(shape, eargs, load_fit(), total, pcie=gpu_is_pcie(req.gpu))
    if gpu_bytes is not None and gpu_bytes != _catalog_bytes(req.gpu):   # the caller's (--gpu-memory-gb)
        for term in a.terms:
            if term.get("name") == "physical memory":
                term["source"] = "as given (GPU memory in GB of 1e9 B)"
    return a, dtype


def _catalog_bytes(gpu: str) -> float | None:
    try:
        return gpu_memory_bytes(gpu)[1]
    except ValueError:
        return None


def check_dp_attention(req: Request) -> None:
    """DP attention is SGLang's flag: a ValueError naming it for another engine (its own checks: sglang.py)."""
    if getattr(req, "enable_dp_attention", False) and req.engine != "sglang":
        raise ValueError("enable-dp-attention: an SGLang flag (vLLM's counterpart is --data-parallel-size with "
                         "--enable-expert-parallel, whose memory account is not modelled); give --engine sglang")


def replicas(req) -> int:
    """Copies of the model behind a router: data_parallel_size, or one with DP attention (its --dp-size
    groups share one TP group's GPUs and weights)."""
    return 1 if getattr(req, "enable_dp_attention", False) else req.data_parallel_size


def sglang_args(cfg: dict, req: Request, kv_bytes: float = 2.0):
    """The SGLang flags of a request: --tp-size, --mem-fraction-static, --context-length; vLLM's
    --max-num-batched-tokens / --max-num-seqs / --block-size map onto --chunked-prefill-size /
    --max-running-requests / --page-size only when set away from the CLI defaults (else SGLang's own)."""
    from multihead.cost.serving.extras import text_config
    from multihead.cost.serving.sglang import SGLangArgs
    if req.pipeline_parallel_size != 1:
        raise ValueError("pipeline-parallel-size: the SGLang account models tensor parallelism only (--pp-size 1)")
    from multihead.cost.serving.sglang import NO_HYBRID_SWA, resolve
    given = given_flags(req)
    types = [t for t in (str(cfg.get("model_type", "")), str(text_config(cfg).get("model_type", ""))) if t]
    return SGLangArgs(tp_size=req.tensor_parallel_size, mem_fraction_static=req.mem_fraction_static,
                      context_length=req.max_model_len,
                      chunked_prefill_size=req.max_num_batched_tokens if "max_num_batched_tokens" in given else None,
                      max_running_requests=req.max_num_seqs if "max_num_seqs" in given else None,
                      page_size=req.block_size if "block_size" in given else 1, kv_cache_dtype_bytes=kv_bytes,
                      model_type=next((t for t in types if t in NO_HYBRID_SWA), types[0] if types else ""), pcie=gpu_is_pcie(req.gpu),
                      version=resolve(req.engine_version), vision=_vision(cfg),
                      dp_size=req.data_parallel_size, enable_dp_attention=req.enable_dp_attention)


def _vision(cfg: dict) -> tuple[int, int] | None:
    v = cfg.get("vision_config")
    if not isinstance(v, dict):
        return None
    return int(v.get("num_hidden_layers", 24)), int(v.get("hidden_size", 1024))


def _sglang_account(cfg: dict, shape, args: Request, total: float) -> ServingAccount:
    from multihead.cost.serving import sglang as G
    return G.account(shape, sglang_args(cfg, args, args.kv_cache_dtype_bytes), load_fit(), total)


def trtllm_args(req: Request):
    """The TensorRT-LLM settings of a request (cost/serving/tensorrt_llm.py args_of)."""
    from multihead.cost.serving.tensorrt_llm import args_of
    return args_of(req, req.kv_cache_dtype_bytes, req.activation_dtype_bytes, gpu_is_pcie(req.gpu), given_flags(req))


def _trtllm_account(shape, args: Request, total: float) -> ServingAccount:
    from multihead.cost.serving import tensorrt_llm as T
    return T.account(shape, trtllm_args(args), load_fit(), total)


def engine_batch(req: Request, total_bytes: float | None = None) -> tuple[int, int]:
    """(--max-num-batched-tokens, --max-num-seqs) the engine runs with: each flag when given, else
    (vLLM) the default of the modelled version for this GPU and length (vllm_versions.batch_defaults),
    which the memory account profiled and the time model's slots follow; other engines: the request's.
    ``total_bytes``: the GPU's memory when it is not a catalog name."""
    tokens, seqs = req.max_num_batched_tokens, req.max_num_seqs
    if req.engine != "vllm":
        return tokens, seqs
    from multihead.cost.serving.vllm_versions import batch_defaults
    if total_bytes is None:
        try:
            total_bytes = gpu_memory_bytes(req.gpu)[1]
        except ValueError:
            return tokens, seqs
    given = given_flags(req)
    d_tokens, d_seqs = batch_defaults(engine_version(req), req.max_model_len, req.gpu, total_bytes)
    return (tokens if "max_num_batched_tokens" in given else d_tokens,
            seqs if "max_num_seqs" in given else d_seqs)


def batched_tokens(req: Request, total_bytes: float | None = None) -> int:
    """--max-num-batched-tokens the engine runs with (engine_batch)."""
    return engine_batch(req, total_bytes)[0]


def length_override(spec, tokens: int) -> tuple[dict | None, str | None]:
    """What a launch for ``tokens`` (--max-model-len) needs from the model's positions: (positions
    JSON, refusal). An engine refuses a length past the config's derived maximum (vLLM's
    max_model_len rule, cost.spec.positions.coverage) unless the rope scaling that reaches it comes along:
    the JSON then carries ``rope_override`` (the model's own scaling type grown, cost.spec.positions.
    extension_needed) and a quality note; a length no override can reach gives a refusal."""
    from multihead.cost.spec.positions import coverage, extension_needed
    if spec is None:
        return None, None
    c = coverage(spec)
    if c.covered is None or tokens <= c.covered:
        return None, None
    if c.learned:
        return None, (f"max-model-len {tokens:,} is past the model's {c.covered:,} learned positions ({c.how}); "
                      f"no engine can serve it: serve <= {c.covered:,} tokens")
    ext = extension_needed(spec, tokens)
    if not ext.overrides:
        return None, f"max-model-len {tokens:,} is past the {c.covered:,} positions the config allows ({ext.note})"
    return {"derived_max_model_len": c.covered, "how": c.how, "rope_override": ext.overrides,
            "rope_type": ext.rope_type, "factor": ext.factor, "base_tokens": ext.base, "note": ext.note}, None


def verdict(a: ServingAccount, req: Request, chunk: int | None = None) -> str:
    gpus = req.tensor_parallel_size * req.pipeline_parallel_size
    where = f"{gpus}x {req.gpu}" + (f" (TP {req.tensor_parallel_size} x PP {req.pipeline_parallel_size})"
                                    if req.pipeline_parallel_size > 1 else "")
    if req.enable_dp_attention:
        where += (f" with DP attention {req.data_parallel_size} (attention groups of "
                  f"{req.tensor_parallel_size // req.data_parallel_size} GPU(s), one token pool each)")
    elif req.data_parallel_size > 1:
        where += f" per replica, {req.data_parallel_size} replicas ({gpus * req.data_parallel_size} GPUs in all)"
    if not a.fits:
        return f"does not fit on {where}: {a.reason}"
    pool = "SGLang max_total_num_tokens" if req.engine == "sglang" else "KV-cache tokens"
    pool_words = (f"{a.kv_cache_tokens:,} {pool} per attention group" if req.enable_dp_attention
                  else f"{a.kv_cache_tokens:,} {pool}")
    return (f"fits on {where}: {a.max_concurrency:.2f} requests of {req.max_model_len:,} tokens at once "
            f"({pool_words}, {a.kv_cache_gib:.2f} GiB KV per GPU); "
            f"prefill runs as chunked prefill of {chunk or req.max_num_batched_tokens:,} tokens per step, "
            f"full attention over the whole request (nothing is cut)")


def answer(cfg: dict, req: Request, input_len: int | None = None, output_len: int | None = None, device=None,
           concurrency: int | None = None, request_rate: float | None = None, account=None, **account_kw) -> dict:
    """The whole serving answer as one JSON-ready dict (the ``serving`` object); the time keys
    (TTFT, TPOT, tokens/s at max concurrency: cost/time/serving_time.py) for requests of ``input_len``
    prompt and ``output_len`` new tokens (defaults: serving_time.request_lengths). ``account_kw``:
    ``spec`` / ``gpu_bytes`` for serving_account; ``device``: a plan's DeviceSpec, whose figures time it.
    The planner adds the fallbacks (planner/search.py) and the launch command (planner/launch.py).
    ``account``: serving_account's (account, dtype) of this very request when the caller has it
    (the plan's engine computed it once)."""
    from multihead.cost.time.serving_time import time_keys
    a, dtype = account if account is not None else serving_account(cfg, req, **account_kw)
    version = engine_version(req)
    sglang = None
    if req.engine == "sglang":
        from multihead.cost.serving.sglang import details
        sglang = details(sglang_args(cfg, req), a, account_kw.get("gpu_bytes") or gpu_memory_bytes(req.gpu)[1])
    tokens, seqs = engine_batch(req, account_kw.get("gpu_bytes"))
    out = {**a.to_json(), "gpu": req.gpu, "dtype": dtype, "kv_cache_dtype": req.kv_cache_dtype,
           "tensor_parallel_size": req.tensor_parallel_size,
           "pipeline_parallel_size": req.pipeline_parallel_size, "data_parallel_size": req.data_parallel_size,
           "enable_dp_attention": req.enable_dp_attention,
           "gpu_memory_utilization": req.gpu_memory_utilization,
           "max_num_batched_tokens": tokens, "max_num_seqs": seqs,
           "verdict": verdict(a, req, (sglang and sglang["chunked_prefill_size"]) or tokens),
           "prefill": "chunked prefill: full attention, max_num_batched_tokens tokens per step (no document cut)"}
    try:      # the time model's slots per replica: the sequences the engine really runs (engine_batch)
        out.update(time_keys(cfg, dataclasses.replace(req, max_num_seqs=seqs), out, input_len, output_len,
                             spec=account_kw.get("spec"), device=device,
                             concurrency=concurrency, request_rate=request_rate))
    except ValueError as err:
        if input_len is not None or output_len is not None or concurrency is not None or request_rate is not None:
            raise                          # the user's own lengths: bad input
        out.update({"time": None, "time_note": f"no time: {err}"})    # e.g. max_model_len 1: no default split
    if out.get("engine") not in (None, req.engine):
        out["time_engine"] = out["engine"]       # the time model's fixed costs are another engine's
    out["engine"], out["engine_version"] = req.engine, version     # whose memory account this is
    spec = account_kw.get("spec")
    if spec is None and cfg:
        from multihead.cost.serving.shape import read_spec
        try:
            spec = read_spec(cfg, req.model)
        except ValueError:
            spec = None
    positions, refusal = length_override(spec, req.max_model_len)
    if positions:
        out["positions"] = positions
        out["verdict"] += (f"; past the {positions['derived_max_model_len']:,} positions the config allows, so the "
                           f"launch carries the model's {positions['rope_type']} rope scaling grown to x"
                           f"{positions['factor']:g} over {positions['base_tokens']:,}")
    if refusal:
        out.update({"fits": False, "reason": refusal, "verdict": f"does not fit as asked: {refusal}"})
        out["refused"] = True           # no command the engine would refuse (planner/launch.py)
    if sglang is not None:
        out["sglang"] = sglang
    if req.engine == "tensorrt-llm":
        _trtllm_keys(out, a, req)
    return out


def _trtllm_keys(out: dict, a: ServingAccount, req: Request) -> None:
    """The serving object in TensorRT-LLM's terms: its own keys (``tensorrt_llm``), verdict and prefill."""
    from multihead.cost.serving import tensorrt_llm as T
    out["tensorrt_llm"] = T.details(T.args_of(req, given=given_flags(req)), a)
    out["prefill"] = T.prefill_text(req)
    if not out.get("refused"):
        where = verdict(a, req).split(": ", 1)[0].split(" on ", 1)[1]
        out["verdict"] = T.verdict(a, req, where)
