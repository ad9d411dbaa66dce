"""Running the app: in the foreground (`multihead web`) or in a thread (screenshots, browser tests)."""
from __future__ import annotations

import errno
import os
import shutil
import socket
import threading
import time
from pathlib import Path

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on host:port, or ValueError naming the argument at fault ("host: ..." when
    the name resolves to no address of this machine, "port: ..." when the port is taken or not ours
    to open): bound BEFORE the server announces itself, so a bad address is one line, not
    "serving on ..." then uvicorn's error."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as err:
        raise ValueError(f"host: cannot listen on {host[:80]!r}: not an address or a name this machine "
                         f"resolves ({getattr(err, 'strerror', None) or err})") from None
    # a name without ':' listens on IPv4 when it resolves there, as uvicorn does ("localhost" resolving to
    # ::1 first would otherwise leave http://127.0.0.1:PORT unanswered); an IPv6 literal on IPv6
    if ":" not in host:
        infos = [i for i in infos if i[0] == socket.AF_INET] or infos
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)   # as uvicorn does: a TIME_WAIT port is free
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as err:
        sock.close()
        if err.errno == errno.EADDRINUSE:
            raise ValueError(f"port: {port} is already in use on {host} (choose another --port)") from None
        if err.errno in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT):
            raise ValueError(f"host: {host[:80]!r} is not an address of this machine ({err.strerror})") from None
        if err.errno in (errno.EACCES, errno.EPERM):
            raise ValueError(f"port: {port} cannot be opened by this user on {host} ({err.strerror}; "
                             "ports below 1024 need privileges)") from None
        raise ValueError(f"host: cannot listen on {host}:{port} ({err.strerror or err})") from None
    return sock


def serve(host: str = "127.0.0.1", port: int = 8000, allowed_hosts=(), config_dir=None,
          sock: socket.socket | None = None) -> None:
    """Serve until Ctrl-C (Host names: the loopback ones and ``allowed_hosts``), on ``sock`` when
    given (``listen(host, port)``, already bound), else on a socket bound here."""
    import uvicorn

    from multihead.web.app import create_app
    sock = sock if sock is not None else listen(host, port)
    config = uvicorn.Config(create_app(allowed_hosts=allowed_hosts, config_dir=config_dir), host=host, port=port,
                            log_level="warning")
    uvicorn.Server(config).run(sockets=[sock])


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class Background:
    """The app on a free local port in a daemon thread: ``with Background() as url: ...``."""

    def __init__(self, host: str = "127.0.0.1", port: int | None = None, **app_options):
        import uvicorn

        from multihead.web.app import create_app
        self.host, self.port = host, port or free_port(host)
        app = create_app(allowed_hosts=(host,), **app_options)
        self.server = uvicorn.Server(uvicorn.Config(app, host=self.host, port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def __enter__(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the web server did not start on {self.url}")
            time.sleep(0.02)
        return self.url

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def find_chromium() -> str | None:
    """A Chromium to drive: $MULTIHEAD_CHROMIUM, else Debian's package, else None (never downloads one)."""
    env = os.environ.get("MULTIHEAD_CHROMIUM")
    if env:
        return env if Path(env).is_file() else None
    for path in CHROMIUM_CANDIDATES:
        if Path(path).is_file():
            return path
    found = shutil.which("chromium")
    return found


def _chromium_options() -> dict:
    """Headless Chromium with the flags a root user in a container needs."""
    path = find_chromium()
    if path is None:
        raise RuntimeError("no Chromium found: install Debian's `chromium` package (apt-get install chromium) "
                           "or set MULTIHEAD_CHROMIUM to a Chromium binary")
    return {"executable_path": path, "headless": True, "args": ["--no-sandbox", "--disable-dev-shm-usage"]}


def launch_chromium(playwright):
    """Headless Chromium through Playwright (each new page in a fresh, incognito-like context)."""
    return playwright.chromium.launch(**_chromium_options())


def chromium_with_profile(playwright, profile_dir: str | Path, **context_options):
    """Headless Chromium on an on-disk profile, as a Playwright BrowserContext. Unlike launch()'s
    incognito contexts it keeps V8's code cache, so plotly.js (4.8 MB) compiles on the first two
    page loads only (measured: a later lesson page ready in 0.6 s instead of 1.6-2.1 s).

    ``bypass_csp`` is True unless given: Playwright's ``wait_for_function("...")`` evaluates its text
    in the page, which the pages' Content-Security-Policy (no eval) forbids. The pages themselves
    are checked under their policy by a test that sets ``bypass_csp=False``."""
    context_options.setdefault("bypass_csp", True)
    return playwright.chromium.launch_persistent_context(str(profile_dir), **_chromium_options(), **context_options)
