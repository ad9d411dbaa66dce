"""Where the pages' files live: static/ and plotly.min.js from the plotly wheel.

Kept apart from app.py so `plan --html` (report.py) reads them without importing the server,
FastAPI and torch (measured: `plan --html` 2.1 s -> 0.6 s of CPU).
"""
from __future__ import annotations

from importlib import resources
from pathlib import Path

STATIC = Path(__file__).parent / "static"


def plotly_js() -> Path:
    """plotly.min.js as shipped in the plotly wheel (package data): the page loads nothing from a CDN."""
    return Path(str(resources.files("plotly").joinpath("package_data", "plotly.min.js")))
