"""Write the fit file and reports/gpu-time/validation.{md,json} from a constants JSON, printing nothing of held-out rows."""
import json, sys
from multihead.cost.time import timing
from multihead.fits import timing_validation as tv
src = json.load(open(sys.argv[1]))["constants"]
c = timing.Constants(**{k: (dict(v) if isinstance(v, dict) else v) for k, v in src.items()})
tv.write_reports(tv.load_table(), c, refit=True, command=sys.argv[2] if len(sys.argv) > 2 else "multihead gpu-time --fit")
print("written")
