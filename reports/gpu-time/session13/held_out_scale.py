"""Session 13, part 3 (RULE.md): the held-out scale k of the 80% intervals, and the interval table with it.

k = the median over judgements of (median |log(predicted / measured)| of a held-out set's rows under the model that set
judged) / (median |log| of that model's out-of-document fold errors), over the (model, set) pairs fixed in RULE.md:
every pair on file with at least 5 documents and the model's fold errors committed. Writes session13/held_out_scale.json
and catalog/gpu_time_intervals.json (session 13's rule, interval_rule_session13.json, plus held_out_scale = k).
Run: PYTHONPATH=. python reports/gpu-time/session13/held_out_scale.py"""
import json
import math
import statistics
from pathlib import Path

from multihead.cost.time import timing_intervals as ti
from multihead.fits import timing_validation as tv

GT = Path(__file__).parents[1]
# (held-out set, frozen version, the fold errors of the model that version is)
PAIRS = [(6, "after", "out_of_document_session7.json"), (7, "before", "out_of_document_session7.json"),
         (7, "after", "out_of_document_session10.json"), (8, "before", "out_of_document_session10.json"),
         (9, "before", "out_of_document_session10.json"), (8, "after", "session13/out_of_document_candidate.json"),
         (9, "after", "session13/out_of_document_candidate.json")]


def compute() -> dict:
    """k and the judgements it is the median of (no file written)."""
    table = tv.load_table(sealed=True)
    rows = {r["id"]: r for r in table["rows"]}
    judgements, detail = [], []
    for n, label, folds_file in PAIRS:
        frozen = json.loads((GT / "frozen" / f"heldout-{n}_{label}.json").read_text())
        # rows of sources since marked reserved editions are not in the table: left out, counted
        kept = [p for p in frozen["predictions"] if p["id"] in rows and p["predicted"]]
        held = [abs(math.log(p["predicted"] / rows[p["id"]]["value"])) for p in kept]
        docs = len({p["source"] for p in kept})
        folds = [abs(math.log1p(e["error"])) for e in json.loads((GT / folds_file).read_text())]
        assert docs >= 5, (n, label, docs)
        judgements.append((held, folds))
        detail.append({"set": n, "version": label, "folds": folds_file, "rows": len(held),
                       "left_out_rows": len(frozen["predictions"]) - len(kept), "documents": docs,
                       "held_out_median_abs_log": statistics.median(held),
                       "fold_median_abs_log": statistics.median(folds),
                       "ratio": statistics.median(held) / statistics.median(folds)})
    k = ti.scale_from_judgements(judgements)
    return {"held_out_scale": k, "definition": "median over judgements of median |log ratio| held out / in the "
            "judged model's folds (session13/RULE.md, part 3)", "judgements": detail}


def write_interval_table(k: float, where: str) -> None:
    """catalog/gpu_time_intervals.json: session 13's rule (interval_rule_session13.json) on its fold errors, log-widths
    scaled by k; ``where`` names the file k comes from (session 15's script calls this with its own k)."""
    rule = {**json.loads((GT / "interval_rule_session13.json").read_text())["chosen"], "held_out_scale": k}
    errs = json.loads((GT / "out_of_document_session13.json").read_text())
    ti.write(errs, "session 13: 5 folds of whole fitted documents (warm-started from the committed fit), a rule per "
             "class chosen by leave-one-document-out coverage (reports/gpu-time/interval_rule_session13.json), log-widths "
             f"scaled by the held-out scale {k:.3f} ({where})", rule=rule)


def main() -> dict:
    """compute(), written to session13/held_out_scale.json, and the interval table with its k. Superseded by
    session15/held_out_scale.py: running this one again writes session 13's k back into the shipped table."""
    out = compute()
    (Path(__file__).parent / "held_out_scale.json").write_text(json.dumps(out, indent=1) + "\n")
    write_interval_table(out["held_out_scale"], "reports/gpu-time/session13/held_out_scale.json")
    return out


if __name__ == "__main__":
    res = main()
    for d in res["judgements"]:
        print(f"set {d['set']} {d['version']:6s} rows {d['rows']:3d} (left out {d['left_out_rows']}) docs {d['documents']:2d}"
              f"  held out {d['held_out_median_abs_log']:.3f} / folds {d['fold_median_abs_log']:.3f} = {d['ratio']:.2f}")
    print("held_out_scale", round(res["held_out_scale"], 4))
