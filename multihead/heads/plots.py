"""PNG figures for the head experiments (matplotlib, Agg backend: no display needed).

matplotlib is imported by the first plot, not with this module (~0.4 s a process that only
imports it, such as a test run collecting its tests)."""
from __future__ import annotations

from pathlib import Path

import numpy as np


def _save(fig, path: str | Path) -> str:
    Path(path).parent.mkdir(parents=True, exist_ok=True)     # the report's figures folder
    from multihead.figures import save
    return save(fig, path, dpi=110)


def importance_heatmap(result: dict, path: str | Path) -> str:
    """Layers x heads heatmaps of ablation and gradient importance, side by side."""
    from multihead.figures import plt
    fig, axes = plt.subplots(1, 2, figsize=(9, 7), sharey=True)
    panels = [("ablation", "ablation: loss increase (nats/token)"), ("gradient", "gradient: E|dL/dξ|  (Michel et al.)")]
    for ax, (key, title) in zip(axes, panels):
        data = np.array(result[key])                                     # (L, H)
        im = ax.imshow(data, aspect="auto", cmap="viridis", origin="upper")
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("query head")
        ax.set_xticks(range(data.shape[1]))
        fig.colorbar(im, ax=ax, shrink=0.8)
    axes[0].set_ylabel("layer")
    w = result["windows"]
    fig.suptitle(f"{result['model']} head importance ({w['importance_windows']} windows x "
                 f"{w['window_tokens']} tokens; Spearman {result['spearman_ablation_vs_gradient']:.2f})", fontsize=10)
    return _save(fig, path)


def prune_plot(result: dict, path: str | Path) -> str:
    return _save(prune_figure(result), path)


def prune_figure(result: dict):
    """Perplexity vs fraction of query heads removed, one line per order."""
    from multihead.figures import plt
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for curve in result["curves"]:
        style = "--" if curve["order"].startswith("random") else "-"
        ax.plot(np.array(result["fractions"]) * 100, curve["perplexity"], style, marker="o", label=curve["order"])
    ax.set_yscale("log")
    ax.set_xlabel("query heads removed (%)")
    ax.set_ylabel("perplexity (log scale)")
    ax.set_title(f"{result['model']}: pruning query heads (least important first vs random)", fontsize=10)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    return fig


def merge_lm_plot(result: dict, path: str | Path) -> str:
    """Perplexity of each merge method (with/without uptraining) against the KV bytes it keeps."""
    from multihead.figures import plt
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    ax = axes[0]
    labels, values = ["original"], [result["baseline_perplexity"]]
    for r in result["results"]:
        labels.append(f"{r['method']} {result['kv_heads_original']}->{r['kv_heads']}"
                      + (f"\n+{r['uptrain_steps']} steps" if r["uptrain_steps"] else ""))
        values.append(r["perplexity"])
    ax.bar(range(len(values)), values, color=["grey"] + ["C0" if "mean" in l else "C1" for l in labels[1:]])
    ax.set_xticks(range(len(values)))
    ax.set_xticklabels(labels, fontsize=7)
    ax.set_yscale("log")
    ax.set_ylabel("perplexity (log scale)")
    ax.set_title(f"{result['model']}: KV heads merged", fontsize=10)
    for i, v in enumerate(values):
        ax.text(i, v, f"{v:.1f}", ha="center", va="bottom", fontsize=7)
    ax = axes[1]
    for name, losses in result["uptrain_losses"].items():
        ax.plot(range(1, len(losses) + 1), losses, label=name)
    ax.axhline(result["calibration_baseline_nll"], color="grey", ls=":", label="original model (calibration windows)")
    ax.set_xlabel("uptraining step")
    ax.set_ylabel("next-token NLL of the step's batch")
    ax.set_title("uptraining (fresh training windows, one per step)", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return _save(fig, path)


def merge_encoder_plot(result: dict, path: str | Path) -> str:
    """MiniLM: embedding cosine and top-1 retrieval agreement vs KV bytes saved, per method."""
    from multihead.figures import plt
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    methods = sorted({r["method"] for r in result["results"]}, key=["mean", "grouped", "fit"].index)
    for key, ax, label in (("cosine_mean", axes[0], "mean cosine to original embedding"),
                           ("top1", axes[1], "top-1 neighbour unchanged")):
        for m in methods:
            rs = [r for r in result["results"] if r["method"] == m]
            ax.plot([100 * r["kv_bytes_saved_fraction"] for r in rs], [r[key] for r in rs], marker="o", label=m)
            for r in rs:
                ax.annotate(str(r["kv_heads"]), (100 * r["kv_bytes_saved_fraction"], r[key]), fontsize=7,
                            textcoords="offset points", xytext=(3, 3))
        ax.set_xlabel("KV bytes saved (%)  [labels: KV heads]")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f"{result['model']}: MHA ({result['kv_heads_original']} KV heads) -> GQA/MQA, "
                 f"{result['sentences']} held-out sentences", fontsize=10)
    return _save(fig, path)
