"""Session 16: how much of the GPU-time model's out-of-document error is each document's own offset, and whether
any input a user states predicts that offset. Writes session16/FLOOR.md.
Run: PYTHONPATH=. python reports/gpu-time/session16/floor.py

Errors: the shipped constants' out-of-document errors on all 1,656 fitted rows, as session 15's TABLE.md used them
(session15/table.py: session 13's 5 folds of whole documents on 1,207 rows, and sets 10-17 as frozen while held out;
449 rows were truly blind). Each error is e = predicted / measured - 1; offsets are in log space, l = log(1 + e).
A 'source' is one entry of measurements.json's sources (one document, or for two documents a part of one); CV folds
and held-out sets split by them.

1. Decomposition, per acceptance cell (dense and MoE/MLA x TTFT, TPOT, throughput at a stated batch):
   - offset of a source = median of its rows' l in the cell;
   - 'factors only': every row given its source's offset (the error a model would keep if it were exact *within*
     every document up to one factor per document);
   - 'within, left out': each row of a source with 2+ rows in the cell given l - (median of the source's other
     rows' l): the error left if each document's factor were known from its other rows.
2. Can a stated input predict a source's offset? For each key (class, metric, GPU generation, GPU, engine, engine
   version, model, weights, TP, mode and their combinations), each row is corrected by the median offset of the
   *other* sources sharing its key (leave one source out; no correction where fewer than 3 other sources share it),
   and the six cells are recomputed. A key whose group offsets carry from document to document lowers the cells.
"""
import importlib.util
import json
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).parent
GPU_TIME = HERE.parent
sys.path.insert(0, str(GPU_TIME))
sys.path.insert(0, str(GPU_TIME / "session13"))
from session7_cv import METRIC                      # noqa: E402
from multihead.fits import timing_validation as tv  # noqa: E402

CELLS = [(g, m) for g in ("dense", "moe/mla") for m in ("TTFT", "TPOT", "throughput")]
MIN_OTHERS = 3
ROWS = 1656


def shipped_errors() -> list[dict]:
    spec = importlib.util.spec_from_file_location("session15_table", GPU_TIME / "session15" / "table.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.shipped_errors()


def group(e: dict) -> str:
    return "dense" if e["family"][0] == "dense" else "moe/mla"


def gpu_generation(gpu: str) -> str:
    g = gpu.split("@")[0]
    if g.startswith("MI"):
        return "AMD CDNA"
    if g.startswith(("B", "GB")):
        return "Blackwell"
    if g.startswith(("H", "GH")):
        return "Hopper"
    if g.startswith(("A", "RTX-A")):
        return "Ampere"
    return "other"


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def med_abs(logs: list[float]) -> float:
    return statistics.median(abs(math.expm1(x)) for x in logs)


def decomposition(errs: list[dict]) -> list[str]:
    lines = ["| cell | rows | sources | now | factors only | within, left out (rows of sources with 2+) | "
             "sources with factor beyond +-15% |", "|---|---|---|---|---|---|---|"]
    for g, m in CELLS:
        by = defaultdict(list)
        for e in errs:
            if group(e) == g and METRIC[e["metric"]] == m:
                by[e["source"]].append(math.log1p(e["error"]))
        offs, within, now = [], [], []
        for v in by.values():
            o = statistics.median(v)
            offs += [o] * len(v)
            now += v
            if len(v) >= 2:                 # each row against the median of its source's OTHER rows (not its own)
                within += [x - statistics.median(v[:i] + v[i + 1:]) for i, x in enumerate(v)]
        far = sum(1 for v in by.values() if abs(math.expm1(statistics.median(v))) > 0.15)
        left = f"{pct(med_abs(within))} ({len(within)})" if within else "-"
        lines.append(f"| {g} {m} | {len(now)} | {len(by)} | {pct(med_abs(now))} | {pct(med_abs(offs))} | "
                     f"{left} | {far} of {len(by)} |")
    return lines


def six_cells(pairs: list[tuple[dict, float]]) -> dict:
    out = {}
    for g, m in CELLS:
        out[f"{g} {m}"] = med_abs([x for e, x in pairs if group(e) == g and METRIC[e["metric"]] == m])
    out["mean of the six"] = statistics.fmean(out.values())
    return out


def leave_one_source_out(errs: list[dict], key) -> tuple[dict, int]:
    if key is None:
        return six_cells([(e, math.log1p(e["error"])) for e in errs]), 0
    offsets = defaultdict(lambda: defaultdict(list))
    for e in errs:
        offsets[key(e)][e["source"]].append(math.log1p(e["error"]))
    means = {k: {s: statistics.fmean(v) for s, v in d.items()} for k, d in offsets.items()}
    pairs, corrected = [], 0
    for e in errs:
        others = [v for s, v in means[key(e)].items() if s != e["source"]]
        off = statistics.median(others) if len(others) >= MIN_OTHERS else 0.0
        corrected += len(others) >= MIN_OTHERS
        pairs.append((e, math.log1p(e["error"]) - off))
    return six_cells(pairs), corrected


def main() -> None:
    errs = shipped_errors()
    assert len(errs) == ROWS, len(errs)
    table = tv.load_table()
    rows = {r["id"]: r for r in table["rows"]}
    sources = table["sources"]

    def version(e):
        src = sources.get(e["source"], {})
        v = src.get("engine_version") or ""
        return ".".join(v.split(".")[:2]) or f"date {src.get('date')}"

    R = lambda e: rows[e["id"]]                                      # noqa: E731
    cm = lambda e: (group(e), METRIC[e["metric"]])                   # noqa: E731
    keys = [
        ("(none: no correction)", None),
        ("one factor for all rows", lambda e: ("all",)),
        ("class (dense / MoE / MLA)", lambda e: (e["family"][0],)),
        ("group x metric (the cell: a per-cell factor)", cm),
        ("cell x GPU generation", lambda e: cm(e) + (gpu_generation(R(e)["gpu"]),)),
        ("cell x GPU", lambda e: cm(e) + (R(e)["gpu"].split("@")[0],)),
        ("cell x engine", lambda e: cm(e) + (e["family"][2],)),
        ("cell x engine x version (major.minor)", lambda e: cm(e) + (e["family"][2], version(e))),
        ("cell x GPU generation x engine", lambda e: cm(e) + (gpu_generation(R(e)["gpu"]), e["family"][2])),
        ("cell x model", lambda e: cm(e) + (R(e)["model"],)),
        ("cell x weights", lambda e: cm(e) + (R(e)["weights"],)),
        ("cell x TP", lambda e: cm(e) + (R(e)["tp"],)),
        ("cell x mode (static / serving)", lambda e: cm(e) + (R(e)["mode"],)),
    ]
    blind = [e for e in errs if str(e.get("fold", "")).startswith("set ")]

    lines = ["# Session 16: the documents' own offsets, and whether a stated input predicts them", "",
             "Made by `reports/gpu-time/session16/floor.py` (its docstring says how). Errors: the shipped constants' "
             f"out-of-document errors on all {len(errs):,} fitted rows (session 15's TABLE.md; {len(blind)} of them from "
             "sets judged blind). Median |predicted / measured - 1|.", "",
             "## 1. How much of the error is each source's own factor", "",
             "'factors only': each row keeps only its source's median log error (a model exact within every document "
             "up to one factor per document); 'within, left out': each row of a source with 2 or more rows in the cell "
             "against the median of that source's other rows (a model told each document's factor from its other "
             "rows; single-row sources cannot say, and are left out of this column).",
             ""] + decomposition(errs) + [
             "", f"The same on the {len(blind)} blind rows only (sets 10-17, each judged before it was fitted):", ""] + \
        decomposition(blind) + [
             "", "## 2. Does any stated input predict a source's factor? (leave one source out)", "",
             "Each row corrected by the median factor of the other sources that share its key (none where fewer than "
             f"{MIN_OTHERS} others do). A key that carried from document to document would lower the cells.", "",
             "| key | rows corrected | " + " | ".join(f"{g} {m}" for g, m in CELLS) + " | mean of the six |",
             "|---|---|" + "---|" * (len(CELLS) + 1)]
    results = {}
    for name, key in keys:
        c, n = leave_one_source_out(errs, key)
        results[name] = {"cells": c, "rows_corrected": n}
        lines.append(f"| {name} | {n:,} | " + " | ".join(pct(v) for v in c.values()) + " |")
    (HERE / "FLOOR.md").write_text("\n".join(lines) + "\n")
    (HERE / "FLOOR.json").write_text(json.dumps(results, indent=1) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
