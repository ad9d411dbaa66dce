"""Session 7: refit and cross-validate BY DOCUMENT on the fitted documents (every split but held-out-6) for a
model variant, and print the out-of-document median |error| per class (dense / moe / mla) and metric family
(TTFT / TPOT / throughput at a stated batch / the rest). Never reads held-out-6 rows (they are not fitted,
so not in the folds). Usage:
    PYTHONPATH=. python reports/gpu-time/session7_cv.py VARIANT OUTDIR [warm]
VARIANT is a '+'-joined list of switches (_variants below); 'base' is the session-6 model (every session-7
switch off), e.g. base+fp4. With 'warm' the
full fit is one local descent from the committed constants (as every fold's fit is), else 2 seeded starts."""
import collections, json, math, statistics, sys, time

from multihead.cost.time import timing
from multihead.fits import timing_validation as tv


def _set(module, name, value):
    def apply():
        setattr(module, name, value)
    return apply


def _variants():
    from multihead.cost.time import decode_attention, engine_costs, fp4_weights, rocm
    return {"base": lambda: (_set(fp4_weights, "FP4_KIND", False)(), _set(engine_costs, "OVERLAP", False)(),
                             _set(rocm, "ROCM_EFFICIENCY", False)(), _set(engine_costs, "FUSED_MXFP4_MOE", False)()),
            "mxfp4k": _set(engine_costs, "FUSED_MXFP4_MOE", True),  # MXFP4 MoE: 4 kernels, not 7
            "rocm": _set(rocm, "ROCM_EFFICIENCY", True),          # ROCm engines' own factor on eta_f
            "fp4": _set(fp4_weights, "FP4_KIND", True),           # MXFP4 unpacking where no FP4 tensor cores
            "overlap": _set(engine_costs, "OVERLAP", True),       # host work overlapped (async / overlap scheduler)
            "separate": _set(decode_attention, "KERNELS", "separate")}


METRIC = {"ttft_ms": "TTFT", "itl_ms": "TPOT", "decode_step_ms": "TPOT", "decode_tokens_per_s": "TPOT",
          "output_tokens_per_s": "throughput", "output_tokens_per_s_per_gpu": "throughput",
          "request_latency_s": "latency"}


def report(errs):
    g = collections.defaultdict(list)
    for e in errs:
        cls = e["family"][0]
        m = METRIC[e["metric"]]
        grp = "dense" if cls == "dense" else "moe/mla"
        for k in {(cls, m), (cls, "all"), (grp, m), (grp, "all"), ("all", m), ("all", "all")}:   # (dense is both)
            g[k].append(abs(e["error"]))
    lines = []
    for k, v in sorted(g.items()):
        lines.append(f"  {k[0]:8s} {k[1]:10s} n {len(v):4d} median |e| {statistics.median(v):6.1%}")
    by_doc = collections.defaultdict(list)
    for e in errs:
        by_doc[e["source"]].append(abs(e["error"]))
    lines.append(f"  median over documents of their median |e|: {statistics.median(statistics.median(v) for v in by_doc.values()):.1%}")
    lines.append(f"  log-rms {math.sqrt(statistics.fmean(math.log1p(e['error']) ** 2 for e in errs)):.4f}")
    return "\n".join(lines)


def markdown(named: list[tuple[str, list]]) -> str:
    """One table: rows class x metric family, one column per variant (out-of-document median |error|, n)."""
    keys = [(c, m) for c in ("all", "dense", "moe/mla", "moe", "mla") for m in ("all", "TTFT", "TPOT", "throughput", "latency")]
    cols = []
    for _, errs in named:
        g = collections.defaultdict(list)
        for e in errs:
            cls, m = e["family"][0], METRIC[e["metric"]]
            grp = "dense" if cls == "dense" else "moe/mla"
            for k in {(cls, m), (cls, "all"), (grp, m), (grp, "all"), ("all", m), ("all", "all")}:
                g[k].append(abs(e["error"]))
        cols.append(g)
    lines = ["| class | metric | n | " + " | ".join(n for n, _ in named) + " |", "|---|---|---|" + "---|" * len(named)]
    for k in keys:
        if not cols[0].get(k):
            continue
        lines.append(f"| {k[0]} | {k[1]} | {len(cols[0][k])} | "
                     + " | ".join(f"{statistics.median(g[k]):.1%}" for g in cols) + " |")
    lines.append("| log-RMS | | | " + " | ".join(f"{math.sqrt(statistics.fmean(math.log1p(e['error']) ** 2 for e in errs)):.4f}"
                                          for _, errs in named) + " |")
    return "\n".join(lines)


if __name__ == "__main__" and sys.argv[1] == "--table":       # --table NAME=OOD.json ...: a markdown table
    print(markdown([(a.split("=")[0], json.load(open(a.split("=")[1]))) for a in sys.argv[2:]]))
elif __name__ == "__main__" and sys.argv[1] == "--summary":      # --summary OOD.json ...: the table of saved errors
    for path in sys.argv[2:]:
        print(path)
        print(report(json.load(open(path))))
elif __name__ == "__main__":
    variant, out = sys.argv[1], sys.argv[2]
    warm = len(sys.argv) > 3 and sys.argv[3] == "warm"
    table_v = _variants()
    for part in variant.split("+"):
        table_v[part]()
    table = tv.load_table()
    t0 = time.time()
    committed = timing.load_constants()
    c = tv.fit(table, start=committed, starts=1, warm=True) if warm else tv.fit(table, starts=2)
    json.dump({"constants": tv.constants_dict(c)}, open(f"{out}/fit_{variant}.json", "w"), indent=1)
    t1 = time.time()
    errs = tv.out_of_document(table, c, folds=5)
    assert not any(tv.split_of(r) == "held-out-6" for r in table["rows"] if r["id"] in {e["id"] for e in errs})
    json.dump(errs, open(f"{out}/ood_{variant}.json", "w"))
    res = tv.evaluate(table, c)
    fitted = [abs(r["error"]) for r in res if r["split"] in tv.FIT_SPLITS]
    print(variant, f"fit {t1 - t0:.0f} s, 5-fold CV {time.time() - t1:.0f} s; in-sample median {statistics.median(fitted):.1%}")
    print(report(errs))
