"""check_attention: run every probe that applies to a target and gather a Report."""
from __future__ import annotations

import inspect
import math
import threading
import time

import torch

from multihead.checker import module_probes, path_probes, probes
from multihead.checker.adapters import FunctionTarget, ModuleTarget, Unsupported
from multihead.checker.calls import ModuleRecorder, Recorder, TargetExited, TargetRaised
from multihead.checker.report import Finding, Report, stage

SIGNATURES = ("auto", "sdpa", "module", "hf")
DTYPES = {"float32": torch.float32, "float64": torch.float64, "bfloat16": torch.bfloat16,
          "float16": torch.float16, "fp32": torch.float32, "fp64": torch.float64, "bf16": torch.bfloat16,
          "fp16": torch.float16}
ALIGNMENTS = (None, "bottom-right", "top-left")


def resolve_signature(fn, signature: str) -> str:
    """"auto": an nn.Module class or instance -> "module"; a function whose first parameter is
    named `module` (transformers' attention-function convention) -> "hf"; else "sdpa"."""
    if signature not in SIGNATURES:
        raise ValueError(f"signature: expected one of {', '.join(SIGNATURES)}, got {signature!r}")
    if signature != "auto":
        return signature
    if isinstance(fn, torch.nn.Module) or (isinstance(fn, type) and issubclass(fn, torch.nn.Module)):
        return "module"
    try:
        first = next(iter(inspect.signature(fn).parameters), None)
    except (TypeError, ValueError):
        first = None
    return "hf" if first == "module" else "sdpa"


def _dtype(dtype) -> torch.dtype:
    if isinstance(dtype, torch.dtype) and dtype in probes.TOLERANCE:
        return dtype
    if isinstance(dtype, str) and dtype.replace("torch.", "") in DTYPES:
        return DTYPES[dtype.replace("torch.", "")]
    raise ValueError(f"dtype: expected float32, float64, bfloat16 or float16, got {dtype!r}")


def check_attention(fn, *, signature: str = "auto", dtype="float32", device="cpu", expect_alignment: str | None = None,
                    seed: int = 0, name: str | None = None, module_sizes: tuple[int, int, int] = (64, 4, 2),
                    timeout: float = 60.0) -> Report:
    """Probe an attention implementation for the classic bugs and return a Report.

    fn: one of
      - "sdpa": a function fn(q, k, v, attn_mask=None, is_causal=False, scale=None) with PyTorch's
        scaled_dot_product_attention conventions (q [B, H, Tq, d], k/v [B, H_kv, Tk, d], bool mask
        True = attend, returns [B, H, Tq, d] or a tuple starting with it). GQA-shaped k/v are
        tried first (plain, then enable_gqa=True); a function that refuses them gets K/V repeated
        by the checker (repeat_interleave), and its GQA check is skipped.
      - "module": an nn.Module class or instance with forward(x, *, attn_mask=None,
        is_causal=False), x [B, T, D] -> [B, T, D], and n_heads / n_kv_heads attributes. A class is
        built with d_model=64, n_heads=4, n_kv_heads=2 (matched to its parameter names).
      - "hf": a transformers attention function fn(module, query, key, value, attention_mask,
        scaling=..., dropout=..., **kwargs) -> (out [B, Tq, H, d], weights or None), mask additive
        float [B, 1, Tq, Tk] (0 = attend, finfo.min = masked), module.num_key_value_groups = H/H_kv.
      - "auto" (default): picks one of the above (see resolve_signature).
    dtype: the dtype of the main probes (float32 default; the overflow probe also runs float32
    and a tiny float16 case). device: where the target runs; the reference is float64 on the CPU.
    expect_alignment: None (report whichever causal alignment fn uses when Tq != Tk; only a mixed
    or off-by-one alignment fails), "bottom-right" (fn claims the KV-cache convention: top-left
    fails) or "top-left". module_sizes: (d_model, n_heads, n_kv_heads) for building a module class.
    timeout: seconds one probe may take (the setup too: the first calls, which learn what fn
    accepts); a probe that takes longer stops the check with a `timeout` finding naming the call
    in flight, and a target that calls sys.exit gets an `exit` finding (in-process the hung call keeps its thread: run
    untrusted code through the CLI, which isolates it in a child process).

    Modules are checked in eval mode (on the checker's copy); a note says so, and the determinism
    check compares training mode.

    Threads: every probe runs in a fresh thread and the checker changes no process-wide state
    (not torch's thread count either); set a thread count of your own with torch.set_num_threads.

    Raises CheckError (a ValueError) when fn cannot be called at all.
    """
    return _check(fn, signature, dtype, device, expect_alignment, seed, name, module_sizes, timeout)


def check_device(device) -> torch.device:
    """The device the probes run on: one that holds values (not meta) and is available."""
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError):
        raise ValueError(f"device: expected a torch device such as 'cpu' or 'cuda', got {device!r}") from None
    if dev.type == "meta":
        raise ValueError("device: 'meta' tensors have shapes but no values, so no output can be compared; "
                         "use cpu or cuda")
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device: {device!r} requested but torch.cuda.is_available() is False")
    try:
        torch.ones(1, device=dev).add(1).cpu()
    except Exception as err:   # noqa: BLE001 - any backend that cannot hold a tensor
        raise ValueError(f"device: {device!r} cannot run a tensor operation here ({type(err).__name__}: "
                         f"{str(err)[:100]})") from None
    return dev



class _Stopped(Exception):
    """The check cannot go on (the target hung or ended the process): `finding` says why."""

    def __init__(self, finding: Finding):
        super().__init__(finding.evidence)
        self.finding = finding


def _in_thread(probe, ctx, timeout: float):
    """Run probe(ctx) in a daemon thread; (finding or None, exception or None, finished)."""
    box = {}
    threads = torch.get_num_threads()

    def work():
        # A new thread starts from OpenMP's default team size, not the caller's thread count (torch
        # applies its count to a thread lazily, at its first parallel op), and each thread that
        # runs a 2-thread region gets its own spinning OpenMP workers. Setting the caller's own
        # count here (torch's value does not change) makes a probe cost what its calls cost in the
        # caller's thread: 0.30 -> 0.14 s of CPU per check of a function, at 1 thread.
        torch.set_num_threads(threads)
        try:
            box["finding"] = probe(ctx)
        except BaseException as err:   # noqa: BLE001 - SystemExit from the target included
            box["error"] = err

    thread = threading.Thread(target=work, name=f"multihead-check:{probe.__name__}", daemon=True)
    thread.start()
    thread.join(timeout)
    return box.get("finding"), box.get("error"), not thread.is_alive()


def _run(check: str, probe, ctx, timeout: float) -> Finding:
    """One probe under a watchdog. A probe that does not finish within `timeout` seconds stops the
    check (in-process the hung call cannot be killed and keeps its thread; the CLI runs the target
    in a child process that it kills); a target that calls sys.exit stops it too."""
    finding, err, finished = _in_thread(probe, ctx, timeout)
    if not finished:
        call = ctx.target.in_flight
        raise _Stopped(Finding("timeout", "fail", f"{stage(check)} did not finish within {timeout:g} s"
                               + (f"; the call in flight: {call}" if call else ""), {"probe": check, "call": call,
                                                                                     "timeout_s": timeout}))
    if err is None:
        return finding
    if isinstance(err, (TargetExited, SystemExit)):
        what = str(err) if isinstance(err, TargetExited) else f"the target called sys.exit({err.code!r})"
        raise _Stopped(Finding("exit", "fail", f"{what} during {stage(check)}", {"probe": check}))
    if isinstance(err, KeyboardInterrupt):
        raise err
    if isinstance(err, Unsupported):
        return Finding(check, "skip", f"not checked: {err}")
    if isinstance(err, TargetRaised):
        return Finding(check, "fail", f"the target raised {err} on {err.call}")
    # A crash inside a probe on a module target, or a wrong output shape found mid-run.
    return Finding(check, "fail", f"the target raised {type(err).__name__}: {err}")


def _probes(sig: str) -> list:
    if sig == "module":
        return [(p.__name__.removeprefix("probe_"), p) for p in module_probes.MODULE_PROBES]
    basic = [(p.__name__.removeprefix("probe_"), p) for p in probes.BASIC_PROBES]
    paths = [(p.__name__.removeprefix("probe_"), p) for p in path_probes.PATH_PROBES]
    # fully_masked_rows keeps its place after mask_polarity (a report reads top-down).
    at = [c for c, _ in basic].index("mask_polarity") + 1
    return basic[:at] + [("fully_masked_rows", path_probes.probe_fully_masked_rows)] + basic[at:] + paths


def _mutation(recorder) -> Finding:
    if recorder.mutated:
        return Finding("input_mutation", "fail", "; ".join(recorder.mutated) + " (the probes passed copies, so "
                       "no other check is affected)")
    return Finding("input_mutation", "pass", "q, k, v and the mask are unchanged after every call")


def _setup(fn, sig, dt, dev, module_sizes, timeout: float, watch):
    """Build the target (a module class is constructed, a function is called on plain inputs to
    learn what it accepts) under the same watchdog as a probe: a target that hangs or exits on its
    very first call is a `timeout` / `exit` finding, not a hung or ended caller."""
    seen = {"call": ""}

    def tell(call):
        seen["call"] = call
        watch(call)

    def setup(_):
        if sig == "module":
            return ModuleTarget.build(fn, dt, dev, module_sizes, watch=tell)
        return FunctionTarget.build(fn, sig, watch=tell)

    built, err, finished = _in_thread(setup, None, timeout)
    during, call = stage("setup"), seen["call"]
    if not finished:
        raise _Stopped(Finding("timeout", "fail", f"{during} did not finish within {timeout:g} s"
                               + (f"; the call in flight: {call}" if call else ""),
                               {"probe": "setup", "call": call, "timeout_s": timeout}))
    if isinstance(err, SystemExit):
        raise _Stopped(Finding("exit", "fail", f"the target called sys.exit({err.code!r})"
                               + (f" on {call}" if call else "") + f" during {during}",
                               {"probe": "setup", "call": call}))
    if err is not None:
        raise err
    return built


def _check(fn, signature, dtype, device, expect_alignment, seed, name, module_sizes, timeout,
           listener=None) -> Report:
    """check_attention's body; listener("probe", check) is told each probe before it starts
    ("setup" first: the calls that build the target) and listener("call", call) each call of the
    target (the CLI's child process passes them on, so that a process that dies or hangs is
    reported with its probe and call)."""
    t0 = time.perf_counter()
    sig = resolve_signature(fn, signature)
    dt = _dtype(dtype)
    if expect_alignment not in ALIGNMENTS:
        raise ValueError(f"expect_alignment: expected 'bottom-right', 'top-left' or None, got {expect_alignment!r}")
    dev = check_device(device)
    if not (isinstance(timeout, (int, float)) and math.isfinite(timeout) and timeout > 0):
        raise ValueError(f"timeout: expected a positive number of seconds, got {timeout!r}")
    name = name or getattr(fn, "__qualname__", None) or type(fn).__name__
    runs = _probes(sig)
    watch = (lambda call: listener("call", call)) if listener else (lambda call: None)
    if listener:
        listener("probe", "setup")
    try:
        built = _setup(fn, sig, dt, dev, module_sizes, timeout, watch)
    except _Stopped as stop:
        findings = [stop.finding] + [Finding(c, "skip", f"not run: the check stopped at setup ({stop.finding.check})")
                                     for c, _ in runs]
        return Report(target=name, signature=sig, dtype=str(dt).replace("torch.", ""), device=str(dev),
                      findings=findings, notes=["the target did not get through its first calls (setup): no "
                                                "probe ran"], seconds=time.perf_counter() - t0)
    if sig == "module":
        target = ModuleRecorder(built, dt, watch=watch)
        ctx = module_probes.ModuleCtx(target, dt, dev, seed)
        extra = module_probes.not_applicable()
        notes = [f"module built/checked with D={target.d_model}, H={target.n_heads}, H_kv={target.n_kv_heads}",
                 module_probes.eval_note(built)]
    else:
        target = Recorder(built, watch=watch)
        ctx = probes.Ctx(target, dt, dev, seed, expect_alignment)
        extra, notes = [], []
    notes += target.notes
    findings = []
    for i, (check, probe) in enumerate(runs):
        if listener:
            listener("probe", check)
        try:
            findings.append(_run(check, probe, ctx, timeout))
        except _Stopped as stop:
            findings.append(stop.finding)
            findings += [Finding(c, "skip", f"not run: the check stopped at probe {check} ({stop.finding.check})")
                         for c, _ in runs[i + 1:]]
            break
    findings += extra + [_mutation(target)]
    return Report(target=name, signature=sig, dtype=str(dt).replace("torch.", ""), device=str(dev),
                  findings=findings, notes=notes, seconds=time.perf_counter() - t0,
                  coverage=target.coverage.rows(), refusals=dict(list(target.coverage.refusals.items())[:12]))
