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
    """planner.png, lesson.png (English, answered quiz) and lesson-zh.png in out; returns report
    lines with the page-load timings measured: the first load in a fresh browser (nothing cached,
    plotly.js compiled from scratch) and the best and median of the reloads after it."""
    from playwright.sync_api import sync_playwright

    with Background() as url, sync_playwright() as pw:
        browser = launch_chromium(pw)
        page = browser.new_page(viewport=VIEWPORT, bypass_csp=True)   # wait_for_function evaluates text
        times = [first_chart_ms(page, url) for _ in range(loads + 1)]
        page.wait_for_selector("body[data-ready]", timeout=30_000)
        page.screenshot(path=str(out / "planner.png"), full_page=True)
        _lesson(page, url, out)
        browser.close()
    again = sorted(times[1:])
    return [f"planner, page load to first chart: first load in a fresh browser {times[0]:.0f} ms; "
            f"reloads best {again[0]:.0f} ms, median {again[len(again) // 2]:.0f} ms of {loads} "
            f"(headless Chromium, server on this machine)"] + \
           [f"wrote {out / name}" for name in ("planner.png", "lesson.png", "lesson-zh.png")]


def _lesson(page, url: str, out: Path) -> None:
    """The lesson with SmolLM2's heads drawn and the quiz answered once right, once wrong."""
    page.goto(url + "/lesson?lang=en")
    page.wait_for_selector("body[data-ready]", timeout=30_000)
    page.click("#heads-run")
    page.wait_for_selector("#heads-weights .main-svg", timeout=180_000)
    for qid, reply in (("q1", "0.867"), ("q2", "11.5")):
        page.fill(f"#a-{qid}", reply)
        page.click(f"#check-{qid}")
        page.wait_for_selector(f"#q-{qid} .verdict")
    page.click("#check-ex1")
    page.wait_for_selector("#q-ex1 .explain")
    page.screenshot(path=str(out / "lesson.png"), full_page=True)
    page.click("#lang")
    page.wait_for_function("document.documentElement.lang === 'zh-CN'")
    page.wait_for_timeout(300)
    page.screenshot(path=str(out / "lesson-zh.png"))
