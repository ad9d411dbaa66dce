"""The held-out-19 result (documents never fitted, never looked at while modelling), for the frozen model
versions, with the 80% intervals each version had when frozen: writes reports/gpu-time/heldout19.{md,json}.
Run once, after the last freeze: PYTHONPATH=. python reports/gpu-time/heldout19_report.py

Set 19 is two documents, 44 rows in three sources (see reports/gpu-time/add_session15_set19_rows.py and its doubts):
(a) a third party's re-run of two InferenceX single-node recipes on a rented Nebius H200 cluster (repository
heyram74/nebius_sopertors_inferencex_benchmark, 4c8d50b), each run's client JSON and server log committed:
gpt-oss-120b (mxfp4) with vLLM 0.22.1 at TP 2 / 4 / 8 and concurrency 4-64 (27 MoE rows; the author flags the TP 8
runs as possibly faulty), and DeepSeek-R1-0528 (FP8) with SGLang v0.5.12 at TP 8 and concurrency 4-64 (15 MLA rows;
the setup of InferenceX's own baseline that the table holds as ix3288, measured on other machines): output
throughput, mean TTFT and mean TPOT, 1024 / 1024 nominal tokens drawn with range ratio 0.8; (b) cloudrift-ai/emmy's
'MPK Qwen3-8B on A100' report (a0091e2): stock vLLM 0.23.0, Qwen3-8B bf16 at concurrency 1, 128 / 512 fixed tokens,
mean TPOT on one A100 80GB and one A100 40GB (2 dense rows). It says nothing of dense TTFT / TPOT above concurrency 1
or of TensorRT-LLM."""
from heldout_eval import report_set

VERSIONS = [("before", "the model main holds at e34c1cc (unchanged in multihead/cost since adb40a2), frozen by the "
                       "helper that entered set 19, before any later change"),
            ("after", "TO BE WRITTEN when the next change is frozen")]

# one group per repository: the two Nebius sweeps are one author's, one cluster's
report_set(19, VERSIONS, project=lambda src: {"repo nebius" if src.startswith("nebius-") else "repo emmy"})
