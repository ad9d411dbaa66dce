"""Session 15, exploratory (after every decision): how far two documents disagree when they measured the same stated
configuration. Rows of different sources with equal model, GPU, TP, weights, KV dtype, batch / concurrency, mode,
input and output lengths, metric and engine family are paired (one pair per two sources: the median of each source's
values); the measured values are compared with each other, never with a prediction. The time model reads these inputs
and the engine's version family, not the exact version: where both sources fall in one family it predicts one value
for both, so the pair's |log ratio| / 2 bounds its error on them from below. Writes
session15/REPLICATION.md. Run: PYTHONPATH=. python reports/gpu-time/session15/replication.py"""
import itertools
import math
import statistics
from collections import defaultdict
from pathlib import Path

from multihead.fits import timing_validation as tv

KEYS = ("model", "gpu", "tp", "weights", "kv", "batch", "mode", "input_len", "output_len", "metric")


def pairs(table: dict) -> list[dict]:
    src = table["sources"]
    groups = defaultdict(lambda: defaultdict(list))
    for r in table["rows"]:
        k = tuple(r.get(x) for x in KEYS) + (src[r["source"]]["engine_family"],)
        groups[k][r["source"]].append(r["value"])
    out = []
    for k, by in groups.items():
        for (a, va), (b, vb) in itertools.combinations(sorted(by.items()), 2):
            ratio = statistics.median(va) / statistics.median(vb)
            out.append({"config": dict(zip(KEYS + ("engine_family",), k)), "a": a, "b": b,
                        "a_version": src[a].get("engine_version"), "b_version": src[b].get("engine_version"),
                        "abs_log_ratio": abs(math.log(ratio))})
    return out


def main() -> list[dict]:
    ps = pairs(tv.load_table())
    same = [p for p in ps if p["a_version"] and p["a_version"] == p["b_version"]]
    lines = ["# Session 15 (exploratory): two documents, one stated configuration", "",
             "Made by `reports/gpu-time/session15/replication.py` after every decision of the session. Each pair: two "
             "sources whose rows state the same model, GPU, TP, weights, KV dtype, batch / concurrency, mode, lengths, "
             "metric and engine family; |log ratio| of their measured values (no prediction is involved).", ""]
    for name, xs in (("all pairs", ps), ("pairs with the same stated engine version", same)):
        if xs:
            m = statistics.median(p["abs_log_ratio"] for p in xs)
            lines.append(f"- {name}: {len(xs)} pairs from {len({(p['a'], p['b']) for p in xs})} source pairs; median "
                         f"disagreement {math.exp(m) - 1:.1%}: a model that predicts one value for both is off by at least "
                         f"{math.exp(m / 2) - 1:.1%} on one of them at the median pair")
    lines += ["", "| |log ratio| | model | GPU | TP | batch | in / out | metric | engine (versions) | sources |",
              "|---|---|---|---|---|---|---|---|---|"]
    for p in sorted(ps, key=lambda p: -p["abs_log_ratio"]):
        c = p["config"]
        lines.append(f"| {p['abs_log_ratio']:.2f} | {c['model']} | {c['gpu']} | {c['tp']} | {c['batch']} | "
                     f"{c['input_len']} / {c['output_len']} | {c['metric']} | {c['engine_family']} ({p['a_version']}, "
                     f"{p['b_version']}) | {p['a']}, {p['b']} |")
    (Path(__file__).parent / "REPLICATION.md").write_text("\n".join(lines) + "\n")
    return ps


if __name__ == "__main__":
    main()
