import json, sys
from multihead.cost.time import timing_intervals as ti
errs = json.load(open(sys.argv[1]))
t = ti.write(errs, "multihead gpu-time --intervals (5 folds of whole fitted documents, warm-started from the committed fit)")
for k, v in t["families"].items():
    print(k, v)
