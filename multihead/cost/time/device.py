"""One record per device (``DeviceSpec``): what the cost model knows of a GPU or a measured machine, with sources.

A catalog GPU's record is built by ONE door, ``catalog_gpu(name)``, from its rows in the catalog
files, each with its own sources: ``multihead/catalog/gpus.json`` (memory, bandwidth and matmul
peaks from the datasheet), ``cost/catalog/gpu_memory.json`` (the physical bytes the device
reports), ``cost/catalog/interconnect.json`` (its links) and ``cost/catalog/gpu_matmul.json`` (the
measured matmul ceiling). The GPU-time model (``cost/time/timing.py``) and the planner read the
same record; ``timing.Gpu`` is this class under its old name (kept for one release).

A kernel reaches a stated fraction of the peaks (``flops_efficiency``, ``bandwidth_efficiency``:
the roofline's unfitted defaults 0.5 / 0.8 unless a figure states its own; the GPU-time model
uses its fitted efficiencies instead, cost/time/serving_time.device_gpu). A profile measured on
this machine (``multihead calibrate``) stores already-effective figures (efficiency 1.0) plus its
kernels' own terms in ``prefill`` / ``decode``; those terms are read by ``cost/time/cpu_profile.py``.
A GPU given by its figures (kind "explicit") takes the default intra-node link and a matmul
ceiling of 1.0 (its figures are taken as achievable).
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from importlib import resources

from multihead.catalog import entries, read_json
from multihead.cost.spec.units import canonical_dtype

# Stated defaults: a well-tuned kernel reaches about half of the datasheet tensor-core peak
# (FlashAttention-2: 50-73% of A100 peak forward, figures.md section 4) and ~80% of datasheet bandwidth.
DEFAULT_FLOPS_EFFICIENCY = 0.5
DEFAULT_BANDWIDTH_EFFICIENCY = 0.8


@dataclass
class DeviceSpec:
    """One device. ``matmul_flops``: FLOP/s of a large matmul per dtype (a catalog GPU's "fp32" is its
    non-tensor vector rate, ``alu_flops``); ``memory_bytes`` in bytes (1e9 = 1 GB, the datasheet's),
    ``reported_memory_bytes`` what the device reports (the serving engines' budget; 0: unknown).
    ``prefill``/``decode``: a measured profile's kernel terms by dtype (cost/time/cpu_profile.py).
    ``link`` .. ``mamf_share``: how the GPU-time model reaches it (interconnect.json, gpu_matmul.json);
    a GPU record built without them (kind "explicit", or a caller's own) gets them in __post_init__."""
    name: str
    memory_bytes: float
    bandwidth_bytes_per_s: float
    matmul_flops: dict[str, float]
    flops_efficiency: float = DEFAULT_FLOPS_EFFICIENCY
    bandwidth_efficiency: float = DEFAULT_BANDWIDTH_EFFICIENCY
    source: str = ""
    kind: str = "catalog"          # "catalog", "explicit" or "measured"
    extra: dict = field(default_factory=dict)   # measured profiles keep their details here
    prefill: dict = field(default_factory=dict)
    decode: dict = field(default_factory=dict)
    reported_memory_bytes: float = 0.0
    link: str = ""                  # intra-node link name (interconnect.json); "": the catalog's, by name
    link_bandwidth: float = 0.0     # B/s, one direction
    gpus_per_node: int = 8
    inter_node_bandwidth: float = 0.0   # B/s, one direction, of the inter-node link
    mamf_share: float | None = None     # achievable share of the matmul peak; None: the catalog's (explicit: 1.0)
    stated: frozenset = frozenset()     # the efficiencies the user stated ("flops_efficiency", "bandwidth_efficiency")

    def __post_init__(self):
        if self.kind == "measured":
            return
        if not self.link:
            for k, v in wiring(self.name).items():
                setattr(self, k, v)
        if self.mamf_share is None:
            self.mamf_share = 1.0 if self.kind == "explicit" else measured_mamf_share(self.name)

    @property
    def alu_flops(self) -> float:
        """fp32 (non-tensor) FLOP/s: the catalog's fp32 figure, else the 16-bit peak / 16 (the
        dequantization rate of weight-only kernels scales with it)."""
        return self.matmul_flops.get("fp32") or self.peak_flops("fp16") / 16

    def matmul_key(self, dtype: str) -> str:
        return pick_dtype(self.matmul_flops, dtype)

    def peak_flops(self, dtype: str = "fp16") -> float:
        return self.matmul_flops[self.matmul_key(dtype)]

    def effective_flops(self, dtype: str = "fp16") -> float:
        """Sustained FLOP/s for matmuls in ``dtype``: peak * flops_efficiency."""
        return self.peak_flops(dtype) * self.flops_efficiency

    def effective_bandwidth(self) -> float:
        """Sustained bytes/s of a streaming read: bandwidth * bandwidth_efficiency."""
        return self.bandwidth_bytes_per_s * self.bandwidth_efficiency

    @property
    def cache_bytes(self) -> float:
        """Last-level cache of a measured machine (0: unknown, no cache term)."""
        return float(self.extra.get("cache_bytes") or 0.0)


def dtype_key(dtype: str) -> str:
    """A dtype name as device tables key it ('bfloat16' -> 'bf16'); unknown names pass through."""
    try:
        return canonical_dtype(dtype)
    except ValueError:
        return str(dtype).removeprefix("torch.").lower()


def pick_dtype(table: dict, dtype: str) -> str:
    """The key of ``table`` to use for ``dtype``: itself, else fp16 (fp8/int8/int4 weights are usually
    dequantized into a 16-bit matmul), else fp32, else the first ("dtype/backend" keys count by dtype)."""
    dtypes = [k.split("/")[0] for k in table]
    for k in (dtype_key(dtype), "fp16", "fp32"):
        if k in dtypes:
            return k
    return dtypes[0]


def compute_seconds(flops: float, device: DeviceSpec, dtype: str = "fp16") -> float:
    """Compute-bound work: t = FLOPs / effective FLOP/s."""
    return flops / device.effective_flops(dtype)


def memory_seconds(nbytes: float, device: DeviceSpec) -> float:
    """Bandwidth-bound work: t = bytes read / effective bandwidth."""
    return nbytes / device.effective_bandwidth()


GPUS_JSON = resources.files("multihead.catalog") / "gpus.json"
COST_CATALOG = resources.files("multihead.cost") / "catalog"
GPU_MEMORY_JSON = COST_CATALOG / "gpu_memory.json"


def gpu_catalog() -> dict[str, dict]:
    """Name -> entry of catalog/gpus.json (the catalog GPUs' names, in order); a new dict, shared
    entries (read-only, multihead.catalog). The record of one GPU is ``catalog_gpu(name)``."""
    return entries(GPUS_JSON)


def interconnect_catalog() -> dict:
    """cost/catalog/interconnect.json, shared between callers (read-only, see multihead.catalog)."""
    return read_json(COST_CATALOG / "interconnect.json")


def wiring(name: str) -> dict:
    """The GPU's links as the record holds them (interconnect.json; a GPU it does not list: the
    default intra-node link, 8 per node)."""
    links = interconnect_catalog()
    w = links["gpus"].get(name, {})
    link = w.get("intra_node", links["default_intra_node"])
    return {"link": link, "link_bandwidth": links["links"][link]["bandwidth_gbps"] * 1e9,
            "gpus_per_node": w.get("gpus_per_node", 8),
            "inter_node_bandwidth": links["links"][links["inter_node"]]["bandwidth_gbps"] * 1e9}


def measured_mamf_share(name: str) -> float:
    """The GPU's maximum achievable matmul FLOP/s as a share of its datasheet peak (measured by others,
    cost/catalog/gpu_matmul.json); the median of the measured GPUs for one without a measurement."""
    table = read_json(COST_CATALOG / "gpu_matmul.json")
    return table["gpus"].get(name, {}).get("mamf_share", table["default"])


def reported_memory(key: str) -> dict:
    """A catalog GPU's row of cost/catalog/gpu_memory.json (bytes the device reports, reported or
    estimated, source), shared (read-only); {} when not listed. The record's reported_memory_bytes;
    the serving accounts read it alone (cost.serving.answer.gpu_memory_bytes), many times per search."""
    return read_json(GPU_MEMORY_JSON).get(key, {}) if not key.startswith("_") else {}


def gpu_key(name: str, names=None) -> str | None:
    """The catalog's spelling of a GPU name: case-insensitive, and the SXM part for a bare name
    ('H100' and 'h100-sxm' are 'H100-SXM'); None if unknown. One rule for every catalog door."""
    keys = {k.lower(): k for k in (gpu_catalog() if names is None else names) if not k.startswith("_")}
    low = str(name).lower()
    return keys.get(low) or keys.get(f"{low}-sxm") or keys.get(low.removesuffix("-sxm"))


def catalog_gpu(name: str, overrides: dict | None = None) -> DeviceSpec:
    """The record of a catalog GPU by name (case-insensitive; 'H100' is the SXM part: gpu_key); an
    unknown name lists the closest. ``overrides`` (a measured or capped GPU of the GPU-time table,
    fits/measurement_table.py): ``base`` (the catalog GPU it is; ``name`` is then its label),
    ``bandwidth_tbps``, ``mamf_share`` (1.0 for figures that are already achievable ones)."""
    catalog = gpu_catalog()
    o = dict(overrides or {})
    key = gpu_key(o.get("base", name), catalog)
    if key is None:
        close = difflib.get_close_matches(name, list(catalog), n=3, cutoff=0.3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ValueError(f"gpu: unknown GPU {name!r}{hint} (known: {', '.join(catalog)};"
                         " or give a profile .json written by `multihead calibrate`)")
    return gpu_from_entry(name if "base" in o else key, catalog[key], {**o, "base": key})


def gpu_from_entry(name: str, entry: dict, overrides: dict | None = None) -> DeviceSpec:
    """The builder behind catalog_gpu: the record of a GPU from its gpus.json entry (memory_gb,
    bandwidth_tbps, matmul_tflops, source) and the catalog rows of ``base`` (default ``name``):
    reported memory, links, matmul ceiling; ``overrides`` as in catalog_gpu."""
    e = {**entry, **(overrides or {})}
    base = e.get("base", name)
    memory = reported_memory(base)
    return DeviceSpec(name=name, memory_bytes=e["memory_gb"] * 1e9, bandwidth_bytes_per_s=e["bandwidth_tbps"] * 1e12,
                      matmul_flops={dtype_key(k): v * 1e12 for k, v in e["matmul_tflops"].items()},
                      source=e.get("source", ""), kind="catalog", reported_memory_bytes=memory.get("bytes", 0.0),
                      extra={"memory_reported": memory["reported"]} if "reported" in memory else {},
                      **wiring(base), mamf_share=e.get("mamf_share") or measured_mamf_share(base))
