"""Time keys of the ``serving`` object: TTFT, TPOT and aggregate tokens/s at the account's max concurrency.

The serving account (cost/serving/answer.py answer) says how many requests of ``max_model_len`` tokens
fit; this adds how fast they run (cost/time/timing.py): requests of ``input_len`` prompt tokens and
``output_len`` new tokens, on the request's GPU, TP x PP, dtype, quantization and KV dtype, with
the fixed costs of the vLLM engine family (the engine the account models).
"""
from __future__ import annotations

import dataclasses

from multihead.cost.time import timing
from multihead.cost.time.device import DeviceSpec, catalog_gpu
from multihead.cost.spec.hf_config import read_config
from multihead.cost.spec.quantization import from_flag
from multihead.cost.spec.units import canonical_dtype

DEFAULT_OUTPUT_LEN = 1024


def request_lengths(max_model_len: int, input_len: int | None, output_len: int | None) -> tuple[int, int]:
    """(input_len, output_len): the flags, else output 1024 (or a quarter of a short max_model_len)
    and the prompt filling the rest of max_model_len. Their sum may not exceed max_model_len."""
    out = output_len if output_len is not None else min(DEFAULT_OUTPUT_LEN, max(1, max_model_len // 4))
    inp = input_len if input_len is not None else max(1, max_model_len - out)
    for name, v in (("input-len", inp), ("output-len", out)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ValueError(f"{name}: expected a positive integer, got {v!r}")
    if inp + out > max_model_len:      # name the length(s) the caller gave: the default fills the rest
        name = {(True, False): "input-len", (False, True): "output-len"}.get(
            (input_len is not None, output_len is not None), "input-len + output-len")
        raise ValueError(f"{name}: {inp:,} prompt + {out:,} output tokens exceed max-model-len {max_model_len:,}")
    return inp, out


def device_gpu(device, constants: timing.Constants | None = None) -> tuple[DeviceSpec, timing.Constants]:
    """The GPU record and the time model's constants for a planner DeviceSpec (a catalog GPU, or explicit figures).

    The record is used as it holds its figures (the catalog's, or ones given on the command line).
    An efficiency the user stated (DeviceSpec.stated: --flops-efficiency / --bandwidth-efficiency,
    or 1.0 with an explicit --effective-tflops / --bandwidth-tbps, already effective) replaces the
    fitted one, and a stated FLOP/s efficiency is a share of the datasheet peak itself (the measured
    matmul ceiling, mamf_share, is not applied on top): the rate grows with the stated number. The
    others keep the fitted constants. A measured CPU profile is refused: its own kernel terms time it
    (cost/attention_time).
    """
    if device.kind == "measured":
        raise ValueError(f"gpu: {device.name} is a measured CPU profile, which the GPU-time model does not cover")
    c = constants or timing.load_constants()
    stated = {k: getattr(device, k) for k in ("flops_efficiency", "bandwidth_efficiency") if k in device.stated}
    if stated:
        said = ", ".join(f"{k} {v:g}" for k, v in stated.items())
        c = dataclasses.replace(c, **stated, source=f"{c.source}; {said} as the GPU's figures state")
    if "flops_efficiency" in stated:
        device = dataclasses.replace(device, mamf_share=1.0)
    return device, c


def plan_setup(spec, device, precision, gpus: int, engine: str = "vllm") -> timing.Setup:
    """The timing Setup of a plan: its model, GPU (device_gpu), precision and TP = its GPU count, with
    the fixed costs of the engine the plan's serving section models (vLLM)."""
    gpu, c = device_gpu(device)
    return timing.Setup(spec, gpu, c, tp=gpus, weights=precision.weights, quantization=precision.quantization,
                        kv=precision.kv, engine=engine)


def setup_for(cfg: dict, req, dtype: str, constants: timing.Constants | None = None, spec=None,
              device=None) -> timing.Setup:
    """The timing Setup of a serving Request (vLLM's flags) for ``cfg`` served in ``dtype`` (``spec``:
    the ModelSpec when the caller has it, e.g. a plan's with its overrides and stated params;
    ``device``: the plan's DeviceSpec, explicit figures included, else the catalog GPU ``req.gpu``)."""
    spec = spec or read_config(cfg, name=req.model or "model")
    weights = canonical_dtype(dtype, "dtype")
    kv = "fp8" if str(req.kv_cache_dtype).startswith("fp8") else weights
    quantization = from_flag(req.quantization) if req.quantization else spec.quantization
    if device is not None:
        gpu, constants = device_gpu(device, constants)
    else:
        gpu, constants = catalog_gpu(req.gpu), constants or timing.load_constants()
    fields = time_engine_fields(req)
    if fields.get("expert_parallel_size", 1) > 1 and spec.moe is None:
        raise ValueError(f"expert-parallel-size: {spec.name} has no routed experts to spread")
    return timing.Setup(spec, gpu, constants, tp=req.tensor_parallel_size, pp=req.pipeline_parallel_size,
                        weights=weights, quantization=quantization, kv=kv, **fields)


def time_engine_fields(req) -> dict:
    """The time model's engine inputs a request states (engine, engine_version, and, where the request
    type carries them, expert_parallel_size, data_parallel_size, enable_dp_attention), under the
    engines' flag names; the engine's fixed costs by version family are cost/time/engine_costs.py's."""
    out = {"engine": getattr(req, "engine", None) or "vllm", "engine_version": getattr(req, "engine_version", None)}
    for name in ("expert_parallel_size", "batching", "enable_dp_attention"):
        value = getattr(req, name, None)
        if value is not None:
            out[name] = value
    if out.get("enable_dp_attention"):      # otherwise data_parallel_size counts replicas (operating_point)
        out["data_parallel_size"] = getattr(req, "data_parallel_size", 1)
    return out


def time_keys(cfg: dict, req, serving: dict, input_len: int | None = None, output_len: int | None = None,
              spec=None, device=None, concurrency: int | None = None, request_rate: float | None = None) -> dict:
    """The keys to add to the ``serving`` dict (empty of times when the request does not fit).
    With ``concurrency`` or ``request_rate``: also ``at``, the metrics at that load
    (cost/time/operating_point.evaluate), and the asked concurrency joins the curve."""
    inp, out = request_lengths(req.max_model_len, input_len, output_len)
    if not serving.get("fits") or serving.get("max_concurrency", 0) < 1:
        return {"input_len": inp, "output_len": out, "time": None,
                "time_note": "no time: not one request of max_model_len fits"}
    try:
        setup = setup_for(cfg, req, serving["dtype"], spec=spec, device=device)
    except ValueError as err:      # a model or GPU the time model cannot represent: say so, no numbers
        return {"input_len": inp, "output_len": out, "time": None, "time_note": f"no time: {err}"}
    measured = None
    if getattr(req, "measured", None):          # scaled to one run of this deployment (measured_point.py)
        setup, measured = scaled_to_measured(setup, req, serving, inp, out)
    # the most requests one replica runs at once: its KV pool, capped by max_num_seqs (operating_point.slots)
    keys = timing.serving_time_keys(setup, inp, out, min(serving["max_concurrency"], req.max_num_seqs))
    if measured is not None:
        keys["measured"] = measured
    if concurrency is not None or request_rate is not None:
        from multihead.cost.time.timing_intervals import add_intervals
        kv_tokens, replicas = _load_args(req, serving)
        keys["at"] = add_intervals(at_load(setup, req, kv_tokens, inp, out, concurrency, request_rate, replicas), setup)
        if concurrency is not None and all(p["concurrency"] != concurrency for p in keys["curve"]):
            a = keys["at"]
            keys["curve"] = sorted(keys["curve"] + [{"concurrency": concurrency, "ttft_s": a["ttft_s"],
                                                     "tpot_s": a["tpot_s"],
                                                     "output_tokens_per_s": a["output_tokens_per_s"]}],
                                   key=lambda p: p["concurrency"])
    return keys


def _load_args(req, serving: dict) -> tuple[int, int]:
    """(KV tokens of one router target, replicas the load is split over) for at_load."""
    dp_attention = getattr(req, "enable_dp_attention", False)
    groups = req.data_parallel_size if dp_attention else 1        # SGLang: one token pool per attention group
    return serving["kv_cache_tokens"] * groups, 1 if dp_attention else getattr(req, "data_parallel_size", 1)


def scaled_to_measured(setup: timing.Setup, req, serving: dict, input_len: int, output_len: int
                       ) -> tuple[timing.Setup, dict]:
    """``setup`` with the (prefill, decode) factors that make the model reproduce ``req.measured`` (one run of this
    deployment: cost/time/measured_point.py) at that run's load and lengths (default: the plan's lengths), and the
    ``serving.measured`` object saying what was fitted."""
    from multihead.cost.time import measured_point
    point = measured_point.parse(req.measured)
    inp, out = point.input_len or input_len, point.output_len or output_len
    concurrency = point.concurrency                 # or point.request_rate: the point has one of them
    kv_tokens, replicas = _load_args(req, serving)

    def predict(scale):                     # the model alone: no intervals while fitting
        return at_load(dataclasses.replace(setup, measured_scale=scale), req, kv_tokens, inp, out, concurrency,
                       point.request_rate, replicas, intervals=False)

    fit = measured_point.fit(predict, point)
    scaled = dataclasses.replace(setup, measured_scale=(fit["prefill"], fit["decode"]))
    load = {"concurrency": concurrency, "request_rate": point.request_rate, "input_len": inp, "output_len": out}
    return scaled, {"point": {**load, "ttft_s": point.ttft_s, "tpot_s": point.tpot_s,
                              "output_tokens_per_s": point.output_tokens_per_s},
                    "text": req.measured, "prefill_factor": fit["prefill"], "decode_factor": fit["decode"],
                    "predicted": fit["predicted"], "reproduced": fit["reproduced"],
                    "how": "every prefill and decode step of the time model scaled by these factors, fitted so the model "
                           "reproduces the measured run; intervals from errors left after such a scaling "
                           "(reports/gpu-time/session16/MEASURED.md)"}


def at_load(setup: timing.Setup, req, kv_cache_tokens: int, input_len: int, output_len: int,
            concurrency: int | None, request_rate: float | None, data_parallel_size: int = 1, cache=None,
            intervals: bool = True) -> dict:
    """``serving.at``: the metrics at one load, the KV pool holding kv_cache_tokens // (block-rounded
    input_len + output_len) requests of this length per replica; with their intervals unless ``intervals`` is
    False (a fit's inner evaluations)."""
    from multihead.cost.time.operating_point import evaluate
    from multihead.cost.time.timing_intervals import add_intervals
    per_request = -(-(input_len + output_len) // req.block_size) * req.block_size
    at = evaluate(setup, input_len, output_len, concurrency=concurrency, request_rate=request_rate,
                  data_parallel_size=data_parallel_size, max_num_seqs=req.max_num_seqs,
                  kv_capacity_requests=kv_cache_tokens / per_request, cache=cache)
    return at if at["overloaded"] or not intervals else add_intervals(at, setup)


def _ms(s: float) -> str:
    return f"{s * 1e3:,.1f} ms" if s < 10 else f"{s:,.1f} s"


def _iv(d: dict, key: str, time: bool = True) -> str:
    """" (80%: low-high)" when the keys carry the interval of ``key``."""
    if f"{key}_low" not in d:
        return ""
    lo, hi = d[f"{key}_low"], d[f"{key}_high"]
    return f" (80%: {_ms(lo)}-{_ms(hi)})" if time else f" (80%: {lo:,.0f}-{hi:,.0f})"


def at_lines(a: dict) -> list[str]:
    """The ``at`` object as text: the asked load, its times, and what queues."""
    load = (f"concurrency {a['concurrency']:,}" if a["concurrency"] is not None
            else f"{a['request_rate']:g} requests/s ({a['arrival']})")
    if a["overloaded"]:
        return [f"  at {load}: overloaded: {a['note']}"]
    lines = [f"  at {load}: TTFT {_ms(a['ttft_s'])}{_iv(a, 'ttft_s')}, TPOT {_ms(a['tpot_s'])}{_iv(a, 'tpot_s')}, "
             f"request {_ms(a['request_latency_s'])}, {a['output_tokens_per_s']:,.1f} output tokens/s"
             f"{_iv(a, 'output_tokens_per_s', time=False)} ({a['output_tokens_per_s_per_gpu']:,.1f} per GPU), "
             f"{a['requests_per_s']:,.3g} requests/s"]
    if a["note"]:
        lines.append(f"    {a['note']}")
    if _caution(a):
        lines.append(f"    caution: {_caution(a)}")
    return lines


def _caution(d: dict | None) -> str:
    """The interval's caution of a time object (serving keys or ``at``), "" when none."""
    return ((d or {}).get("interval") or {}).get("caution", "")


def measured_lines(d: dict) -> list[str]:
    """The scaling to a measured run, when the plan has one (serving.measured)."""
    m = d.get("measured")
    if not m:
        return []
    p, pred = m["point"], m["predicted"]
    load = (f"concurrency {p['concurrency']:,}" if p["request_rate"] is None else f"{p['request_rate']:g} requests/s")
    said = ", ".join(f"{name} {_ms(p[k])} (model {_ms(pred[k])})" for k, name in (("ttft_s", "TTFT"), ("tpot_s", "TPOT"))
                     if p[k] is not None and pred.get(k) is not None)
    if p["output_tokens_per_s"] is not None and pred.get("output_tokens_per_s") is not None:
        said += (", " if said else "") + (f"{p['output_tokens_per_s']:,.1f} output tokens/s "
                                          f"(model {pred['output_tokens_per_s']:,.1f})")
    return [f"  scaled to your measured run at {load}, {p['input_len']:,} + {p['output_len']:,} tokens: {said}; "
            f"prefill x{m['prefill_factor']:.3g}, decode x{m['decode_factor']:.3g} of the published-data model "
            f"(intervals: errors left after such a scaling, docs/gpu-time.md)"]


def render_lines(d: dict) -> list[str]:
    """The serving section's time lines (text)."""
    if "ttft_s" not in d:
        return [d["time_note"]] if d.get("time_note") else []
    c = d["concurrency"]
    # the engine's max_num_seqs, not the KV pool, set that concurrency (time_keys caps it so)
    capped = " (max_num_seqs)" if c == d.get("max_num_seqs") and c < int(d.get("max_concurrency", 0)) else ""
    at = at_lines(d["at"]) if d.get("at") else []
    # the caution once: under the asked load's times when it printed them (an overloaded load prints none)
    printed = bool(at) and not d["at"]["overloaded"] and bool(_caution(d["at"]))
    caution = [f"  caution: {_caution(d)}"] if _caution(d) and not printed else []
    return [f"time, requests of {d['input_len']:,} prompt + {d['output_len']:,} output tokens "
            f"({d.get('time_engine', d['engine'])} fixed costs; {d['attention_kernel']}):", *measured_lines(d), *at,
            f"  at max concurrency {c}{capped}: TTFT {_ms(d['ttft_s'])}{_iv(d, 'ttft_s')}, TPOT {_ms(d['tpot_s'])}"
            f"{_iv(d, 'tpot_s')}, {d['output_tokens_per_s']:,.1f} output tokens/s in all{_iv(d, 'output_tokens_per_s', False)} "
            f"(decode {d['decode_bound']}-bound)",
            f"  one request: TTFT {_ms(d['ttft_s_one_request'])}, TPOT {_ms(d['tpot_s_one_request'])}, "
            f"decode {d['decode_tokens_per_s']:,.1f} tokens/s",
            *caution,
            f"  constants: {d['time_constants']}; error on published measurements: docs/gpu-time.md"]
