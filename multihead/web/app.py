"""The ASGI app: two pages (planner, lesson), their static files, and a JSON API.

Every endpoint answers JSON. Bad input is a 400 with {"error": the one-line message the CLI or
the library gives, "field": the argument it names}; anything unexpected is a 500 with a one-line
{"error"} and the traceback only in the server's log, never in the response.
"""
from __future__ import annotations

import contextlib
import logging

from fastapi import Body, FastAPI
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool

from multihead.web import lesson, lesson_api, plan_api, quiz
from multihead.web.assets import STATIC, plotly_js

log = logging.getLogger("multihead.web")


def _field(message: str) -> str | None:
    head = message.split(":", 1)[0]
    return head.split("[")[0] if head.replace("_", "").replace("[", "").replace("]", "").isalnum() else None


def _bad(message: str, field: str | None = None) -> JSONResponse:
    return JSONResponse({"error": message, "field": field if field is not None else _field(message)}, 400)


def _plan_request(body: dict) -> tuple[dict, str | None]:
    options, config = body.get("options", {}), body.get("config")
    if config is not None and not isinstance(config, str):
        raise plan_api.PlanError("model: the dropped config.json must be text", "model")
    if config is not None and len(config) > 1_000_000:
        raise plan_api.PlanError("model: a config.json over 1 MB is not a model config", "model")
    return options, config


def _routes(app: FastAPI) -> None:
    @app.get("/", include_in_schema=False)
    def planner_page():
        return FileResponse(STATIC / "planner.html")

    @app.get("/lesson", include_in_schema=False)
    def lesson_page():
        return FileResponse(STATIC / "lesson.html")

    @app.get("/vendor/plotly.min.js", include_in_schema=False)
    def plotly():
        return FileResponse(plotly_js(), media_type="text/javascript",
                            headers={"Cache-Control": "public, max-age=86400"})

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon():
        return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml")

    @app.get("/api/catalog")
    def catalog():
        return plan_api.catalog()

    @app.post("/api/plan")
    def plan(body: dict = Body(default_factory=dict)):
        """Exactly `multihead plan <options> --json`: the same bytes, the same errors."""
        options, config = _plan_request(body)
        return Response(plan_api.plan_text(options, config), media_type="application/json")

    @app.post("/api/plan/curve")
    def curve(body: dict = Body(default_factory=dict)):
        return plan_api.memory_curve(*_plan_request(body))

    @app.post("/api/softmax")
    def softmax(body: dict = Body(default_factory=dict)):
        return lesson.softmax_demo(**_kwargs(body, lesson.softmax_demo))

    @app.post("/api/causal")
    def causal(body: dict = Body(default_factory=dict)):
        return lesson.causal_demo(**_kwargs(body, lesson.causal_demo))

    @app.post("/api/two-heads")
    def two_heads(body: dict = Body(default_factory=dict)):
        return lesson.two_heads(**_kwargs(body, lesson.two_heads))

    @app.post("/api/kv-fraction")
    def kv_fraction(body: dict = Body(default_factory=dict)):
        return lesson.kv_fraction(**_kwargs(body, lesson.kv_fraction))

    @app.post("/api/heads")
    def heads(body: dict = Body(default_factory=dict)):
        from multihead.web import heads_view
        return heads_view.head_patterns(**_kwargs(body, heads_view.head_patterns))

    @app.get("/api/questions")
    def questions():
        return [q.public() for q in quiz.QUESTIONS]

    @app.post("/api/check")
    def check(body: dict = Body(default_factory=dict)):
        return quiz.check(body.get("id"), body.get("answer"))


def _kwargs(body: dict, fn) -> dict:
    """The body's keys as keyword arguments of fn; an unknown key is refused by name."""
    names = fn.__code__.co_varnames[:fn.__code__.co_argcount]
    for key in body:
        if key not in names:
            raise ValueError(f"{key}: unknown parameter (expected some of {', '.join(names)})")
    return body


@contextlib.asynccontextmanager
async def _lifespan(app: FastAPI):
    """Import the CLI and the planner before the first visitor: one small plan at startup, so the
    page's first chart does not wait for module imports (~0.5-1 s on this machine)."""
    cat = plan_api.catalog()
    try:
        await run_in_threadpool(plan_api.plan_text, {"model": cat["models"][0], "gpu": cat["gpus"][0], "tokens": 1024})
    except ValueError as err:                  # a warm-up only: the page reports real errors itself
        log.warning("warm-up plan failed: %s", err)
    yield


def create_app() -> FastAPI:
    app = FastAPI(title="multihead", docs_url=None, redoc_url=None, lifespan=_lifespan)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    _routes(app)
    app.include_router(lesson_api.router)         # the lesson's cards and the message catalogue (h31)

    @app.exception_handler(plan_api.PlanError)
    async def plan_error(request, err: plan_api.PlanError):
        return _bad(err.message, err.field)

    @app.exception_handler(ValueError)
    async def value_error(request, err: ValueError):
        return _bad(str(err))

    @app.exception_handler(RequestValidationError)
    async def validation_error(request, err: RequestValidationError):
        return _bad(f"body: {err.errors()[0].get('msg', 'invalid request')}", "body")

    @app.exception_handler(Exception)
    async def internal(request, err: Exception):
        if type(err).__name__ == "MissingModelError":     # weights not installed: say so, no trace
            return JSONResponse({"error": str(err).splitlines()[0], "field": None}, 503)
        log.exception("unexpected error on %s", request.url.path)
        return JSONResponse({"error": f"internal error ({type(err).__name__}); see the server log",
                             "field": None}, 500)
    return app
