"""Freeze the current model's predictions (and 80% intervals) of the held-out-7 rows WITHOUT printing or computing
their errors. Held-out-7 was a sealed split until it was judged once (reports/gpu-time/heldout7.md); it is 'seen-7'
now, and this script reproduces the frozen files from the model commits they name.
Run: PYTHONPATH=. python reports/gpu-time/frozen/freeze7.py LABEL "note"."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))
from heldout_eval import freeze                      # noqa: E402
from multihead.fits import timing_validation as tv   # noqa: E402

freeze(7, lambda r: r.get("split") == "heldout-7", sys.argv[1], sys.argv[2], sealed=True)
