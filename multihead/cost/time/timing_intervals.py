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
import statistics
from pathlib import Path

from multihead.catalog import read_json
from multihead.messages import say

CATALOG = Path(__file__).parents[1] / "catalog"
INTERVAL_FILE = CATALOG / "gpu_time_intervals.json"
# the intervals of a plan scaled to one measured point of its deployment (reports/gpu-time/session16/measured_point.py)
MEASURED_INTERVAL_FILE = CATALOG / "gpu_time_measured_intervals.json"
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


def _weighted_quantile(xs: list[float], ws: list[float], q: float) -> float:
    """Quantile of ``xs`` with weights ``ws``: the sorted values sit at positions C_(i-1) / (W - w_last)
    (C the cumulative weight), linearly interpolated; with equal weights numpy's linear quantile."""
    pairs = sorted(zip(xs, ws))
    if len(pairs) == 1:
        return pairs[0][0]
    total = sum(w for _, w in pairs) - pairs[-1][1]
    pos, acc = [], 0.0
    for _, w in pairs:
        pos.append(acc / total)
        acc += w
    for i in range(1, len(pairs)):
        if q <= pos[i]:
            span = pos[i] - pos[i - 1]
            f = (q - pos[i - 1]) / span if span else 0.0
            return pairs[i - 1][0] + (pairs[i][0] - pairs[i - 1][0]) * f
    return pairs[-1][0]


# How the 80% intervals are drawn from the out-of-document errors (session 6): chosen among RULES by
# leave-one-document-out coverage on the fitted documents (choose_rule), never on a held-out row.
#   weighting: "row" (every error counts once) or "document" (every document's errors share one weight,
#              so one 291-row leaderboard does not set a family's spread alone);
#   min_documents: a family level needs errors from at least this many documents, else it falls back;
#   widen: the interval's log-width around the family's log-median ratio is multiplied by this;
#   held_out_scale (session 13, optional, default 1): a further factor on that log-width, how much larger errors on
#              documents held out from every fit have run than the judged model's fold errors (scale_from_judgements;
#              reports/gpu-time/session13/held_out_scale.py). The rule is chosen without it (leave-one-document-out
#              coverage of fold errors), and it is applied to every class.
RULE = {"weighting": "row", "min_documents": MIN_DOCUMENTS, "widen": 1.0}
RULES = [{"weighting": w, "min_documents": m, "widen": s}
         for w in ("row", "document") for m in (2, 4, 6) for s in (1.0, 1.25, 1.5, 2.0)]


CLASSES = ("dense", "moe", "mla")


def rule_for(rule: dict, key: str) -> dict:
    """The rule a family key is drawn by: its class's own rule where ``rule`` has one under "classes"
    (session 7: each class calibrated by its own leave-one-document-out coverage), else ``rule`` itself."""
    cls = key.split("/")[0]
    own = (rule.get("classes") or {}).get(cls)
    base = {k: v for k, v in rule.items() if k != "classes"}
    return {**base, **own} if own else base


def interval_table(errors: list[dict], level: float = LEVEL, rule: dict | None = None) -> dict:
    """{family key: {"r_low", "r_high", "n", "documents"}} for every family level with enough errors;
    keys 'class/phase/engine', 'class/phase', 'class', 'all'. ``rule`` (default RULE): see RULE; a rule with
    "classes" draws each class's families by that class's rule (rule_for)."""
    top = {**RULE, **(rule or {})}
    lo_q, hi_q = (1 - level) / 2, 1 - (1 - level) / 2
    groups: dict[str, list[dict]] = {}
    for e in errors:
        cls, phase, engine = e["family"]
        for key in (f"{cls}/{phase}/{engine}", f"{cls}/{phase}", cls, "all"):
            groups.setdefault(key, []).append(e)
    out = {}
    for key, rows in sorted(groups.items()):
        rule = rule_for(top, key)
        per_doc: dict[str, int] = {}
        for r in rows:
            per_doc[r["source"]] = per_doc.get(r["source"], 0) + 1
        if len(rows) < MIN_ROWS or len(per_doc) < rule["min_documents"]:
            continue
        ratios = [_ratio(r["error"], r["metric"]) for r in rows]
        if rule["weighting"] == "document":
            ws = [1.0 / per_doc[r["source"]] for r in rows]
        elif rule["weighting"] == "row":
            ws = [1.0] * len(rows)
        else:
            raise ValueError(f"intervals: weighting must be 'row' or 'document', got {rule['weighting']!r}")
        lo, hi = _weighted_quantile(ratios, ws, lo_q), _weighted_quantile(ratios, ws, hi_q)
        widen = rule["widen"] * rule.get("held_out_scale", 1.0)
        if widen != 1.0:        # widen in log space about the family's median ratio
            mid = _weighted_quantile(ratios, ws, 0.5)
            lo = mid * (lo / mid) ** widen
            hi = mid * (hi / mid) ** widen
        out[key] = {"r_low": lo, "r_high": hi, "n": len(rows), "documents": len(per_doc)}
    return out


def leave_one_document_out(errors: list[dict], rule: dict, level: float = LEVEL) -> dict:
    """Coverage of every fitted document's out-of-document errors by intervals drawn from the OTHER
    documents' errors under ``rule``: {class: {"rows", "documents", "coverage" (row-pooled),
    "document_coverage" (mean over documents of their own coverage)}}, classes 'all', 'dense', 'moe', 'mla'."""
    docs = sorted({e["source"] for e in errors})
    per_doc: dict[str, dict[str, list[bool]]] = {}
    for d in docs:
        table = {"families": interval_table([e for e in errors if e["source"] != d], level, rule)}
        if "all" not in table["families"]:
            continue
        for e in errors:
            if e["source"] != d:
                continue
            cls, phase, engine = e["family"]
            _, f = lookup(table, cls, phase, engine)
            ok = f["r_low"] <= _ratio(e["error"], e["metric"]) <= f["r_high"]
            for k in ("all", cls):
                per_doc.setdefault(k, {}).setdefault(d, []).append(ok)
    out = {}
    for k, by in per_doc.items():
        flat = [x for v in by.values() for x in v]
        out[k] = {"rows": len(flat), "documents": len(by), "coverage": sum(flat) / len(flat),
                  "document_coverage": sum(sum(v) / len(v) for v in by.values()) / len(by)}
    return out


def choose_rule(errors: list[dict], rules: list[dict] | None = None, level: float = LEVEL) -> tuple[dict, list]:
    """The rule whose leave-one-document-out document coverage is nearest ``level`` in its worst class
    (dense, moe, mla: those with at least 2 documents), ties to the narrower (smaller widen) and earlier
    rule. Returns (rule, [(rule, worst gap, summary), ...])."""
    scored = []
    for rule in rules or RULES:
        summary = leave_one_document_out(errors, rule, level)
        gaps = [abs(v["document_coverage"] - level) for k, v in summary.items()
                if k in ("dense", "moe", "mla") and v["documents"] >= 2]
        scored.append((rule, max(gaps) if gaps else float("inf"), summary))
    best = min(scored, key=lambda x: (round(x[1], 9), x[0]["widen"]))
    return best[0], scored


def choose_rule_by_class(errors: list[dict], rules: list[dict] | None = None, level: float = LEVEL
                         ) -> tuple[dict, dict]:
    """Session 7: a rule per class. The overall rule is choose_rule's (its worst class nearest ``level``); then
    for each class (dense, moe, mla) the candidate whose leave-one-document-out document coverage *of that
    class* is nearest ``level`` when that class alone is drawn by it (the others, and any family that falls
    back to 'all', by the overall rule), both as the mean over documents and pooled over rows (the larger of
    the two gaps is the score: a held-out set is judged on its rows); ties to the narrower, then earlier rule. Returns
    ({**overall rule, "classes": {...}}, {class: [(rule, gap, coverage summary of the class), ...]})."""
    overall, _ = choose_rule(errors, rules, level)
    chosen, table = {}, {}
    for cls in CLASSES:
        rows = []
        for rule in rules or RULES:
            summary = leave_one_document_out(errors, {**overall, "classes": {cls: rule}}, level)
            if cls in summary and summary[cls]["documents"] >= 2:
                gap = max(abs(summary[cls]["document_coverage"] - level), abs(summary[cls]["coverage"] - level))
                rows.append((rule, gap, summary[cls]))
        if rows:
            best = min(rows, key=lambda x: (round(x[1], 9), x[0]["widen"]))
            chosen[cls] = dict(best[0])
            table[cls] = rows
    return {**overall, "classes": chosen}, table


def scale_from_judgements(judgements: list[tuple[list[float], list[float]]]) -> float:
    """The held-out scale: over judgements (the |log(predicted / measured)| of one held-out set's rows under a model,
    the same model's fold errors as |log| values), the median of median(held out) / median(folds). 1.0 with none."""
    ratios = []
    for held, folds in judgements:
        h, f = statistics.median(held), statistics.median(folds)
        if not (h > 0 and f > 0):
            raise ValueError("held_out_scale: a judgement with a zero or NaN median")
        ratios.append(h / f)
    return statistics.median(ratios) if ratios else 1.0


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


def write(errors: list[dict], command: str, path: Path | None = None, rule: dict | None = None) -> dict:
    rule = {**RULE, **(rule or {})}
    table = {"command": command, "level": LEVEL, "folds_rule": "int(sha256(source)[:8], 16) % 5",
             "rule": rule, "families": interval_table(errors, rule=rule)}
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
    if table is None and getattr(setup, "measured_scale", None) is not None:     # scaled to a measured point
        table = load_intervals(MEASURED_INTERVAL_FILE)
    return add_intervals_for(keys, model_class(setup.spec), setup.engine, table)


def add_intervals_for(keys: dict, cls: str, engine: str, table: dict | None = None) -> dict:
    """add_intervals for a model class ('dense', 'moe', 'mla') and engine (time_request.predict has no Setup)."""
    table = table if table is not None else load_intervals()
    if table is None:
        return keys
    used = {}
    for name, phase, rate in TIME_KEYS:
        if name in keys and isinstance(keys[name], (int, float)):
            lo, hi, fam = bounds(keys[name], cls, phase, engine, rate, table)
            keys[f"{name}_low"], keys[f"{name}_high"] = lo, hi
            used[phase] = fam
    fams = {phase: table["families"][fam] for phase, fam in used.items()}
    spread = {phase: e["r_high"] / e["r_low"] for phase, e in fams.items()}
    keys["interval"] = {"level": table["level"], "families": used,
                        "documents": {phase: e.get("documents") for phase, e in fams.items()}, "spread": spread,
                        "how": table.get("how") or (
                            "10th-90th percentile of out-of-document errors of the family, widened by the held-out "
                            f"scale {table['rule'].get('held_out_scale', 1.0):.2f} (docs/gpu-time.md)")}
    wide = [p for p in sorted(spread) if spread[p] > WIDE_SPREAD]
    if wide:
        # one sentence per wide phase, from the message catalogue (the page shows them in either language);
        # "caution" joins them for the CLI's one line
        entry = "interval.caution_measured" if table.get("kind") == "measured" else "interval.caution"
        cautions = [say(entry, "en", phase=p, spread=f"{spread[p]:,.0f}", family=used[p],
                        documents=fams[p].get("documents", "unknown number of"),
                        _what=say(f"interval.what_{p}", "en")) for p in wide]
        keys["interval"]["cautions"] = cautions
        keys["interval"]["caution"] = "; ".join(cautions)
    return keys


# an interval whose high end is more than this many times its low end: said in words beside the numbers
WIDE_SPREAD = 10.0
