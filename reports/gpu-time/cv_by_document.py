"""Out-of-document CV on the FITTED documents only for a model variant. Usage: cv.py VARIANT fitjson [refit]"""
import json, sys, statistics, collections, time
from multihead.cost.time import timing
from multihead.fits import timing_validation as tv
from multihead.cost.time import timing_intervals as ti
variant = sys.argv[1]
if "noMoE" in variant:
    timing.MOE_TERMS = False
if "custom" in variant:
    timing.ALLREDUCE_ALGORITHM = "custom"
table = tv.load_table()
t0 = time.time()
if len(sys.argv) > 3:
    c = tv.fit(table, starts=2)
    json.dump({"constants": tv.constants_dict(c)}, open(sys.argv[2], "w"), indent=1)
else:
    c = timing.Constants(**{k: (dict(v) if isinstance(v, dict) else v) for k, v in json.load(open(sys.argv[2]))["constants"].items()})
errs = ti.out_of_document(table, c, folds=5)
json.dump(errs, open(f"/tmp/h28/ood_{variant}.json", "w"))
g = collections.defaultdict(list)
for e in errs:
    cls, ph, eng = e["family"]
    g[(cls, ph)].append(abs(e["error"])); g[("all", cls)].append(abs(e["error"])); g[("all", "all")].append(abs(e["error"]))
print(variant, "time", round(time.time() - t0), "s")
for k, v in sorted(g.items()):
    print(f"  {k}: n {len(v)} median {statistics.median(v):.1%}")
import math
print("  log-rms", math.sqrt(statistics.fmean(math.log1p(e["error"]) ** 2 for e in errs)))
