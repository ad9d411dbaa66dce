"""Freeze the current model's predictions of the held-out-4 rows WITHOUT printing their errors."""
import json, subprocess, sys
from multihead.cost.time import timing
from multihead.fits import timing_validation as tv
table = tv.load_table()
c = timing.load_constants()
out = []
fails = 0
for row, setup in tv.setups(table, c):
    if tv.split_of(row) != "held-out-4":
        continue
    try:
        pred = tv.predict(row, setup)
    except Exception as e:       # noqa: BLE001
        pred, fails = None, fails + 1
        print("could not predict", row["id"], type(e).__name__, str(e)[:200])
    out.append({"id": row["id"], "source": row["source"], "metric": row["metric"], "predicted": pred})
commit = subprocess.check_output(["git", "rev-parse", "HEAD"], text=True).strip()
label = sys.argv[1]
json.dump({"label": label, "model_commit": commit, "constants": c.source, "note": sys.argv[2],
           "predictions": out}, open(f"reports/gpu-time/frozen/heldout-4_{label}.json", "w"), indent=1)
print(len(out), "predictions frozen,", fails, "failed")
