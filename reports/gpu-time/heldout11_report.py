"""The held-out-11 result (documents never fitted, never looked at while modelling), for the frozen model
versions, with the 80% intervals each version had when frozen: writes reports/gpu-time/heldout11.{md,json}.
Run once, after the last freeze: PYTHONPATH=. python reports/gpu-time/heldout11_report.py

Set 11 is two documents (the Qwen2.5 and Qwen3 editions of the Qwen docs' Speed Benchmark page, 22 rows, 18 dense;
see reports/gpu-time/add_session13_set11_rows.py and its doubts): every row is a batch-1 decode rate (decode_tokens_per_s),
so it says nothing of TTFT, throughput or batching, and its groups are few and small."""
from heldout_eval import report_set

VERSIONS = [("before", "the model as main left it at 2c183cd (session 13's part-2 model, set 10 judged and unsealed), "
                       "frozen by the helper that entered set 11, before any later change"),
            ("after", "the same predictions with session 13's part-3 intervals: log-widths times the held-out scale "
                      "1.76 (session13/RULE.md, part 3; session13/held_out_scale.py), never chosen on set 11")]


def _project(src: str) -> set:
    """Both documents are editions of one page (the Qwen docs' Speed Benchmark): also reported as that project's
    group."""
    return {"project Qwen speed benchmark"} if src.startswith(("qwen25-speed", "qwen3-speed")) else set()


report_set(11, VERSIONS, _project)
