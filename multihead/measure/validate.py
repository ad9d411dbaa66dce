"""``multihead validate``: the planner predicts, this machine measures, and we publish the error.

For each held-out shape (sizes and head counts that calibration did not use) the planner is
asked, with the measured profile as its device, for a one-layer, zero-parameter model's
``attention_prefill_seconds`` (causal) or ``decode_seconds_per_token``; then
``multihead.attention`` is timed on the same shape (the best of several repeats, as in
calibration). With the models extra, SmolLM2-135M's whole prefill and per-token decode are
predicted by the planner (catalog model, fp32) and measured the same way.

error = (predicted - measured) / measured. The prediction interval is predicted * (1 +- u) with
u = 2 * sqrt(r^2 + s^2): r the calibration fit's RMS relative residual for that kernel, s the
median run-to-run spread measured by calibration (``timing.Timing.spread``).
"""
from __future__ import annotations

import math
import statistics
import sys
from dataclasses import asdict, dataclass, field

import torch

from multihead.cost.time.cpu_profile import load_device
from multihead.cost.time.device import DeviceSpec
from multihead.hf.errors import MissingModelError
from multihead.measure.calibrate import attention_call, resolved_backend, torch_threads
from multihead.measure.limits import load_average, measure_read_bandwidth
from multihead.measure.shapes import AttnShape
from multihead.measure.timing import time_call

KERNEL = "multihead.attention(backend='auto')"
PREDICTOR = "multihead.planner.plan"


@dataclass
class ValidationPlan:
    """Held-out shapes: other T, other cache lengths and other head counts than calibration's."""
    prefill: tuple[tuple[int, int, int, int], ...] = (          # (H, H_kv, d, T), causal
        (8, 2, 128, 1024), (8, 2, 128, 2048), (8, 2, 128, 4096), (8, 2, 128, 8192), (8, 2, 128, 16384),
        (9, 3, 64, 1024), (9, 3, 64, 3072), (9, 3, 64, 12288),
        (32, 8, 128, 1024), (32, 8, 128, 4096))
    decode: tuple[tuple[int, int, int, int], ...] = (           # (H, H_kv, d, Tk)
        (32, 8, 128, 4096), (32, 8, 128, 16384), (32, 8, 128, 32768), (32, 8, 128, 65536),
        (32, 8, 128, 131072), (9, 3, 64, 4096), (9, 3, 64, 32768), (9, 3, 64, 131072))
    smollm2_tokens: tuple[int, ...] = (256, 1024, 2048)
    dtype: str = "fp32"
    repeats: int = 5
    min_seconds: float = 0.3
    name: str = "full"

    @classmethod
    def quick(cls) -> "ValidationPlan":
        """CI-sized: tiny shapes, no model; checks the machinery, not the accuracy."""
        return cls(prefill=((2, 1, 16, 64), (3, 1, 32, 200)), decode=((4, 1, 32, 1200), (4, 2, 16, 3000)),
                   smollm2_tokens=(), repeats=2, min_seconds=0.0, name="quick")


@dataclass
class Row:
    """One prediction against one measurement (seconds)."""
    group: str              # "prefill", "decode", "smollm2 prefill", "smollm2 decode"
    label: str
    predicted_s: float
    measured_s: float       # best of the repeats
    measured_median_s: float
    spread: float           # median / best - 1 of this row's repeats
    interval_s: tuple[float, float]
    backend: str | None = None
    shape: dict = field(default_factory=dict)

    @property
    def error(self) -> float:
        """Signed relative error of the prediction: (predicted - measured) / measured."""
        return relative_error(self.predicted_s, self.measured_s)

    @property
    def inside(self) -> bool:
        return self.interval_s[0] <= self.measured_s <= self.interval_s[1]

    def to_dict(self) -> dict:
        return {**asdict(self), "error": self.error, "abs_error": abs(self.error), "inside_interval": self.inside}


def relative_error(predicted: float, measured: float) -> float:
    if not measured > 0:
        raise ValueError(f"measured: expected a positive time, got {measured!r}")
    return (predicted - measured) / measured


def summarize(rows: list[Row]) -> dict:
    """Error statistics of ``rows``: median and max absolute relative error (fractions), the mean
    signed error (bias) and the share of measurements inside their prediction interval."""
    if not rows:
        return {"rows": 0, "median_abs_error": None, "max_abs_error": None, "mean_error": None,
                "interval_coverage": None}
    errs = [r.error for r in rows]
    return {"rows": len(rows), "median_abs_error": statistics.median(abs(e) for e in errs),
            "max_abs_error": max(abs(e) for e in errs), "mean_error": statistics.fmean(errs),
            "interval_coverage": sum(r.inside for r in rows) / len(rows)}


def interval_halfwidth(device: DeviceSpec, kind: str, backend: str | None, dtype: str) -> float:
    """u = 2 sqrt(r^2 + s^2): the calibration fit's RMS residual r for this kernel (its own
    backend's, else the dtype's) and the calibration's median run-to-run spread s."""
    res = device.extra.get("fit_rms_relative_residual", {})
    keys = [f"{kind} {dtype}/{backend}", f"{kind} {dtype}"] + [k for k in res if k.startswith(f"{kind} {dtype}")]
    r = next((res[k] for k in keys if k in res), 0.0)
    s = device.extra.get("spread", {}).get("median", 0.0)
    return 2.0 * math.sqrt(r * r + s * s)


def prediction_interval(pred: float, u: float) -> tuple[float, float]:
    """predicted * (1 +- u), never below 0."""
    return (pred * max(0.0, 1.0 - u), pred * (1.0 + u))


def plan_prediction(device: DeviceSpec, shape: AttnShape) -> float:
    """Seconds the planner predicts for a one-layer, zero-parameter model with this shape."""
    from multihead.planner import plan
    p = plan(None, tokens=shape.tk, batch=shape.batch, params=0, layers=1, heads=shape.heads,
             kv_heads=shape.kv_heads, head_dim=shape.head_dim, weights_dtype=shape.dtype,
             kv_dtype=shape.dtype, device=device, causal_skip=shape.causal, quality_report=None)
    return p.decode_seconds_per_token if shape.kind == "decode" else p.attention_prefill_seconds


# ---- SmolLM2: the whole model ------------------------------------------------------------------

def _smollm2_rows(device: DeviceSpec, plan: ValidationPlan, bar, clock: str) -> tuple[list[Row], str | None]:
    """Prefill (logits of the last position only, as generation needs) and one decode step at
    each context length (on multihead's KV cache), predicted by the planner for the catalog's
    SmolLM2-135M in fp32."""
    from multihead.hf.loading import load_smollm2
    from multihead.planner import plan as planner_plan
    try:
        model, _ = load_smollm2(attn_implementation="multihead")
    except MissingModelError as err:      # the real-weights extra is optional: say why and go on
        return [], f"SmolLM2 rows skipped: {err}"
    u = interval_halfwidth(device, "prefill", None, "fp32")
    rows = []
    gen = torch.Generator().manual_seed(0)
    vocab = model.config.vocab_size
    for T in plan.smollm2_tokens:
        bar.set_postfix_str(f"SmolLM2 T={T}")
        ids = torch.randint(0, vocab, (1, T), generator=gen)
        p = planner_plan("SmolLM2-135M", tokens=T, weights_dtype="fp32", kv_dtype="fp32", device=device,
                         causal_skip=True, quality_report=None)
        with torch.inference_mode():
            t = time_call(lambda: model(ids, use_cache=False, logits_to_keep=1), repeats=plan.repeats,
                          min_seconds=plan.min_seconds, clock=clock)
            rows.append(Row("smollm2 prefill", f"SmolLM2-135M prefill T={T}", p.prefill_seconds, t.best,
                            t.median, t.spread, prediction_interval(p.prefill_seconds, u), "auto", {"tokens": T}))
            t = time_call(_decode_step(model, ids), repeats=plan.repeats, min_seconds=plan.min_seconds,
                          clock=clock)
        rows.append(Row("smollm2 decode", f"SmolLM2-135M decode step at T={T}", p.decode_seconds_per_token,
                        t.best, t.median, t.spread, prediction_interval(p.decode_seconds_per_token, u), "auto", {"tokens": T}))
        bar.update()
    return rows, None


def _decode_step(model, ids: torch.Tensor):
    """A function running one decode step of ``model`` after the prompt ``ids`` [1, T], on a
    preallocated ``multihead.KVCache`` (``multihead.hf.cache.CachedLM``: K/V read in place, as the
    planner assumes; transformers' DynamicCache would also copy the whole cache every step).
    Each call appends one token, so the context grows from T by one per repeat (at most 50 + warm-up)."""
    from multihead.hf.attention import NAME, register
    from multihead.hf.cache import CachedLM
    lm = CachedLM(model, batch=1, max_tokens=ids.shape[1] + 64)
    register()
    model.set_attn_implementation(NAME)
    lm.forward(ids, backend="auto")                                  # the prompt fills the cache
    nxt = ids[:, -1:]
    return lambda: lm.forward(nxt, backend="auto")


# ---- the run -----------------------------------------------------------------------------------

def validate(device: DeviceSpec | str, plan: ValidationPlan | None = None, *, models: bool = True,
             threads: int | None = None, clock: str | None = None, progress: bool = True) -> dict:
    """Predict and measure every held-out shape; returns the JSON-ready result. Threads and
    clock default to the profile's: measure under the conditions the profile was measured in."""
    plan = plan or ValidationPlan()
    device = device if isinstance(device, DeviceSpec) else load_device(str(device))
    clock = clock or device.extra.get("clock", "wall")
    with torch_threads(threads or device.extra.get("threads"), clock):
        return _measure(device, plan, models, clock, progress)


def _measure(device: DeviceSpec, plan: ValidationPlan, models: bool, clock: str, progress: bool) -> dict:
    from tqdm import tqdm
    load_before = load_average()
    # The machine's read bandwidth drifts on a shared host (other VMs): measured at the start and
    # the end, beside the profile's, it tells a decode row's error apart from the model's.
    bw_bytes = min(1 << 30, int(device.extra.get("limits", {}).get("read_bandwidth", {}).get("bytes", 1 << 30)))
    bw_before = measure_read_bandwidth(bw_bytes, repeats=3, clock=clock)["best"]
    shapes = [AttnShape.prefill(h, hk, d, t, plan.dtype) for h, hk, d, t in plan.prefill]
    shapes += [AttnShape.decode(h, hk, d, t, plan.dtype) for h, hk, d, t in plan.decode]
    n_models = len(plan.smollm2_tokens) if models else 0
    bar = tqdm(total=len(shapes) + n_models, desc="validate", disable=not progress, file=sys.stderr)
    rows: list[Row] = []
    for s in shapes:
        bar.set_postfix_str(s.label())
        pred, backend = plan_prediction(device, s), resolved_backend(s)
        t = time_call(attention_call(s), repeats=plan.repeats, min_seconds=plan.min_seconds, clock=clock)
        u = interval_halfwidth(device, s.kind, backend, s.dtype)
        rows.append(Row(s.kind, s.label(), pred, t.best, t.median, t.spread, prediction_interval(pred, u), backend, s.to_dict()))
        bar.update()
    notes = []
    if models and plan.smollm2_tokens:
        model_rows, note = _smollm2_rows(device, plan, bar, clock)
        rows += model_rows
        notes += [note] if note else []
    bar.close()
    attention_rows = [r for r in rows if r.group in ("prefill", "decode")]
    result = build_result(rows, attention_rows, device=device, kernel=KERNEL, predictor=PREDICTOR,
                          plan=plan, notes=notes, load=(load_before, load_average()))
    result["clock"] = clock
    result["read_bandwidth"] = {"bytes": bw_bytes, "calibration": device.bandwidth_bytes_per_s, "before": bw_before,
                                "after": measure_read_bandwidth(bw_bytes, repeats=3, clock=clock)["best"]}
    return result


def build_result(rows: list[Row], target_rows: list[Row], *, device: DeviceSpec, kernel: str,
                 predictor: str | None, plan: ValidationPlan, notes: list[str], load) -> dict:
    """The JSON object: headline errors over the attention rows (the issue's targets), then each
    group's, then every row."""
    head = summarize(target_rows)
    groups = sorted({r.group for r in rows}, key=lambda g: [r.group for r in rows].index(g))
    return {
        "median_abs_error": head["median_abs_error"], "max_abs_error": head["max_abs_error"],
        "mean_error": head["mean_error"], "interval_coverage": head["interval_coverage"],
        "targets": {"median_abs_error": 0.05, "max_abs_error": 0.15,
                    "met": head["rows"] > 0 and head["median_abs_error"] <= 0.05 and head["max_abs_error"] <= 0.15,
                    "over": "one-layer attention rows (prefill and decode)"},
        "by_group": {g: summarize([r for r in rows if r.group == g]) for g in groups},
        "all_rows": summarize(rows),
        "device": {"name": device.name, "kind": device.kind, "date": device.extra.get("date"),
                   "kernel_at_calibration": device.extra.get("kernel")},
        "kernel": kernel, "predictor": predictor, "grid": plan.name,
        "threads": torch.get_num_threads(),
        "load_average": {"before": load[0], "after": load[1]},
        "notes": notes,
        "rows": [r.to_dict() for r in rows],
    }
