"""Session 15, part 1 (RULE.md): sets 12-17 pooled, the decision and what every version shows. Run once, after every
version of every set was frozen (frozen/heldout-{12..17}_{before,after,kerneff}.json). Writes session15/JUDGE.md and
JUDGE.json. Error = predicted / measured - 1; coverage = share of measurements inside the version's frozen 80% interval.
Run: PYTHONPATH=. python reports/gpu-time/session15/judge.py"""
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

from multihead.cost.time import timing_intervals as ti
from multihead.fits import timing_validation as tv

GT = Path(__file__).parents[1]
sys.path.insert(0, str(GT))
from heldout_eval import METRIC   # noqa: E402

SETS = range(12, 18)
VERSIONS = ("before", "after", "kerneff")


def load() -> tuple[dict, dict]:
    """The sets' rows (read sealed or seen) and each version's frozen predictions with an in-interval flag."""
    rows = {r["id"]: r for r in tv.load_table(sealed=True)["rows"]
            if any(tv.split_of(r) in (f"held-out-{n}", f"seen-{n}") for n in SETS)}
    out = {}
    for v in VERSIONS:
        preds = {}
        for n in SETS:
            frozen = json.loads((GT / "frozen" / f"heldout-{n}_{v}.json").read_text())
            for p in frozen["predictions"]:
                r = rows[p["id"]]
                cov = ti.coverage([{"value": r["value"], "predicted": p["predicted"], "metric": r["metric"],
                                    "family": p["family"]}], frozen["intervals"]) if p["predicted"] else None
                preds[p["id"]] = {**p, "set": n, "error": p["predicted"] / r["value"] - 1 if p["predicted"] else None,
                                  "inside": cov["all"]["coverage"] == 1.0 if cov else None}
        assert set(preds) == set(rows), v
        out[v] = preds
    return rows, out


def groups(p: dict, r: dict) -> list[str]:
    cls = p["family"][0]
    c2 = "dense" if cls == "dense" else "moe/mla"
    m = METRIC[r["metric"]]
    return sorted({"all", f"set {p['set']}", c2, f"{c2} {m}", f"all {m}", cls, f"doc {r['source']}"})   # a set: dense is both


def main() -> dict:
    rows, versions = load()
    both = [i for i in rows if all(versions[v][i]["predicted"] for v in ("before", "after"))]
    res = {"rows": len(rows), "predicted_by_both": len(both), "sources": len({rows[i]["source"] for i in rows}),
           "versions": {}}
    for v, preds in versions.items():
        g, cov, docs = defaultdict(list), defaultdict(list), defaultdict(list)
        for i in both:
            p, r = preds[i], rows[i]
            for k in groups(p, r):
                g[k].append(p["error"])
                cov[k].append(p["inside"])
            docs[r["source"]].append(abs(p["error"]))
        res["versions"][v] = {
            "groups": {k: {"n": len(x), "median_abs": statistics.median(abs(e) for e in x),
                           "median_signed": statistics.median(x), "coverage": sum(cov[k]) / len(cov[k])}
                       for k, x in g.items()},
            "median_over_documents": statistics.median(statistics.median(x) for x in docs.values())}
    b, a = (res["versions"][v]["groups"]["all"]["median_abs"] for v in ("before", "after"))
    res["decision"] = "after" if a < b else "before"
    (Path(__file__).parent / "JUDGE.json").write_text(json.dumps(res, indent=1) + "\n")
    order = sorted(res["versions"]["before"]["groups"],
                   key=lambda k: (k.startswith("doc"), not k.startswith("all"), k.startswith("set"), k))
    lines = ["# Session 15: sets 12-17 pooled, judged once (RULE.md, part 1)", "",
             f"{res['predicted_by_both']} rows predicted by both `before` and `after` (of {res['rows']}), "
             f"{res['sources']} sources (13 documents: set 15's ALCF file is three sources, a Qiita report two). Cells: median |predicted / measured - 1| (signed median), then the share "
             "inside the version's frozen 80% interval. Made by `reports/gpu-time/session15/judge.py` after the last freeze (run twice: the second fixed the 'dense' row count, RULE.md).", "",
             "| rows | n | " + " | ".join(VERSIONS) + " |", "|---|---|" + "---|" * len(VERSIONS)]
    for k in order:
        cells = []
        for v in VERSIONS:
            s = res["versions"][v]["groups"][k]
            cells.append(f"{s['median_abs']:.1%} ({s['median_signed']:+.1%}); {s['coverage']:.0%} in")
        lines.append(f"| {k} | {res['versions']['before']['groups'][k]['n']} | " + " | ".join(cells) + " |")
    lines += ["", "| median over documents | | " + " | ".join(
        f"{res['versions'][v]['median_over_documents']:.1%}" for v in VERSIONS) + " |", "",
        f"**Decision (RULE.md)**: row-pooled median |error| before {b:.1%}, after {a:.1%}: main keeps "
        f"**{res['decision']}**."]
    (Path(__file__).parent / "JUDGE.md").write_text("\n".join(lines) + "\n")
    return res


if __name__ == "__main__":
    r = main()
    print("decision", r["decision"])
