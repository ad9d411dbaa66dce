"""Run a check in a child process, so that nothing the target does can end or hang the checker.

The CLI's `multihead check` starts `python -m multihead.checker.isolate FD OPTIONS`: the child
imports the target, runs check_attention and writes one JSON line per event to the pipe FD:

    {"event": "loaded"}                       the target imported
    {"event": "probe", "check": name}         a probe starts
    {"event": "report", "report": {...}}      Report.to_dict(): the check finished
    {"event": "error", "message": "..."}      the target cannot be imported or called (exit 2)

The parent turns a child that exits without a report (sys.exit, os._exit, a crash) into an
`exit` finding naming the probe in flight, and one that stops writing for longer than the time
limit into a `timeout` finding, after killing it. The child's stdout goes to the parent's stderr,
so a target's prints never mix with --json.
"""
from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time

from multihead.checker.report import Finding, Report, _json_safe

STARTUP_S = 120.0       # importing torch and the target, building the adapters
GRACE_S = 30.0          # beyond the child's own per-probe watchdog, before the parent kills it


def _package_root() -> str:
    import multihead
    return os.path.dirname(os.path.dirname(os.path.abspath(multihead.__file__)))


def run_isolated(spec: str, options: dict, timeout: float) -> Report:
    """options: check_attention's keyword arguments (JSON-serializable)."""
    read_fd, write_fd = os.pipe()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_package_root(), env.get("PYTHONPATH")) if p)
    payload = json.dumps({"spec": spec, "options": options | {"timeout": timeout}})
    proc = subprocess.Popen([sys.executable, "-m", "multihead.checker.isolate", str(write_fd), payload],
                            pass_fds=(write_fd,), stdin=subprocess.DEVNULL, stdout=2, env=env)
    os.close(write_fd)
    try:
        return _follow(proc, read_fd, spec, options, timeout)
    finally:
        os.close(read_fd)
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def _follow(proc, fd: int, spec: str, options: dict, timeout: float) -> Report:
    buf, loaded, probe, found = b"", False, "", []
    deadline = time.monotonic() + STARTUP_S
    while True:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            proc.kill()
            if not loaded:
                raise ValueError(f"target: importing {spec} did not finish within {STARTUP_S:g} s")
            return _partial(spec, options, Finding("timeout", "fail", f"probe {probe} did not finish within "
                                                   f"{timeout:g} s (the child process was killed)",
                                                   {"probe": probe, "timeout_s": timeout}))
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            msg = json.loads(line)
            if msg["event"] == "error":
                raise ValueError(msg["message"])
            if msg["event"] == "report":
                return Report.from_dict(msg["report"])
            loaded = True
            probe = msg.get("check", probe)
            found.append(probe)
            deadline = time.monotonic() + timeout + GRACE_S
    code = proc.wait()
    how = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"
    if not loaded:
        raise ValueError(f"target: importing {spec} ended the process ({how})")
    return _partial(spec, options, Finding("exit", "fail", f"the process ended ({how}) during probe {probe}, "
                                           f"without an exception: the target exits (sys.exit / os._exit) or "
                                           f"crashes the interpreter", {"probe": probe, "exit": how}))


def _partial(spec: str, options: dict, finding: Finding) -> Report:
    return Report(target=spec, signature=options.get("signature", "auto"), dtype=options.get("dtype", "float32"),
                  device=options.get("device", "cpu"), findings=[finding],
                  notes=["the child process did not finish: only the finding that stopped it is known"])


def serve(spec: str, o: dict, send) -> int:
    """The child's work, reporting through ``send(**event)``: import the target, check it, send the
    report; 2 after an ``error`` event (the target cannot be imported or called), else 0."""
    from multihead.checker.adapters import CheckError
    from multihead.checker.check import _check
    from multihead.checker.load import load_target

    try:
        fn = load_target(spec)
    except ValueError as err:
        send(event="error", message=str(err))
        return 2
    send(event="loaded")
    try:
        report = _check(fn, o["signature"], o["dtype"], o["device"], o["expect_alignment"], o["seed"], spec,
                        tuple(o["module_sizes"]), o["timeout"], listener=lambda check: send(event="probe",
                                                                                               check=check))
    except CheckError as err:
        send(event="error", message=f"target: {spec}: {err}")
        return 2
    except ValueError as err:
        send(event="error", message=str(err))
        return 2
    send(event="report", report=report.to_dict())
    return 0


def main(argv: list[str]) -> int:
    import torch

    out = os.fdopen(int(argv[0]), "w", buffering=1)
    request = json.loads(argv[1])
    # This process is the checker's own: one intra-op thread, because at probe sizes OpenMP
    # barriers on a busy 2-core machine cost more than the work (0.03 s vs 0.6-2.4 s per call).
    torch.set_num_threads(1)
    code = serve(request["spec"], request["options"], lambda **msg: out.write(json.dumps(_json_safe(msg)) + "\n"))
    if code:
        return code
    out.flush()
    os._exit(0)   # a hung target thread (already reported) must not keep the child alive


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
