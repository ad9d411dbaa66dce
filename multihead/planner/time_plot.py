"""The serving-time figure: aggregate output tokens/s and TPOT against concurrency (``plan --plot``)."""
from __future__ import annotations

from pathlib import Path


def time_figure(serving: dict):
    """A two-panel Figure from the ``serving`` object's ``curve`` (concurrency 1 .. max)."""
    from multihead.figures import plt
    curve = serving["curve"]
    c = [p["concurrency"] for p in curve]
    fig, (thr, tpot) = plt.subplots(1, 2, figsize=(10, 4))
    thr.plot(c, [p["output_tokens_per_s"] for p in curve], marker="o")
    thr.set_xlabel("concurrent requests")
    thr.set_ylabel("output tokens/s, all requests")
    tpot.plot(c, [p["tpot_s"] * 1e3 for p in curve], marker="o", color="tab:red")
    tpot.set_xlabel("concurrent requests")
    tpot.set_ylabel("TPOT (ms per output token)")
    for ax in (thr, tpot):
        ax.grid(alpha=0.3)
        ax.set_ylim(bottom=0)
    fig.suptitle(f"{serving['input_len']:,} prompt + {serving['output_len']:,} output tokens per request; "
                 f"max concurrency {serving['concurrency']} (memory account)", fontsize=10)
    return fig


def plot_time(serving: dict | None, path: str | Path) -> str | None:
    """Write the figure to ``path``; None when there is no serving object or it has no times."""
    if not serving or not serving.get("curve"):
        return None
    from multihead.figures import save
    return save(time_figure(serving), path)


def serving_plot_path(memory_plot: str | Path) -> Path:
    """Where ``plan --plot FILE`` puts the serving-time figure: FILE's name with '-serving' added."""
    path = Path(memory_plot)
    return path.with_name(f"{path.stem}-serving{path.suffix}")


def plot_plan_time(plan_dict: dict, memory_plot: str | Path) -> str | None:
    """``plan --plot``'s second figure, from the plan JSON's ``serving`` object (None without times)."""
    return plot_time(plan_dict.get("serving"), serving_plot_path(memory_plot))
