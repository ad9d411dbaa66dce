"""What every held-out set's scripts share: freezing a model's predictions of the set's rows (without an
error in sight) and, once after the last freeze, the report of the frozen versions against the measurements.
Used by frozen/freezeN.py and heldoutN_report.py (PYTHONPATH=.)."""
import json
import statistics
import subprocess
from collections import defaultdict
from pathlib import Path

from multihead.cost.time import timing
from multihead.cost.time import timing_intervals as ti
from multihead.fits import timing_validation as tv

HERE = Path(__file__).parent
METRIC = {"ttft_ms": "TTFT", "itl_ms": "TPOT", "decode_step_ms": "TPOT", "decode_tokens_per_s": "TPOT",
          "output_tokens_per_s": "throughput", "output_tokens_per_s_per_gpu": "throughput",
          "request_latency_s": "request latency"}


def freeze(n: int, keep, label: str, note: str, sealed: bool = False) -> None:
    """Write frozen/heldout-{n}_{label}.json: the current model's predictions and 80% interval table of the
    rows ``keep(row)`` selects (a refusal kept as None); prints counts only, never an error."""
    table = tv.load_table(sealed=sealed)
    c = timing.load_constants()
    itab = ti.load_intervals()
    out, fails = [], 0
    for row, setup in tv.setups({**table, "rows": [r for r in table["rows"] if keep(r)]}, c):
        try:
            pred = tv.predict(row, setup)
        except Exception as e:       # noqa: BLE001  (a refusal is kept as None with its reason)
            pred, fails = None, fails + 1
            print("could not predict", row["id"], type(e).__name__, str(e)[:200])
        out.append({"id": row["id"], "source": row["source"], "metric": row["metric"], "predicted": pred,
                    "family": list(ti.family(row, setup))})
    commit = subprocess.check_output(["git", "rev-parse", "HEAD"], text=True).strip()
    json.dump({"label": label, "model_commit": commit, "constants": c.source, "note": note,
               "intervals": itab, "predictions": out},
              open(HERE / "frozen" / f"heldout-{n}_{label}.json", "w"), indent=1)
    print(len(out), "predictions frozen,", fails, "failed")


def _med(xs):
    return statistics.median(xs) if xs else None


def report(n: int, rows: dict, versions: list, intro: str, error_groups, coverage_groups, tail=()) -> None:
    """Write heldout{n}.{json,md}: per version (label, what), the median |error| (and signed) of each group
    ``error_groups(cls, c2, metric, source)`` names and the share inside the frozen 80% interval of each group
    ``coverage_groups(...)`` names; ``intro`` opens the page (the documents' list and row count follow it)."""
    out = {"rows": len(rows), "documents": sorted({r["source"] for r in rows.values()}), "versions": {}}
    for key, what in versions:
        frozen = json.loads((HERE / "frozen" / f"heldout-{n}_{key}.json").read_text())
        preds = {p["id"]: p for p in frozen["predictions"]}
        assert set(preds) == set(rows), f"{key}: frozen rows differ from the table's held-out-{n} rows"
        groups, inside = defaultdict(list), defaultdict(list)
        itab = frozen["intervals"]
        for i, p in preds.items():
            r = rows[i]
            e = p["predicted"] / r["value"] - 1
            cls = p["family"][0]
            c2 = "dense" if cls == "dense" else "moe/mla"
            m = METRIC[r["metric"]]
            for g in error_groups(cls, c2, m, r["source"]):
                groups[g].append(e)
            cov = ti.coverage([{"value": r["value"], "predicted": p["predicted"], "metric": r["metric"],
                                "family": p["family"]}], itab)
            ok = cov["all"]["coverage"] == 1.0
            for g in coverage_groups(cls, c2, m, r["source"]):
                inside[g].append(ok)
        out["versions"][key] = {
            "what": what, "model_commit": frozen["model_commit"], "interval_rule": itab.get("rule"),
            "groups": {g: {"n": len(v), "median_abs": _med([abs(x) for x in v]), "median_signed": _med(v)}
                       for g, v in sorted(groups.items())},
            "coverage": {g: {"n": len(v), "coverage": sum(v) / len(v)} for g, v in sorted(inside.items())}}
    (HERE / f"heldout{n}.json").write_text(json.dumps(out, indent=1) + "\n")

    lines = [f"# Held-out set {n}: documents never fitted, predictions frozen before each change", "",
             f"Made by `PYTHONPATH=. python reports/gpu-time/heldout{n}_report.py`, run once after the last freeze. "
             + intro + ", ".join(f"`{d}`" for d in out["documents"]) + f"; {out['rows']} rows. Error = predicted / "
             f"measured - 1. Each version's predictions and interval table were committed (frozen/heldout-{n}_*.json, "
             "with the model's commit) before the next change and not looked at until this report.", "",
             "| group | n | " + " | ".join(f"{k} median abs (signed)" for k, _ in versions) + " |",
             "|---|---|" + "---|" * len(versions)]
    first = out["versions"][versions[0][0]]
    for g in sorted(first["groups"], key=lambda g: (g.startswith("doc"), g)):
        cells = []
        for k, _ in versions:
            s = out["versions"][k]["groups"].get(g)
            cells.append(f"{s['median_abs'] * 100:.1f}% ({s['median_signed'] * 100:+.1f}%)" if s else "-")
        lines.append(f"| {g} | {first['groups'][g]['n']} | " + " | ".join(cells) + " |")
    lines += ["", "## Share of measurements inside the 80% interval (each version with its own frozen interval table)",
              "", "| rows | n | " + " | ".join(k for k, _ in versions) + " |", "|---|---|" + "---|" * len(versions)]
    for g in sorted(first["coverage"], key=lambda g: (g.startswith("doc"), g)):
        cells = [f"{out['versions'][k]['coverage'][g]['coverage'] * 100:.1f}%" for k, _ in versions]
        lines.append(f"| {g} | {first['coverage'][g]['n']} | " + " | ".join(cells) + " |")
    lines += ["", "Versions: " + "; ".join(f"**{k}** {w} (model commit {out['versions'][k]['model_commit'][:10]}, "
                                            f"interval rule {out['versions'][k]['interval_rule']})"
                                            for k, w in versions) + "."]
    lines += list(tail)
    (HERE / f"heldout{n}.md").write_text("\n".join(lines) + "\n")
    print("written")


HELPER_INTRO = ("Documents held out (chosen and entered by a helper with no part in the modelling, from documents no earlier "
                "session used, decided before any prediction; the modelling helper never had them on its branch): ")


def report_set(n: int, versions: list, project=lambda src: set()) -> None:
    """report() of a set a data helper entered (sets 7 on): its rows read with sealed=True, the helper's intro, and
    the standard groups (all, class, class x metric, document) plus ``project(source)``'s own groups."""
    rows = {r["id"]: r for r in tv.load_table(sealed=True)["rows"] if r.get("split") == f"heldout-{n}"}
    report(n, rows, versions, HELPER_INTRO,
           lambda cls, c2, m, src: sorted({"all", c2, f"{c2} {m}", f"all {m}", cls, f"{cls} {m}", f"doc {src}"} | project(src)),
           lambda cls, c2, m, src: sorted({"all", c2, cls, f"{cls} {m}", f"doc {src}"} | project(src)))
