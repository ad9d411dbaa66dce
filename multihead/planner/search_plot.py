"""The search's picture: output tokens/s per GPU against TPOT, the Pareto front and the ranked results."""
from __future__ import annotations

from pathlib import Path


def pareto_figure(result: dict):
    """A Figure from the ``search`` object: its Pareto front (line), its ranked results (points, the
    best starred) and the TPOT target (dashed), so the trade-off the ranking made is visible."""
    from multihead.figures import plt
    fig, ax = plt.subplots(figsize=(8, 5))
    front = result["pareto"]
    if front:
        ax.plot([p["tpot_s"] * 1e3 for p in front], [p["output_tokens_per_s_per_gpu"] for p in front],
                marker="o", color="tab:blue", label="Pareto front (no configuration beats these on both)")
    ranked = [r for r in result["results"] if not r["at"]["overloaded"]]
    if ranked:
        ax.scatter([r["at"]["tpot_s"] * 1e3 for r in ranked], [r["at"]["output_tokens_per_s_per_gpu"] for r in ranked],
                   color=["tab:green" if r["meets_slo"] else "tab:gray" for r in ranked], zorder=3,
                   label="ranked results (green: meets the SLO)")
        best = ranked[0]
        if best["meets_slo"]:
            ax.scatter([best["at"]["tpot_s"] * 1e3], [best["at"]["output_tokens_per_s_per_gpu"]], marker="*", s=300,
                       color="tab:orange", zorder=4,
                       label=f"best: {best['gpus']}x {best['gpu']} TP{best['tensor_parallel_size']}")
    target = result["slo"].get("tpot_s")
    if target:
        ax.axvline(target * 1e3, linestyle="--", color="tab:red", label=f"TPOT target {target * 1e3:g} ms")
    ax.set_xlabel("TPOT (ms per output token)")
    ax.set_ylabel("output tokens/s per GPU")
    ax.set_ylim(bottom=0)
    ax.set_xlim(left=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f"{result['candidates']:,} configurations at {result['load']}; "
                 f"{result['input_len']:,} + {result['output_len']:,} tokens", fontsize=10)
    return fig


def plot_pareto(result: dict, path: str | Path) -> str:
    from multihead.figures import save
    return save(pareto_figure(result), path)
