"""Freeze the current model's predictions (and 80% intervals) of the held-out-19 rows WITHOUT printing or computing
their errors. Held-out-19 is a sealed split (timing_validation.SEALED): only this script (and the final evaluation)
reads it, through load_table(sealed=True).
Run: PYTHONPATH=. python reports/gpu-time/frozen/freeze19.py LABEL "note"."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))
from heldout_eval import freeze                      # noqa: E402
from multihead.fits import timing_validation as tv   # noqa: E402

freeze(19, lambda r: r.get("split") == "heldout-19", sys.argv[1], sys.argv[2], sealed=True)
