"""``multihead plan MODEL --search``: which configuration meets a latency target at least cost.

The space is GPU type x tensor-parallel size x pipeline-parallel size x data-parallel replicas x
weight quantization x KV-cache dtype x max_num_seqs, within ``gpus_max`` GPUs in all. Each
candidate is sized by the engine's memory account (cost/serving/answer.py answer: does one request of
``max_model_len`` fit, how many requests the KV pool holds) and timed at the operating point by
the one GPU time model (cost/time/operating_point.evaluate: concurrency or request rate). Candidates
that meet the SLO are ranked by the objective:

    gpus        fewest GPUs in all, then highest output tokens/s per GPU
    cost        lowest dollars per million output tokens (catalog prices, or --price GPU=$/h)
    throughput  highest output tokens/s per GPU

The fallback search at the end of this module (``fallback_search``: the ways out when one request
does not fit, read by the plan's decision, its fallbacks and its serving section) uses the same
candidate type (``Candidate``) and the same evaluation (the engine's memory account).

Nothing here builds a plan report: a memory account is computed once per (GPU, TP, PP,
quantization, KV dtype, max_num_seqs), a time Setup once per (GPU, TP, PP, quantization, KV
dtype), and a batch's times once per Setup and per-replica load; replicas reuse them.
"""
from __future__ import annotations

import dataclasses
import itertools
import math
import re
import time
from dataclasses import dataclass, field

from multihead.catalog import read_json

TP_SIZES = (1, 2, 4, 8)
PP_SIZES = (1, 2, 4)
QUANTIZATIONS = (None, "fp8")
KV_CACHE_DTYPES = ("auto", "fp8")
MAX_NUM_SEQS = (8, 16, 32, 64, 128, 256, 512, 1024)
OBJECTIVES = ("gpus", "cost", "throughput")
GPUS_PER_NODE = 8
MAX_GPUS = 4096
MAX_CANDIDATES = 200_000     # one search's bound (~30 s and ~300 MB here): 4096 GPUs over the default
                             # axes would be 2.5 million configurations, minutes and gigabytes
DEFAULT_GPUS = ("H100-SXM", "H200-SXM", "B200", "MI300X", "A100-80GB", "L40S")

_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "min": 60.0}
SLO_KEYS = {"ttft": "ttft_s", "tpot": "tpot_s", "itl": "tpot_s", "e2e": "request_latency_s"}


@dataclass(frozen=True)
class SLO:
    """Latency targets in seconds (None: no target). ``e2e`` is the whole request's latency."""
    ttft_s: float | None = None
    tpot_s: float | None = None
    request_latency_s: float | None = None

    def targets(self) -> dict[str, float]:
        return {k: v for k in ("ttft_s", "tpot_s", "request_latency_s") if (v := getattr(self, k)) is not None}

    def describe(self) -> str:
        names = {"ttft_s": "TTFT", "tpot_s": "TPOT", "request_latency_s": "e2e"}
        return ", ".join(f"{names[k]} <= {_fmt_s(v)}" for k, v in self.targets().items()) or "none"


def parse_slo(text: str | None) -> SLO:
    """'ttft=2s,tpot=50ms[,e2e=30s]' -> SLO. Units: s, ms, us, min; a bare number is seconds."""
    if text is None or not str(text).strip():
        return SLO()
    values: dict[str, float] = {}
    for part in str(text).split(","):
        m = re.fullmatch(r"\s*([a-z0-9]+)\s*=\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([a-zµ]*)\s*", part)
        if not m:
            raise ValueError(f"slo: expected KEY=VALUE[UNIT] pairs like ttft=2s,tpot=50ms, got {part.strip()!r}")
        key, number, unit = m.groups()
        if key not in SLO_KEYS:
            raise ValueError(f"slo: unknown target {key!r} (known: ttft, tpot, itl, e2e)")
        if unit not in ("", *_UNITS):
            raise ValueError(f"slo: unknown unit {unit!r} in {part.strip()!r} (use s, ms, us or min)")
        seconds = float(number) * _UNITS.get(unit, 1.0)
        if not math.isfinite(seconds) or not 1e-6 <= seconds <= 86400:
            raise ValueError(f"slo: {key} must be between 1 us and 24 h, got {part.strip()!r}")
        if SLO_KEYS[key] in values:
            raise ValueError(f"slo: {key} given twice")
        values[SLO_KEYS[key]] = seconds
    return SLO(**values)


def parse_prices(items: list[str] | None) -> dict[str, float]:
    """['H100=2.5', 'MI300X=$1.99'] -> {'H100-SXM': 2.5, 'MI300X': 1.99} ($ per GPU-hour): a catalog GPU by
    any name --gpu takes (device.gpu_key), or ``custom`` (a GPU given by its figures); an unknown name or
    one GPU priced twice is refused, never ignored."""
    from multihead.cost.time.device import gpu_key
    out = {}
    for item in items or []:
        m = re.fullmatch(r"\s*([A-Za-z0-9._-]+)\s*=\s*\$?([0-9]*\.?[0-9]+)\s*(?:/h)?\s*", str(item))
        if not m:
            raise ValueError(f"price: expected GPU=DOLLARS_PER_HOUR like H100-SXM=2.49, got {item!r}")
        value = float(m.group(2))
        if not 0 < value <= 1000:
            raise ValueError(f"price: {m.group(1)} must cost between $0 and $1000 per GPU-hour, got {value}")
        name = "custom" if m.group(1).lower() == "custom" else gpu_key(m.group(1))
        if name is None:
            raise ValueError(f"price: unknown GPU {m.group(1)!r} (a catalog GPU, see multihead plan --list, or "
                             "custom for one given by its figures)")
        if name in out:
            raise ValueError(f"price: {name} given twice")
        out[name] = value
    return out


def gpu_prices() -> dict[str, dict]:
    """Catalog prices: GPU name -> {"usd_per_hour", "source", "date"} (catalog/gpu_prices.json)."""
    from importlib import resources
    data = read_json(resources.files("multihead.catalog") / "gpu_prices.json")
    return {k: v for k, v in data.items() if not k.startswith("_")}


@dataclass(frozen=True)
class Candidate:
    """One configuration: a model replica on tp x pp GPUs of one type, data_parallel_size copies."""
    gpu: str
    tensor_parallel_size: int
    pipeline_parallel_size: int
    data_parallel_size: int
    quantization: str | None
    kv_cache_dtype: str
    max_num_seqs: int
    engine: str = "vllm"

    @property
    def gpus(self) -> int:
        return self.tensor_parallel_size * self.pipeline_parallel_size * self.data_parallel_size


@dataclass
class Space:
    """The axes of the search; each a tuple of values to try. ``devices``: GPUs given by their
    figures (planner DeviceSpecs of kind "explicit"), by the name they take in ``gpus``."""
    gpus: tuple[str, ...] = DEFAULT_GPUS
    devices: dict = field(default_factory=dict)
    gpus_max: int = 16
    tensor_parallel_sizes: tuple[int, ...] = TP_SIZES
    pipeline_parallel_sizes: tuple[int, ...] = PP_SIZES
    quantizations: tuple[str | None, ...] = QUANTIZATIONS
    kv_cache_dtypes: tuple[str, ...] = KV_CACHE_DTYPES
    max_num_seqs: tuple[int, ...] = MAX_NUM_SEQS
    data_parallel: bool = True
    engines: tuple[str, ...] = ("vllm",)

    def _replicas(self, tp: int, pp: int) -> int:
        """How many data-parallel sizes (1..n) a TP x PP replica takes; 0: not a configuration."""
        if tp * pp > self.gpus_max or (pp > 1 and tp < GPUS_PER_NODE and tp * pp > GPUS_PER_NODE):
            return 0
        return self.gpus_max // (tp * pp) if self.data_parallel else 1

    def count(self) -> int:
        """len(self.candidates()), without building them."""
        per = sum(self._replicas(tp, pp) for tp in self.tensor_parallel_sizes for pp in self.pipeline_parallel_sizes)
        return per * len(self.engines) * len(self.gpus) * len(self.quantizations) * len(self.kv_cache_dtypes) \
            * len(self.max_num_seqs)

    def candidates(self) -> list[Candidate]:
        out = []
        for engine, gpu, tp, pp, q, kv, mns in itertools.product(
                self.engines, self.gpus, self.tensor_parallel_sizes, self.pipeline_parallel_sizes, self.quantizations,
                self.kv_cache_dtypes, self.max_num_seqs):
            for dp in range(1, self._replicas(tp, pp) + 1):
                out.append(Candidate(gpu, tp, pp, dp, q, kv, mns, engine))
        return out


@dataclass
class Workload:
    """What is asked: request lengths, the load, the targets, the objective."""
    input_len: int
    output_len: int
    concurrency: int | None = None
    request_rate: float | None = None
    slo: SLO = field(default_factory=SLO)
    objective: str = "gpus"
    max_model_len: int | None = None          # the longest request the engine accepts (default input + output)
    prices: dict[str, float] = field(default_factory=dict)


def _fmt_s(s: float) -> str:
    return f"{s * 1e3:,.1f} ms" if s < 1 else f"{s:,.2f} s"


class _Evaluator:
    """Memory accounts, time Setups and batch times, each computed once and reused."""

    def __init__(self, cfg: dict, model: str, work: Workload, base_request=None, spec=None):
        from multihead.cost.serving import answer as S
        self.S, self.cfg, self.model, self.work = S, cfg, model, work
        from multihead.cost.serving.shape import read_spec
        self.base = base_request or S.Request(model=model)
        self.spec = spec or read_spec(cfg, model)   # read once: every account and Setup shares it
        self.max_model_len = work.max_model_len or work.input_len + work.output_len
        # the positions every candidate's launch needs (one model, one length): the rope override
        # past the config's derived length (as the serving answer's command carries it), or a refusal
        self.positions, refusal = S.length_override(self.spec, self.max_model_len)
        if refusal:
            raise ValueError(f"max_model_len: {refusal}")
        self.devices: dict = {}
        self.accounts: dict = {}
        self.setups: dict = {}
        self.caches: dict = {}

    def device(self, gpu: str):
        """The DeviceSpec of a GPU given by its figures (Space.devices), else None (a catalog name)."""
        return self.devices.get(gpu)

    def request(self, c: Candidate):
        return dataclasses.replace(self.base, model=self.model, gpu=c.gpu, tensor_parallel_size=c.tensor_parallel_size,
                                   pipeline_parallel_size=c.pipeline_parallel_size, quantization=c.quantization,
                                   kv_cache_dtype=c.kv_cache_dtype, max_num_seqs=c.max_num_seqs,
                                   max_model_len=self.max_model_len, engine=c.engine)

    def account(self, c: Candidate):
        key = (c.engine, c.gpu, c.tensor_parallel_size, c.pipeline_parallel_size, c.quantization, c.kv_cache_dtype,
               c.max_num_seqs)
        if key not in self.accounts:
            try:
                dev = self.device(c.gpu)
                extra = {"gpu_bytes": dev.memory_bytes} if dev is not None else {}
                self.accounts[key] = self.S.serving_account(self.cfg, self.request(c), spec=self.spec, **extra)
            except ValueError as err:          # e.g. TP not dividing the heads: not a configuration
                self.accounts[key] = err
        return self.accounts[key]

    def setup(self, c: Candidate, dtype: str):
        key = (c.engine, c.gpu, c.tensor_parallel_size, c.pipeline_parallel_size, c.quantization, c.kv_cache_dtype)
        if key not in self.setups:
            from multihead.cost.time.serving_time import setup_for
            try:
                self.setups[key] = setup_for(self.cfg, self.request(c), dtype, spec=self.spec,
                                             device=self.device(c.gpu))
            except ValueError as err:
                self.setups[key] = err
            self.caches[key] = {}
        return self.setups[key], self.caches[key]

    def evaluate(self, c: Candidate) -> dict:
        from multihead.cost.time.operating_point import evaluate
        w = self.work
        acct = self.account(c)
        row = {"candidate": c}
        if isinstance(acct, ValueError):
            return {**row, "fits": False, "binding": "unsupported", "why": str(acct)}
        a, dtype = acct
        if not a.fits:
            return {**row, "fits": False, "binding": "memory", "why": a.reason}
        setup, cache = self.setup(c, dtype)
        if isinstance(setup, ValueError):
            return {**row, "fits": False, "binding": "unsupported", "why": str(setup)}
        block = self.base.block_size
        per_request = -(-(w.input_len + w.output_len) // block) * block
        at = evaluate(setup, w.input_len, w.output_len, concurrency=w.concurrency, request_rate=w.request_rate,
                      data_parallel_size=c.data_parallel_size, max_num_seqs=c.max_num_seqs,
                      kv_capacity_requests=a.kv_cache_tokens / per_request, cache=cache)
        return {**row, "fits": True, "account": a, "dtype": dtype, "at": at}


def _binding(row: dict, targets: dict[str, float]) -> tuple[bool, str]:
    """(meets the SLO, which limit binds): for a miss the target exceeded by the largest ratio;
    for a pass the target with the least headroom (or the load, when there is no target)."""
    if not row["fits"]:
        return False, row["binding"]
    at = row["at"]
    if at["overloaded"]:
        return False, "throughput"
    if at["arrival"] == "closed" and at["queued"]:
        # N requests in flight means N running at once: a configuration that queues some of them
        # (its KV pool or max_num_seqs holds fewer) does not serve the stated load
        return False, "max_num_seqs" if at["slots_per_replica"] == at["max_num_seqs"] else "kv_pool"
    ratios = {k: at[k] / v for k, v in targets.items()}
    if not ratios:
        return True, at["decode_bound"]
    worst = max(ratios, key=ratios.get)
    name = {"ttft_s": "ttft", "tpot_s": "tpot", "request_latency_s": "e2e"}[worst]
    return ratios[worst] <= 1.0, name


def _price(gpu: str, work: Workload, catalog: dict) -> float | None:
    if gpu in work.prices:
        return work.prices[gpu]
    entry = catalog.get(gpu)
    return entry["usd_per_hour"] if entry else None


def _usd_per_million(row: dict, price: float | None) -> float | None:
    at = row["at"]
    if price is None or not at.get("output_tokens_per_s"):
        return None
    return row["candidate"].gpus * price / (at["output_tokens_per_s"] * 3600) * 1e6


def rank_key(row: dict, objective: str):
    """Sort key, best first: SLO met first, then the objective, then fewer GPUs, lower TPOT."""
    c, at = row["candidate"], row.get("at") or {}
    tput = at.get("output_tokens_per_s_per_gpu") or 0.0
    tpot = at.get("tpot_s") or math.inf
    if objective == "gpus":
        primary = (c.gpus, -tput)
    elif objective == "cost":
        usd = row.get("usd_per_million_output_tokens")
        primary = (usd if usd is not None else math.inf, c.gpus)
    else:
        primary = (-tput, c.gpus)
    return (not row["meets_slo"], *primary, tpot, c.tensor_parallel_size, c.pipeline_parallel_size,
            c.quantization or "", c.kv_cache_dtype, -c.max_num_seqs, c.gpu, c.engine)


def search(cfg: dict, model: str, work: Workload, space: Space | None = None, *, emit: str | None = "auto",
           top: int = 10, base_request=None, spec=None) -> dict:
    """The ``search`` object: candidates evaluated, the ranked results (best first), the Pareto front
    of output tokens/s per GPU vs TPOT among the configurations that run, and the seconds it took.

    Each result's ``at`` carries the 80% interval of every time (``*_low`` / ``*_high``: the GPU time
    model's out-of-document errors for the model's family, cost/time/timing_intervals.py); a result whose
    throughput interval overlaps the best one's is marked ``within_band_of_best``: the prediction
    cannot tell the two apart. ``emit``: the engine whose launch
    command each result carries ("auto": the candidate's own engine; None: no command). ``spec``: the
    model's ModelSpec as the model door read it (cost.spec.lookup.find_model: a planner catalog name's
    stated params included); None: read from ``cfg``.
    """
    t0 = time.perf_counter()
    if work.objective not in OBJECTIVES:
        raise ValueError(f"objective: expected one of {', '.join(OBJECTIVES)}, got {work.objective!r}")
    space = space or Space()
    if not 1 <= space.gpus_max <= MAX_GPUS:
        raise ValueError(f"gpus-max: expected an integer in [1, {MAX_GPUS}], got {space.gpus_max!r}")
    if (n := space.count()) > MAX_CANDIDATES:
        raise ValueError(f"gpus-max: {space.gpus_max} GPUs over {len(space.gpus)} GPU type(s) make {n:,} configurations, "
                         f"more than the {MAX_CANDIDATES:,} one search evaluates: lower gpus-max or name fewer GPUs")
    prices = gpu_prices()
    if work.objective == "cost":
        missing = [g for g in space.gpus if _price(g, work, prices) is None]
        if missing:
            raise ValueError(f"price: no price for {', '.join(missing)} in the catalog; give --price GPU=$/h")
    ev = _Evaluator(cfg, model, work, base_request, spec)
    ev.devices = dict(space.devices)
    cands = space.candidates()
    rows, targets = [], work.slo.targets()
    for c in cands:
        row = ev.evaluate(c)
        row["meets_slo"], row["binding"] = _binding(row, targets)
        if row["fits"]:
            row["usd_per_million_output_tokens"] = _usd_per_million(row, _price(c.gpu, work, prices))
        rows.append(row)
    rows.sort(key=lambda r: rank_key(r, work.objective))
    running = [r for r in rows if r["fits"] and r["binding"] not in ("throughput", "kv_pool", "max_num_seqs")]
    results = [_result(r, ev, emit, prices, work) for r in distinct(rows, top)]
    _mark_band(results, work.objective)
    out = {"candidates": len(cands), "feasible": len(running),      # fit and carry the load without queueing
           "meeting_slo": sum(r["meets_slo"] for r in rows), "objective": work.objective,
           "slo": work.slo.targets(), "slo_text": work.slo.describe(), "load": _load(work),
           "input_len": work.input_len, "output_len": work.output_len, "max_model_len": ev.max_model_len,
           "results": results, "pareto": pareto(running),
           "interval": next((r["at"].get("interval") for r in results if r["at"].get("interval")), None),
           "prices": {g: {"usd_per_hour": _price(g, work, prices),
                          "source": "--price" if g in work.prices else (prices.get(g) or {}).get("source")}
                      for g in space.gpus}}
    if not out["meeting_slo"]:
        out["closest_miss"] = _closest_miss(rows, work.slo)
    out["seconds"] = time.perf_counter() - t0
    return out


def _same_times(a: dict, b: dict) -> bool:
    keys = ("ttft_s", "tpot_s", "request_latency_s", "output_tokens_per_s")
    return all(a[k] == b[k] or (a[k] and b[k] and abs(a[k] - b[k]) <= 1e-9 * abs(b[k])) for k in keys)


def distinct(rows: list[dict], top: int) -> list[dict]:
    """The first ``top`` ranked rows that run, skipping a row that differs from a kept one only in
    max_num_seqs and has the same times (it is the same deployment for this load)."""
    kept: list[dict] = []
    for r in rows:
        if len(kept) == top:
            break
        if not r["fits"]:
            continue
        c = r["candidate"]
        if any(dataclasses.replace(k["candidate"], max_num_seqs=c.max_num_seqs) == c and _same_times(k["at"], r["at"])
               for k in kept):
            continue
        kept.append(r)
    return kept


def _load(work: Workload) -> str:
    return (f"concurrency {work.concurrency}" if work.concurrency is not None
            else f"request rate {work.request_rate:g}/s (Poisson)")


def _result(row: dict, ev: _Evaluator, emit: str | None, prices: dict, work: Workload) -> dict:
    from multihead.cost.time.timing_intervals import add_intervals
    c = row["candidate"]
    a = row["account"]
    if not row["at"]["overloaded"]:
        setup, _ = ev.setup(c, row["dtype"])
        row["at"] = add_intervals(dict(row["at"]), setup)
    out = {"engine": c.engine, "gpu": c.gpu, "gpus": c.gpus, "tensor_parallel_size": c.tensor_parallel_size,
           "pipeline_parallel_size": c.pipeline_parallel_size, "data_parallel_size": c.data_parallel_size,
           "quantization": c.quantization, "kv_cache_dtype": c.kv_cache_dtype, "max_num_seqs": c.max_num_seqs,
           "meets_slo": row["meets_slo"], "binding": row["binding"], "at": row["at"],
           "kv_cache_tokens": a.kv_cache_tokens, "max_concurrency": a.max_concurrency,
           "usd_per_hour": (_price(c.gpu, work, prices) or 0) * c.gpus or None,
           "usd_per_million_output_tokens": row.get("usd_per_million_output_tokens"), "command": None}
    if emit:
        out["command"] = launch_command(ev, c, row["dtype"], c.engine if emit == "auto" else emit)
    return out


def launch_command(ev: _Evaluator, c: Candidate, dtype: str, emit: str) -> dict:
    """The engine's launch line for one replica, and how the replicas are served: the flags the
    candidate's memory account was computed for, as planner/launch.add_command emits them for the
    serving answer (SGLang's own --mem-fraction-static and --chunked-prefill-size; the rope override
    past the config's length, computed once in _Evaluator: a length no override reaches is refused
    there)."""
    from multihead.engines import command
    from multihead.planner.launch import launch_plan
    req, fraction = ev.request(c), None
    dev = ev.device(c.gpu)
    total = dev.memory_bytes if dev is not None else None
    if c.engine == "sglang" and emit == "sglang":
        from multihead.cost.serving.sglang import details
        a, _ = ev.account(c)
        sg = details(ev.S.sglang_args(ev.cfg, req), a, total or ev.S.gpu_memory_bytes(c.gpu)[1])
        fraction = sg["mem_fraction_static"]
        req = dataclasses.replace(req, max_num_batched_tokens=sg["chunked_prefill_size"])
    if c.engine == emit == "tensorrt-llm":
        from multihead.cost.serving.tensorrt_llm import DEFAULT_FRACTION
        fraction = req.kv_cache_free_gpu_memory_fraction or DEFAULT_FRACTION
    positions = ev.positions
    plan = launch_plan(req, dtype, fraction, positions["rope_override"] if positions else None, total, ev.cfg)
    plan = dataclasses.replace(plan, data_parallel_size=c.data_parallel_size)
    cmd = command(emit, plan)
    note = "; ".join(x for x in (cmd.note, cmd.checkpoint_note, positions["note"] if positions else "") if x)
    return {"engine": emit, "text": cmd.render(), "argv": cmd.argv, "nodes": cmd.nodes, "note": note}


def _mark_band(results: list[dict], objective: str) -> None:
    """Mark the SLO-meeting results the prediction cannot tell from the best: the 80% intervals of
    the quantity the objective ranks on overlap the best one's: output tokens/s per GPU ("gpus": only
    among results with as many GPUs as the best; "throughput"), or dollars per million output tokens
    ("cost": gpus x price / tokens/s, so GPUs of different prices compare by cost, not by rate)."""
    ok = [r for r in results if r["meets_slo"]]
    for r in results:
        r["within_band_of_best"] = None
    if not ok or "output_tokens_per_s_low" not in ok[0]["at"]:
        return
    key = "output_tokens_per_s"

    def band(r):
        lo, hi = r["at"][key + "_low"], r["at"][key + "_high"]
        if objective == "cost" and r.get("usd_per_hour"):
            k = r["usd_per_hour"] * 1e6 / 3600          # $ per million tokens = k / (tokens/s)
            return k / hi, k / lo
        return lo / r["gpus"], hi / r["gpus"]
    best = ok[0]
    lo_b, hi_b = band(best)
    for r in ok:
        same_gpus = objective != "gpus" or r["gpus"] == best["gpus"]
        lo_r, hi_r = band(r)
        r["within_band_of_best"] = bool(same_gpus and lo_r <= hi_b and lo_b <= hi_r)


def pareto(rows: list[dict]) -> list[dict]:
    """Configurations no other beats on both output tokens/s per GPU (higher) and TPOT (lower)."""
    pts = sorted(((r["at"]["tpot_s"], -r["at"]["output_tokens_per_s_per_gpu"], r) for r in rows),
                 key=lambda p: (p[0], p[1]))
    front, best = [], -math.inf
    for tpot, neg, r in pts:
        if -neg > best:
            best = -neg
            c = r["candidate"]
            front.append({"tpot_s": tpot, "output_tokens_per_s_per_gpu": -neg, "gpu": c.gpu, "gpus": c.gpus,
                          "tensor_parallel_size": c.tensor_parallel_size,
                          "pipeline_parallel_size": c.pipeline_parallel_size,
                          "data_parallel_size": c.data_parallel_size, "quantization": c.quantization,
                          "kv_cache_dtype": c.kv_cache_dtype, "max_num_seqs": c.max_num_seqs,
                          "meets_slo": r["meets_slo"]})
    return front


QUEUE_LIMITS = ("kv_pool", "max_num_seqs")      # a closed loop's requests wait: the load is not carried


def _closest_miss(rows: list[dict], slo: SLO) -> dict | None:
    """When nothing meets the SLO: the running configuration whose worst target ratio is smallest,
    preferring those that carry the load (a closed loop whose requests queue behind max_num_seqs or
    the KV pool misses on that, whatever its ratios: its binding limit says so)."""
    best = None
    for r in rows:
        if not r["fits"] or r["at"]["overloaded"]:
            continue
        ratios = {k: r["at"][k] / v for k, v in slo.targets().items()}
        queues = r["binding"] in QUEUE_LIMITS
        key = (queues, max(ratios.values()) if ratios else 0.0)
        if best is None or key < best[0]:
            best = (key, r, ratios)
    if best is None:
        limits = sorted({r["binding"] for r in rows})
        return {"note": f"no configuration runs at this load (limits: {', '.join(limits)})"}
    (queues, _), r, ratios = best
    c = r["candidate"]
    name = {"ttft_s": "ttft", "tpot_s": "tpot", "request_latency_s": "e2e"}
    return {"gpu": c.gpu, "gpus": c.gpus, "tensor_parallel_size": c.tensor_parallel_size,
            "pipeline_parallel_size": c.pipeline_parallel_size, "data_parallel_size": c.data_parallel_size,
            "quantization": c.quantization, "kv_cache_dtype": c.kv_cache_dtype, "max_num_seqs": c.max_num_seqs,
            "binding": name[max(ratios, key=ratios.get)] if ratios and not queues else r["binding"],
            "over_target": {name[k]: v for k, v in ratios.items()}, "at": r["at"]}


# -- the front door: a PlanRequest with search=True ------------------------------------------------------
def search_report(req) -> dict:
    """``{"search": ...}`` for a PlanRequest whose ``search`` is set (``multihead plan --search`` and
    the page's /api/search): the model as the planner resolves it, the GPUs named in ``gpu`` (a
    comma list; the figures gpu_memory_gb / effective_tflops / bandwidth_tbps give one GPU called
    'custom'; neither: DEFAULT_GPUS), the request's lengths and load, its engine flags."""
    from multihead.cost.serving import answer as S
    from multihead.cost.time.serving_time import request_lengths
    from multihead.planner.front import request_model
    if req.concurrency is None and req.request_rate is None:
        raise ValueError("concurrency: a search needs the load: concurrency N (closed loop) or request_rate R")
    m = request_model(req)
    if m is None:
        raise ValueError("model: a search needs a model with a config.json (catalog name, HF id or path)")
    gpus, devices = _search_gpus(req)
    longest = req.max_model_len or req.tokens
    if longest is None:
        if req.input_len is None:
            raise ValueError("input_len: a search needs the prompt length (--input-len)")
        longest = req.input_len + (req.output_len or 1024)
    inp, out = request_lengths(longest, req.input_len, req.output_len)
    from multihead.planner.front import serving_precision
    from multihead.planner.launch import checkpoint_method
    precision = serving_precision(req)          # --weights-dtype in engine terms: int4 -> gptq, fp16 -> --dtype float16
    quant = req.quantization or precision.get("quantization")
    if quant:                       # the weights searched: as asked
        quantizations = (quant,)
    elif checkpoint_method(m.config) or "dtype" in precision:
        quantizations = (None,)     # a quantized checkpoint or a stated 16-bit precision: as is
    else:
        quantizations = QUANTIZATIONS    # a 16-bit checkpoint: as is, or FP8 at load
    space = Space(gpus=gpus, devices=devices, gpus_max=req.gpus_max, engines=(req.engine,),
                  quantizations=quantizations,
                  kv_cache_dtypes=(req.kv_cache_dtype,) if req.kv_cache_dtype else KV_CACHE_DTYPES)
    work = Workload(input_len=inp, output_len=out, concurrency=req.concurrency, request_rate=req.request_rate,
                    slo=parse_slo(req.slo), objective=req.objective, max_model_len=req.max_model_len,
                    prices=parse_prices(req.price.split(",") if req.price else None))
    name = m.model_id or str(req.model)
    stated = {k: getattr(req, k) for k in ("max_num_batched_tokens", "block_size") if getattr(req, k) is not None}
    base = S.Request(model=name, gpu_memory_utilization=req.gpu_memory_utilization, **stated,
                     given=frozenset({*stated, "max_num_seqs"}),    # each candidate states its max_num_seqs
                     dtype=precision.get("dtype") or req.dtype,
                     engine=req.engine, engine_version=req.engine_version,
                     mem_fraction_static=req.mem_fraction_static)
    return {"search": search(m.config, name, work, space, emit=req.emit or "auto", top=req.top, base_request=base,
                             spec=m.spec)}


def _search_gpus(req) -> tuple[tuple[str, ...], dict]:
    """(GPU names, {name: DeviceSpec} for a GPU given by its figures)."""
    figures = (req.gpu_memory_gb, req.effective_tflops, req.bandwidth_tbps)
    if any(f is not None for f in figures):
        if req.gpu:
            raise ValueError("gpu: for a search give GPU names or the figures (gpu_memory_gb, effective_tflops, "
                             "bandwidth_tbps), not both")
        from multihead.planner.inputs import resolve_device
        dev = resolve_device(None, gpu_memory_gb=req.gpu_memory_gb, effective_tflops=req.effective_tflops,
                             bandwidth_tbps=req.bandwidth_tbps)
        return ("custom",), {"custom": dataclasses.replace(dev, name="custom")}
    if not req.gpu:
        return DEFAULT_GPUS, {}
    from multihead.cost.serving.answer import gpu_memory_bytes
    names = [n.strip() for n in req.gpu.split(",") if n.strip()]
    if not names:
        raise ValueError("gpu: expected GPU names separated by commas")
    return tuple(dict.fromkeys(gpu_memory_bytes(n)[0] for n in names)), {}


# -- the fallback search: the ways out when one request does not fit ---------------------------------
# The same candidate type (Candidate) and evaluation (the engine's memory account) as the search
# above, over the axes a request that does not fit can turn: more GPUs of its own type (TP up to one
# node; PP across nodes once TP fills one), an fp8 KV cache, fp8 weights. Order: fewest GPUs first
# (money), then the least precision lost (quality); the length cut (it changes the request) comes last.
FALLBACK_LOSS = {"kv_cache_dtype": 1, "quantization": 2}
FALLBACK_FLAGS = {"tensor_parallel_size": "--tensor-parallel-size",
                  "pipeline_parallel_size": "--pipeline-parallel-size", "kv_cache_dtype": "--kv-cache-dtype",
                  "quantization": "--quantization"}


def fallback_candidates(req, heads: int) -> list[Candidate]:
    """The Candidates a request can turn to (itself excluded), in the configuration search's Space."""
    keep = lambda *v: tuple(dict.fromkeys(v))  # noqa: E731 - the request's own value first, once
    space = Space(gpus=(req.gpu,), gpus_max=GPUS_PER_NODE * PP_SIZES[-1],
                  tensor_parallel_sizes=tuple(t for t in TP_SIZES if t >= req.tensor_parallel_size and heads % t == 0),
                  pipeline_parallel_sizes=keep(req.pipeline_parallel_size, *PP_SIZES[1:]),
                  quantizations=keep(req.quantization, "fp8"), kv_cache_dtypes=keep(req.kv_cache_dtype, "fp8"),
                  max_num_seqs=(req.max_num_seqs,), data_parallel=False, engines=(req.engine,))
    own = Candidate(req.gpu, req.tensor_parallel_size, req.pipeline_parallel_size, 1, req.quantization,
                    req.kv_cache_dtype, req.max_num_seqs, req.engine)
    return [c for c in space.candidates() if c != own and (c.pipeline_parallel_size == req.pipeline_parallel_size
                                                           or c.tensor_parallel_size == GPUS_PER_NODE)]


def request_of(req, c: Candidate):
    """The request with a candidate's settings (the engine's flags)."""
    return dataclasses.replace(req, tensor_parallel_size=c.tensor_parallel_size,
                               pipeline_parallel_size=c.pipeline_parallel_size, quantization=c.quantization,
                               kv_cache_dtype=c.kv_cache_dtype)


def fallback_cost(cand, base) -> tuple[int, int]:
    """(GPUs, precision lost): the fallback search's order."""
    return (cand.tensor_parallel_size * cand.pipeline_parallel_size,
            sum(w for k, w in FALLBACK_LOSS.items() if getattr(cand, k) != getattr(base, k)))


def changes(cand, base) -> list[str]:
    """The engine flags that differ from the request, as they are typed (SGLang: its own names and
    values for the same levers)."""
    flags, kv = dict(FALLBACK_FLAGS), {}
    if base.engine == "sglang":
        flags.update(tensor_parallel_size="--tp-size", pipeline_parallel_size="--pp-size")
        kv = {"fp8": "fp8_e4m3"}
    if base.engine == "tensorrt-llm":      # trtllm-serve's names; the dtype levers are a checkpoint's
        flags.update(tensor_parallel_size="--tp_size", pipeline_parallel_size="--pp_size",
                     kv_cache_dtype="kv_cache_config.dtype", quantization="a checkpoint quantized")
    value = lambda k: kv.get(getattr(cand, k), getattr(cand, k)) if k == "kv_cache_dtype" else getattr(cand, k)  # noqa: E731
    return [f"{flag} {value(k)}" for k, flag in flags.items() if getattr(cand, k) != getattr(base, k)]


def fallback_search(cfg: dict, req, heads: int, min_concurrency: float = 1.0, limit: int | None = 5,
                    **account_kw) -> list[tuple]:
    """[(Request, ServingAccount)] that serve ``req`` at ``min_concurrency`` or more, cheapest first;
    under TP every KV figure is per GPU. ``account_kw``: ``spec`` / ``gpu_bytes`` for serving_account."""
    from multihead.cost.serving.answer import serving_account
    found = []
    for c in fallback_candidates(req, heads):
        cand = request_of(req, c)
        try:
            a, _ = serving_account(cfg, cand, **account_kw)
        except ValueError:
            continue                      # e.g. TP not dividing the KV heads
        if a.fits and a.max_concurrency >= min_concurrency:
            found.append((fallback_cost(cand, req), -a.max_concurrency, cand, a))
    found.sort(key=lambda f: (f[0], f[1]))
    return [(c, a) for _, _, c, a in found[:limit]]


def fallback_rows(found: list[tuple], req, account) -> list[dict]:
    """The serving object's ``fallbacks`` list: one row per found setting, then the length cut
    (it changes the request itself) when one shorter request would fit."""
    out = [{"flags": changes(c, req), "gpus": c.tensor_parallel_size * c.pipeline_parallel_size,
            "max_concurrency": f.max_concurrency, "kv_cache_tokens": f.kv_cache_tokens,
            "kv_cache_gib_per_gpu": f.kv_cache_gib} for c, f in found]
    if account.max_model_len_fit > 0:
        cut = {"sglang": "--context-length", "tensorrt-llm": "--max_seq_len"}.get(req.engine, "--max-model-len")
        out.append({"flags": [f"{cut} {account.max_model_len_fit}"],
                    "gpus": req.tensor_parallel_size * req.pipeline_parallel_size, "max_concurrency": 1.0,
                    "kv_cache_tokens": None, "kv_cache_gib_per_gpu": account.kv_cache_gib,
                    "note": "shorter requests: a longer document must be cut"})
    return out


def answer(cfg: dict, req, emit: str | None = "vllm", heads: int | None = None, input_len: int | None = None,
           output_len: int | None = None, device=None, concurrency: int | None = None,
           request_rate: float | None = None, **account_kw) -> dict:
    """The serving object of a request outside a plan (``serving --gpu-memory-gb``): the account and
    times, the fallback search's settings when one request does not fit (``heads``: the model's query
    heads; None: no search) and the launch command for the request or the cheapest setting."""
    from multihead.cost.serving.answer import answer as account_answer
    from multihead.cost.serving.answer import serving_account
    from multihead.planner.launch import add_command
    from multihead.planner.names import serving_bytes
    a, _ = serving_account(cfg, req, **account_kw)
    found = fallback_search(cfg, req, heads, **account_kw) if heads and (not a.fits or a.max_concurrency < 1) else None
    out = account_answer(cfg, req, input_len=input_len, output_len=output_len, device=device,
                         concurrency=concurrency, request_rate=request_rate, **account_kw)
    add_command(out, req, emit, found[0][0] if found else None, account_kw.get("gpu_bytes"), cfg)
    if found is not None:
        out["fallbacks"] = fallback_rows(found, req, a)
    return serving_bytes(out)
