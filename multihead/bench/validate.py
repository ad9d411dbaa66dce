"""``multihead validate``: the planner predicts, this machine measures, and we publish the error.

For each held-out shape (sizes and head counts that calibration did not use) the planner is
asked, with the measured profile as its device, for a one-layer, zero-parameter model's
``attention_prefill_seconds`` (causal) or ``decode_seconds_per_token``; then
``multihead.attention`` is timed on the same shape (the best of several repeats, as in
calibration). With the models extra, SmolLM2-135M's whole prefill and per-token decode are
predicted by the planner (catalog model, fp32) and measured the same way.

error = (predicted - measured) / measured. The prediction interval is predicted * (1 +- u) with
u = 2 * sqrt(r^2 + s^2): r the calibration fit's RMS relative residual for that kernel, s the
median run-to-run spread measured by calibration (median / best - 1).
"""
from __future__ import annotations

import math
import statistics
import sys
from dataclasses import asdict, dataclass, field

import torch

from multihead.bench.limits import clock_fn, measure_read_bandwidth
from multihead.bench.calibrate import (AttnShape, Timing, attention_kernel, load_average,
                                       predict_seconds, resolved_backend, set_threads,
                                       time_attention)
from multihead.devices import DeviceSpec, load_device


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


def _band(pred: float, u: float) -> tuple[float, float]:
    return (pred * max(0.0, 1.0 - u), pred * (1.0 + u))


def plan_prediction(device: DeviceSpec, shape: AttnShape) -> tuple[float, str]:
    """(seconds, who predicted): the planner for a one-layer, zero-parameter model with this
    shape, or ``devices`` directly when the planner is not importable."""
    try:
        from multihead.planner import plan
    except ImportError:
        return predict_seconds(device, shape), "multihead.devices (planner not importable)"
    p = plan(None, tokens=shape.tk, batch=shape.batch, params=0, layers=1, heads=shape.heads,
             kv_heads=shape.kv_heads, head_dim=shape.head_dim, weights_dtype=shape.dtype,
             kv_dtype=shape.dtype, device=device, causal_skip=shape.causal, quality_report=None)
    if shape.kind == "decode":
        return p.decode_seconds_per_token, "multihead.planner.plan"
    return p.attention_prefill_seconds, "multihead.planner.plan"


# ---- SmolLM2: the whole model ------------------------------------------------------------------

def _smollm2_rows(device: DeviceSpec, plan: ValidationPlan, bar, clock: str) -> tuple[list[Row], str | None]:
    """Prefill (logits of the last position only, as generation needs) and one decode step at
    each context length (on multihead's KV cache), predicted by the planner for the catalog's
    SmolLM2-135M in fp32."""
    try:
        from multihead.hf.loading import load_smollm2
        from multihead.planner import plan as planner_plan
        model, _ = load_smollm2(attn_implementation="multihead")
    except Exception as err:   # noqa: BLE001 - the extra is optional: say why and go on
        return [], f"SmolLM2 rows skipped: {type(err).__name__}: {err}"
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
            t = _time(lambda: model(ids, use_cache=False, logits_to_keep=1), plan, clock)
            rows.append(Row("smollm2 prefill", f"SmolLM2-135M prefill T={T}", p.prefill_seconds, t.best,
                            t.median, t.spread, _band(p.prefill_seconds, u), "auto", {"tokens": T}))
            step = _decode_step(model, ids)
            t = _time(step, plan, clock)
        rows.append(Row("smollm2 decode", f"SmolLM2-135M decode step at T={T}", p.decode_seconds_per_token,
                        t.best, t.median, t.spread, _band(p.decode_seconds_per_token, u), "auto", {"tokens": T}))
        bar.update()
    return rows, None


def _decode_step(model, ids: torch.Tensor):
    """A function running one decode step of ``model`` after the prompt ``ids`` [1, T], on a
    preallocated ``multihead.KVCache`` (``multihead.hf.cache.CachedLM``: K/V read in place, as the
    planner assumes; transformers' DynamicCache would also copy the whole cache every step).
    Each call appends one token, so the context grows from T by one per repeat (at most 50)."""
    from multihead.hf.attention import NAME, register
    from multihead.hf.cache import CachedLM
    lm = CachedLM(model, batch=1, max_tokens=ids.shape[1] + 64)
    register()
    model.set_attn_implementation(NAME)
    lm.forward(ids, backend="auto")                                  # the prompt fills the cache
    nxt = ids[:, -1:]
    return lambda: lm.forward(nxt, backend="auto")


def _time(fn, plan: ValidationPlan, clock: str) -> Timing:
    """Best, median and samples of ``fn()`` after one warm-up call (3 repeats for calls over 2 s)."""
    now = clock_fn(clock)
    t0 = now()
    fn()
    repeats = min(plan.repeats, 3) if now() - t0 > 2.0 else plan.repeats
    samples, total = [], 0.0
    while len(samples) < repeats or (total < plan.min_seconds and len(samples) < 50):
        t0 = now()
        fn()
        samples.append(now() - t0)
        total += samples[-1]
    return Timing(min(samples), statistics.median(samples), samples)


# ---- the run -----------------------------------------------------------------------------------

def validate(device: DeviceSpec | str, plan: ValidationPlan | None = None, *, models: bool = True,
             threads: int | None = None, clock: str | None = None, progress: bool = True) -> dict:
    """Predict and measure every held-out shape; returns the JSON-ready result. Threads and
    clock default to the profile's: measure under the conditions the profile was measured in."""
    from tqdm import tqdm
    plan = plan or ValidationPlan()
    device = device if isinstance(device, DeviceSpec) else load_device(str(device))
    clock = clock or device.extra.get("clock", "wall")
    set_threads(threads or device.extra.get("threads"), clock)
    fn, kernel = attention_kernel()
    load_before = load_average()
    # The machine's read bandwidth drifts on a shared host (other VMs): measured at the start and
    # the end, beside the profile's, it tells a decode row's error apart from the model's.
    bw_bytes = min(1 << 30, int(device.extra.get("limits", {}).get("read_bandwidth", {}).get("bytes", 1 << 30)))
    bw_before = measure_read_bandwidth(bw_bytes, repeats=3, clock=clock).best
    shapes = [AttnShape(h, hk, d, t, t, True, plan.dtype) for h, hk, d, t in plan.prefill]
    shapes += [AttnShape(h, hk, d, 1, t, False, plan.dtype) for h, hk, d, t in plan.decode]
    n_models = len(plan.smollm2_tokens) if models else 0
    bar = tqdm(total=len(shapes) + n_models, desc="validate", disable=not progress, file=sys.stderr)
    rows: list[Row] = []
    predictor = None
    for s in shapes:
        bar.set_postfix_str(s.label())
        pred, predictor = plan_prediction(device, s)
        backend = resolved_backend(s) if kernel.startswith("multihead") else None
        t = time_attention(fn, s, repeats=plan.repeats, min_seconds=plan.min_seconds, clock=clock)
        u = interval_halfwidth(device, s.kind, backend, s.dtype)
        rows.append(Row(s.kind, s.label(), pred, t.best, t.median, t.spread, _band(pred, u), backend, asdict(s)))
        bar.update()
    notes = []
    if models and plan.smollm2_tokens:
        model_rows, note = _smollm2_rows(device, plan, bar, clock)
        rows += model_rows
        if note:
            notes.append(note)
    bar.close()
    attention_rows = [r for r in rows if r.group in ("prefill", "decode")]
    result = build_result(rows, attention_rows, device=device, kernel=kernel, predictor=predictor,
                          plan=plan, notes=notes, load=(load_before, load_average()))
    result["clock"] = clock
    result["read_bandwidth"] = {"bytes": bw_bytes, "calibration": device.bandwidth_bytes_per_s, "before": bw_before,
                                "after": measure_read_bandwidth(bw_bytes, repeats=3, clock=clock).best}
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


def plot(result: dict, path: str) -> str:
    """Predicted versus measured (log-log), one marker per group, the y = x line, the +-15% band,
    and each prediction's interval as an error bar."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.4, 6.0))
    markers = {"prefill": "o", "decode": "s", "smollm2 prefill": "^", "smollm2 decode": "v"}
    lo, hi = math.inf, 0.0
    for g in result["by_group"]:
        rs = [r for r in result["rows"] if r["group"] == g]
        x = [r["measured_s"] for r in rs]
        y = [r["predicted_s"] for r in rs]
        err = [[r["predicted_s"] - r["interval_s"][0] for r in rs], [r["interval_s"][1] - r["predicted_s"] for r in rs]]
        ax.errorbar(x, y, yerr=err, fmt=markers.get(g, "o"), capsize=2, label=g)
        lo, hi = min(lo, *x, *y), max(hi, *x, *y)
    line = [lo / 1.5, hi * 1.5]
    ax.plot(line, line, "k-", lw=0.8, label="predicted = measured")
    ax.fill_between(line, [v * 0.85 for v in line], [v * 1.15 for v in line], color="grey", alpha=0.15, label="+-15%")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("measured (s, best of repeats)")
    ax.set_ylabel("predicted by multihead plan --device PROFILE (s)")
    ax.set_title(f"median |error| {result['median_abs_error']:.1%}, max {result['max_abs_error']:.1%} "
                 f"(attention rows)", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def bandwidth_line(result: dict) -> list[str]:
    """The read-bandwidth drift line of a report: the profile's rate against this run's."""
    bw = result.get("read_bandwidth")
    if not bw:
        return []
    drift = [bw[k] / bw["calibration"] - 1 for k in ("before", "after")]
    return [f"- streaming read: {bw['calibration'] / 1e9:.1f} GB/s at calibration, {bw['before'] / 1e9:.1f} at the start "
            f"of this run, {bw['after'] / 1e9:.1f} at its end ({drift[0]:+.0%} / {drift[1]:+.0%}): decode rows "
            f"move with it"]


def markdown(result: dict, command: str | None = None) -> str:
    """The result as a markdown report: headline, per-group errors, and every row."""
    def s(x: float) -> str:
        return f"{x * 1e3:,.2f} ms" if x < 1 else f"{x:,.3f} s"
    tg = result["targets"]
    lines = [f"# multihead validate: {result['device']['name']}", ""]
    if command:
        lines += ["Command:", "", "```bash", command, "```", ""]
    lines += [f"- kernel: `{result['kernel']}`; predicted by `{result['predictor']}`",
              f"- clock: {result['clock']}, torch threads: {result['threads']}, profile date: "
              f"{result['device'].get('date')}",
              f"- load average (1, 5, 15 min) before / after: {result['load_average']['before']} / "
              f"{result['load_average']['after']}",
              *bandwidth_line(result),
              f"- **one-layer attention rows: median |error| {result['median_abs_error']:.1%}, max "
              f"{result['max_abs_error']:.1%}** (targets 5% / 15%: {'met' if tg['met'] else 'not met'}); "
              f"bias {result['mean_error']:+.1%}; inside the prediction interval: {result['interval_coverage']:.0%}",
              "", "| group | rows | median abs error | max abs error | bias | inside interval |",
              "|---|---:|---:|---:|---:|---:|"]
    for g, sm in result["by_group"].items():
        lines.append(f"| {g} | {sm['rows']} | {sm['median_abs_error']:.1%} | {sm['max_abs_error']:.1%} | "
                     f"{sm['mean_error']:+.1%} | {sm['interval_coverage']:.0%} |")
    lines += ["", "| shape | kernel | predicted | interval | measured (best) | spread | error |",
              "|---|---|---:|---:|---:|---:|---:|"]
    for r in result["rows"]:
        lo, hi = r["interval_s"]
        lines.append(f"| {r['label']} | {r['backend'] or ''} | {s(r['predicted_s'])} | {s(lo)} .. {s(hi)} | "
                     f"{s(r['measured_s'])} | {r['spread']:.1%} | {r['error']:+.1%} |")
    for n in result.get("notes", []):
        lines += ["", f"Note: {n}"]
    return "\n".join(lines) + "\n"
