"""Session 15, part 2 (RULE.md): the held-out scale k recomputed by session 13's definition with the two judgements
of sets 12-17 pooled added (13 documents: `before`, the shipped model, whose folds are out_of_document_session13.json;
`after`, session 14's refit 's13', whose folds are session14/ood_s13.json), and the shipped model's interval table with
the new k (session 13's rule, interval_rule_session13.json). Writes session15/held_out_scale.json and
catalog/gpu_time_intervals.json. Predictions do not change.
Run: PYTHONPATH=. python reports/gpu-time/session15/held_out_scale.py"""
import json
import math
import statistics
import sys
from pathlib import Path

from multihead.cost.time import timing_intervals as ti
from multihead.fits import timing_validation as tv

GT = Path(__file__).parents[1]
sys.path.insert(0, str(GT / "session13"))
import held_out_scale as s13   # noqa: E402  (session 13's judgements, unchanged)

POOLED = [("before", "out_of_document_session13.json"), ("after", "session14/ood_s13.json")]
SETS = range(12, 18)


def compute() -> dict:
    old = s13.compute()
    rows = {r["id"]: r for r in tv.load_table(sealed=True)["rows"]}
    judgements, detail = [], list(old["judgements"])
    for d in old["judgements"]:     # session 13's judgements, recomputed the same way
        frozen = json.loads((GT / "frozen" / f"heldout-{d['set']}_{d['version']}.json").read_text())
        kept = [p for p in frozen["predictions"] if p["id"] in rows and p["predicted"]]
        judgements.append(([abs(math.log(p["predicted"] / rows[p["id"]]["value"])) for p in kept],
                           [abs(math.log1p(e["error"])) for e in json.loads((GT / d["folds"]).read_text())]))
    for label, folds_file in POOLED:
        kept = [p for n in SETS for p in json.loads((GT / "frozen" / f"heldout-{n}_{label}.json").read_text())["predictions"]
                if p["id"] in rows and p["predicted"]]
        held = [abs(math.log(p["predicted"] / rows[p["id"]]["value"])) for p in kept]
        folds = [abs(math.log1p(e["error"])) for e in json.loads((GT / folds_file).read_text())]
        docs = len({p["source"] for p in kept})
        assert docs >= 5
        judgements.append((held, folds))
        detail.append({"set": "12-17", "version": label, "folds": folds_file, "rows": len(held), "sources": docs,
                       "held_out_median_abs_log": statistics.median(held),
                       "fold_median_abs_log": statistics.median(folds),
                       "ratio": statistics.median(held) / statistics.median(folds)})
    k = ti.scale_from_judgements(judgements)
    assert math.isclose(ti.scale_from_judgements(judgements[:len(old["judgements"])]), old["held_out_scale"])
    return {"held_out_scale": k, "session13_held_out_scale": old["held_out_scale"],
            "definition": old["definition"] + "; session 15 adds sets 12-17 pooled (session15/RULE.md, part 2)",
            "judgements": detail}


def main() -> dict:
    out = compute()
    (Path(__file__).parent / "held_out_scale.json").write_text(json.dumps(out, indent=1) + "\n")
    s13.write_interval_table(out["held_out_scale"], "session 15: reports/gpu-time/session15/held_out_scale.json")
    return out


if __name__ == "__main__":
    res = main()
    for d in res["judgements"]:
        print(f"set {d['set']} {d['version']:6s} rows {d['rows']:3d}  held out {d['held_out_median_abs_log']:.3f} / "
              f"folds {d['fold_median_abs_log']:.3f} = {d['ratio']:.2f}")
    print("held_out_scale", round(res["session13_held_out_scale"], 4), "->", round(res["held_out_scale"], 4))
