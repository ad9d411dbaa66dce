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
from floor import shipped_errors, ROWS                        # noqa: E402
from multihead.cost.time import timing_intervals as ti        # noqa: E402
from multihead.fits import timing_validation as tv            # noqa: E402

OUT = Path(__file__).parents[3] / "multihead" / "cost" / "catalog" / "gpu_time_measured_intervals.json"
RULE = {"weighting": "row", "min_documents": 2, "widen": 1.0}
CELLS = [(g, m) for g in ("dense", "moe/mla") for m in ("TTFT", "TPOT", "throughput", "latency")]


def group(e):
    return "dense" if e["family"][0] == "dense" else "moe/mla"


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
    families = ti.interval_table(low, ti.LEVEL, RULE)
    coverage = ti.leave_one_document_out(low, RULE, ti.LEVEL)
    table = {"level": ti.LEVEL, "rule": RULE, "kind": "measured",
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
    md = ["# Session 16: one measured point of a deployment, its other rows", "",
          "Made by `reports/gpu-time/session16/measured_point.py` (its docstring says how). Median |predicted / "
          "measured - 1| of the rows of deployments with 2 or more rows of one metric (the shipped constants' "
          "out-of-document errors): as predicted; scaled to the deployment's lowest-load other row (what `plan "
          "--measured` does with one benchmark run); scaled to each other row in turn (median).", ""] + \
        cell_table([("as predicted", raw), ("one point, lowest load", low), ("one point, any", anyone)]) + \
        ["", "## The interval table `plan --measured` uses (`catalog/gpu_time_measured_intervals.json`)", "",
         "80% of the anchored errors; predicted / measured as a time ratio (a rate's reciprocal), so a time t has "
         "the interval [t / r_high, t / r_low].", ""] + fam + \
        ["", "Calibration: leave one document out (each document's anchored errors against the table drawn from the "
         "others):", ""] + cov
    (HERE / "MEASURED.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
