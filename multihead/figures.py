"""Figures: matplotlib on the Agg backend (no display needed), saved one way everywhere.

Plotting functions build a ``Figure`` from a result (so tests can read the axes, series and
labels back) and ``save`` writes it: the format follows the file's extension (.png, .svg, .pdf).
"""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

__all__ = ["plt", "save"]


def save(fig, path: str | Path, dpi: int = 120) -> str:
    """Lay out, write ``fig`` to ``path`` and free it; returns the path written."""
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return str(path)
