"""Freeze the current model's predictions (and 80% intervals) of the held-out-6 rows WITHOUT printing or computing
their errors. Held-out-6 was a sealed split in session 7 (read only by this script and the final evaluation); since
session 8 it is "seen-6" (fitted) and two of its documents are reserved editions (load_table leaves them out, so a
rerun would freeze 144 rows, not 188); kept as the record of how frozen/heldout-6_*.json were made.
Run: PYTHONPATH=. python reports/gpu-time/frozen/freeze6.py LABEL "note"."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))
from heldout_eval import freeze                      # noqa: E402
from multihead.fits import timing_validation as tv   # noqa: E402

freeze(6, lambda r: r.get("split") == "heldout-6", sys.argv[1], sys.argv[2], sealed=True)
