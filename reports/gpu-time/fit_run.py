import json, sys, time, statistics, collections
from multihead.cost.time import timing
from multihead.fits import timing_validation as tv
t0 = time.time()
table = tv.load_table()
starts = int(sys.argv[2]) if len(sys.argv) > 2 else 2
c = tv.fit(table, starts=starts)
out = sys.argv[1]
json.dump({"constants": tv.constants_dict(c)}, open(out, "w"), indent=1)
print("fit", time.time() - t0, "s")
res = tv.evaluate(table, c)
by = collections.defaultdict(list)
for r in res:
    if r["split"] in ("held-out-4",):
        continue
    by[(r["split"], r["source"])].append(r["error"])
for k, v in sorted(by.items()):
    print(k, len(v), f"median |e| {statistics.median(abs(e) for e in v):.1%}  signed {statistics.median(v):+.1%}")
tr = [abs(r["error"]) for r in res if r["split"] in tv.FIT_SPLITS]
print("fitted rows median |e|", f"{statistics.median(tr):.1%}", len(tr))
print(json.dumps(tv.constants_dict(c), indent=0)[:3000])
