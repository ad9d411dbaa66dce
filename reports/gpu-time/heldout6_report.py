"""The held-out-6 result (documents never fitted, never looked at while modelling), for the frozen model
versions, with the 80% intervals each version had when frozen: writes reports/gpu-time/heldout6.{md,json}.
Run once, after the last freeze: PYTHONPATH=. python reports/gpu-time/heldout6_report.py"""
import json
import statistics
from collections import defaultdict
from pathlib import Path

from multihead.cost.time import timing_intervals as ti
from multihead.fits import timing_validation as tv

HERE = Path(__file__).parent
VERSIONS = [("before", "the model as session 6 left it (main at 0c73a45: its fit and intervals), frozen by the helper that "
                       "entered set 6, before any session-7 change"),
            ("after", "session 7: every earlier set fitted (643 rows, 28 documents), the ROCm engines' matmul factor "
                      "(cost/time/rocm.py), 80% intervals by a rule per class; chosen by 5-fold cross-validation over "
                      "whole training documents, never on set 6")]
METRIC = {"ttft_ms": "TTFT", "itl_ms": "TPOT", "decode_step_ms": "TPOT", "decode_tokens_per_s": "TPOT",
          "output_tokens_per_s": "throughput", "output_tokens_per_s_per_gpu": "throughput",
          "request_latency_s": "request latency"}

table = tv.load_table(sealed=True)
rows = {r["id"]: r for r in table["rows"] if tv.split_of(r) == "held-out-6"}
out = {"rows": len(rows), "documents": sorted({r["source"] for r in rows.values()}), "versions": {}}


def med(xs):
    return statistics.median(xs) if xs else None


for key, what in VERSIONS:
    frozen = json.loads((HERE / "frozen" / f"heldout-6_{key}.json").read_text())
    preds = {p["id"]: p for p in frozen["predictions"]}
    assert set(preds) == set(rows), f"{key}: frozen rows differ from the table's held-out-6 rows"
    groups, inside = defaultdict(list), defaultdict(list)
    itab = frozen["intervals"]
    for i, p in preds.items():
        r = rows[i]
        e = p["predicted"] / r["value"] - 1
        cls = p["family"][0]
        c2 = "dense" if cls == "dense" else "moe/mla"
        m = METRIC[r["metric"]]
        for g in sorted({"all", c2, f"{c2} {m}", f"all {m}", cls, f"{cls} {m}", f"doc {r['source']}"}):
            groups[g].append(e)
        cov = ti.coverage([{"value": r["value"], "predicted": p["predicted"], "metric": r["metric"],
                            "family": p["family"]}], itab)
        ok = cov["all"]["coverage"] == 1.0
        for g in sorted({"all", c2, cls, f"{cls} {m}", f"doc {r['source']}"}):
            inside[g].append(ok)
    out["versions"][key] = {
        "what": what, "model_commit": frozen["model_commit"], "interval_rule": itab.get("rule"),
        "groups": {g: {"n": len(v), "median_abs": med([abs(x) for x in v]), "median_signed": med(v)}
                   for g, v in sorted(groups.items())},
        "coverage": {g: {"n": len(v), "coverage": sum(v) / len(v)} for g, v in sorted(inside.items())}}
(HERE / "heldout6.json").write_text(json.dumps(out, indent=1) + "\n")

lines = ["# Held-out set 6: documents never fitted, predictions frozen before each change", "",
         "Made by `PYTHONPATH=. python reports/gpu-time/heldout6_report.py`, run once after the last freeze. "
         "Documents held out (chosen and entered by a helper with no part in the modelling, from documents no earlier "
         "session used, decided before any prediction; the modelling helper never had them on its branch): "
         + ", ".join(f"`{d}`" for d in out["documents"]) + f"; {out['rows']} rows. Error = predicted / measured - 1. "
         "Each version's predictions and interval table were committed (frozen/heldout-6_*.json, with the model's "
         "commit) before the next change and not looked at until this report.", "",
         "| group | n | " + " | ".join(f"{k} median abs (signed)" for k, _ in VERSIONS) + " |",
         "|---|---|" + "---|" * len(VERSIONS)]
keys = sorted(out["versions"]["before"]["groups"], key=lambda g: (g.startswith("doc"), g))
for g in keys:
    cells = []
    for k, _ in VERSIONS:
        s = out["versions"][k]["groups"].get(g)
        cells.append(f"{s['median_abs'] * 100:.1f}% ({s['median_signed'] * 100:+.1f}%)" if s else "-")
    lines.append(f"| {g} | {out['versions']['before']['groups'][g]['n']} | " + " | ".join(cells) + " |")
lines += ["", "## Share of measurements inside the 80% interval (each version with its own frozen interval table)", "",
          "| rows | n | " + " | ".join(k for k, _ in VERSIONS) + " |", "|---|---|" + "---|" * len(VERSIONS)]
for g in sorted(out["versions"]["before"]["coverage"], key=lambda g: (g.startswith("doc"), g)):
    cells = [f"{out['versions'][k]['coverage'][g]['coverage'] * 100:.1f}%" for k, _ in VERSIONS]
    lines.append(f"| {g} | {out['versions']['before']['coverage'][g]['n']} | " + " | ".join(cells) + " |")
lines += ["", "Versions: " + "; ".join(f"**{k}** {w} (model commit {out['versions'][k]['model_commit'][:10]}, "
                                        f"interval rule {out['versions'][k]['interval_rule']})" for k, w in VERSIONS) + "."]
(HERE / "heldout6.md").write_text("\n".join(lines) + "\n")
print("written")
