"""multihead's web page: the planner to play with and the lesson's playground, served locally.

    multihead web                      # http://127.0.0.1:8000
    from multihead.web.app import create_app

Layout: app.py (routes, the guards: Host names, body limit, strict JSON, the computing pool; one
error shape), assets.py (where static/ and plotly.js are), plan_api.py (the page's JSON ->
PlanRequest -> the planner library: `plan --json`'s object, never the CLI), lesson.py and quiz.py (the playground's numbers), heads_view.py
(SmolLM2's heads), report.py (`plan --html`), static/ (HTML, CSS, JS: rendering and i18n only, no
formula).
"""
