"""How far to trust a predicted time: out-of-document errors by family, and the 80% intervals they give.

A *document* is one source of the measurement table (a README, a page, an issue, one task file of a
leaderboard): its rows share an engine build, a client and the author's choices, so rows of one document
are not independent evidence. The fitted rows' documents are dealt into K folds by
int(sha256(source key)[:8], 16) % K; each fold's rows are predicted by constants fitted on the other folds
(warm-started from the full fit), which gives every fitted row an *out-of-document* error.

A row's family is (class, phase, engine): class dense / moe / mla (MLA models are MoE too; MLA wins),
phase prefill (TTFT), decode (TPOT, ITL, a decode step, batch-1 tokens/s) or serving (throughput,
request latency: both phases), engine the engine name. The 80% interval of a prediction p is
[p / r90, p / r10], r10 and r90 the 10th and 90th percentiles of predicted/measured over the
out-of-document errors of its family, falling back to (class, phase), (class), all rows when a family
has fewer than MIN_ROWS errors (or fewer than MIN_DOCUMENTS documents). Calibration is then checked on
documents never fitted (held-out-4): the share of their measurements inside their intervals.

No torch; reading the interval table (catalog/gpu_time_intervals.json) needs no scipy. The out-of-document
errors themselves are computed offline (timing_validation.out_of_document), never imported from here.
"""
from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

from multihead.catalog import read_json

CATALOG = Path(__file__).parent / "catalog"
INTERVAL_FILE = CATALOG / "gpu_time_intervals.json"
LEVEL = 0.80
MIN_ROWS = 8
MIN_DOCUMENTS = 2
PHASE = {"ttft_ms": "prefill", "itl_ms": "decode", "decode_step_ms": "decode", "decode_tokens_per_s": "decode",
         "output_tokens_per_s": "serving", "output_tokens_per_s_per_gpu": "serving", "request_latency_s": "serving"}
# time-like metrics (larger = slower): an interval on a rate is the reciprocal of one on a time
RATES = ("decode_tokens_per_s", "output_tokens_per_s", "output_tokens_per_s_per_gpu")


def model_class(spec) -> str:
    """'mla' (multi-head latent attention, MoE or not), 'moe', or 'dense'."""
    if spec.mla is not None:
        return "mla"
    return "moe" if spec.moe is not None else "dense"


def family(row: dict, setup) -> tuple[str, str, str]:
    return model_class(setup.spec), PHASE[row["metric"]], setup.engine


def document_fold(source: str, folds: int) -> int:
    return int(hashlib.sha256(source.encode()).hexdigest()[:8], 16) % folds


def _quantile(xs: list[float], q: float) -> float:
    """Linear-interpolated quantile of a sorted copy of ``xs`` (numpy's default method)."""
    s = sorted(xs)
    pos = q * (len(s) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def _ratio(row_error: float, metric: str) -> float:
    """predicted/measured as a *time* ratio: for a rate metric the reciprocal (a rate 20% high is a time
    1/1.2 of the measured)."""
    r = 1.0 + row_error
    return 1.0 / r if metric in RATES else r


def interval_table(errors: list[dict], level: float = LEVEL) -> dict:
    """{family key: {"r_low", "r_high", "n", "documents"}} for every family level with enough errors;
    keys 'class/phase/engine', 'class/phase', 'class', 'all'."""
    lo_q, hi_q = (1 - level) / 2, 1 - (1 - level) / 2
    groups: dict[str, list[dict]] = {}
    for e in errors:
        cls, phase, engine = e["family"]
        for key in (f"{cls}/{phase}/{engine}", f"{cls}/{phase}", cls, "all"):
            groups.setdefault(key, []).append(e)
    out = {}
    for key, rows in sorted(groups.items()):
        docs = {r["source"] for r in rows}
        if len(rows) < MIN_ROWS or len(docs) < MIN_DOCUMENTS:
            continue
        ratios = [_ratio(r["error"], r["metric"]) for r in rows]
        out[key] = {"r_low": _quantile(ratios, lo_q), "r_high": _quantile(ratios, hi_q), "n": len(rows),
                    "documents": len(docs)}
    return out


def load_intervals(path: Path | None = None) -> dict | None:
    path = Path(path) if path else INTERVAL_FILE
    return read_json(path) if path.is_file() else None


def lookup(table: dict, cls: str, phase: str, engine: str) -> tuple[str, dict]:
    """The most specific family entry of ``table`` (its 'families') for (class, phase, engine)."""
    fams = table["families"]
    for key in (f"{cls}/{phase}/{engine}", f"{cls}/{phase}", cls, "all"):
        if key in fams:
            return key, fams[key]
    raise ValueError("intervals: the table has no 'all' entry")


def time_interval(seconds: float, cls: str, phase: str, engine: str, table: dict | None = None) -> tuple[float, float]:
    """(low, high) of a predicted time: [t / r_high, t / r_low] (a model that predicts 10% slow on its
    family's 90th percentile puts the measurement 10% below). NaN in, NaN out."""
    table = table or load_intervals()
    if table is None or seconds != seconds:
        return float("nan"), float("nan")
    _, e = lookup(table, cls, phase, engine)
    return seconds / e["r_high"], seconds / e["r_low"]


def coverage(rows: list[dict], table: dict) -> dict:
    """Share of ``rows`` (with 'value', 'predicted', 'metric', 'family') whose measurement lies in its
    interval, overall and by class."""
    inside: dict[str, list[bool]] = {}
    for r in rows:
        cls, phase, engine = r["family"]
        _, e = lookup(table, cls, phase, engine)
        # a time t_pred: measured time in [t/r_high, t/r_low]  <=>  time ratio pred/measured in [r_low, r_high]
        ratio = _ratio(r["predicted"] / r["value"] - 1.0, r["metric"])
        ok = e["r_low"] <= ratio <= e["r_high"]
        for key in ("all", cls):
            inside.setdefault(key, []).append(ok)
    return {k: {"n": len(v), "coverage": sum(v) / len(v)} for k, v in inside.items()}


def write(errors: list[dict], command: str, path: Path | None = None) -> dict:
    table = {"command": command, "level": LEVEL, "folds_rule": "int(sha256(source)[:8], 16) % 5",
             "families": interval_table(errors)}
    (Path(path) if path else INTERVAL_FILE).write_text(json.dumps(table, indent=1) + "\n")
    return table


# (key in the time keys, phase, is a rate)
TIME_KEYS = (("ttft_s", "prefill", False), ("tpot_s", "decode", False), ("itl_s", "decode", False),
             ("request_latency_s", "serving", False), ("output_tokens_per_s", "serving", True),
             ("ttft_s_one_request", "prefill", False), ("tpot_s_one_request", "decode", False),
             ("decode_tokens_per_s", "decode", True))


def bounds(value: float, cls: str, phase: str, engine: str, rate: bool, table: dict) -> tuple[float, float, str]:
    """(low, high, family key) of a predicted time (or a rate: the reciprocal interval)."""
    key, e = lookup(table, cls, phase, engine)
    if rate:
        return value * e["r_low"], value * e["r_high"], key
    return value / e["r_high"], value / e["r_low"], key


def add_intervals(keys: dict, setup, table: dict | None = None) -> dict:
    """``keys`` (timing.serving_time_keys) with ``*_low`` and ``*_high`` beside every time and rate, and
    ``interval`` saying the level and the families used; unchanged when no interval table exists."""
    table = table if table is not None else load_intervals()
    if table is None:
        return keys
    cls, engine = model_class(setup.spec), setup.engine
    used = {}
    for name, phase, rate in TIME_KEYS:
        if name in keys and isinstance(keys[name], (int, float)):
            lo, hi, fam = bounds(keys[name], cls, phase, engine, rate, table)
            keys[f"{name}_low"], keys[f"{name}_high"] = lo, hi
            used[phase] = fam
    keys["interval"] = {"level": table["level"], "families": used,
                        "how": "10th-90th percentile of out-of-document errors of the family (docs/gpu-time.md)"}
    return keys
