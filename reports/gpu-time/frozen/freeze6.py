"""Freeze the current model's predictions (and 80% intervals) of the held-out-6 rows WITHOUT printing or computing
their errors. Held-out-6 is a sealed split (timing_validation.SEALED): only this script (and the final evaluation)
reads it, through load_table(sealed=True).
Run: PYTHONPATH=. python reports/gpu-time/frozen/freeze6.py LABEL "note"."""
import json, subprocess, sys
from multihead.cost.time import timing
from multihead.cost.time import timing_intervals as ti
from multihead.fits import timing_validation as tv
SPLIT = "held-out-6"
table = tv.load_table(sealed=True)
c = timing.load_constants()
itab = ti.load_intervals()
out, fails = [], 0
for row, setup in tv.setups({**table, "rows": [r for r in table["rows"] if tv.split_of(r) == SPLIT]}, c):
    try:
        pred = tv.predict(row, setup)
    except Exception as e:       # noqa: BLE001  (a refusal is kept as None with its reason)
        pred, fails = None, fails + 1
        print("could not predict", row["id"], type(e).__name__, str(e)[:200])
    out.append({"id": row["id"], "source": row["source"], "metric": row["metric"], "predicted": pred,
                "family": list(ti.family(row, setup))})
commit = subprocess.check_output(["git", "rev-parse", "HEAD"], text=True).strip()
label = sys.argv[1]
json.dump({"label": label, "model_commit": commit, "constants": c.source, "note": sys.argv[2],
           "intervals": itab, "predictions": out},
          open(f"reports/gpu-time/frozen/heldout-6_{label}.json", "w"), indent=1)
print(len(out), "predictions frozen,", fails, "failed")
