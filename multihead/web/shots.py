"""Screenshots of both pages and the page-load timing, with headless Chromium (`multihead web --screenshot DIR`)."""
from __future__ import annotations

from pathlib import Path

from multihead.web.serve import Background, launch_chromium

VIEWPORT = {"width": 1360, "height": 900}


def first_chart_ms(page, url: str) -> float:
    """Load the planner and return the page's own clock when its first chart finished drawing (ms
    from navigation start: HTML, plotly.js, the catalog and one `plan --json` included)."""
    page.goto(url + "/")
    page.wait_for_function("window.__firstChartMs !== undefined", timeout=30_000)
    return page.evaluate("window.__firstChartMs")


def take_screenshots(out: Path, loads: int = 5) -> list[str]:
    """planner.png and lesson.png in out; returns report lines (the timings measured)."""
    from playwright.sync_api import sync_playwright

    lines = []
    with Background() as url, sync_playwright() as pw:
        browser = launch_chromium(pw)
        page = browser.new_page(viewport=VIEWPORT)
        times = [first_chart_ms(page, url) for _ in range(loads)]
        lines.append(f"planner: page load to first chart {min(times):.0f} ms best, {sorted(times)[len(times) // 2]:.0f} ms "
                     f"median of {loads} loads (Chromium headless, server on this machine)")
        page.wait_for_selector("body[data-ready]", timeout=30_000)
        page.screenshot(path=str(out / "planner.png"), full_page=True)
        page.goto(url + "/lesson")
        page.wait_for_selector("body[data-ready]", timeout=30_000)
        page.click("#heads-run")
        page.wait_for_selector("#heads-weights .main-svg", timeout=120_000)
        page.screenshot(path=str(out / "lesson.png"), full_page=True)
        browser.close()
    lines += [f"wrote {out / 'planner.png'}", f"wrote {out / 'lesson.png'}"]
    return lines
