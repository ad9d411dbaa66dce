"""The held-out-4 result (documents never fitted), for every frozen model version, and the intervals'
calibration: writes reports/gpu-time/heldout4.{md,json}. Run: PYTHONPATH=. python reports/gpu-time/heldout4_report.py"""
import json
import statistics
from collections import defaultdict
from pathlib import Path

from multihead.cost.time import timing
from multihead.cost.time import timing_intervals as ti
from multihead.fits import timing_validation as tv

HERE = Path(__file__).parent
VERSIONS = [("before", "session-4 model (as committed before session 5)"),
            ("A_engine_costs", "A: engine/version families, kernels per layer, eager-prefill and per-sequence costs"),
            ("B_moe_comm", "B: A + EP imbalance, grouped-GEMM padding, DP-attention all-to-all, smooth all-reduce")]
METRIC = {"ttft_ms": "TTFT", "itl_ms": "TPOT", "decode_step_ms": "TPOT", "decode_tokens_per_s": "TPOT",
          "output_tokens_per_s": "throughput", "output_tokens_per_s_per_gpu": "throughput",
          "request_latency_s": "request latency"}

table = tv.load_table()
rows = {r["id"]: r for r in table["rows"] if r.get("split") == "heldout-4"}   # (seen since session 6)
setups = {r["id"]: s for r, s in tv.setups({**table, "rows": list(rows.values())}, timing.load_constants())}
cls = {i: ti.model_class(s.spec) for i, s in setups.items()}
out = {"rows": len(rows), "documents": sorted({r["source"] for r in rows.values()}), "versions": {}}


def med(xs):
    return statistics.median(xs) if xs else None


for key, what in VERSIONS:
    frozen = json.loads((HERE / "frozen" / f"heldout-4_{key}.json").read_text())
    errs = {p["id"]: p["predicted"] / rows[p["id"]]["value"] - 1 for p in frozen["predictions"]}
    groups = defaultdict(list)
    for i, e in errs.items():
        r = rows[i]
        c = "dense" if cls[i] == "dense" else "moe/mla"
        for g in ("all", c, f"{c} {METRIC[r['metric']]}", f"all {METRIC[r['metric']]}", f"doc {r['source']}"):
            groups[g].append(e)
    out["versions"][key] = {"what": what, "model_commit": frozen["model_commit"],
                            "groups": {g: {"n": len(v), "median_abs": med([abs(x) for x in v]),
                                           "median_signed": med(v)} for g, v in sorted(groups.items())}}

# the current model's predictions are model B's (nothing changed the table's predictions after it)
current = {i: tv.predict(rows[i], setups[i]) for i in rows}
frozen_b = {p["id"]: p["predicted"] for p in json.loads((HERE / "frozen" / "heldout-4_B_moe_comm.json").read_text())["predictions"]}
out["current_equals_B"] = all(abs(current[i] / frozen_b[i] - 1) < 1e-9 for i in rows)
itab = ti.load_intervals()
cov_rows = [{"value": rows[i]["value"], "predicted": current[i], "metric": rows[i]["metric"],
             "family": list(ti.family(rows[i], setups[i]))} for i in rows]
out["coverage"] = ti.coverage(cov_rows, itab)
by_doc = defaultdict(list)
for i, r in zip(rows, cov_rows):
    by_doc[rows[i]["source"]].append(r)
out["coverage_by_document"] = {d: ti.coverage(v, itab)["all"] for d, v in sorted(by_doc.items())}
(HERE / "heldout4.json").write_text(json.dumps(out, indent=1) + "\n")

lines = ["# Held-out set 4: documents never fitted, predictions frozen before each change", "",
         "Made by `PYTHONPATH=. python reports/gpu-time/heldout4_report.py`. Documents held out (by the rule "
         "sha256 of the source key within each stratum, 30%, fixed before any prediction): "
         + ", ".join(f"`{d}`" for d in out["documents"]) + f"; {out['rows']} rows. Error = predicted / measured - 1; "
         "each version's predictions were committed (frozen/heldout-4_*.json, with the model's commit) before "
         "the next change, and not looked at until this report.", "",
         "| group | n | " + " | ".join(f"{k} median abs (signed)" for k, _ in VERSIONS) + " |",
         "|---|---|" + "---|" * len(VERSIONS)]
keys = sorted(out["versions"]["before"]["groups"], key=lambda g: (g.startswith("doc"), g))
for g in keys:
    cells = []
    for k, _ in VERSIONS:
        s = out["versions"][k]["groups"].get(g)
        cells.append(f"{s['median_abs'] * 100:.1f}% ({s['median_signed'] * 100:+.1f}%)" if s else "-")
    lines.append(f"| {g} | {out['versions']['before']['groups'][g]['n']} | " + " | ".join(cells) + " |")
lines += ["", "Versions: " + "; ".join(f"**{k}** {w} (model commit {out['versions'][k]['model_commit'][:10]})"
                                        for k, w in VERSIONS) + ".", "",
          f"## Calibration of the 80% intervals (model B, intervals from its out-of-document errors on the fitted documents)",
          "", "| rows | n | inside the 80% interval |", "|---|---|---|"]
for k, v in out["coverage"].items():
    lines.append(f"| {k} | {v['n']} | {v['coverage'] * 100:.1f}% |")
for d, v in out["coverage_by_document"].items():
    lines.append(f"| doc {d} | {v['n']} | {v['coverage'] * 100:.1f}% |")
lines.append("")
lines.append(f"The current model's predictions equal model B's frozen ones: {out['current_equals_B']}.")
(HERE / "heldout4.md").write_text("\n".join(lines) + "\n")
print("written")
