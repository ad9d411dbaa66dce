"""``multihead plan ... --html FILE``: the planner page's view of one plan as one self-contained file.

Same drawing code as the page (static/plan_view.js), with plotly.js, the style sheet and the plan's
JSON inlined, so the file opens offline on a colleague's machine. Numbers: the CLI's own
``plan --json`` and the memory curve of plan_api, nothing else.
"""
from __future__ import annotations

import html
import json
from pathlib import Path

from multihead.web import plan_api
from multihead.web.assets import STATIC, plotly_js

# argparse destinations that are outputs, not plan options.
_NOT_OPTIONS = {"func", "command", "json", "plot", "html", "list", "explain"}

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


def options_from_args(args) -> dict:
    """The plan options of a parsed `multihead plan` command line (argparse destinations)."""
    return {k: v for k, v in vars(args).items() if k not in _NOT_OPTIONS}


def report_html(options: dict, config_text: str | None = None) -> str:
    """The self-contained HTML of one plan: `plan --json` for these options, and its memory curve."""
    plan = plan_api.plan_json(options, config_text)
    curve = plan_api.memory_curve(options, config_text)
    title = f"{plan['model']} on {plan['device']} x{plan['gpus']}, T = {plan['tokens']:,}"
    command = "multihead plan " + " ".join(plan_api.options_to_argv(options)) + " --json"
    read = lambda name: (STATIC / name).read_text(encoding="utf-8")   # noqa: E731
    return TEMPLATE.format(title=html.escape(title), css=read("style.css"), command=html.escape(command),
                           cards=_result_cards(read("planner.html")),
                           plotly=_script(plotly_js().read_text(encoding="utf-8")),
                           common=_script(read("common.js")), view=_script(read("plan_view.js")),
                           data=_script(json.dumps({"plan": plan, "curve": curve})))


def write_report(path: str | Path, args) -> Path:
    """Write the report of a parsed `multihead plan` command line to path."""
    path = Path(path)
    path.write_text(report_html(options_from_args(args)), encoding="utf-8")
    return path
