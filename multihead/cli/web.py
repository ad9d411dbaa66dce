"""``multihead web``: the planner, the configuration search and the lesson playground as a local web page."""
from __future__ import annotations

EXAMPLES = """examples:
  multihead web                         # http://127.0.0.1:8000
  multihead web --port 8080
  multihead web --screenshot docs/web   # rewrite the docs' planner.png, lesson.png, lesson-zh.png; print load times
"""


def register(subparsers) -> None:
    import argparse

    from multihead.cli import _args as A

    p = subparsers.add_parser(
        "web", help="the planner, the configuration search and the lesson playground as a local web page",
        description="Serve three pages on a local web server: the planner (/, every number from "
                    "`multihead plan --json`), the configuration search (/search, `multihead plan --search`) "
                    "and the lesson's playground and quiz (/lesson). The pages work offline.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=A.int_range(1, 65535), default=8000, help="port (default 8000)")
    p.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                   help="a Host name the server answers besides 127.0.0.1, localhost, [::1] and --host "
                        "(repeatable; any other Host header is refused: DNS rebinding)")
    p.add_argument("--config-dir", metavar="DIR",
                   help="a folder whose config.json files the page may name (default: none; the page takes "
                        "catalog names and dropped files only, never a server path)")
    p.add_argument("--screenshot", metavar="DIR",
                   help="instead of serving: open the planner and the lesson (not /search) in headless "
                        "Chromium, write planner.png, lesson.png and lesson-zh.png to DIR (an existing "
                        "folder; the docs' images are in docs/web) and print the planner's page-load timings")
    p.set_defaults(func=run)


def run(args) -> int:
    from pathlib import Path

    from multihead._optional import require
    # every module the page needs, before a word is printed (no "serving on" then a traceback)
    require("fastapi", "uvicorn", "plotly")
    if args.screenshot is not None:
        out = Path(args.screenshot)
        if not out.is_dir():
            raise ValueError(f"screenshot: {out} is not an existing folder")
        require("playwright")
        from multihead.web.shots import take_screenshots
        for line in take_screenshots(out):
            print(line)
        return 0
    from multihead.web.serve import listen, serve
    if args.config_dir is not None and not Path(args.config_dir).is_dir():
        raise ValueError(f"config-dir: {args.config_dir} is not an existing folder")
    sock = listen(args.host, args.port)      # a busy port or a foreign --host: one line, exit 2, before any "serving on"
    shown = f"[{args.host}]" if ":" in args.host else args.host
    print(f"multihead web: serving on http://{shown}:{args.port} (Ctrl-C stops)", flush=True)
    serve(args.host, args.port, allowed_hosts=[args.host, *args.allowed_host], config_dir=args.config_dir, sock=sock)
    return 0
