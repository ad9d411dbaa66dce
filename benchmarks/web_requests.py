"""The planner page's requests, before and after, in one run: /api/plan and /api/plan/curve per
request, and GET / first-byte time while 50 heavy requests run (issues 26 item 10 and 27).

    git archive <old-commit> multihead reports/heads | tar -x -C /tmp/old
    python benchmarks/web_requests.py --old /tmp/old [--parallel 50]

Each side runs in its own fresh interpreter (this checkout, and the old tree with the editable
install's import hook removed), one after the other on the same machine; timings are medians of
--repeat requests after one warm-up. The first-byte part starts a real server (uvicorn, loopback
only), fires --parallel /api/plan/curve requests at once from threads and times GET / (until the
first byte of the response) every 0.5 s while they run; everything is bounded by --limit seconds.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

CHILD = r'''
import os, sys, json, time, statistics, threading, http.client
old = os.environ.get("MH_OLD")
if old:
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
    sys.path.insert(0, old)
import multihead
from fastapi.testclient import TestClient
from multihead.web.app import create_app
args = json.loads(sys.argv[1])
out = {"package": os.path.dirname(multihead.__file__)}
body = {"options": {"model": "Llama-3.1-8B", "tokens": 32768, "gpu": "H100-SXM"}}
with TestClient(create_app(), base_url="http://127.0.0.1:8000") as c:
    for path in ("/api/plan", "/api/plan/curve"):
        assert c.post(path, json=body).status_code == 200
        ts = []
        for _ in range(args["repeat"]):
            t = time.perf_counter(); r = c.post(path, json=body); ts.append(time.perf_counter() - t)
            assert r.status_code == 200, r.text
        out[path] = statistics.median(ts)
if args["parallel"]:
    from multihead.web.serve import Background
    with Background() as url:
        host, port = url.split("//")[1].split(":")
        payload = json.dumps(body).encode()
        done = []
        def heavy():
            conn = http.client.HTTPConnection(host, int(port), timeout=args["limit"])
            try:
                for _ in range(args["per_thread"]):
                    conn.request("POST", "/api/plan/curve", payload, {"content-type": "application/json"})
                    r = conn.getresponse(); r.read(); status = r.status
                done.append(status)
            except Exception as err:
                done.append(repr(err))
            finally:
                conn.close()
        threads = [threading.Thread(target=heavy, daemon=True) for _ in range(args["parallel"])]
        t0 = time.perf_counter()
        for t in threads: t.start()
        firsts = []
        time.sleep(0.1)
        while len(done) < len(threads) and time.perf_counter() - t0 < args["limit"] and len(firsts) < 40:
            conn = http.client.HTTPConnection(host, int(port), timeout=args["limit"])
            t = time.perf_counter(); conn.request("GET", "/"); r = conn.getresponse(); r.read(1)
            firsts.append(time.perf_counter() - t); conn.close()
            time.sleep(0.25)
        for t in threads: t.join(timeout=max(0.1, args["limit"] - (time.perf_counter() - t0)))
        out["first_byte_s"] = firsts
        out["heavy_done"] = len(done)
        out["heavy_statuses"] = sorted({str(s) for s in done})
        out["heavy_wall_s"] = time.perf_counter() - t0
print(json.dumps(out))
'''


def side(old: str | None, repeat: int, parallel: int, limit: float, per_thread: int) -> dict:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    if old:
        env["MH_OLD"] = old
    r = subprocess.run([sys.executable, "-c", CHILD, json.dumps({"repeat": repeat, "parallel": parallel,
                                                                   "limit": limit, "per_thread": per_thread})],
                       capture_output=True, text=True, env=env, timeout=limit * 3 + 300, cwd="/tmp")
    if r.returncode:
        raise SystemExit(r.stderr[-2000:])
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", help="a tree holding the old multihead/ package (omit: this checkout only)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--parallel", type=int, default=50)
    ap.add_argument("--limit", type=float, default=120.0, help="seconds the heavy phase may take per side")
    ap.add_argument("--per-thread", type=int, default=1, help="curve requests each of the parallel clients sends in turn")
    a = ap.parse_args()
    after = side(None, a.repeat, a.parallel, a.limit, a.per_thread)
    report = {"after": after}
    if a.old:
        report["before"] = before = side(a.old, a.repeat, a.parallel, a.limit, a.per_thread)
        for path in ("/api/plan", "/api/plan/curve"):
            report[f"speedup {path}"] = before[path] / after[path]
        report["speedup page update (plan + curve)"] = ((before["/api/plan"] + before["/api/plan/curve"])
                                                       / (after["/api/plan"] + after["/api/plan/curve"]))
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
