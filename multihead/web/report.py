"""``multihead plan ... --html FILE``: the planner page's view of one plan as one self-contained file.

Same drawing code as the page (static/plan_view.js), with plotly.js, the style sheet and the plan's
JSON inlined, so the file opens offline on a colleague's machine. Numbers: the planner's
``report`` (the object ``plan --json`` prints) and ``curve`` of the same PlanRequest, nothing else;
the CLI hands its request and plan here (no second parse, no call back into the CLI).
"""
from __future__ import annotations

import html
import json
from pathlib import Path

from multihead.web.assets import STATIC, plotly_js

TEMPLATE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>{css}</style>
<script>{plotly}</script>
<script>{common}</script>
<script>{view}</script>
</head><body>
<header><span class="brand">multihead plan</span><span class="muted">{title}</span>
<button id="lang" type="button" data-i18n="lang">中文</button></header>
<main class="lesson" id="results">
{cards}
<div class="card"><h2>CLI</h2><pre class="muted" id="cli">{command}</pre></div>
</main>
<script>
const DATA = {data};
wireLanguageButton();
applyLanguage();
LANG_LISTENERS.push(() => renderPlanView(DATA.plan, DATA.curve));
renderPlanView(DATA.plan, DATA.curve).then(() => {{ document.body.dataset.ready = "1"; }});
</script>
</body></html>
"""


def _result_cards(page: str) -> str:
    """The result cards of the planner page (static/planner.html), so the report and the page
    share one markup for the view that plan_view.js fills."""
    start = page.index('<section id="results">') + len('<section id="results">')
    return page[start:page.index("</section>", start)].strip()


def _script(text: str) -> str:
    """Text safe inside <script>: no "</" that could close the element early."""
    return text.replace("</", "<\\/")


def report_html(req, plan=None) -> str:
    """The self-contained HTML of one plan: the plan's JSON for this PlanRequest and its memory curve.
    ``plan``: the Plan of req when the caller has it (the CLI does), else it is planned here."""
    from multihead import planner
    p = plan or planner.plan_request(req)
    data = p.to_dict()
    curve = planner.curve(req, p)
    title = f"{data['model']} on {data['device']} x{data['gpus']}, T = {data['tokens']:,}"
    command = "multihead plan " + " ".join(req.cli_args()) + " --json"
    read = lambda name: (STATIC / name).read_text(encoding="utf-8")   # noqa: E731
    return TEMPLATE.format(title=html.escape(title), css=read("style.css"), command=html.escape(command),
                           cards=_result_cards(read("planner.html")),
                           plotly=_script(plotly_js().read_text(encoding="utf-8")),
                           common=_script(read("common.js")), view=_script(read("plan_view.js")),
                           data=_script(json.dumps({"plan": data, "curve": curve})))


def write_report(path: str | Path, req, plan=None) -> Path:
    """Write the report of a PlanRequest (and its Plan, if already made) to path."""
    path = Path(path)
    path.write_text(report_html(req, plan), encoding="utf-8")
    return path
