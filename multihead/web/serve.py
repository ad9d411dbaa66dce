"""Running the app: in the foreground (`multihead web`) or in a thread (screenshots, browser tests)."""
from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from pathlib import Path

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")


def serve(host: str = "127.0.0.1", port: int = 8000, allowed_hosts=(), config_dir=None) -> None:
    """Serve until Ctrl-C (Host names: the loopback ones and ``allowed_hosts``)."""
    import uvicorn

    from multihead.web.app import create_app
    uvicorn.run(create_app(allowed_hosts=allowed_hosts, config_dir=config_dir), host=host, port=port,
                log_level="warning")


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
    page loads only (measured: a later lesson page ready in 0.6 s instead of 1.6-2.1 s)."""
    return playwright.chromium.launch_persistent_context(str(profile_dir), **_chromium_options(), **context_options)
