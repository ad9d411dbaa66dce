"""Freeze the current model's predictions (and 80% intervals) of the held-out-5 rows WITHOUT printing their
errors. Run: PYTHONPATH=. python reports/gpu-time/frozen/freeze5.py LABEL "note"."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))
from heldout_eval import freeze   # noqa: E402

freeze(5, lambda r: r.get("split") == "heldout-5", sys.argv[1], sys.argv[2])   # (the mark; fitted as seen-5 since session 7)
