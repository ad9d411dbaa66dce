"""Run a check in a child process, so that nothing the target does can end or hang the checker.

The CLI's `multihead check` starts `python -m multihead.checker.isolate FD OPTIONS`: the child
imports the target, runs check_attention and writes one JSON line per event to the pipe FD:

    {"event": "started"}                      the child's own imports done (torch); the target's next
    {"event": "loaded"}                       the target imported
    {"event": "probe", "check": name}         a probe starts ("setup" first: the target's first calls)
    {"event": "call", "call": "B=1, H=2, ..."} a call of the target starts (named if the child dies in it)
    {"event": "report", "report": {...}}      Report.to_dict(): the check finished
    {"event": "error", "message": "..."}      the target cannot be imported or called (exit 2)

The parent turns a child that exits without a report (os._exit, a crash; sys.exit is caught in
the child) into an `exit` finding naming the probe and call in flight (its exit is polled, so a
helper process the target forked, which keeps the pipe open, does not hide it), and a probe
that takes longer than the time limit (+ GRACE_S) into a `timeout` finding, after killing the
child. The child's own watchdog reports an ordinary hang itself, with the call in flight; the
parent's deadline is for a call that keeps the child's watchdog from running (one that holds the
GIL): whatever the target does, the answer comes within about a second of --timeout. The target's import is bounded by --timeout too. The child runs in its own
process group, killed as a whole at the end, helpers included. The child's stdout goes to the parent's stderr,
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

from multihead.checker.report import Finding, Report, _json_safe, stage

STARTUP_S = 120.0       # the child's own imports (torch, the checker), before the target's: not the target's time
GRACE_S = 1.0           # after --timeout, for the child's own watchdog to answer before the parent kills it
POLL_S = 0.1            # how often the parent looks whether the child has ended (not only at EOF)


def _package_root() -> str:
    import multihead
    return os.path.dirname(os.path.dirname(os.path.abspath(multihead.__file__)))


def run_isolated(spec: str, options: dict, timeout: float) -> Report:
    """options: check_attention's keyword arguments (JSON-serializable). The child runs in its own
    process group (session): whatever it leaves behind (a forked helper) is killed with it."""
    read_fd, write_fd = os.pipe()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_package_root(), env.get("PYTHONPATH")) if p)
    payload = json.dumps({"spec": spec, "options": options | {"timeout": timeout}})
    proc = subprocess.Popen([sys.executable, "-m", "multihead.checker.isolate", str(write_fd), payload],
                            pass_fds=(write_fd,), stdin=subprocess.DEVNULL, stdout=2, env=env,
                            start_new_session=True)
    os.close(write_fd)
    try:
        return _follow(proc, read_fd, spec, options, timeout)
    finally:
        os.close(read_fd)
        _kill_group(proc)
        proc.wait()


def _kill_group(proc) -> bool:
    """SIGKILL the child's process group (the child and anything it forked); True if any was alive."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
        alive = True
    except (ProcessLookupError, PermissionError):
        alive = False
    if proc.poll() is None:
        proc.kill()
    return alive


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def _follow(proc, fd: int, spec: str, options: dict, timeout: float) -> Report:
    """Read the child's events until a report, an error, its exit or a silence past the deadline.
    The deadline is STARTUP_S until the child has started, then --timeout (+ GRACE_S) from each
    event: the target's import, and every probe. The child's exit is polled, not read from EOF: a
    helper the target forked keeps the pipe open after the child is gone."""
    buf, phase, probe, call = b"", "start", "", ""
    last = time.monotonic()
    deadline = last + STARTUP_S
    eof = False

    def events(data: bytes):
        nonlocal buf
        buf += data
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            try:
                msg = json.loads(line)
                yield msg["event"], msg
            except (ValueError, KeyError, TypeError):
                raise ValueError(f"target: {spec} wrote into the checker's event pipe ({line[:80]!r})") from None

    while True:
        now = time.monotonic()
        if now >= deadline:
            return _timed_out(proc, spec, options, timeout, phase, probe, call, now - last)
        data = b""
        if not eof and select.select([fd], [], [], min(POLL_S, deadline - now))[0]:
            data = os.read(fd, 65536)
            eof = not data
        elif eof:
            time.sleep(min(POLL_S, max(0.0, deadline - now)))
        ended = proc.poll() is not None
        if ended and not eof:             # drain what the child wrote before it ended, without blocking
            while select.select([fd], [], [], 0)[0]:
                more = os.read(fd, 65536)
                if not more:
                    break
                data += more
        for event, msg in events(data):
            if event == "error":
                raise ValueError(msg["message"])
            if event == "report":
                return Report.from_dict(msg["report"])
            if event == "call":          # the time limit is per probe: a call does not restart it
                call = msg.get("call", "")
                continue
            phase = {"started": "import", "loaded": "check", "probe": "check"}.get(event, phase)
            probe, call = msg.get("check", probe), ""
            last = time.monotonic()
            deadline = last + timeout + GRACE_S
        if ended:
            return _ended(proc, spec, options, phase, probe, call)


def _timed_out(proc, spec: str, options: dict, timeout: float, phase: str, probe: str, call: str,
               silent: float) -> Report:
    _kill_group(proc)
    if phase == "start":
        raise ValueError(f"check: the checker's child process did not start within {STARTUP_S:g} s (importing torch)")
    if phase == "import":
        raise ValueError(f"target: importing {spec} did not finish within {timeout:g} s (--timeout; the child "
                         f"process was killed after {silent:.1f} s)")
    # Every call of the target runs under the child's own watchdog, which reports a hang by itself
    # within --timeout; it did not answer either, so the call keeps the child's other threads from
    # running (it holds the GIL) or the child is stuck outside Python.
    return _partial(spec, options, Finding(
        "timeout", "fail", f"{stage(probe or 'setup')} did not finish within {timeout:g} s"
                           + (f"; the call in flight: {call}" if call else "")
                           + f": the child process did not answer for {silent:.1f} s and was killed (its own "
                             f"watchdog did not answer either: the call holds the GIL or blocks the interpreter)",
        {"probe": probe or "setup", "call": call, "timeout_s": timeout, "killed_after_s": round(silent, 2)}))


def _ended(proc, spec: str, options: dict, phase: str, probe: str, call: str) -> Report:
    code = proc.wait()
    how = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"
    left = _group_alive(proc.pid)                  # a helper it forked is still running
    helpers = "; it left a process running (killed)" if left else ""
    if phase != "check":
        raise ValueError(f"target: importing {spec} ended the process ({how}){helpers}")
    on = f" (the call in flight: {call})" if call else ""
    return _partial(spec, options, Finding("exit", "fail", f"the process ended ({how}) during "
                                           f"{stage(probe or 'setup')}{on}, without an exception: the target exits "
                                           f"(os._exit / sys.exit) or crashes the interpreter{helpers}",
                                           {"probe": probe or "setup", "call": call, "exit": how,
                                            "left_processes": left}))


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
                        tuple(o["module_sizes"]), o["timeout"],
                        listener=lambda kind, value: send(**{"event": kind, "check" if kind == "probe" else "call":
                                                             value}))
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
    send = lambda **msg: out.write(json.dumps(_json_safe(msg)) + "\n")      # noqa: E731
    send(event="started")          # from here on the time is the target's: --timeout bounds its import
    code = serve(request["spec"], request["options"], send)
    if code:
        return code
    out.flush()
    os._exit(0)   # a hung target thread (already reported) must not keep the child alive


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
