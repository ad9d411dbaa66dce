"""Which attention heads matter, and what sharing K/V heads costs, measured on real weights.

    importance.py  per-head importance: ablation and Michel et al.'s gradient of a head mask
    prune.py       perplexity as query heads are removed, importance order vs random
    merge_kv.py    MHA -> GQA -> MQA by tying K/V heads (mean-pooling, similarity grouping)
    fit.py         least-squares fit of merged K/V projections on calibration activations
    uptrain.py     a few steps of next-token loss after merging
    embed.py       sentence-embedding agreement (for the MiniLM encoder)
    report.py      runs everything and writes reports/heads/

Building blocks: sites.py (find the projections), mask.py (head mask hook), lm.py (loss),
replay.py (re-run a decoder from layer l on cached inputs).
"""
