"""Session 6: refit and cross-validate BY DOCUMENT on the fitted documents only, for one variant of the
decode-attention kernels (cost/decode_attention.py KERNELS = separate | merged). Prints only fitted
documents' out-of-document errors. Usage: PYTHONPATH=. python reports/gpu-time/session6_variant_cv.py VARIANT OUTDIR"""
import collections, json, math, statistics, sys, time
from multihead.cost.time import decode_attention
from multihead.cost.time import timing_intervals as ti
from multihead.fits import timing_validation as tv
variant, out = sys.argv[1], sys.argv[2]
decode_attention.KERNELS = variant
table = tv.load_table()
t0 = time.time()
c = tv.fit(table, starts=2)
json.dump({"constants": tv.constants_dict(c)}, open(f"{out}/fit_{variant}.json", "w"), indent=1)
t1 = time.time()
errs = (tv.out_of_document if hasattr(tv, "out_of_document") else ti.out_of_document)(table, c, folds=5)
json.dump(errs, open(f"{out}/ood_{variant}.json", "w"))
print(variant, f"fit {t1 - t0:.0f} s, 5-fold CV {time.time() - t1:.0f} s")
g = collections.defaultdict(list)
for e in errs:
    cls, ph, eng = e["family"]
    for k in ((cls, ph), (cls, "all"), ("all", ph), ("all", "all")):
        g[k].append(abs(e["error"]))
for k, v in sorted(g.items()):
    print(f"  {k}: n {len(v)} median |e| {statistics.median(v):.1%}")
by_doc = collections.defaultdict(list)
for e in errs:
    by_doc[e["source"]].append(abs(e["error"]))
print("  median over documents of their median |e|:", f"{statistics.median(statistics.median(v) for v in by_doc.values()):.1%}")
print("  log-rms", math.sqrt(statistics.fmean(math.log1p(e["error"]) ** 2 for e in errs)))
