"""One point measured on your own deployment, to scale the GPU-time model to it (no torch).

Why: most of the model's error on a document it never saw is that document's own factor, which no input a user
states predicts (reports/gpu-time/session16/FLOOR.md: 29 of 42 MoE/MLA sources' TPOT offsets beyond +-15%, and a
leave-one-source-out correction keyed on GPU, engine, version, model, weights or TP does not carry from one document
to the next). Inside one deployment the model's shape holds much better. So one benchmark run of the deployment
being planned (its TTFT and TPOT at one load) fixes two factors, on the prefill and on the decode phase of the time
model (``timing.Setup.measured_scale``), that make the model reproduce that run; every other time of the plan (other
loads, lengths, the curve) is the model's, scaled. How far to trust it: reports/gpu-time/session16/MEASURED.md
(one measured point of a deployment, its other rows: MoE/MLA TPOT 21.0% -> 9.3%, throughput 28.8% -> 9.8%) and the
interval table it writes (catalog/gpu_time_measured_intervals.json).

The point, as ``--measured`` takes it (PlanRequest.measured; the page's field):

    "concurrency=16,input_len=1024,output_len=1024,ttft=250ms,tpot=30ms"
    "concurrency=8,ttft=0.4s,throughput=900"           (output tokens/s in all, for TPOT's place)

Keys: concurrency (requests in flight) or request_rate (per second), one of them required; input_len / output_len
(tokens per request; default: the plan's), ttft, tpot (or itl: the same here), throughput (output tokens/s, all
requests; used for the decode factor when no tpot is given, and not at a request_rate, where it is the rate's). Times
take s, ms, us or min (a bare number is seconds). ``read_bench_result`` turns the JSON that ``vllm bench serve
--save-result`` or SGLang's ``bench_serving --output-file`` writes into that text (the CLI reads files; the page
sends the text, never a path).
"""
from __future__ import annotations

import dataclasses
import json
import math
import re
from pathlib import Path

FACTOR_RANGE = (0.02, 50.0)    # a factor outside: the point was not measured on this deployment (or a unit slipped)
TOLERANCE = 1e-5               # the fit stops when the model reproduces the point this closely
REPRODUCE = 0.01               # after the last step, further off than this is an error, not a fit
MAX_FILE_BYTES = 256 << 20     # a bench result with per-request arrays of 100k requests is ~50 MiB
_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "min": 60.0}
_KEYS = {"concurrency": "concurrency", "max_concurrency": "concurrency", "request_rate": "request_rate",
         "input_len": "input_len", "output_len": "output_len", "ttft": "ttft_s", "tpot": "tpot_s", "itl": "tpot_s",
         "throughput": "output_tokens_per_s", "output_throughput": "output_tokens_per_s"}
_TIMES = ("ttft_s", "tpot_s")
_SAID = {"ttft_s": "ttft", "tpot_s": "tpot", "output_tokens_per_s": "throughput"}   # a field as the user's text names it


@dataclasses.dataclass(frozen=True)
class MeasuredPoint:
    """TTFT / TPOT / output throughput measured at one load (closed loop of ``concurrency`` clients, or Poisson
    ``request_rate``) with requests of ``input_len`` + ``output_len`` tokens (None: the plan's)."""
    concurrency: int | None = None
    request_rate: float | None = None
    input_len: int | None = None
    output_len: int | None = None
    ttft_s: float | None = None
    tpot_s: float | None = None
    output_tokens_per_s: float | None = None

    def __post_init__(self):
        if self.concurrency is not None and self.request_rate is not None:
            raise ValueError("measured: give concurrency or request_rate, not both")
        if self.ttft_s is None and self.tpot_s is None and self.output_tokens_per_s is None:
            raise ValueError("measured: give at least one of ttft, tpot, throughput")
        if self.concurrency is None and self.request_rate is None:     # no silent guess of the run's load
            raise ValueError("measured: give the run's load, concurrency=N (requests in flight) or request_rate=R "
                             "(per second)")
        if self.request_rate is not None and self.tpot_s is None and self.output_tokens_per_s is not None:
            raise ValueError("measured: at a request_rate the output throughput is the rate's (rate x output_len), "
                             "whatever the decode speed; give tpot")

    def text(self) -> str:
        """The point as ``--measured`` text (parse(point.text()) == point)."""
        parts = []
        for key, name in (("concurrency", "concurrency"), ("request_rate", "request_rate"),
                          ("input_len", "input_len"), ("output_len", "output_len")):
            v = getattr(self, key)
            if v is not None:
                parts.append(f"{name}={v:g}" if isinstance(v, float) else f"{name}={v}")
        for key, name in (("ttft_s", "ttft"), ("tpot_s", "tpot")):
            v = getattr(self, key)
            if v is not None:
                parts.append(f"{name}={v * 1e3:.6g}ms")
        if self.output_tokens_per_s is not None:
            parts.append(f"throughput={self.output_tokens_per_s:.6g}")
        return ",".join(parts)


def _number(key: str, text: str, unit: str) -> float:
    value = float(text)
    if key in _TIMES:
        if unit not in ("", *_UNITS):
            raise ValueError(f"measured: unknown unit {unit!r} for {_SAID[key]} (use s, ms, us or min)")
        value *= _UNITS.get(unit, 1.0)
        if not 1e-6 <= value <= 86400:
            raise ValueError(f"measured: {_SAID[key]} must be between 1 us and 24 h, got {text}{unit}")
        return value
    if unit:
        raise ValueError(f"measured: {_SAID.get(key, key)} takes a plain number, got {text}{unit}")
    return value


def parse(text: str) -> MeasuredPoint:
    """``--measured`` text -> MeasuredPoint; a ValueError names the argument and the part that is wrong."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("measured: expected KEY=VALUE pairs like concurrency=16,ttft=250ms,tpot=30ms")
    if len(text) > 300:
        raise ValueError(f"measured: at most 300 characters, got {len(text)}")
    got: dict = {}
    for part in text.split(","):
        m = re.fullmatch(r"\s*([a-z_]+)\s*=\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([a-zµ]*)\s*", part)
        if not m:
            raise ValueError(f"measured: expected KEY=VALUE pairs like concurrency=16,ttft=250ms,tpot=30ms, "
                             f"got {part.strip()[:60]!r}")
        key, number, unit = m.groups()
        if key not in _KEYS:
            raise ValueError(f"measured: unknown key {key!r} (known: concurrency, request_rate, input_len, output_len, "
                             f"ttft, tpot, itl, throughput)")
        name = _KEYS[key]
        if name in got:
            raise ValueError(f"measured: {_SAID.get(name, name)} given twice")
        got[name] = _number(name, number, unit)
    for name, hi in (("concurrency", 1 << 20), ("input_len", 10_000_000), ("output_len", 10_000_000)):
        if name in got:
            v = got[name]
            if not (math.isfinite(v) and v == int(v) and 1 <= v <= hi):
                raise ValueError(f"measured: {name} must be a whole number from 1 to {hi:,}, got {v:g}")
            got[name] = int(v)
    if "request_rate" in got and not 1e-6 <= got["request_rate"] <= 1e6:
        raise ValueError(f"measured: request_rate must be between 1e-6 and 1e6 per second, got {got['request_rate']:g}")
    if "output_tokens_per_s" in got and not 1e-6 <= got["output_tokens_per_s"] <= 1e9:
        raise ValueError(f"measured: throughput must be between 1e-6 and 1e9 output tokens/s, "
                         f"got {got['output_tokens_per_s']:g}")
    return MeasuredPoint(**got)


def read_bench_result(path: str | Path) -> str:
    """The ``--measured`` text of a benchmark result file: vLLM's ``bench serve --save-result`` JSON or SGLang's
    ``bench_serving --output-file`` (JSON lines: the last line). Mean TTFT and TPOT, output throughput, the load
    (max_concurrency, else a finite request_rate) and the mean input / output tokens of the completed requests."""
    p = Path(path)
    try:
        size = p.stat().st_size
    except OSError as err:
        raise ValueError(f"measured: cannot read {str(path)[:200]!r}: {err.strerror}") from None
    except ValueError:                     # a name no file system takes (a NUL byte)
        raise ValueError(f"measured: cannot read {str(path)[:200]!r}: not a file name") from None
    if size > MAX_FILE_BYTES:
        raise ValueError(f"measured: {p.name} is {size:,} bytes, over the {MAX_FILE_BYTES:,} a bench result takes")
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ValueError(f"measured: cannot read {p.name}: {err}") from None
    try:
        data = json.loads(text)                  # vLLM: one JSON object
    except json.JSONDecodeError:
        lines = [x for x in text.splitlines() if x.strip()]
        try:                                     # SGLang: JSON lines, one per run appended; the last is this run
            data = json.loads(lines[-1]) if lines else None
        except json.JSONDecodeError as err:
            raise ValueError(f"measured: {p.name} is not a vLLM or SGLang bench result (JSON: {err.msg})") from None
    if not isinstance(data, dict):
        raise ValueError(f"measured: {p.name} is not a vLLM or SGLang bench result (expected a JSON object)")

    def num(key):
        v = data.get(key)
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None

    completed = num("completed")
    parts = []
    conc, rate = num("max_concurrency"), num("request_rate")
    if conc is not None:
        parts.append(f"concurrency={conc:g}")
    elif rate is not None:
        parts.append(f"request_rate={rate:g}")
    if completed and completed > 0:
        for key, name in (("total_input_tokens", "input_len"), ("total_output_tokens", "output_len")):
            if num(key):
                parts.append(f"{name}={max(1, round(num(key) / completed))}")
    for key, name in (("mean_ttft_ms", "ttft"), ("mean_tpot_ms", "tpot")):
        if num(key) is not None and num(key) > 0:
            parts.append(f"{name}={num(key):.6g}ms")
    if num("output_throughput"):
        parts.append(f"throughput={num('output_throughput'):.6g}")
    if not any(x.startswith(("ttft", "tpot", "throughput")) for x in parts):
        raise ValueError(f"measured: {p.name} has none of mean_ttft_ms, mean_tpot_ms, output_throughput "
                         "(a vLLM `bench serve --save-result` or SGLang `bench_serving` result)")
    if conc is None and rate is None:   # both benchmarks' defaults (--request-rate inf, no --max-concurrency): a burst
        raise ValueError(f"measured: {p.name} sent all its requests at once (request_rate inf, no max_concurrency): "
                         "not a steady load; run the benchmark with --max-concurrency N or a finite --request-rate")
    return ",".join(parts)


def fit(predict, point: MeasuredPoint, iterations: int = 40) -> dict:
    """The (prefill, decode) factors that make ``predict(scale)`` (the model's ``at`` dict at the point's load with
    ``measured_scale`` = scale) reproduce the point: TTFT for the prefill factor, TPOT (else output throughput) for
    the decode one; a phase the point does not measure keeps 1. Newton's method on the log factors with a
    finite-difference Jacobian and a step halved until the model is not overloaded and the point is matched more
    closely: each factor does not only move its own time (TTFT under load waits for decode steps; near saturation a
    time moves several times faster than its factor), so a plain fixed-point update can oscillate and diverge.
    Returns {"prefill", "decode", "predicted" (the unscaled model at the point), "reproduced" (the scaled one)}; a
    ValueError when the model is overloaded at the point, a closed loop's clients queue there, a factor would leave FACTOR_RANGE (the point is not this
    deployment's), or the two factors cannot reproduce the point."""
    first = predict((1.0, 1.0))
    if first.get("overloaded"):
        raise ValueError(f"measured: the model has this deployment overloaded at the measured load ({first.get('note')})"
                         "; measure at a load it serves")
    if point.concurrency is not None and first.get("queued"):    # clients beyond the slots: TTFT is mostly waiting
        raise ValueError(f"measured: at concurrency {point.concurrency:,} this deployment runs fewer at once and "
                         f"{first['queued']:,} requests wait in the queue, so the run's TTFT is mostly waiting; give a "
                         "run at a load the engine runs all at once")
    names = ("prefill (TTFT)", "decode (TPOT)")
    active = [i for i, on in enumerate((point.ttft_s is not None,
                                        point.tpot_s is not None or point.output_tokens_per_s is not None)) if on]
    lo, hi = (math.log(f) for f in FACTOR_RANGE)

    def residual(at: dict) -> list[float]:
        """log(predicted / measured) of each phase's time (a throughput as its reciprocal); 0 where not measured."""
        r = [0.0, 0.0]
        if point.ttft_s is not None:
            r[0] = math.log(at["ttft_s"] / point.ttft_s)
        if point.tpot_s is not None:
            r[1] = math.log(at["tpot_s"] / point.tpot_s)
        elif point.output_tokens_per_s is not None:
            r[1] = math.log(point.output_tokens_per_s / at["output_tokens_per_s"])
        return r

    def run(x: list[float]) -> dict:
        return predict(tuple(math.exp(v) for v in x))

    x, at = [0.0, 0.0], first
    r = residual(at)
    size = lambda r: max(abs(v) for v in r)                      # noqa: E731
    h = 1e-4
    for _ in range(iterations):
        if size(r) < math.log1p(TOLERANCE):
            break
        jac = [[0.0, 0.0], [0.0, 0.0]]                           # d residual_i / d log factor_j
        for j in active:
            for step in (h, -h):                                 # backward where a forward step overloads
                xs = list(x)
                xs[j] += step
                a = run(xs)
                if not a.get("overloaded"):
                    rj = residual(a)
                    for i in (0, 1):
                        jac[i][j] = (rj[i] - r[i]) / step
                    break
        dx = [0.0, 0.0]
        if len(active) == 2:
            det = jac[0][0] * jac[1][1] - jac[0][1] * jac[1][0]
            scale = max(abs(v) for row in jac for v in row)
            if scale > 0 and abs(det) > 1e-9 * scale * scale:
                dx = [(-r[0] * jac[1][1] + r[1] * jac[0][1]) / det, (-r[1] * jac[0][0] + r[0] * jac[1][0]) / det]
            else:                                                # no joint step: each factor on its own time
                dx = [-r[i] / jac[i][i] if jac[i][i] else 0.0 for i in (0, 1)]
        else:
            i = active[0]
            dx[i] = -r[i] / jac[i][i] if jac[i][i] else 0.0
        t, moved = 1.0, False
        while t >= 1 / 1024 and any(dx):
            cand = [min(hi, max(lo, x[i] + t * dx[i])) for i in (0, 1)]
            a = run(cand)
            if not a.get("overloaded"):
                rc = residual(a)
                if size(rc) < size(r):
                    x, at, r, moved = cand, a, rc, True
                    break
            t /= 2
        if not moved:
            break
    if any(abs(math.expm1(-v)) > REPRODUCE for v in r):          # never a silently unfitted point
        for i in active:                                         # held at a bound, still short: outside the range
            if (x[i] >= hi - 1e-9 and r[i] < 0) or (x[i] <= lo + 1e-9 and r[i] > 0):
                raise ValueError(f"measured: the point needs a {names[i]} factor of about {math.exp(x[i] - r[i]):.3g} "
                                 f"on the model, outside {FACTOR_RANGE[0]:g}-{FACTOR_RANGE[1]:g}: was it measured on "
                                 "this model, GPU, TP and engine, in these units?")
        off = [math.exp(-v) for v in r]                          # measured / predicted, as the fit left it
        raise ValueError(f"measured: the model scaled by two factors does not reproduce the point within "
                         f"{REPRODUCE:.0%} (TTFT {off[0]:.3g}x, TPOT {off[1]:.3g}x off): its TTFT and TPOT disagree "
                         "with each other for this load (a queue the model puts in TTFT, say); give one of them")
    keys = ("ttft_s", "tpot_s", "output_tokens_per_s", "request_latency_s")
    fp, fd = math.exp(x[0]), math.exp(x[1])
    return {"prefill": fp, "decode": fd, "predicted": {k: first.get(k) for k in keys},
            "reproduced": {k: at.get(k) for k in keys}}
