"""The held-out-5 result (documents never fitted, never looked at while modelling), for the frozen model
versions, with the 80% intervals each version had when frozen: writes reports/gpu-time/heldout5.{md,json}.
Run once, after the last freeze: PYTHONPATH=. python reports/gpu-time/heldout5_report.py"""
import json
import statistics
from collections import defaultdict
from pathlib import Path

from multihead.cost.time import timing_intervals as ti
from multihead.fits import timing_validation as tv

HERE = Path(__file__).parent
VERSIONS = [("before", "the model as session 5 left it (h28's model B, its fit and intervals)"),
            ("after", "session 6: refit with held-out-4 as training (seen-4); decode-attention kernels merged as before "
                      "(the separate-kernel term lost the cross-validation on fitted documents); intervals by the rule "
                      "chosen on fitted documents")]
METRIC = {"ttft_ms": "TTFT", "itl_ms": "TPOT", "decode_step_ms": "TPOT", "decode_tokens_per_s": "TPOT",
          "output_tokens_per_s": "throughput", "output_tokens_per_s_per_gpu": "throughput",
          "request_latency_s": "request latency"}

table = tv.load_table()
rows = {r["id"]: r for r in table["rows"] if r.get("split") == "heldout-5"}   # (seen since session 7)
out = {"rows": len(rows), "documents": sorted({r["source"] for r in rows.values()}), "versions": {}}


def med(xs):
    return statistics.median(xs) if xs else None


for key, what in VERSIONS:
    frozen = json.loads((HERE / "frozen" / f"heldout-5_{key}.json").read_text())
    preds = {p["id"]: p for p in frozen["predictions"]}
    assert set(preds) == set(rows), f"{key}: frozen rows differ from the table's held-out-5 rows"
    groups, inside = defaultdict(list), defaultdict(list)
    itab = frozen["intervals"]
    for i, p in preds.items():
        r = rows[i]
        e = p["predicted"] / r["value"] - 1
        cls = p["family"][0]
        c2 = "dense" if cls == "dense" else "moe/mla"
        m = METRIC[r["metric"]]
        for g in ("all", c2, f"{c2} {m}", f"all {m}", f"doc {r['source']}"):
            groups[g].append(e)
        cov = ti.coverage([{"value": r["value"], "predicted": p["predicted"], "metric": r["metric"],
                            "family": p["family"]}], itab)
        ok = cov["all"]["coverage"] == 1.0
        for g in ("all", cls, f"doc {r['source']}"):
            inside[g].append(ok)
    out["versions"][key] = {
        "what": what, "model_commit": frozen["model_commit"], "interval_rule": itab.get("rule"),
        "groups": {g: {"n": len(v), "median_abs": med([abs(x) for x in v]), "median_signed": med(v)}
                   for g, v in sorted(groups.items())},
        "coverage": {g: {"n": len(v), "coverage": sum(v) / len(v)} for g, v in sorted(inside.items())}}
(HERE / "heldout5.json").write_text(json.dumps(out, indent=1) + "\n")

lines = ["# Held-out set 5: documents never fitted, predictions frozen before each change", "",
         "Made by `PYTHONPATH=. python reports/gpu-time/heldout5_report.py`, run once after the last freeze. "
         "Documents held out (every one the session-6 searches found whose measured table could be read whole "
         "enough, that no earlier session used, and that the model represents; decided before any prediction): "
         + ", ".join(f"`{d}`" for d in out["documents"]) + f"; {out['rows']} rows. Error = predicted / measured - 1. "
         "Each version's predictions and interval table were committed (frozen/heldout-5_*.json, with the model's "
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
lines += ["", "## Documents considered and not used (none of them enters any split)", "",
          "- SemiAnalysisAI/InferenceX #870, comment of 2026-03-06 (DeepSeek-R1 NVFP4 on 8x B200): NVFP4 weights, and the "
          "thread's other comment is the training document `ix870-h200-dsr1`.",
          "- sgl-project/sglang #12996, #13094, #13179, #13466 (piecewise CUDA graph PRs, TTFT/TPOT tables by concurrency) "
          "and #2643 (v0.4.1.post2): the GPU is not stated in the text read.",
          "- vllm-project/vllm #15322 (DeepSeek-R1 on L20): the L20 is not in the GPU catalog; #33743 (gemma-3-27b): GPU not stated; "
          "#13412 (Llama-3.3-70B on 8x H200): its results table could not be read.",
          "- datacrunch-research/h200-benchmarks (SGLang 0.4.1 on H200): request-rate runs, no stated batch.",
          "- sgl-project/sglang #31216 (Gemma 4 31B on MI300X), vllm-project/recipes #443/#476 (Ministral 3), "
          "tenstorrent/tt-inference-server #379 (Llama-3.2-90B-Vision), InferenceX #832 (MiniMax-M2.5): model types "
          "the time model does not read, or no config in the table.",
          "- NVIDIA NIM benchmarking page's Llama-3.3-70B tables: the same page as the training document `nim-bench`.",
          "- The other tables of InferenceX #828 (TP2/TP4 analyses, the MI300X comment): not readable whole through "
          "the search excerpts; not used anywhere."]
(HERE / "heldout5.md").write_text("\n".join(lines) + "\n")
print("written")
