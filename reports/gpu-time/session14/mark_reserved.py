"""Session 14, after the review: set 13's SGLang pull request #9359 (gpt-oss-120b on B200 with SGLang) is marked a
possible edition of a reserved document, as session 8 marked the SGLang cookbook's B200 pages of the same models: issue
28 reserves an SGLang 8x B200 gist of Qwen3-235B / gpt-oss-120b, and whether that gist reprints or shares this run
cannot be told without reading it. The row is then neither fitted on nor reported (timing_validation.reserved), and
its frozen 'before' prediction is moved out of the predictions into ``left_out`` (with the reason), so the set's
report and tests compare like with like. No error was computed. Re-runnable.
Run: python reports/gpu-time/session14/mark_reserved.py"""
import json
from pathlib import Path

GT = Path(__file__).parents[1]
SRC = "sgl9359-gptoss120b-b200-dpattn"
WHY = ("SGLang pull request #9359 runs gpt-oss-120b on B200 with SGLang: the same model on the same GPUs as the SGLang "
       "8x B200 gist of Qwen3-235B / gpt-oss-120b that issue 28 reserves, which cannot be compared with it without "
       "reading the gist; since session 14 (after its review) this row is neither fitted on nor reported, as a "
       "precaution (as session 8 did for the SGLang cookbook's B200 pages of those models)")

table_path = GT / "measurements.json"
table = json.loads(table_path.read_text())
table["sources"][SRC]["reserved_edition"] = WHY
table_path.write_text(json.dumps(table, indent=1) + "\n")

ids = {r["id"] for r in table["rows"] if r["source"] == SRC}
frozen_path = GT / "frozen" / "heldout-13_before.json"
frozen = json.loads(frozen_path.read_text())
moved = [p for p in frozen["predictions"] if p["id"] in ids]
frozen["predictions"] = [p for p in frozen["predictions"] if p["id"] not in ids]
left = {p["id"]: p for p in frozen.get("left_out", [])}
left.update({p["id"]: {**p, "why": WHY} for p in moved})
frozen["left_out"] = list(left.values())
frozen_path.write_text(json.dumps(frozen, indent=1))
print(len(ids), "row(s) marked;", len(frozen["predictions"]), "predictions kept,", len(frozen["left_out"]), "left out")
