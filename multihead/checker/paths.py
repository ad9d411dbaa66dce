"""Path probes: the combinations where attention kernels keep their bugs.

A fast kernel has several code paths (packed GQA, the online softmax over key blocks, a
split-K decode, the padding and bias handling, a bf16 path), and a bug often lives in one of
them only. Each probe here runs a few targeted cases of one path against the float64
reference (checker.reference) and, when a case fails, contrasts it with neighbouring cases or
with alternative explanations so that the evidence says which path and what mistake:

    gqa_masks      GQA / MQA (G = 2, 3, 4, H) with causal, bool and per-head masks, Tq = Tk and chunked
    long_keys      hundreds to thousands of keys, the max growing late / in the last partial block
    decode         Tq = 1 over short and long caches, split-K score patterns, masks and biases
    padding        per-sequence padding (a different length in every batch element)
    additive_mask  float masks: -inf, finfo.min, real-valued (ALiBi-style) biases
    dtypes         the other dtypes (bfloat16, float16, float64/float32) on the same paths,
                   within a small multiple of what PyTorch itself loses in that dtype

A case the function refuses deliberately (ValueError, TypeError, NotImplementedError,
AssertionError) is listed as not tried; a crash (any other exception) is a failure, whether or not
the path's other cases ran: a user would see the crash. The one exception is a whole dtype that
raises in probe_dtypes (a dtype the function does not run at all is not tried).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

from multihead.checker import cases as C
from multihead.checker.adapters import Unsupported
from multihead.checker.calls import TargetRaised
from multihead.checker.probes import FLOAT32_NOTE, Ctx, _fmt, bound, float32_level, max_err
from multihead.checker.reference import reference_attention
from multihead.checker.report import Finding


@dataclass
class Result:
    case: C.Case
    err: float = 0.0
    tol: float = 0.0
    where: str = ""
    raised: TargetRaised | None = None
    out: torch.Tensor | None = None
    inputs: tuple = ()
    extra: dict = field(default_factory=dict)
    float32_level: bool = False     # float64 in, float32 accuracy: flagged, not failed (probes.bound)

    @property
    def ok(self) -> bool:
        return self.raised is None and (self.err <= self.tol or self.float32_level)


def _where(diff: torch.Tensor, tol: float) -> str:
    """Which sequences / heads / query rows exceed tol; diff [B, H, Tq] (NaN = not compared)."""
    bad = diff > tol
    parts = []
    for axis, name in ((0, "sequences"), (1, "heads"), (2, "rows")):
        other = tuple(a for a in range(3) if a != axis)
        idx = bad.any(dim=other).nonzero().flatten().tolist()
        n = bad.shape[axis]
        if 0 < len(idx) < n:
            shown = ", ".join(map(str, idx)) if len(idx) <= 6 else f"{idx[0]}..{idx[-1]} ({len(idx)})"
            parts.append(f"{name} {shown} of {n}")
    return "; ".join(parts) or "everywhere"


def low_precision_tol(q, k, v, ref, mask, is_causal, alignment) -> float:
    """4x the larger error of two plain PyTorch computations in q's dtype (SDPA, and the eager
    softmax in float32 rounded back) on the same inputs."""
    H, dt = q.shape[1], q.dtype
    kk, vv = (t.repeat_interleave(H // t.shape[1], 1) for t in (k, v))
    keep = None
    if is_causal:
        keep = C.causal_keep(q.shape[2], k.shape[2], alignment).to(q.device)
    if mask is not None:
        m = mask if mask.dtype == torch.bool else mask > -1e30
        keep = m if keep is None else keep & m
    bias = mask.to(dt) if mask is not None and mask.dtype != torch.bool else None
    s = (q @ kk.transpose(-2, -1)) * q.shape[-1] ** -0.5
    if bias is not None:
        s = s + bias
    if keep is not None:
        s = s.masked_fill(~keep, float("-inf"))
    eager = torch.softmax(s.float(), -1).nan_to_num(0).to(dt) @ vv
    sdpa_mask = s.new_zeros(s.shape).masked_fill(~keep, float("-inf")) + (bias if bias is not None else 0) \
        if keep is not None else bias
    sdpa = torch.nn.functional.scaled_dot_product_attention(q, kk, vv, attn_mask=sdpa_mask)
    return 4 * max(max_err(eager, ref), max_err(sdpa.nan_to_num(0), ref))


def run_case(ctx: Ctx, case: C.Case, salt: int, alignment: str | None = None) -> Result:
    g = ctx.gen(salt)
    dt = case.dtype or ctx.dtype
    q64, k64, v64 = C.qkv(case, g, dt)
    mask64 = C.build_mask(case, g, alignment, dt)
    mask, is_causal, _ = mask64
    q, k, v = (t.to(ctx.device, dt) for t in (q64, k64, v64))
    if mask is not None and mask.dtype != torch.bool:
        mask = mask.to(dt)
    ref_mask = None if mask is None else (mask if mask.dtype == torch.bool else mask.to(torch.float64)).cpu()
    mask = None if mask is None else mask.to(ctx.device)
    res = Result(case, inputs=(q, k, v, mask, is_causal, ref_mask))
    try:
        out, _ = ctx.target(q, k, v, mask=mask, is_causal=is_causal, pattern=case.pattern)
    except TargetRaised as err:
        res.raised = err
        return res
    except Unsupported as err:          # an argument the function does not take (no attn_mask, ...)
        res.raised = TargetRaised(err, case.label)
        return res
    ref = reference_attention(q, k, v, mask=ref_mask, is_causal=is_causal, align=alignment or "bottom-right")
    rows = C.attended(case, ref_mask, is_causal, alignment).expand(case.B, case.H, case.Tq)
    o = out.detach().to("cpu", torch.float64)
    diff = (o - ref).abs().nan_to_num(math.inf).amax(-1).masked_fill(~rows, 0.0)     # (B, H, Tq)
    res.out, res.err = o, diff.max().item() if diff.numel() else 0.0
    # The bound (probes.bound) grows with the output's size (long cases have outputs up to ~v_mean + 3)
    # and with the reduction length n = Tk + d.
    size, n = max(1.0, ref.abs().max().item()), k.shape[2] + q.shape[-1]
    res.tol = bound(dt, n, size)
    if case.dtype is not None and dt in (torch.float16, torch.bfloat16):
        res.tol = max(low_precision_tol(q, k, v, ref, mask, is_causal, alignment), res.tol / 8)
    res.float32_level = float32_level(dt, res.err, n, size)
    res.where = _where(diff, res.tol)
    res.extra["row_err"] = diff.amax(dim=(0, 1))                                      # (Tq,)
    return res


def err_against(res: Result, **ref_kwargs) -> float:
    """max |out - alternative reference| over the compared rows (for naming the mistake)."""
    q, k, v, _, is_causal, ref_mask = res.inputs
    kw = {"mask": ref_mask, "is_causal": is_causal} | ref_kwargs
    return max_err(res.out, reference_attention(q, k, v, **kw))


@dataclass
class Outcome:
    """What a path probe saw over its cases."""
    results: list[Result]

    @property
    def ran(self):
        return [r for r in self.results if r.raised is None]

    @property
    def failed(self):
        return [r for r in self.ran if not r.ok]

    @property
    def crashed(self):
        """Non-deliberate exceptions (a crash, not a refusal), whether or not the path's other cases
        ran: the same RuntimeError counts the same in every check. Only probe_dtypes marks a whole
        dtype that raises as refused (a dtype the function does not run at all)."""
        return [r for r in self.results if r.raised is not None and not r.raised.deliberate
                and not r.extra.get("refused")]

    @property
    def refused(self):
        return [r for r in self.results if r.raised is not None and r not in self.crashed]


def separating(outcome: "Outcome", patterns) -> str:
    """The text of the first (predicate(case), text) that holds for every failing case and for no
    case that ran right: a pattern the evidence supports, never one it contradicts. "" if none."""
    right = [r.case for r in outcome.ran if r.ok]
    if not outcome.failed or not right:
        return ""
    for holds, text in patterns:
        if all(holds(r.case) for r in outcome.failed) and not any(holds(c) for c in right):
            return text
    return ""


def run_all(ctx: Ctx, cases: list[C.Case], salt: int, alignment: str | None = None) -> Outcome:
    return Outcome([run_case(ctx, c, salt * 100 + i, alignment) for i, c in enumerate(cases)])


def _line(r: Result) -> str:
    return f"{r.case.label}: diff {_fmt(r.err)} > {r.tol:.1e} ({r.where})"


def conclude(check: str, outcome: Outcome, what: str, diagnosis: str = "", symptom: str = "") -> Finding:
    """One finding from a path probe's outcome; diagnosis names the mistake when one is known."""
    metrics = {"cases": [{"case": r.case.label, "max_abs_err": r.err, "tolerance": r.tol, "float32_level": r.float32_level,
                          "raised": str(r.raised) if r.raised else None} for r in outcome.results]}
    refused = "; ".join(f"{r.case.label} refused ({r.raised})" for r in outcome.refused)
    if outcome.crashed:
        r = outcome.crashed[0]
        ok = [x.case.label for x in outcome.ran]
        ran = f", while {', '.join(ok[:3])} ran" if ok else " (every case of this check raised)"
        return Finding(check, "fail", f"raised {r.raised} on {r.case.label} ({r.raised.call}), a legal input"
                       f"{ran}", metrics,
                       symptom="The model crashes on inputs of this shape (a prompt length, batch or head layout "
                               "the others do not have), while the shapes its tests use work.",
                       fix="Handle every legal shape (lengths that are not a multiple of the block, Tq = 1, "
                           "H_kv < H, batch > 1), or refuse it up front with a ValueError naming the argument.")
    if not outcome.ran:
        return Finding(check, "skip", f"not tried: {refused}", metrics)
    if outcome.failed:
        more = len(outcome.failed) - 3
        lines = "; ".join(_line(r) for r in outcome.failed[:3]) + (f"; and {more} more" if more > 0 else "")
        passed = [r.case.label for r in outcome.ran if r.ok]
        tail = f"; correct on {', '.join(passed)}" if passed else ""
        return Finding(check, "fail", f"{lines}{tail}" + (f" -> {diagnosis}" if diagnosis else ""), metrics,
                       symptom=symptom)
    worst = max(r.err for r in outcome.ran)
    low = [r for r in outcome.ran if r.float32_level]
    if low:
        r = max(low, key=lambda x: x.err)
        return Finding(check, "info", f"{what}: {len(outcome.ran)} cases within float32's bound, but {len(low)} "
                       f"float64 case(s) miss float64's: {r.case.label}: diff {_fmt(r.err)} > {r.tol:.1e}"
                       f"{FLOAT32_NOTE}" + (f"; {refused}" if refused else ""), metrics)
    return Finding(check, "pass", f"{what}: {len(outcome.ran)} cases equal the float64 reference (max diff "
                   f"{_fmt(worst)})" + (f"; {refused}" if refused else ""), metrics)
