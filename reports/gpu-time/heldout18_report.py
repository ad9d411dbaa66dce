"""The held-out-18 result (documents never fitted, never looked at while modelling), for the frozen model
versions, with the 80% intervals each version had when frozen: writes reports/gpu-time/heldout18.{md,json}.
Run once, after the last freeze: PYTHONPATH=. python reports/gpu-time/heldout18_report.py

Set 18 is two pages of the EvalScope documentation (modelscope/evalscope), 12 rows in three sources (see
reports/gpu-time/add_session15_set18_rows.py and its doubts): (a) the 'gpt-oss' best-practice page (bf351ed):
gpt-oss-20b (mxfp4) on one H20 with vLLM 0.10.1+gptoss, evalscope perf closed loop at concurrency 1 / 10 / 50 / 100
with 1024 input and 1024 output tokens: output throughput (4 MoE rows); (b) two editions of the 'vLLM Bench vs
Evalscope Perf' page (9057a00 and 591a5da, two runs): Qwen2.5-0.5B-Instruct on one A100 80G, vLLM 0.11.0 and 0.17.0,
concurrency 50, 100 / 100 tokens: `vllm bench serve` output throughput, mean TTFT and mean TPOT, and an EvalScope
output throughput (8 dense rows). It says nothing of MoE TTFT / TPOT, MLA, larger dense models, SGLang or
TensorRT-LLM: far below the brief's aim of 30 rows."""
from heldout_eval import report_set

VERSIONS = [("before", "the model main holds at b8d9a6e (the shipped model kept by session 15's judgement of sets "
                       "12-17), frozen by the helper that entered set 18, before any later change"),
            ("after", "TO BE WRITTEN when the next change is frozen")]

# one group for the repository: the three sources are two pages of one documentation
report_set(18, VERSIONS, project=lambda src: {"repo evalscope"})
