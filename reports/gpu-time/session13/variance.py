"""Session 13, exploratory (after every decision; no model change rests on it): how much of the adopted model's
out-of-document log error each stated feature of a row explains, against the document itself.

For each (class group, metric family) cell, over the fold errors of out_of_document_session13.json (1,207 rows,
5 folds of whole documents), e = log(predicted / measured) as a time (a rate's sign flipped: + = predicted slow),
and for a grouping g the between-group share of the sum of squares: sum_g n_g (mean_g - mean)^2 / sum (e - mean)^2.
'document' is the source; the others are what a row states (engine, GPU, model, weights, TP, concurrency bucket).
A feature explaining far less than the document means the documents differ by something they do not state.
Writes session13/VARIANCE.md. Run: PYTHONPATH=. python reports/gpu-time/session13/variance.py"""
import collections
import json
import math
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))
from session7_cv import METRIC                      # noqa: E402
from multihead.fits import timing_validation as tv   # noqa: E402
from multihead.cost.time.timing_intervals import RATES   # noqa: E402


def share(errs: list[tuple[dict, float]], key) -> float:
    vals = [v for _, v in errs]
    mu = statistics.fmean(vals)
    sst = sum((v - mu) ** 2 for v in vals)
    groups = collections.defaultdict(list)
    for x, v in errs:
        groups[key(x)].append(v)
    return sum(len(g) * (statistics.fmean(g) - mu) ** 2 for g in groups.values()) / sst if sst else 0.0


def main() -> str:
    rows = {r["id"]: r for r in tv.load_table()["rows"]}
    errs = json.loads((HERE.parent / "out_of_document_session13.json").read_text())
    feats = {"document": lambda x: x["source"], "engine": lambda x: x["family"][2],
             "GPU": lambda x: rows[x["id"]]["gpu"], "model": lambda x: rows[x["id"]]["model"],
             "weights": lambda x: rows[x["id"]]["weights"], "TP": lambda x: rows[x["id"]]["tp"],
             "concurrency (log2 bucket)": lambda x: min(6, int(math.log2(max(1, rows[x["id"]]["batch"])))),
             "engine x GPU": lambda x: (x["family"][2], rows[x["id"]]["gpu"])}
    cells = [(g, m) for g in ("dense", "moe/mla") for m in ("TTFT", "TPOT", "throughput")]
    lines = ["# Session 13 (exploratory): what explains the adopted model's out-of-document errors", "",
             "Share of the sum of squares of log(predicted / measured) (as a time) between the groups of each grouping, "
             "over the fold errors of the 1,207 fitted rows (`out_of_document_session13.json`). Made by "
             "`reports/gpu-time/session13/variance.py`, after every decision of the session.", "",
             "| grouping | " + " | ".join(f"{g} {m}" for g, m in cells) + " |", "|---|" + "---|" * len(cells)]
    data = {}
    for g, m in cells:
        sel = [x for x in errs if (x["family"][0] == "dense") == (g == "dense") and METRIC[x["metric"]] == m]
        data[(g, m)] = [(x, (-1 if x["metric"] in RATES else 1) * math.log1p(x["error"])) for x in sel]
    lines.append("| rows (documents) | " + " | ".join(
        f"{len(v)} ({len({x['source'] for x, _ in v})})" for v in data.values()) + " |")
    for name, key in feats.items():
        lines.append(f"| {name} | " + " | ".join(f"{share(v, key):.2f}" for v in data.values()) + " |")
    text = "\n".join(lines) + "\n"
    (HERE / "VARIANCE.md").write_text(text)
    return text


if __name__ == "__main__":
    print(main())
