"""Session 16: how far one measured point of a deployment carries to its other loads and lengths, and the 80% interval
table of ``plan --measured`` (catalog/gpu_time_measured_intervals.json). Writes session16/MEASURED.md.
Run: PYTHONPATH=. python reports/gpu-time/session16/measured_point.py

Errors: the shipped constants' out-of-document errors on all 1,656 fitted rows (floor.py). A deployment: one source's
rows of one metric on one GPU, TP, model and weights. Its anchor: the row at the lowest load (then the shortest
prompt) among the others; the anchored error of a row j is (1 + e_j) / (1 + e_anchor) - 1, what the model scaled to
the anchor gets wrong on j. This is the factor applied to the same metric, not the two-factor fit through the serving
model that `plan --measured` runs (measured_point.fit): the fit reproduces the anchor's TTFT and TPOT exactly and
moves the other metrics with them, so the per-metric factor is the nearest table-side stand-in. Deployments with one
row have no other row to judge and are left out.

The interval table is drawn from the anchored errors by timing_intervals.interval_table (row-weighted, families with
rows from at least 2 documents, not widened); its calibration is checked by leave-one-document-out coverage
(timing_intervals.leave_one_document_out) over the same errors.
"""
import json
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from session7_cv import METRIC                                # noqa: E402
from floor import group, shipped_errors, ROWS                 # noqa: E402
from multihead.cost.time import timing_intervals as ti        # noqa: E402
from multihead.fits import timing_validation as tv            # noqa: E402

OUT = Path(__file__).parents[3] / "multihead" / "cost" / "catalog" / "gpu_time_measured_intervals.json"
CELLS = [(g, m) for g in ("dense", "moe/mla") for m in ("TTFT", "TPOT", "throughput", "latency")]


def anchored(errs, rows, anchor="lowest"):
    """The anchored errors: one per row of a deployment with 2+ rows ('lowest': the lowest-load other row is the
    anchor; 'any': the median over every other row as the anchor)."""
    by = defaultdict(list)
    for e in errs:
        r = rows[e["id"]]
        by[(e["source"], e["metric"], r["gpu"], r["tp"], r["model"], r["weights"])].append(e)
    out = []
    for v in by.values():
        if len(v) < 2:
            continue
        for j in v:
            others = [i for i in v if i is not j]
            if anchor == "lowest":
                a = min(others, key=lambda i: (rows[i["id"]]["batch"], rows[i["id"]]["input_len"], i["id"]))
                err = (1 + j["error"]) / (1 + a["error"]) - 1
            else:
                err = statistics.median((1 + j["error"]) / (1 + i["error"]) - 1 for i in others)
            out.append({**j, "error": err, "raw_error": j["error"]})
    return out


def two_factor_fit(errs, rows):
    """measured_point.fit through timing_validation.predict for deployments with a TTFT and an ITL row at one load;
    the errors of every other row of the deployment, scaled, unscaled, and by the per-metric stand-in."""
    import dataclasses
    from multihead.cost.time import measured_point as mp, timing
    table = tv.load_table()
    fitted = {e["id"] for e in errs}
    setup_of = {r["id"]: s for r, s in tv.setups(table, timing.load_constants()) if r["id"] in fitted}
    dep = defaultdict(list)
    for e in errs:
        r = rows[e["id"]]
        dep[(e["source"], r["gpu"], r["tp"], r["model"], r["weights"], r["kv"], r.get("expert_parallel_size", 1),
             r.get("data_parallel_size", 1), r.get("enable_dp_attention", False))].append(r)
    cells = defaultdict(lambda: {"raw": [], "fit": [], "stand_in": []})
    n_dep = refused = 0
    for members in dep.values():
        loads = defaultdict(dict)
        for r in members:
            if r["metric"] in ("ttft_ms", "itl_ms"):
                loads[(r["batch"], r["input_len"], r["output_len"], r["mode"])][r["metric"]] = r
        both = sorted(k for k, v in loads.items() if len(v) == 2)
        if not both:
            continue
        anchor = loads[both[0]]
        others = [r for r in members if r["id"] not in {anchor["ttft_ms"]["id"], anchor["itl_ms"]["id"]}]
        if not others:
            continue
        n_dep += 1
        setup = setup_of[anchor["ttft_ms"]["id"]]

        def predict(scale, setup=setup, anchor=anchor):
            s = dataclasses.replace(setup, measured_scale=scale)
            return {"ttft_s": tv.predict(anchor["ttft_ms"], s) / 1e3, "tpot_s": tv.predict(anchor["itl_ms"], s) / 1e3,
                    "output_tokens_per_s": None, "request_latency_s": None}
        point = mp.MeasuredPoint(concurrency=anchor["ttft_ms"]["batch"], ttft_s=anchor["ttft_ms"]["value"] / 1e3,
                                 tpot_s=anchor["itl_ms"]["value"] / 1e3)
        try:
            f = mp.fit(predict, point)
        except ValueError:
            refused += 1
            continue
        scaled = dataclasses.replace(setup, measured_scale=(f["prefill"], f["decode"]))
        for r in others:
            same = [o for o in members if o["metric"] == r["metric"] and o["id"] != r["id"]]
            s0 = setup_of[r["id"]]
            raw = tv.predict(r, s0) / r["value"] - 1
            key = ("dense" if rows[r["id"]]["model"] and setup_of[r["id"]].spec.moe is None
                   and setup_of[r["id"]].spec.mla is None else "moe/mla", METRIC[r["metric"]])
            cells[key]["raw"].append(abs(raw))
            cells[key]["fit"].append(abs(tv.predict(r, dataclasses.replace(s0, measured_scale=scaled.measured_scale))
                                         / r["value"] - 1))
            if same:
                a = min(same, key=lambda o: (o["batch"], o["input_len"], o["id"]))
                ea = tv.predict(a, setup_of[a["id"]]) / a["value"] - 1
                cells[key]["stand_in"].append(abs((1 + raw) / (1 + ea) - 1))
            else:
                cells[key]["stand_in"].append(float("nan"))
    out = {}
    for k, v in cells.items():
        keep = [i for i, x in enumerate(v["stand_in"]) if x == x]       # rows the stand-in can also judge
        if keep:
            out[k] = {"n": len(keep), **{name: 100 * statistics.median(v[name][i] for i in keep)
                                         for name in ("raw", "fit", "stand_in")}}
    return {"deployments": n_dep, "refused": refused, "cells": out}


def cell_table(named):
    lines = ["| cell | deployments' rows | sources | " + " | ".join(k for k, _ in named) + " |",
             "|---|---|---|" + "---|" * len(named)]
    for g, m in CELLS:
        sel = [[e for e in errs if group(e) == g and METRIC[e["metric"]] == m] for _, errs in named]
        if not sel[0]:
            continue
        lines.append(f"| {g} {m} | {len(sel[0])} | {len({e['source'] for e in sel[0]})} | " +
                     " | ".join(f"{100 * statistics.median(abs(e['error']) for e in s):.1f}%" for s in sel) + " |")
    return lines


def main():
    errs = shipped_errors()
    assert len(errs) == ROWS
    rows = {r["id"]: r for r in tv.load_table()["rows"]}
    low, anyone = anchored(errs, rows, "lowest"), anchored(errs, rows, "any")
    ids = {e["id"] for e in low}
    raw = [e for e in errs if e["id"] in ids]
    rule, _ = ti.choose_rule(low)            # as the main table's rule was chosen (session 6): LOO coverage
    families = ti.interval_table(low, ti.LEVEL, rule)
    coverage = ti.leave_one_document_out(low, rule, ti.LEVEL)
    two = two_factor_fit(errs, rows)
    table = {"level": ti.LEVEL, "rule": rule, "kind": "measured",
             "how": "10th-90th percentile of the errors left on a deployment's other rows once the model is scaled to "
                    "one measured row of it (reports/gpu-time/session16/MEASURED.md)",
             "source": "reports/gpu-time/session16/measured_point.py", "rows": len(low),
             "documents": len({e['source'] for e in low}), "families": families,
             "leave_one_document_out": coverage}
    OUT.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    cov = ["| class | rows | documents | coverage (rows) | coverage (mean over documents) |", "|---|---|---|---|---|"]
    for k in ("all", "dense", "moe", "mla"):
        if k in coverage:
            c = coverage[k]
            cov.append(f"| {k} | {c['rows']} | {c['documents']} | {100 * c['coverage']:.1f}% | "
                       f"{100 * c['document_coverage']:.1f}% |")
    fam = ["| family | r_low | r_high | spread | rows | documents |", "|---|---|---|---|---|---|"]
    for k, f in sorted(families.items()):
        fam.append(f"| {k} | {f['r_low']:.3f} | {f['r_high']:.3f} | {f['r_high'] / f['r_low']:.2f}x | {f['n']} | "
                   f"{f['documents']} |")
    rule_words = (f"weighting by {rule['weighting']}, families with rows from at least {rule['min_documents']} "
                  f"documents, widened x{rule['widen']:g} in log space")
    md = ["# Session 16: one measured point of a deployment, its other rows", "",
          "Made by `reports/gpu-time/session16/measured_point.py` (its docstring says how). Median |predicted / "
          "measured - 1| of the rows of deployments with 2 or more rows of one metric (the shipped constants' "
          "out-of-document errors): as predicted; scaled to the deployment's lowest-load other row (what `plan "
          "--measured` does with one benchmark run); scaled to each other row in turn (median).", ""] + \
        cell_table([("as predicted", raw), ("one point, lowest load", low), ("one point, any", anyone)]) + \
        ["", "## The interval table `plan --measured` uses (`catalog/gpu_time_measured_intervals.json`)", "",
         "80% of the anchored errors; predicted / measured as a time ratio (a rate's reciprocal), so a time t has "
         "the interval [t / r_high, t / r_low]. The rule, chosen as the main table's was (timing_intervals."
         f"choose_rule: leave-one-document-out coverage nearest 80% in the worst class): {rule_words}.", ""] + fam + \
        ["", "Calibration: leave one document out (each document's anchored errors against the table drawn from the "
         "others):", ""] + cov
    md += ["", "## The two-factor fit through the model, as `plan --measured` runs it (in-sample)", "",
           "Deployments (source, GPU, TP, model, weights, KV, parallelism) with a TTFT row and a TPOT (ITL) row at one "
           "load: the model's prefill and decode factors fitted to that pair (measured_point.fit on the table's own "
           "serving_point), then every other row of the deployment predicted with them; against the per-metric "
           "stand-in above on the same rows. Both use the shipped constants, which were fitted on these rows, so only "
           f"the comparison means anything. {two['deployments']} deployments, {two['refused']} refused by the fit "
           "(a factor outside its range, or the pair not reproduced).", "",
           "| cell | rows | shipped constants, unscaled | two-factor fit | per-metric stand-in |", "|---|---|---|---|---|"]
    for (g, m), v in sorted(two["cells"].items()):
        md.append(f"| {g} {m} | {v['n']} | {v['raw']:.1f}% | {v['fit']:.1f}% | {v['stand_in']:.1f}% |")
    (HERE / "MEASURED.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
