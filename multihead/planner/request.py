"""One request for the planner: ``PlanRequest``, validated once, named like the engines' flags.

The CLI (``plan`` and ``serving``), the web page and library callers build the same type:

    from multihead.planner.request import PlanRequest
    req = PlanRequest(model="Llama-3.1-8B", tokens=131072, gpu="H100", kv_cache_dtype="fp8")
    req = PlanRequest.from_args(argparse_namespace)           # multihead plan / serving
    req = PlanRequest.from_json({"model": ..., "tokens": "1e5"}, config_text=None)   # the page
    planner.report(req)        # the JSON object of `multihead plan --json`

Every field is checked by the rules of ``multihead.values`` (the same ones the CLI's argparse
types use): bounded integers (text such as "1e5" reads as 100000 everywhere), finite numbers,
fixed choices, true/false flags. A bad value raises ValueError with one line naming the field
(``tokens: expected an integer in [1, 1099511627776], got 'abc'``).

Where a request comes from decides what ``model`` and ``gpu`` may name:

- ``from_args`` and library callers: a catalog name, a catalog HF id, a config.json path or a
  model folder; a catalog GPU (aliases such as "H100") or a measured profile .json;
- ``from_json`` (the web page): catalog names only, or the content of an uploaded config.json
  (``config_text``); never a server path. A server started with an explicit ``config_dir`` also
  serves the config files inside that folder, by name (``"my-model"`` or ``"my-model/config.json"``,
  never ``..`` or an absolute path). The refusal of any other name says the same thing whether
  or not such a path exists on the server.

Defaults, the same for ``plan``, ``serving`` and the page (one policy): ``gpu`` is H100-SXM when
neither a GPU nor any of gpu_memory_gb / effective_tflops / bandwidth_tbps is given (with some of
those and no GPU, all three are needed: explicit figures); ``tokens`` defaults to
``max_model_len``, which defaults to ``tokens``, and both to the model's training length
(max_position_embeddings) when neither is given.

Fields the engines have but the planner does not model yet (expert parallelism, DP attention,
static batching) are accepted at their defaults and refused by name otherwise: a plan never
silently ignores them. ``concurrency`` / ``request_rate`` give the serving section's ``at`` (the
metrics at that load) and ``data_parallel_size`` replicas behind a router; ``search`` with its
fields (slo, gpus_max, objective, price, top) asks planner.search_report instead of a plan.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from multihead import values as V

DTYPES = ("fp32", "fp16", "bf16", "fp8", "int8", "int4")                 # the planner's storage names
QUANTIZATIONS = ("gptq", "awq", "fp8", "int8", "bitsandbytes", "mxfp4")  # vLLM's --quantization names
KV_CACHE_DTYPES = ("auto", "fp8", "fp8_e4m3", "fp8_e5m2")                  # vLLM's --kv-cache-dtype
ENGINE_DTYPES = ("auto", "bfloat16", "float16", "float32")                # vLLM's --dtype
ENGINE_TO_PLAN_DTYPE = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}
ENGINES = ("vllm", "sglang", "tensorrt-llm")  # whose memory account and launch command
BATCHING = ("continuous", "static")
BLOCK_SIZES = (1, 8, 16, 32, 64, 128)
DEFAULT_GPU = "H100-SXM"

MAX_PLAN_TOKENS = 1 << 40      # every account is closed-form: a trillion tokens plans in milliseconds
MAX_TOKENS = 10_000_000        # an engine's max_model_len: 10x the longest context of any catalog model
MAX_COUNT = 1_000_000
MAX_CONFIG_BYTES = 1_000_000   # an uploaded config.json; the largest published one is well under
UPLOAD_LABEL = "uploaded/config.json"

_SIZE = V.IntRange(1, 1 << 24)
_GB, _TFLOPS, _TBPS = V.GPU_MEMORY_GB, V.EFFECTIVE_TFLOPS, V.BANDWIDTH_TBPS    # physical ranges (values.py)
_FRACTION = V.FloatRange(0, 1, lo_open=True)
_PARALLEL = V.IntRange(1, 4096)


@dataclass(frozen=True)
class _Field:
    check: Any                     # a multihead.values check, or None for a field checked elsewhere
    default: Any = None
    aliases: tuple[str, ...] = ()  # other names the JSON and argparse use (kept working)
    modelled: Any = "<any>"        # only this value is modelled yet (others refused by name)


FIELDS: dict[str, _Field] = {
    # the model: a name (or path, where allowed) and explicit overrides
    "model": _Field(V.Text(1000)),
    "params": _Field(V.IntRange(0, 10 ** 15)),   # 0: attention alone (no weights), as a measured-profile study asks
    "layers": _Field(_SIZE), "heads": _Field(_SIZE), "kv_heads": _Field(_SIZE), "head_dim": _Field(_SIZE),
    "hidden": _Field(_SIZE), "intermediate": _Field(_SIZE), "vocab": _Field(_SIZE),
    "max_position": _Field(V.IntRange(1, MAX_PLAN_TOKENS)),
    # the workload
    "tokens": _Field(V.IntRange(1, MAX_PLAN_TOKENS)),
    "batch": _Field(V.IntRange(1, MAX_COUNT), 1),
    "passes": _Field(V.IntRange(1, MAX_COUNT), 1),
    "chunks": _Field(V.IntRange(1, MAX_PLAN_TOKENS)),
    "attention": _Field(V.choices(("tiled", "materialized")), "tiled"),
    "causal_skip": _Field(V.flag, False),
    # precision
    "weights_dtype": _Field(V.choices(DTYPES)),
    "kv_dtype": _Field(V.choices(DTYPES)),
    "quantization": _Field(V.choices(QUANTIZATIONS)),
    "kv_cache_dtype": _Field(V.choices(KV_CACHE_DTYPES)),
    "dtype": _Field(V.choices(ENGINE_DTYPES), "auto"),
    # the GPU
    "gpu": _Field(V.Text(1000), aliases=("device",)),
    "gpu_memory_gb": _Field(_GB), "effective_tflops": _Field(_TFLOPS), "bandwidth_tbps": _Field(_TBPS),
    "flops_efficiency": _Field(V.EFFICIENCY), "bandwidth_efficiency": _Field(V.EFFICIENCY),
    # the engine (vLLM's flag names)
    "tensor_parallel_size": _Field(_PARALLEL, 1, aliases=("gpus", "tp")),
    "pipeline_parallel_size": _Field(V.IntRange(1, 1024), 1, aliases=("pp",)),
    "data_parallel_size": _Field(V.IntRange(1, 1024), 1, aliases=("dp",)),   # replicas behind a router
    "expert_parallel_size": _Field(V.IntRange(1, 1024), 1),     # the time model's (cost/time/moe_time.py)
    "enable_dp_attention": _Field(V.flag, False),     # SGLang's; data_parallel_size is then its --dp-size
    "gpu_memory_utilization": _Field(_FRACTION, 0.9, aliases=("memory_utilization",)),
    "max_model_len": _Field(V.IntRange(1, MAX_TOKENS)),
    # None: the engine's own default (vLLM's by version and GPU: cost.serving.answer.engine_batch)
    "max_num_batched_tokens": _Field(V.IntRange(1, MAX_TOKENS)),
    "max_num_seqs": _Field(V.IntRange(1, 1 << 20)),
    "block_size": _Field(V.choices(BLOCK_SIZES)),
    "engine": _Field(V.choices(ENGINES), "vllm"),
    "engine_version": _Field(V.Text(40), None),       # None: the newest modelled (the engine account checks it)
    "mem_fraction_static": _Field(_FRACTION, None),    # SGLang's --mem-fraction-static
    "kv_cache_free_gpu_memory_fraction": _Field(V.FloatRange(0, 1, lo_open=True, hi_open=True), None,
                                                aliases=("free_gpu_memory_fraction",)),   # TensorRT-LLM's
    "batching": _Field(V.choices(BATCHING), "continuous"),           # the time model's serving_point mode
    "concurrency": _Field(V.IntRange(1, MAX_COUNT), None),          # serving.at: N requests in flight
    "measured": _Field(V.Text(300), None),      # one run of this deployment, "concurrency=16,ttft=250ms,tpot=30ms"
    "request_rate": _Field(V.FloatRange(1e-6, 1e6), None),   # serving.at: Poisson arrivals per second (cost/time/operating_point.py's range)
    "emit": _Field(V.choices(ENGINES), None),     # None: the engine's own launch command
    # the request the serving times are for
    "input_len": _Field(V.IntRange(1, MAX_TOKENS)),
    "output_len": _Field(V.IntRange(1, MAX_TOKENS)),
    # the search (planner/search.py): gpu may then name several GPUs, "H100-SXM,MI300X"
    "search": _Field(V.flag, False),
    "slo": _Field(V.Text(200), None),                     # "ttft=2s,tpot=50ms[,e2e=30s]"
    "gpus_max": _Field(V.IntRange(1, 4096), 16),
    "objective": _Field(V.choices(("gpus", "cost", "throughput")), "gpus"),
    "price": _Field(V.Text(2000), None),                  # "H100-SXM=2.49,MI300X=1.99" ($ per GPU-hour)
    "top": _Field(V.IntRange(1, 1000), 10),
}
ALIASES = {a: name for name, f in FIELDS.items() for a in f.aliases}
_NOT_MODELLED = {
    "expert_parallel_size": "expert parallelism is not modelled yet: expected 1",
    "batching": "only continuous batching is modelled yet: expected 'continuous'",
}


@dataclass(frozen=True)
class PlanRequest:
    """A planning question: model, workload, precision, GPU and the engine's flags (see the module doc)."""
    model: str | None = None
    params: float | None = None
    layers: int | None = None
    heads: int | None = None
    kv_heads: int | None = None
    head_dim: int | None = None
    hidden: int | None = None
    intermediate: int | None = None
    vocab: int | None = None
    max_position: int | None = None
    tokens: int | None = None
    batch: int = 1
    passes: int = 1
    chunks: int | None = None
    attention: str = "tiled"
    causal_skip: bool = False
    weights_dtype: str | None = None
    kv_dtype: str | None = None
    quantization: str | None = None
    kv_cache_dtype: str | None = None
    dtype: str = "auto"
    gpu: str | None = None
    gpu_memory_gb: float | None = None
    effective_tflops: float | None = None
    bandwidth_tbps: float | None = None
    flops_efficiency: float | None = None
    bandwidth_efficiency: float | None = None
    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    data_parallel_size: int = 1
    expert_parallel_size: int = 1
    enable_dp_attention: bool = False
    gpu_memory_utilization: float = 0.9
    max_model_len: int | None = None
    max_num_batched_tokens: int | None = None
    max_num_seqs: int | None = None
    block_size: int | None = None
    engine: str = "vllm"
    engine_version: str | None = None
    mem_fraction_static: float | None = None
    kv_cache_free_gpu_memory_fraction: float | None = None
    batching: str = "continuous"
    concurrency: int | None = None
    request_rate: float | None = None
    measured: str | None = None
    emit: str | None = None
    input_len: int | None = None
    output_len: int | None = None
    search: bool = False
    slo: str | None = None
    gpus_max: int = 16
    objective: str = "gpus"
    price: str | None = None
    top: int = 10
    # an uploaded config.json, parsed (the model is then ``model`` or "uploaded/config.json")
    config: dict | None = field(default=None, compare=False, repr=False)
    # set by from_json (the page): ``model`` is a catalog name, resolved from the catalog only, never
    # a file or folder of that name in the server's working directory
    names_only: bool = field(default=False, compare=False, repr=False)

    def __post_init__(self):
        if isinstance(self.gpu, str) and not self.gpu.strip():
            raise ValueError(f"gpu: expected a catalog GPU name or a profile .json path, got {self.gpu!r}")
        for name, f in FIELDS.items():
            value = getattr(self, name)
            if value is None:
                continue
            value = V.checked(f.check, name, value)
            object.__setattr__(self, name, value)
            if f.modelled != "<any>" and value != f.modelled:
                raise ValueError(f"{name}: {_NOT_MODELLED[name]}, got {value!r}")
        if self.expert_parallel_size not in (1, self.tensor_parallel_size):
            expected = (f"expected 1 or {self.tensor_parallel_size}" if self.tensor_parallel_size > 1 else
                        "expected 1 at tensor_parallel_size 1 (give tensor_parallel_size to spread them)")
            raise ValueError(f"expert_parallel_size: the engines spread the experts over the tensor-parallel group "
                             f"(vLLM's --enable-expert-parallel): {expected}, got {self.expert_parallel_size}")
        # another engine's flag, or a search's, is refused by name rather than ignored
        for name, engine in (("mem_fraction_static", "sglang"), ("kv_cache_free_gpu_memory_fraction", "tensorrt-llm")):
            if getattr(self, name) is not None and self.engine != engine:
                raise ValueError(f"{name.replace('_', '-')}: a flag of {engine}'s, and the engine is {self.engine}; "
                                 f"give engine {engine}")
        for name in ("slo", "price"):
            if getattr(self, name) is not None and not self.search:
                raise ValueError(f"{name}: used by the configuration search only; give search (--search)")
        if self.enable_dp_attention:
            if self.engine != "sglang":
                raise ValueError("enable_dp_attention: an SGLang flag (vLLM's counterpart, --data-parallel-size with "
                                 "--enable-expert-parallel, is not in the memory account); give engine sglang")
            if self.data_parallel_size < 2 or self.tensor_parallel_size % self.data_parallel_size:
                raise ValueError(f"enable_dp_attention: needs data_parallel_size (SGLang's --dp-size) > 1 dividing "
                                 f"tensor_parallel_size {self.tensor_parallel_size}, got {self.data_parallel_size}")
            if self.search:
                raise ValueError("enable_dp_attention: the search does not try DP attention yet; plan one setting")
        if self.chunks is not None and self.tokens is not None and self.chunks > self.tokens:
            raise ValueError(f"chunks: expected an integer from 1 to tokens={self.tokens}, got {self.chunks}")
        if self.gpu is not None and "," in self.gpu and not self.search:
            raise ValueError(f"gpu: several GPUs ({self.gpu!r}) are for a search (--search); a plan takes one")
        if self.concurrency is not None and self.request_rate is not None:
            raise ValueError("concurrency: give concurrency (closed loop) or request_rate (open loop), not both")
        if self.measured is not None:
            from multihead.cost.time.measured_point import parse
            parse(self.measured)                    # a ValueError naming 'measured' and the part that is wrong
            if self.search:
                raise ValueError("measured: a point measured on one deployment scales that deployment's times; the "
                                 "search ranks other configurations it was not measured on (plan one setting)")
        if self.config is not None and not isinstance(self.config, dict):
            raise ValueError(f"model: an uploaded config must be a JSON object, got {type(self.config).__name__}")

    # -- the three ways in ----------------------------------------------------------------------
    @classmethod
    def from_args(cls, args: argparse.Namespace) -> "PlanRequest":
        """From a parsed ``multihead plan`` or ``multihead serving`` command line (argparse destinations:
        the field names, or their aliases: device, gpus, memory_utilization)."""
        got: dict = {}
        for key, value in vars(args).items():
            name = ALIASES.get(key, key)
            if name in FIELDS and value is not None:
                got[name] = ",".join(value) if isinstance(value, list) else value    # --price repeated
        return cls(**got)

    @classmethod
    def from_json(cls, options, config_text=None, *, config_dir: str | os.PathLike | None = None) -> "PlanRequest":
        """From the web page's JSON object (field names or their aliases; unknown keys refused by
        name; null and "" mean unset). ``config_text``: an uploaded config.json's content. Names
        only: ``model`` and ``gpu`` never reach the server's files (see the module doc)."""
        if not isinstance(options, dict):
            raise ValueError("options: expected a JSON object of plan options")
        got: dict = {}
        for key, value in options.items():
            name = ALIASES.get(key, key) if isinstance(key, str) else None
            if name not in FIELDS:
                raise ValueError(f"{str(key)[:60]}: unknown option (expected some of {', '.join(FIELDS)})")
            if value is None or value == "":
                continue
            if name in got:
                raise ValueError(f"{key}: given twice (as {name} and an alias)")
            got[name] = value
        config = None
        if config_text is not None:
            config = parse_config_text(config_text)
            got.setdefault("model", UPLOAD_LABEL)
            if got["model"] != UPLOAD_LABEL:
                V.checked(V.Text(200), "model", got["model"])
        elif "model" in got:
            got["model"], config = _served_model(got["model"], config_dir)
        if "gpu" in got:
            got["gpu"] = ",".join(_served_gpu(g.strip()) for g in str(got["gpu"]).split(",")) \
                if isinstance(got["gpu"], str) and "," in got["gpu"] else _served_gpu(got["gpu"])
        return cls(**got, config=config, names_only=True)

    def to_dict(self) -> dict:
        """The fields that differ from their defaults (what a caller set), by name."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if f.name not in ("config", "names_only") and getattr(self, f.name) != f.default}

    def cli_args(self) -> list[str]:
        """The `multihead plan` arguments that state this request (for display: the page's CLI line,
        `plan --html`'s command); an uploaded config shows as its label."""
        out = [self.model] if self.model else []
        for name, value in self.to_dict().items():
            if name == "model":
                continue
            flag = "--" + name.replace("_", "-")
            out += [flag] if value is True else [flag, str(value)]
        return out

    def replace(self, **changes) -> "PlanRequest":
        return dataclasses.replace(self, **changes)


# -- uploaded content and served names ---------------------------------------------------------------
def parse_config_text(text, label: str = UPLOAD_LABEL) -> dict:
    """An uploaded config.json's text -> its JSON object: the one config reader's content path
    (cost.config_file: size, nesting, digits, structure and every sizing field checked), with the
    page's upload cap."""
    from multihead.cost.spec.config_file import parse_config_text as parse
    return parse(text, label, max_bytes=MAX_CONFIG_BYTES)


def _served_model(name, config_dir) -> tuple[str, dict | None]:
    """A page's model name -> (catalog name, None) or (label, config read from config_dir)."""
    from multihead.cost.spec.lookup import catalog_key
    name = V.checked(V.Text(200), "model", name)
    key = catalog_key(name)
    if key is not None:
        return key, None
    if config_dir is not None:
        path = served_config_path(name, config_dir)
        if path is not None:
            return name, _read_served(path, name)
    from multihead.cost.spec.lookup import model_names
    where = " or a config in the server's --config-dir" if config_dir is not None else \
        " (or drop a config.json on the page; the server reads no paths)"
    raise ValueError(f"model: unknown model {name[:80]!r}: expected a catalog name ({', '.join(model_names())})"
                     f"{where}")


def served_config_path(name: str, config_dir) -> Path | None:
    """The regular file config_dir/NAME (or NAME/config.json, NAME.json) strictly inside config_dir;
    None for anything else (absolute, "..", a link out of the folder, a FIFO, missing)."""
    import stat
    root = Path(config_dir).resolve()
    parts = Path(name).parts
    if not parts or Path(name).is_absolute() or any(p in ("..", ".", "") for p in parts) or "\\" in name:
        return None
    for candidate in (root.joinpath(*parts), root.joinpath(*parts, "config.json"), root.joinpath(*parts[:-1], parts[-1] + ".json")):
        try:
            real = candidate.resolve(strict=True)
            st = os.stat(real)
        except (OSError, RuntimeError):
            continue
        if real.is_relative_to(root) and stat.S_ISREG(st.st_mode):
            return real
    return None


def _read_served(path: Path, label: str) -> dict:
    """A config in the server's --config-dir, through the one config reader (regular file, never
    blocking, the page's upload cap); errors name the page's model name, not the server path."""
    from multihead.cost.spec.config_file import read_config_file
    try:
        return read_config_file(path, max_bytes=MAX_CONFIG_BYTES)[0]
    except ValueError as err:
        raise ValueError(str(err).replace(str(path), label)) from None


def _served_gpu(name) -> str:
    """A page's GPU: a catalog name or alias only (never a profile path on the server)."""
    from multihead.cost.time.device import catalog_gpu
    name = V.checked(V.Text(100), "gpu", name)
    if "/" in name or "\\" in name or name.lower().endswith(".json"):
        from multihead.cost import gpu_catalog
        raise ValueError(f"gpu: unknown GPU {name[:80]!r}: the page takes a catalog GPU "
                         f"({', '.join(gpu_catalog())}), never a file on the server")
    return catalog_gpu(name).name
