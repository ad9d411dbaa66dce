"""The ASGI app: three pages (planner, search, lesson), their static files, and a JSON API.

Safe by default (docs/web.md, "Security"):

- only its own Host names: 127.0.0.1, localhost, [::1] (any port) and the names given to
  ``create_app(allowed_hosts=...)`` (``multihead web --host``); any other Host header is a 400
  before any endpoint runs (a page elsewhere cannot reach the server through DNS rebinding); the
  Host's port, if any, is digits ('[::1]evil.com' and 'localhost:abc' are foreign names);
- a request whose Origin header is not one of those names with the port the request came to is a 403 (a page of another site, whose
  cross-site POSTs carry our own Host), and a POST body must be ``application/json`` (415: a
  text/plain or form body is what a cross-site "simple request" can send without a preflight);
- every request body bounded WHILE it is read (``MAX_BODY_BYTES``): a Content-Length over the
  limit is refused before reading, a chunked body as soon as the limit is passed (413), a body not
  received within ``BODY_SECONDS`` is a 408; every answer carries ``SECURITY_HEADERS`` (CSP, nosniff, no framing);
- the body is parsed strictly: a JSON object, finite numbers only (no NaN / Infinity / 1e5000),
  integers of at most 4,300 digits; each endpoint then checks its fields (unknown keys refused);
- the planner is called as a library with a PlanRequest (planner/request.py): no option becomes
  a CLI flag, ``model`` / ``gpu`` are catalog names or uploaded content, never server paths
  (unless ``config_dir`` names a folder to serve configs from);
- the computing endpoints run on a bounded pool of their own (``HEAVY_THREADS`` threads, at most
  ``HEAVY_QUEUE`` waiting, then 503), so the pages and the cheap endpoints stay responsive.

Every error is JSON ``{"error": one line, "field": the input it names or null}``: 400 for bad
input, 403 for a foreign Origin, 404/405 for unknown routes, 408 for a body too slow, 413 for a body too large, 415 for a
body that is not application/json, 503 when busy or when the weights
are not installed, 500 (a one-line message; the traceback only in the server's log) for a bug.
"""
from __future__ import annotations

import contextlib
import inspect
import json
import logging

import anyio
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from multihead.web import lesson, lesson_api, plan_api, quiz
from multihead.web.assets import STATIC, plotly_js

log = logging.getLogger("multihead.web")

MAX_BODY_BYTES = 2_500_000       # a 1 MB config.json as a JSON string (escapes) plus the options
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
HEAVY_THREADS = 2                # the computing endpoints' own threads (this is a 2-core laptop's server)
HEAVY_QUEUE = 64                 # computing requests waiting beyond these get a 503 at once


class BadRequest(ValueError):
    def __init__(self, message: str, field: str | None, status: int = 400):
        super().__init__(message)
        self.message, self.field, self.status = message, field, status


def error(message: str, field: str | None = None, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": " ".join(str(message).split()), "field": field}, status)


def _field(message: str) -> str | None:
    head = message.split(":", 1)[0]
    return head.split("[")[0] if head.replace("_", "").replace("[", "").replace("]", "").isalnum() else None


# -- the two guards in front of everything: Host names and the body's size -----------------------------
def _host_name(value: str) -> str:
    """'127.0.0.1:8000' -> '127.0.0.1'; '[::1]:8000' -> '::1'; lower case. Anything after the name
    but a ':digits' port ('[::1]evil.com', 'localhost:abc') is kept, so it matches no allowed name."""
    value = value.strip().lower()
    if value.startswith("[") and "]" in value:
        name, rest = value[1:value.find("]")], value[value.find("]") + 1:]
        return name if rest == "" or (rest[:1] == ":" and rest[1:].isdigit()) else value
    if value.count(":") == 1:
        name, port = value.split(":")
        return name if port.isdigit() else value
    return value


def _port_of(host: str, default: int) -> int:
    """The port of a Host value ('localhost:8000' -> 8000; 'localhost' -> default)."""
    host = host.strip()
    tail = host[host.rfind("]") + 1:] if host.startswith("[") else host
    _, sep, port = tail.rpartition(":")
    return int(port) if sep and port.isdigit() else default


def _origin_host(origin: str) -> str | None:
    """The Host part of an Origin header ('http://127.0.0.1:8000' -> '127.0.0.1:8000'); None for
    'null' or a value that is not scheme://host[:port]."""
    scheme, sep, rest = origin.strip().partition("://")
    if not sep or scheme.lower() not in ("http", "https") or "/" in rest or "@" in rest or not rest:
        return None
    return rest


def _own_origin(origin: str, host: str, names) -> bool:
    """Is this Origin one of this server's own pages: one of its names AND the port the request was
    sent to (the Host header's: the port the browser reached this server on)? A page served on another
    local port (another dev server, a notebook) is another origin, and refused."""
    rest = _origin_host(origin)
    if rest is None or _host_name(rest) not in names:
        return False
    default = 443 if origin.strip().lower().startswith("https:") else 80
    # a Host without a port is the scheme's default (a TLS-ending proxy forwards 'Host: name' for https://name)
    return _port_of(rest, default) == _port_of(host, default)


# What every answer carries (docs/web.md, "Security"): no MIME sniffing, no framing by another site,
# and the pages may load and call nothing but this server (plotly.js injects <style> elements and
# style attributes, hence 'unsafe-inline' for styles only; no inline script runs anywhere).
SECURITY_HEADERS = (
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"content-security-policy",
     b"default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
     b"font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
     b"frame-ancestors 'none'"),
)
BODY_SECONDS = 30.0              # time to receive a whole request body (2.5 MB at ~85 KB/s); then 408


class Guard:
    """Pure ASGI middleware: refuse a foreign Host (400), a foreign Origin (403), a body over the
    limit (413) or not received within ``body_seconds`` (408), reading the body chunk by chunk and
    never past the limit; the app gets the body replayed. Every answer gets SECURITY_HEADERS."""

    def __init__(self, app, allowed_hosts, max_body: int = MAX_BODY_BYTES, body_seconds: float = BODY_SECONDS):
        self.app, self.max_body, self.body_seconds = app, max_body, body_seconds
        self.hosts = {h.strip("[]").lower() for h in (*LOOPBACK_HOSTS, *allowed_hosts) if h}

    async def __call__(self, scope, receive, send):
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        if scope["type"] == "http":
            inner_send = send

            async def send(message):
                if message["type"] == "http.response.start":
                    present = {k.lower() for k, _ in message.get("headers", [])}
                    message = {**message, "headers": [*message.get("headers", []),
                                                      *(h for h in SECURITY_HEADERS if h[0] not in present)]}
                await inner_send(message)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if _host_name(headers.get("host", "")) not in self.hosts:
            return await error("host: this server answers only its own names (Host header "
                               f"{headers.get('host', '')[:80]!r} refused)", "host", 400)(scope, receive, send)
        origin = headers.get("origin")
        if origin is not None and not _own_origin(origin, headers.get("host", ""), self.hosts):
            # a page of another site or of another local port (a cross-site form or no-cors fetch
            # reaches 127.0.0.1 with our own Host header): its requests carry its Origin; refused
            # before any work
            return await error(f"origin: this server answers only its own pages (Origin {origin[:80]!r} refused: "
                               "not this server's name and port)", "origin", 403)(scope, receive, send)
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            return await self.app(scope, receive, send)
        if scope["method"] != "POST":
            # no endpoint takes a PUT, PATCH, DELETE...: the router answers 405 (404 off a route),
            # with the body left unread
            async def nothing():
                return {"type": "http.request", "body": b"", "more_body": False}
            return await self.app(scope, nothing, send)
        too_big = error(f"body: larger than {self.max_body:,} bytes", "body", 413)
        length = headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_body):
            return await too_big(scope, receive, send)
        chunks, size = [], 0
        with anyio.move_on_after(self.body_seconds) as timer:
            while size <= self.max_body:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return
                size += len(message.get("body", b""))
                chunks.append(message.get("body", b""))
                if not message.get("more_body", False):
                    break
        if size > self.max_body:
            return await too_big(scope, receive, send)
        if timer.cancelled_caught:
            # a body sent slowly, or never finished, holds no connection for long
            return await error(f"body: not received within {self.body_seconds:g} s", "body", 408)(scope, receive, send)
        body, sent = b"".join(chunks), False
        kind = headers.get("content-type", "").split(";")[0].strip().lower()
        if body.strip() and kind != "application/json":
            # the page sends application/json; a text/plain or form body is what a cross-site
            # "simple request" (no CORS preflight) can send
            return await error(f"body: expected Content-Type application/json, got {kind[:60] or 'none'!r}",
                               "body", 415)(scope, receive, send)
        try:                        # one strict JSON rule for every endpoint (the lesson router's too)
            strict_json(body)
        except BadRequest as err:
            return await error(err.message, err.field, err.status)(scope, receive, send)

        async def replay():
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await self.app(scope, replay, send)


# -- strict JSON bodies ---------------------------------------------------------------------------------
def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"the number {text[:40]} is too large for a float")
    return value


def _constant(name: str):
    raise ValueError(f"{name} is not JSON")


async def json_body(request: Request) -> dict:
    return strict_json(await request.body())


def strict_json(raw: bytes) -> dict:
    """A request body as a JSON object: finite numbers only (no NaN, Infinity, 1e5000), integers of at
    most 4,300 digits, nesting bounded by the parser; an empty body is {}. BadRequest (400) otherwise."""
    if not raw.strip():
        return {}
    try:
        body = json.loads(raw.decode("utf-8"), parse_float=_finite, parse_constant=_constant)
    except UnicodeDecodeError:
        raise BadRequest("body: expected UTF-8 JSON", "body") from None
    except RecursionError:
        raise BadRequest("body: JSON nested too deep", "body") from None
    except ValueError as err:            # JSONDecodeError, or a number json cannot hold
        raise BadRequest(f"body: not valid JSON ({str(err)[:200]})", "body") from None
    if not isinstance(body, dict):
        raise BadRequest(f"body: expected a JSON object, got {type(body).__name__}", "body")
    return body


# -- the computing endpoints' pool ------------------------------------------------------------------------
class HeavyPool:
    """At most ``threads`` computing calls at once, at most ``queue`` waiting; anyio threads of their
    own (the default pool that serves files and cheap endpoints is never taken)."""

    def __init__(self, threads: int = HEAVY_THREADS, queue: int = HEAVY_QUEUE):
        self.limiter, self.queue, self.waiting = anyio.CapacityLimiter(threads), queue, 0

    async def run(self, fn, *args, **kwargs):
        if self.waiting >= self.queue:
            raise BadRequest("server: busy with other computations; try again", None, 503)
        self.waiting += 1
        try:
            return await anyio.to_thread.run_sync(lambda: fn(*args, **kwargs), limiter=self.limiter)
        finally:
            self.waiting -= 1


def _kwargs(body: dict, fn) -> dict:
    """The body's keys as keyword arguments of fn; an unknown key is refused by name."""
    params = inspect.signature(fn).parameters
    names = list(params)
    for key in body:
        if key not in names:
            raise BadRequest(f"{str(key)[:60]}: unknown parameter (expected some of {', '.join(names)})", str(key)[:60])
    for name, p in params.items():
        if p.default is inspect.Parameter.empty and p.kind == p.POSITIONAL_OR_KEYWORD and name not in body:
            raise BadRequest(f"{name}: required", name)
    return body


def _plan_body(body: dict) -> tuple:
    unknown = [k for k in body if k not in ("options", "config")]
    if unknown:
        raise BadRequest(f"{str(unknown[0])[:60]}: unknown key (expected options and config)", str(unknown[0])[:60])
    config = body.get("config")
    if config is not None and not isinstance(config, str):
        raise BadRequest("model: the dropped config.json must be text", "model")
    return body.get("options", {}), config


def _no_search(options) -> None:
    """/api/plan and /api/plan/curve answer one plan: a request for a search goes to /api/search
    (one request, one answer: the CLI's ``plan --search`` is a search or an error, never a plan)."""
    if isinstance(options, dict) and options.get("search") not in (None, "", False):    # null / "": unset
        raise BadRequest("search: this endpoint answers one plan; for a search POST the same options to "
                         "/api/search (without \"search\")", "search")


def _schema(properties: dict) -> dict:
    """An OpenAPI request body of a JSON object with these properties (any JSON value each: the
    endpoint checks the values itself, strictly, and names the field)."""
    return {"requestBody": {"required": False, "content": {"application/json": {"schema": {
        "type": "object", "properties": {k: v or {} for k, v in properties.items()}}}}}}


def _params(fn) -> dict:
    return {name: {} for name in inspect.signature(fn).parameters}


def _routes(app: FastAPI, pool: HeavyPool, config_dir) -> None:
    # the two pages are read in the event loop (small files): their first byte never waits for a
    # thread, whatever the computing endpoints (or the lesson router's sync ones) keep busy
    @app.get("/", include_in_schema=False)
    async def planner_page():
        return Response((STATIC / "planner.html").read_bytes(), media_type="text/html; charset=utf-8")

    @app.get("/search", include_in_schema=False)
    async def search_page():
        return FileResponse(STATIC / "search.html")

    @app.get("/lesson", include_in_schema=False)
    async def lesson_page():
        return Response((STATIC / "lesson.html").read_bytes(), media_type="text/html; charset=utf-8")

    @app.get("/vendor/plotly.min.js", include_in_schema=False)
    async def plotly():
        return FileResponse(plotly_js(), media_type="text/javascript",
                            headers={"Cache-Control": "public, max-age=86400"})

    @app.get("/favicon.ico", include_in_schema=False)
    async def favicon():
        return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml")

    @app.get("/api/catalog")
    async def catalog():
        return plan_api.catalog()

    from multihead.planner.request import FIELDS
    plan_schema = _schema({"options": {"type": "object", "properties": {k: {} for k in FIELDS}},
                           "config": {"type": "string"}})

    @app.post("/api/plan", openapi_extra=plan_schema)
    async def plan(request: Request):
        """The object `multihead plan --json` prints for the same request (the planner library's)."""
        options, config = _plan_body(await json_body(request))
        _no_search(options)
        text = await pool.run(plan_api.plan_text, options, config, config_dir)
        return Response(text, media_type="application/json")

    @app.get("/api/search/catalog")
    async def search_catalog():
        return plan_api.search_catalog()

    @app.post("/api/search", openapi_extra=plan_schema)
    async def search(request: Request):
        """The object `multihead plan --search --json` prints for the same request (planner/search.py)."""
        options, config = _plan_body(await json_body(request))
        return await pool.run(plan_api.search, options, config, config_dir)

    @app.post("/api/plan/curve", openapi_extra=plan_schema)
    async def curve(request: Request):
        options, config = _plan_body(await json_body(request))
        _no_search(options)
        return await pool.run(plan_api.memory_curve, options, config, config_dir)

    def lesson_route(path: str, name: str, module=lesson):
        fn = getattr(module, name)

        @app.post(path, openapi_extra=_schema(_params(fn)), name=name)
        async def endpoint(request: Request):
            body = _kwargs(await json_body(request), fn)
            return await pool.run(getattr(module, name), **body)     # looked up per call (tests patch it)

    lesson_route("/api/softmax", "softmax_demo")
    lesson_route("/api/causal", "causal_demo")
    lesson_route("/api/two-heads", "two_heads")
    lesson_route("/api/kv-fraction", "kv_fraction")
    lesson_route("/api/heads", "heads", _Heads)

    @app.get("/api/questions")
    async def questions():
        return [q.public() for q in quiz.QUESTIONS]

    @app.post("/api/check", openapi_extra=_schema({"id": {}, "answer": {}}))
    async def check(request: Request):
        body = await json_body(request)
        _kwargs(body, lambda id=None, answer=None: None)
        return await pool.run(quiz.check, body.get("id"), body.get("answer"))


class _Heads:
    """/api/heads: SmolLM2's heads (heads_view imports torch and transformers on first use only)."""

    @staticmethod
    def heads(sentence=None, layer=0):
        from multihead.web import heads_view
        return heads_view.head_patterns(sentence, layer)


@contextlib.asynccontextmanager
async def _lifespan(app: FastAPI):
    """Import the planner before the first visitor: one small plan at startup, so the page's first
    chart does not wait for module imports (~0.5-1 s on this machine)."""
    cat = plan_api.catalog()
    try:
        await anyio.to_thread.run_sync(plan_api.plan_text, {"model": cat["models"][0], "gpu": cat["gpus"][0],
                                                            "tokens": 1024})
    except ValueError as err:                  # a warm-up only: the page reports real errors itself
        log.warning("warm-up plan failed: %s", err)
    yield


def create_app(allowed_hosts=(), config_dir=None, max_body: int = MAX_BODY_BYTES,
               heavy_threads: int = HEAVY_THREADS, body_seconds: float = BODY_SECONDS) -> FastAPI:
    """The app. ``allowed_hosts``: Host names beyond the loopback ones (``multihead web --host``);
    ``config_dir``: a folder whose config files the page may name (default: none, names only)."""
    app = FastAPI(title="multihead", docs_url=None, redoc_url=None, lifespan=_lifespan)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.state.heavy_pool = HeavyPool(heavy_threads)   # also bounds the lesson router's computing calls
    _routes(app, app.state.heavy_pool, config_dir)

    @app.exception_handler(BadRequest)
    async def bad_request(request, err: BadRequest):
        return error(err.message, err.field, err.status)
    app.include_router(lesson_api.router)         # the lesson's cards and the message catalogue (h31)

    @app.exception_handler(plan_api.PlanError)
    async def plan_error(request, err: plan_api.PlanError):
        return error(err.message, err.field)

    @app.exception_handler(ValueError)
    async def value_error(request, err: ValueError):
        return error(str(err), _field(str(err)))

    @app.exception_handler(RequestValidationError)
    async def validation_error(request, err: RequestValidationError):
        first = err.errors()[0] if err.errors() else {}
        return error(f"body: {first.get('msg', 'invalid request')}", "body")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request, err: StarletteHTTPException):
        return error(str(err.detail), None, err.status_code)

    @app.exception_handler(Exception)
    async def internal(request, err: Exception):
        if type(err).__name__ == "MissingModelError":     # weights not installed: say so, no trace
            return error(str(err).splitlines()[0], None, 503)
        log.exception("unexpected error on %s", request.url.path)
        return error(f"internal error ({type(err).__name__}); see the server log", None, 500)

    app.add_middleware(Guard, allowed_hosts=tuple(allowed_hosts), max_body=max_body, body_seconds=body_seconds)
    return app
