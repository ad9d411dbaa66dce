"""The measurements behind ``multihead heads``: load a real model, pick windows, run, return JSON.

Data split (calibration never overlaps evaluation): ``eval_windows(tokenizer, N + M, T, seed)``
returns N + M distinct, non-overlapping windows; the first N evaluate, the last M calibrate
(importance, fitting, uptraining). MiniLM uses ``sentences(n_eval + n_calib, seed)`` the same way.

Every ``run_*`` returns a plain dict (what ``--json`` prints and the report reads); progress
bars go to stderr.
"""
from __future__ import annotations

import copy
import math
import time
from dataclasses import asdict, dataclass

import torch
from tqdm import tqdm

from multihead.cost.counts.formulas import kv_cache_bytes
from multihead.cost.spec.units import dtype_bytes
from multihead.heads.embed import embedding_agreement, encode_batches, sentence_embeddings
from multihead.heads.fit import capture_layers, fit_merged_kv
from multihead.heads.importance import (agreement, gradient_importance, ablation_importance, heads_shape,
                                        rank_correlation, ranked_heads)
from multihead.heads.lm import mean_nll
from multihead.heads.merge_kv import kv_gram, merge_kv_heads, similar_groups, grouping_cost, contiguous_groups
from multihead.heads.prune import importance_orders, prune_curve
from multihead.heads.sites import attention_sites
from multihead.heads.uptrain import uptrain

MODEL_NAME = "SmolLM2-135M"
ENCODER_NAME = "all-MiniLM-L6-v2"


@dataclass
class TextConfig:
    """Which SmolLM2 windows: N evaluation + M calibration windows of T tokens (seeded, disjoint)."""
    windows: int = 8              # N evaluation windows
    window_tokens: int = 128      # T
    calib_windows: int = 4        # M calibration windows
    importance_windows: int = 2   # the first of the calibration windows used for head importance
    seed: int = 0
    batch_rows: int = 8           # rows per forward pass

    def check_importance(self) -> None:
        """Importance runs on the first calibration windows, so there must be enough of them."""
        if self.importance_windows > self.calib_windows:
            raise ValueError(f"importance_windows: expected <= calib_windows ({self.calib_windows}), "
                             f"got {self.importance_windows}")

    def validate(self) -> None:
        for name in ("windows", "window_tokens", "calib_windows", "importance_windows", "batch_rows"):
            if getattr(self, name) < (2 if name == "window_tokens" else 1):
                raise ValueError(f"{name}: expected a positive count, got {getattr(self, name)}")


def _bar(total: int, desc: str, show: bool) -> tqdm:
    return tqdm(total=total, desc=desc, unit="row", leave=False, disable=not show)


def load_lm(text: TextConfig):
    """(SmolLM2 model, evaluation windows [N, T], calibration windows [M, T], tokenizer)."""
    from multihead.hf.loading import load_smollm2
    from multihead.hf.text import eval_windows
    text.validate()
    model, tokenizer = load_smollm2(attn_implementation="sdpa", dtype=torch.float32)
    ids = eval_windows(tokenizer, text.windows + text.calib_windows, text.window_tokens, seed=text.seed)
    return model, ids[:text.windows], ids[text.windows:], tokenizer


def windows_info(text: TextConfig) -> dict:
    return {"eval_windows": text.windows, "calib_windows": text.calib_windows,
            "window_tokens": text.window_tokens, "seed": text.seed,
            "eval_predictions": text.windows * (text.window_tokens - 1)}


# ----------------------------------------------------------------------------- importance

def run_importance(text: TextConfig, progress: bool = True, model_and_data=None) -> dict:
    """Ablation and gradient importance of every SmolLM2 query head on the importance windows."""
    text.check_importance()
    model, _, calib, _ = model_and_data or load_lm(text)
    windows = calib[:text.importance_windows]
    n_layers, n_heads = heads_shape(model)
    t0 = time.perf_counter()
    with _bar(windows.shape[0], "gradient importance", progress) as bar:
        grad = gradient_importance(model, windows, bar.update)
    t1 = time.perf_counter()
    with _bar(n_layers * n_heads * windows.shape[0], "ablation importance", progress) as bar:
        abl, base = ablation_importance(model, windows, text.batch_rows, bar.update)
    t2 = time.perf_counter()
    order = ranked_heads(abl)
    return {
        "model": MODEL_NAME, "layers": n_layers, "heads": n_heads,
        "windows": {**windows_info(text), "importance_windows": windows.shape[0],
                    "importance_predictions": windows.shape[0] * (windows.shape[1] - 1)},
        "baseline_nll": base, "baseline_perplexity": math.exp(base),
        "ablation": abl.tolist(), "gradient": grad.tolist(),
        "spearman_ablation_vs_gradient": rank_correlation(abl.flatten(), grad.flatten()),
        "agreement": agreement(abl, grad),
        "most_important": [{"layer": l, "head": h, "ablation": float(abl[l, h]), "gradient": float(grad[l, h])}
                           for l, h in reversed(order[-5:])],
        "least_important": [{"layer": l, "head": h, "ablation": float(abl[l, h]), "gradient": float(grad[l, h])}
                            for l, h in order[:5]],
        "heads_below": {str(t): int((abl < t).sum()) for t in (0.0, 0.001, 0.005, 0.01)},
        "seconds": {"gradient": t1 - t0, "ablation": t2 - t1},
    }


# ----------------------------------------------------------------------------- pruning

DEFAULT_FRACTIONS = [0.0, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5]


def run_prune(text: TextConfig, importance: dict | None = None, fractions: list[float] | None = None,
              random_seeds: tuple[int, ...] = (0,), progress: bool = True, model_and_data=None) -> dict:
    """Perplexity on the evaluation windows as heads are removed in importance vs random order.

    ``importance``: a ``run_importance`` result (both orders are used); without one, the gradient
    importance is measured on the importance windows (cheap) and only its order is used.
    """
    if importance is None:
        text.check_importance()
    model, evals, calib, _ = model_and_data or load_lm(text)
    fractions = sorted(set(fractions or DEFAULT_FRACTIONS) | {0.0})
    n_layers, n_heads = heads_shape(model)
    if importance is None:
        with _bar(text.importance_windows, "gradient importance", progress) as bar:
            maps = {"gradient": gradient_importance(model, calib[:text.importance_windows], bar.update)}
    else:
        maps = {k: torch.tensor(importance[k]) for k in ("ablation", "gradient")}
    orders = importance_orders(maps, n_layers, n_heads, list(random_seeds))
    group = attention_sites(model)[0].group_size
    nonzero = [f for f in fractions if f > 0]
    t0 = time.perf_counter()
    with _bar((1 + len(orders) * len(nonzero)) * evals.shape[0], "pruning", progress) as bar:
        base = math.exp(mean_nll(model, evals, text.batch_rows))
        bar.update(evals.shape[0])
        curve = prune_curve(model, evals, orders, nonzero, group, text.batch_rows, bar.update)
    total = n_layers * n_heads
    rows = []
    for name in orders:
        rows.append({"order": name,
                     "perplexity": [base] + curve.perplexity[name],
                     "kv_heads_freed": [0] + curve.kv_freed[name]})
    return {"model": MODEL_NAME, "windows": windows_info(text), "total_heads": total,
            "kv_heads_total": n_layers * (n_heads // group),
            "importance_from": "calibration windows" if importance is None else "importance result",
            "fractions": [0.0] + nonzero, "heads_removed": [0] + curve.counts,
            "baseline_perplexity": base, "curves": rows, "seconds": time.perf_counter() - t0}


# ----------------------------------------------------------------------------- KV merging

def kv_bytes_per_token(model, n_kv_heads: int, dtype: str = "bf16") -> float:
    sites = attention_sites(model)
    return kv_cache_bytes(len(sites), n_kv_heads, sites[0].head_dim, tokens=1,
                          bytes_per_element=dtype_bytes(dtype))


@dataclass
class MergeConfig:
    fit_iters: int = 12           # L-BFGS iterations per layer
    uptrain_steps: int = 30       # 0 = skip uptraining
    uptrain_lr: float = 3e-4
    uptrain_rows: int = 1         # windows per uptraining step
    uptrain_windows: int = 100    # fresh windows to uptrain on (0: reuse the calibration windows)
    uptrain_params: str = "kv"    # "kv" (merged K/V only) or "all"


def run_merge_lm(text: TextConfig, merge: MergeConfig, kv_heads: list[int] | None = None,
                 progress: bool = True, model_and_data=None) -> dict:
    """SmolLM2 3 -> 1 KV heads: mean-pooling vs least-squares fit, each optionally uptrained."""
    model, evals, calib, tokenizer = model_and_data or load_lm(text)
    sites = attention_sites(model)
    train = calib
    if merge.uptrain_steps > 0 and merge.uptrain_windows > 0:
        # Fresh windows: the seeded draw's next U windows after the N evaluation + M calibration ones
        # (same permutation, so disjoint from both). Uptraining on the few calibration windows overfits.
        from multihead.hf.text import eval_windows
        n_before = text.windows + text.calib_windows
        train = eval_windows(tokenizer, n_before + merge.uptrain_windows, text.window_tokens, seed=text.seed)[n_before:]
    n_kv = sites[0].n_kv_heads
    kv_heads = kv_heads or [g for g in range(1, n_kv) if n_kv % g == 0]
    t0 = time.perf_counter()
    base = mean_nll(model, evals, text.batch_rows)
    calib_batches = [{"input_ids": calib[i:i + text.batch_rows]} for i in range(0, calib.shape[0], text.batch_rows)]
    captures = capture_layers(model, calib_batches)
    calib_base = mean_nll(model, calib, text.batch_rows)
    rows, fits, curves = [], {}, {}
    full_bytes = kv_bytes_per_token(model, n_kv)
    for g in kv_heads:
        for method in ("mean", "fit"):
            merged = copy.deepcopy(model)
            merge_kv_heads(merged, g)
            if method == "fit":
                with tqdm(total=len(sites), desc=f"fit {n_kv}->{g}", unit="layer", leave=False,
                          disable=not progress) as bar:
                    fits[str(g)] = [asdict(r) for r in fit_merged_kv(merged, captures, merge.fit_iters, bar.update)]
            nll = mean_nll(merged, evals, text.batch_rows)
            row = {"kv_heads": g, "method": method, "uptrain_steps": 0, "perplexity": math.exp(nll),
                   "nll": nll, "baseline_perplexity": math.exp(base),
                   "kv_bytes_per_token_bf16": kv_bytes_per_token(model, g),
                   "kv_bytes_saved_fraction": 1 - kv_bytes_per_token(model, g) / full_bytes}
            rows.append(row)
            if merge.uptrain_steps > 0:
                with tqdm(total=merge.uptrain_steps, desc=f"uptrain {method} {n_kv}->{g}", unit="step",
                          leave=False, disable=not progress) as bar:
                    res = uptrain(merged, train, merge.uptrain_steps, merge.uptrain_lr, merge.uptrain_rows,
                                  merge.uptrain_params, seed=text.seed, progress=bar.update)
                curves[f"{method} {n_kv}->{g}"] = res.losses
                nll_up = mean_nll(merged, evals, text.batch_rows)
                rows.append({**row, "uptrain_steps": merge.uptrain_steps, "perplexity": math.exp(nll_up),
                             "nll": nll_up})
            del merged
    return {"model": MODEL_NAME, "windows": windows_info(text), "kv_heads_original": n_kv,
            "baseline_perplexity": math.exp(base), "baseline_nll": base,
            "calibration_baseline_nll": calib_base,
            "kv_bytes_per_token_bf16_original": full_bytes, "config": asdict(merge),
            "results": rows, "fit_layers": fits, "uptrain_losses": curves,
            "seconds": time.perf_counter() - t0}


@dataclass
class EncoderConfig:
    sentences: int = 256          # held-out evaluation sentences
    calib_sentences: int = 128    # calibration sentences (grouping statistics and fitting)
    seed: int = 0
    k: int = 5                    # neighbours for top-k retrieval agreement
    fit_iters: int = 15
    batch_size: int = 32


def run_merge_encoder(cfg: EncoderConfig, kv_heads: list[int] | None = None, progress: bool = True) -> dict:
    """all-MiniLM-L6-v2 12 -> 6, 4, 3, 2, 1 KV heads: mean (contiguous), grouped (mean over similar
    heads), fit (similar heads + least-squares fit); agreement of sentence embeddings with the original."""
    from multihead.hf.loading import load_minilm
    from multihead.hf.text import sentences
    model, tokenizer = load_minilm(dtype=torch.float32)
    sents = sentences(cfg.sentences + cfg.calib_sentences, seed=cfg.seed)
    evals = encode_batches(tokenizer, sents[:cfg.sentences], cfg.batch_size)
    calib = encode_batches(tokenizer, sents[cfg.sentences:], cfg.batch_size)
    sites = attention_sites(model)
    n_kv = sites[0].n_kv_heads
    kv_heads = kv_heads or [g for g in range(n_kv - 1, 0, -1) if n_kv % g == 0]
    t0 = time.perf_counter()
    reference = sentence_embeddings(model, evals)
    grams = kv_gram(model, calib)
    captures = capture_layers(model, calib)
    full_bytes = kv_bytes_per_token(model, n_kv)
    rows = []
    methods = ("mean", "grouped", "fit")
    with tqdm(total=len(kv_heads) * len(methods), desc="merge MiniLM", unit="model", leave=False,
              disable=not progress) as bar:
        for g in kv_heads:
            similar = [similar_groups(gr, g) for gr in grams]
            cost_contig = sum(grouping_cost(gr, contiguous_groups(n_kv, g)) for gr in grams)
            cost_similar = sum(grouping_cost(gr, s) for gr, s in zip(grams, similar))
            for method in methods:
                merged = copy.deepcopy(model)
                merge_kv_heads(merged, g, None if method == "mean" else similar)
                fit_gain = None
                if method == "fit":
                    res = fit_merged_kv(merged, captures, cfg.fit_iters)
                    fit_gain = [{"layer": r.layer, "before": r.error_before, "after": r.error_after} for r in res]
                agree = embedding_agreement(reference, sentence_embeddings(merged, evals), cfg.k)
                rows.append({"kv_heads": g, "method": method, **asdict(agree),
                             "kv_bytes_per_token_bf16": kv_bytes_per_token(model, g),
                             "kv_bytes_saved_fraction": 1 - kv_bytes_per_token(model, g) / full_bytes,
                             "grouping_cost": cost_contig if method == "mean" else cost_similar,
                             "groups": None if method == "mean" else [s.tolist() for s in similar],
                             "fit_error": fit_gain})
                bar.update(1)
    return {"model": ENCODER_NAME, "kv_heads_original": n_kv, "sentences": cfg.sentences,
            "calib_sentences": cfg.calib_sentences, "seed": cfg.seed, "k": cfg.k,
            "kv_bytes_per_token_bf16_original": full_bytes, "results": rows,
            "seconds": time.perf_counter() - t0}
