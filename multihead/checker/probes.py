"""Black-box probes for attention functions (signatures "sdpa" and "hf").

Each probe is one small function: it builds seeded inputs, calls the target through its adapter
(only ever calling it, never reading its code) and returns one Finding. `reference` and `scale`
compare with the float64 reference in checker.reference; the others compare the target with
itself on inputs that must give the same answer (see self_reference), so that each bug fails one
check. Inputs are drawn in float64 and rounded to the dtype under test before anything sees
them, so rounding of the inputs is never counted as error.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

from multihead.checker.adapters import Unsupported
from multihead.checker.calls import Recorder, TargetRaised
from multihead.checker.reference import causal_mask, expand_kv, normal, reference_attention
from multihead.checker.report import Finding

# -- how close is correct: the bound, derived from the dtype's rounding (docs/checker.md) ------------
# A correct implementation's error against the exact (float64) answer comes from rounding: the
# inputs are exact in the dtype (drawn that way), so only the computation rounds. For outputs
# softmax(s) v of size V (= max(1, |reference|)):
#   R * u_io : values stored in the dtype itself (the scores, the weights, the output, each
#              rounded once to the dtype; scores of a few units: R = 10 roundings in all), and
#   LAMBDA * u_acc * sqrt(n) : the sums of the computation (q.k over d, the weighted sum and the
#              normalizer over the Tk keys; n = Tk + d), accumulated in u_acc's dtype in any order.
#              Higham & Mary 2019 (SIAM J. Sci. Comput. 41(5), A2815, Thm 3.1): a sum of n terms
#              has error at most lambda * sqrt(n) * u * sum|terms| with probability at least
#              1 - 2n exp(-lambda^2 (1-u)^2 / 2); LAMBDA = 8 makes that 1 - 1e-10 at n = 4000.
# u = 2^-p for a p-bit significand: float64 2^-53, float32 2^-24, float16 2^-11, bfloat16 2^-8.
# u_acc is float32's for float32, float16 and bfloat16 (every correct kernel accumulates in at
# least float32) and float64's for float64: the float64 contract, a float64 input is computed in
# float64 throughout. A float64 result outside float64's bound but inside the bound of a float32
# accumulation is flagged (INFO: "float64 in, float32 accuracy"), beyond both it fails.
ROUNDINGS = 10
LAMBDA = 8.0
NOMINAL_N = 128   # the basic probes' reduction lengths: Tk <= 40 keys plus d <= 64, rounded up


def unit_roundoff(dtype: torch.dtype) -> float:
    """u = 2^-p (half the machine epsilon): float64 2^-53, float32 2^-24, float16 2^-11, bfloat16 2^-8."""
    return torch.finfo(dtype).eps / 2


def accumulation_dtype(dtype: torch.dtype) -> torch.dtype:
    """What a correct implementation accumulates in: float64 for float64 inputs, float32 otherwise."""
    return torch.float64 if dtype == torch.float64 else torch.float32


def bound(dtype: torch.dtype, n: int = NOMINAL_N, size: float = 1.0, acc: torch.dtype | None = None) -> float:
    """Largest |out - reference| accepted for a correct implementation: size * (ROUNDINGS * u_io +
    LAMBDA * u_acc * sqrt(n)); n the reduction length (Tk + d), size max(1, |reference|), acc the
    accumulation dtype (default accumulation_dtype(dtype))."""
    u_acc = unit_roundoff(acc or accumulation_dtype(dtype))
    return size * (ROUNDINGS * unit_roundoff(dtype) + LAMBDA * u_acc * math.sqrt(max(n, 1)))


def float32_level(dtype: torch.dtype, err: float, n: int = NOMINAL_N, size: float = 1.0) -> bool:
    """True for a float64 result that misses float64's bound but is within a float32 accumulation's."""
    return dtype == torch.float64 and bound(dtype, n, size) < err <= bound(dtype, n, size, acc=torch.float32)


# The bound at the basic probes' sizes, per dtype (the probes' default tolerance; the path probes
# call bound() with each case's own n and output size).
TOLERANCE = {dt: bound(dt) for dt in (torch.float64, torch.float32, torch.float16, torch.bfloat16)}
FLOAT32_NOTE = (" -- float64 in, float32 accuracy: part of the computation runs in float32 (the float64 contract, "
                "docs/checker.md, wants float64 throughout)")


@dataclass
class Ctx:
    target: Recorder
    dtype: torch.dtype
    device: torch.device
    seed: int = 0
    expect_alignment: str | None = None
    facts: dict = field(default_factory=dict)     # what earlier probes established (the causal alignment)

    @property
    def tol(self) -> float:
        """The bound for comparing the target with itself (masks, causality, heads, batch...): those
        checks look for bugs that move outputs by 1e-2 or more, so a float64 target computing in
        float32 is judged by `reference` and the path probes alone, not failed here too."""
        return max(TOLERANCE[self.dtype], bound(self.dtype, acc=torch.float32))

    def gen(self, salt: int) -> torch.Generator:
        return torch.Generator().manual_seed(self.seed * 1000 + salt)

    def randn(self, g: torch.Generator, *shape, std: float = 1.0, dtype=None) -> torch.Tensor:
        t = normal(*shape, generator=g, dtype=dtype or self.dtype) * std
        return t.to(self.device, dtype or self.dtype)

    def qkv(self, g, B, H, Tq, Tk, d, h_kv=None, std=1.0):
        h_kv = h_kv or H
        return (self.randn(g, B, H, Tq, d, std=std), self.randn(g, B, h_kv, Tk, d, std=std),
                self.randn(g, B, h_kv, Tk, d))


def max_err(out: torch.Tensor, ref: torch.Tensor) -> float:
    """max |out - ref| in float64; inf when out holds inf or NaN."""
    out = out.detach().to("cpu", torch.float64)
    if not torch.isfinite(out).all():
        return math.inf
    return (out - ref.to("cpu", torch.float64)).abs().max().item() if out.numel() else 0.0


def _fmt(x: float) -> str:
    return "inf/NaN" if not math.isfinite(x) else f"{x:.1e}"


def _ranges(idx: list[int]) -> str:
    return ", ".join(str(i) for i in idx) if len(idx) <= 6 else f"{idx[0]}..{idx[-1]} ({len(idx)} of them)"


def changed(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """|a - b| in float64 on the CPU, elementwise: 0 where both hold the same value, NaN and NaN
    included (an output that is NaN before and after a perturbation did not move), inf where only
    one of them is inf/NaN."""
    a, b = a.detach().to("cpu", torch.float64), b.detach().to("cpu", torch.float64)
    same = (a == b) | (a.isnan() & b.isnan())
    return (a - b).abs().nan_to_num(math.inf).masked_fill(same, 0.0)


def needs_finite(out: torch.Tensor, what: str) -> None:
    """A probe that reads which outputs move cannot read it from inf/NaN outputs: skip it (the
    finite_output check reports the NaN itself)."""
    if not torch.isfinite(out).all():
        raise Unsupported(f"the output is already inf/NaN on these plain inputs, so {what} cannot be seen "
                          f"(see finite_output)")


def _near_one(lo: float, hi: float) -> str:
    """lo..hi with enough digits that a range that is not 1 never prints as 1..1."""
    dev = max(abs(lo - 1), abs(hi - 1))
    digits = 3 if not math.isfinite(dev) or dev == 0 or dev >= 1e-2 else min(17, 2 + math.ceil(-math.log10(dev)))
    return f"{lo:.{digits}g}..{hi:.{digits}g}"


# -- 0. sanity of a plain call: the same answer twice, and a finite one ----------------------------------
def probe_determinism(ctx: Ctx) -> Finding:
    """Two calls on the same inputs must give the same output: every other probe compares the
    target with itself, so randomness (dropout left on) would otherwise read as a mask, head or
    batch bug."""
    g = ctx.gen(12)
    q, k, v = ctx.qkv(g, 2, 4, 16, 16, 16)
    out1, _ = ctx.target(q, k, v)
    out2, _ = ctx.target(q, k, v)
    delta = changed(out1, out2)
    n, size = int((delta > ctx.tol).sum()), delta.max().item()
    metrics = {"values_that_differ": n, "max_diff": size, "values": delta.numel()}
    if n:
        return Finding("determinism", "fail", f"two calls on the same q, k, v (B=2, H=4, Tq=Tk=16, d=16, no mask) "
                       f"gave different outputs: {n} of {delta.numel()} values differ, by up to {_fmt(size)}: "
                       f"nondeterministic: dropout or randomness left on", metrics)
    return Finding("determinism", "pass", f"two calls on the same q, k, v give the same output (max diff "
                   f"{_fmt(size)})", metrics)


def probe_finite_output(ctx: Ctx) -> Finding:
    g = ctx.gen(13)
    q, k, v = ctx.qkv(g, 2, 4, 12, 12, 16)
    out, _ = ctx.target(q, k, v)
    o = out.detach()
    n_nan, n_inf = int(o.isnan().sum()), int(o.isinf().sum())
    metrics = {"nan": n_nan, "inf": n_inf, "values": o.numel()}
    where = "random q, k, v of size about 1 (B=2, H=4, Tq=Tk=12, d=16, no mask, no is_causal)"
    if n_nan or n_inf:
        what = ("every output is NaN" if n_nan == o.numel() else
                f"{n_nan + n_inf} of {o.numel()} outputs are inf/NaN ({n_nan} NaN, {n_inf} inf)")
        return Finding("finite_output", "fail", f"{what} on {where}: the output is NaN on ordinary inputs", metrics)
    return Finding("finite_output", "pass", f"every output is finite on {where}", metrics)


# -- 1. plain accuracy ----------------------------------------------------------------------------
SHAPES_REFERENCE = ((2, 4, 12, 12, 16), (1, 2, 5, 9, 32))    # (B, H, Tq, Tk, d): square, then Tq != Tk


def probe_reference(ctx: Ctx) -> Finding:
    g = ctx.gen(1)
    errs = []
    for B, H, Tq, Tk, d in SHAPES_REFERENCE:
        q, k, v = ctx.qkv(g, B, H, Tq, Tk, d)
        out, _ = ctx.target(q, k, v)
        errs.append(max_err(out, reference_attention(q, k, v)))
    err, tol = max(errs), TOLERANCE[ctx.dtype]
    status, note = ("pass", "") if err <= tol else ("fail", "")
    if status == "fail" and float32_level(ctx.dtype, err):
        status, note = "info", FLOAT32_NOTE
    return Finding("reference", status,
                   f"max |out - ref| = {_fmt(err)} on random q, k, v with (B, H, Tq, Tk, d) = "
                   f"{' and '.join(str(sh) for sh in SHAPES_REFERENCE)}; tolerance {tol:.1e}{note}",
                   {"max_abs_err": err, "tolerance": tol})


# -- 2. the 1/sqrt(d_k) scale ---------------------------------------------------------------------
def fit_scale(out: torch.Tensor, q, k, v) -> tuple[float, float]:
    """The scale s for which softmax(s q k^T) v (float64, MHA shapes) is closest to out
    (max-abs error), by a log-spaced scan from 1e-3 to 10 and a golden-section refinement.
    Returns (s, residual)."""
    o = out.detach().to("cpu", torch.float64)
    if not torch.isfinite(o).all():
        return 1.0, math.inf
    qk = q.to("cpu", torch.float64) @ k.to("cpu", torch.float64).transpose(-2, -1)   # (B, H, Tq, Tk)
    v64 = v.to("cpu", torch.float64)

    def err(s):
        return (torch.softmax(qk * s, dim=-1) @ v64 - o).abs().max().item()

    grid = torch.logspace(-3, 1, 49, dtype=torch.float64).tolist()
    errs = [err(s) for s in grid]
    i = min(range(len(grid)), key=errs.__getitem__)
    lo, hi = math.log(grid[max(i - 1, 0)]), math.log(grid[min(i + 1, len(grid) - 1)])
    phi = (math.sqrt(5) - 1) / 2
    a, b = hi - phi * (hi - lo), lo + phi * (hi - lo)
    fa, fb = err(math.exp(a)), err(math.exp(b))
    for _ in range(30):   # the bracket shrinks by 0.618 per step: 30 steps reach 1e-7 in log(s)
        if fa <= fb:
            hi, b, fb = b, a, fa
            a = hi - phi * (hi - lo)
            fa = err(math.exp(a))
        else:
            lo, a, fa = a, b, fb
            b = lo + phi * (hi - lo)
            fb = err(math.exp(b))
    s = math.exp((lo + hi) / 2)
    return s, err(s)


def _name_scale(s: float, want: float, d: int) -> str:
    close = lambda a, b: abs(math.log(a / b)) < 0.03   # noqa: E731
    if close(s, 1.0):
        return "no scaling at all (1/sqrt(d_k) is missing)"
    if close(s, 1.0 / d):
        return "divides by d_k instead of sqrt(d_k)"
    if close(s, want * want * math.sqrt(d)):
        return "scaled twice"
    return f"scale off by a factor {s / want:.3g}"


def probe_scale(ctx: Ctx) -> Finding:
    g = ctx.gen(2)
    arg = "scaling=" if ctx.target.kind == "hf" else "scale="
    parts, diagnoses, custom_parts, metrics, inconclusive = [], [], [], {}, []
    custom_ok = None
    limit = max(20 * ctx.tol, 1e-6)   # the fit itself is good to ~1e-8 (golden section, 30 steps)
    for d in (16, 64):
        # Small q, k keep the softmax away from saturation, where the scale would be hard to read.
        q, k, v = ctx.qkv(g, 1, 2, 16, 16, d, std=0.5)
        want = 1.0 / math.sqrt(d)
        out, _ = ctx.target(q, k, v)
        s, resid = fit_scale(out, q, k, v)
        metrics[f"d{d}_effective_scale"], metrics[f"d{d}_expected"], metrics[f"d{d}_residual"] = s, want, resid
        if resid > limit:
            inconclusive.append(f"d_k={d}: no single scale reproduces the output (best residual {_fmt(resid)})")
            continue
        parts.append(f"d_k={d}: effective scale {s:.4g} (expected {want:.4g})")
        if abs(math.log(s / want)) > 0.03:
            diagnoses.append(_name_scale(s, want, d))
        # An explicit scale must be obeyed (HF always passes scaling=).
        if ctx.target.scale_arg:
            custom = 2.0 / math.sqrt(d)
            try:
                out_c, _ = ctx.target(q, k, v, scale=custom)
            except Unsupported:
                continue
            s_c, resid_c = fit_scale(out_c, q, k, v)
            metrics[f"d{d}_custom_scale"], metrics[f"d{d}_custom_effective"] = custom, s_c
            good = resid_c <= limit and abs(math.log(s_c / custom)) < 0.03
            custom_ok = good if custom_ok is None else (custom_ok and good)
            if not good:
                custom_parts.append(f"{arg}{custom:.3g} gave effective {s_c:.4g}")
    problems = []
    if diagnoses:
        problems.append(" and ".join(dict.fromkeys(diagnoses)))
    if custom_ok is False:
        problems.append(f"the {arg} argument is ignored or mis-applied ({', '.join(custom_parts)})")
    elif custom_ok:
        parts.append(f"explicit {arg} obeyed")
    if problems:
        return Finding("scale", "fail", "; ".join(parts) + " -> " + "; ".join(problems), metrics)
    if not parts:
        return Finding("scale", "skip", "; ".join(inconclusive) + " -- another bug hides the scale; see the "
                       "failing findings", metrics)
    return Finding("scale", "pass", "; ".join(parts + inconclusive), metrics)


# Self-consistency: every probe below except `reference` and `scale` compares fn with fn itself
# (on inputs that must give the same answer), so a wrong scale or a wrong softmax does not make
# the mask, causal, GQA and overflow checks fail too: each failure names one cause.
def self_reference(ctx: Ctx, q, k, v, keep: torch.Tensor) -> torch.Tensor:
    """What fn must return under the bool mask keep [Tq, Tk] (shared by all batches and heads),
    built from unmasked calls of fn itself: query row i attends exactly the keys keep[i], so it
    equals fn(q[:, :, [i, i]], k[:, :, keep[i]], v[:, :, keep[i]])[:, :, 0]. Rows with no key are 0.
    Returns float64 [B, H, Tq, d_v] on the CPU."""
    rows = []
    for i in range(q.shape[2]):
        idx = keep[i].nonzero().flatten().to(k.device)
        if idx.numel() == 0:
            rows.append(torch.zeros(q.shape[0], q.shape[1], 1, v.shape[-1], dtype=torch.float64))
            continue
        # Row i twice (Tq = 2), so that a bug of a one-row (decode) path does not enter the
        # reference; a single key twice too (two equal keys give the same output), so that Tq <= Tk
        # for a function that refuses more queries than keys.
        idx = idx.repeat(2) if idx.numel() == 1 else idx
        out_i, _ = ctx.target(q[:, :, [i, i]], k.index_select(2, idx), v.index_select(2, idx))
        rows.append(out_i[:, :, :1].detach().to("cpu", torch.float64))
    return torch.cat(rows, dim=2)


def _shift_pair(ctx, g, dtype, base, B=1, H=2, T=16, d=16):
    """Two input sets whose scaled logits differ by the constant `base` in every row: the first
    coordinate of every q and k is a = sqrt(base * sqrt(d)) in the large set and 0 in the small
    one, the rest N(0, 1) in both. Softmax is shift invariant, so fn must give the same output
    for both (whatever scale it applies); exp() of the large logits overflows unless the row
    maximum is subtracted first."""
    q = normal(B, H, T, d, generator=g, dtype=dtype)
    k = normal(B, H, T, d, generator=g, dtype=dtype)
    v = normal(B, H, T, d, generator=g, dtype=dtype)
    q[..., 0], k[..., 0] = 0.0, 0.0
    a = math.sqrt(base * math.sqrt(d))
    ql, kl = q.clone(), k.clone()
    ql[..., 0], kl[..., 0] = a, a
    cast = lambda t: t.to(ctx.device, dtype)   # noqa: E731
    return (cast(ql), cast(kl), cast(v)), (cast(q), cast(k), cast(v))


def probe_overflow(ctx: Ctx) -> Finding:
    g = ctx.gen(3)
    cases = [(torch.float32, 300.0), (torch.float16, 20.0)]
    if ctx.dtype == torch.float64:
        cases.append((torch.float64, 1000.0))
    parts, metrics, bad, skipped = [], {}, [], []
    for dtype, base in cases:
        name = str(dtype).replace("torch.", "")
        (ql, kl, v), (qs, ks, _) = _shift_pair(ctx, g, dtype, base)
        try:
            out_l, _ = ctx.target(ql, kl, v, pattern="large logits")
            out_s, _ = ctx.target(qs, ks, v)
        except TargetRaised as err:   # a dtype the function does not take is not a bug
            skipped.append(f"{name}: not supported ({type(err.error).__name__})")
            continue
        n_bad = int((~torch.isfinite(out_l)).sum())
        diff = max_err(out_l, out_s.detach().to("cpu", torch.float64))
        # Rounding of the large logits themselves is unavoidable, and grows with whatever scale
        # fn applies: allow 10x the dtype's tolerance or 8x what a plain PyTorch computation in
        # the same dtype loses between the two input sets. Missing max subtraction gives inf/NaN.
        plain = [torch.softmax((a.float() @ b.float().transpose(-2, -1) / math.sqrt(a.shape[-1])).to(dtype), -1) @ v
                 for a, b in ((ql, kl), (qs, ks))]
        tol = max(10 * TOLERANCE[dtype], 8 * max_err(plain[0], plain[1].to("cpu", torch.float64)))
        metrics[f"{name}_nonfinite"], metrics[f"{name}_shift_diff"], metrics[f"{name}_tolerance"] = n_bad, diff, tol
        if n_bad:
            bad.append(f"{name}, logits ~{base:g}: {n_bad} of {out_l.numel()} outputs are inf/NaN")
        elif diff > tol:
            bad.append(f"{name}, logits ~{base:g}: differs from the same logits shifted down to ~0 by "
                       f"{_fmt(diff)} (tolerance {tol:.0e})")
        else:
            parts.append(f"{name}, logits ~{base:g}: finite, equal to the shifted logits' output (diff {_fmt(diff)})")
    if bad:
        return Finding("overflow", "fail", "; ".join(bad + parts + skipped), metrics)
    if not parts:
        return Finding("overflow", "skip", "; ".join(skipped), metrics)
    return Finding("overflow", "pass", "; ".join(parts + skipped), metrics)


# -- 4. causal leak --------------------------------------------------------------------------------
def probe_causal_mask(ctx: Ctx) -> Finding:
    g = ctx.gen(4)
    T = 12
    q, k, v = ctx.qkv(g, 1, 2, T, T, 16)
    out, _ = ctx.target(q, k, v, is_causal=True)
    metrics = {"max_abs_err_vs_reference": max_err(out, reference_attention(q, k, v, is_causal=True))}
    leaks = {}
    for j in (3, 7, 11):
        q2, k2, v2 = q.clone(), k.clone(), v.clone()
        for t in (q2, k2, v2):
            t[:, :, j] += ctx.randn(g, *t[:, :, j].shape, std=2.0)
        out2, _ = ctx.target(q2, k2, v2, is_causal=True)
        delta = changed(out2[:, :, :j], out[:, :, :j]).amax(dim=(0, 1, 3))
        moved = [i for i in range(j) if delta[i] > ctx.tol]
        if moved:
            leaks[j] = (moved, delta.max().item())
    metrics["leaking_rows"] = {str(j): m for j, (m, _) in leaks.items()}
    if leaks:
        j, (moved, size) = next(iter(leaks.items()))
        return Finding("causal_mask", "fail", f"perturbing token {j} moved the outputs of earlier positions "
                       f"{_ranges(moved)} by up to {_fmt(size)} (must be 0): the future leaks into the past", metrics)
    keep = causal_mask(T, T)
    err = max_err(out, self_reference(ctx, q, k, v, keep))
    metrics["err_vs_prefix_calls"] = err
    if err > ctx.tol:
        hint = ""
        hidden = keep & ~torch.eye(T, dtype=torch.bool)
        rows = hidden.any(-1)            # row 0 has no key left when the diagonal is hidden
        if max_err(out[:, :, rows], self_reference(ctx, q, k, v, hidden)[:, :, rows]) <= ctx.tol:
            first = out[:, :, ~rows].detach().to("cpu", torch.float64)
            row0 = ("inf/NaN" if not torch.isfinite(first).all() else
                    "0" if first.abs().max().item() <= ctx.tol else f"finite values up to {first.abs().max().item():.3g}")
            hint = (f": it hides the diagonal too (a token cannot see itself; rows 1..{T - 1} equal attention over "
                    f"keys 0..i-1, and row 0, left with no key, is {row0})")
            metrics["hides_diagonal"] = True
        return Finding("causal_mask", "fail", f"no leak, but row i differs from attending keys 0..i without a mask "
                       f"by {_fmt(err)}{hint}", metrics)
    return Finding("causal_mask", "pass", f"no future token moves a past output (3 perturbations); row i equals "
                   f"unmasked attention over keys 0..i (max diff {_fmt(err)})", metrics)


# -- 5. causal alignment when Tq != Tk ----------------------------------------------------------------
ALIGNMENT_SHAPES = ((3, 8), (1, 40), (5, 37))     # (Tq, Tk): chunked prefill, a decode step, odd lengths


def _offset(ctx: Ctx, q, k, v, out, Tq: int, Tk: int) -> tuple[str | None, int | None, dict]:
    """Which causal offset o (query i sees keys j <= i + o) explains out: ("bottom-right" or
    "top-left", o, errors) or (None, o or None, errors) for any other single offset."""
    def err_at(offset):
        keep = torch.arange(Tk)[None, :] <= torch.arange(Tq)[:, None] + offset
        return max_err(out, self_reference(ctx, q, k, v, keep))

    errs = {"bottom-right": err_at(Tk - Tq), "top-left": err_at(0)}
    found = next((a for a, e in errs.items() if e <= ctx.tol), None)
    if found:
        return found, Tk - Tq if found == "bottom-right" else 0, errs
    offsets = [o for o in range(-Tq, Tk + 1) if o not in (0, Tk - Tq) and err_at(o) <= ctx.tol]
    return None, offsets[0] if offsets else None, errs


def _off_text(Tq: int, Tk: int, o: int | None) -> str:
    if o is None:
        return "no single causal offset explains it"
    if Tq == 1 and o == Tk - 2:
        return (f"the new token sees keys 0..{Tk - 2} but not itself (key {Tk - 1}): off by one on every decode "
                f"step, deterministically")
    return f"query i sees keys j <= i + {o} (bottom-right is i + {Tk - Tq}, top-left i + 0)"


def probe_causal_alignment(ctx: Ctx) -> Finding:
    if ctx.target.kind == "hf":
        return Finding("causal_alignment", "skip", "HF attention functions receive causality as an explicit "
                       "mask built by the model; its alignment is the mask builder's job")
    g = ctx.gen(5)
    seen, bad, metrics, refused = {}, [], {}, []
    for Tq, Tk in ALIGNMENT_SHAPES:
        q, k, v = ctx.qkv(g, 1, 2, Tq, Tk, 16)
        try:
            out, _ = ctx.target(q, k, v, is_causal=True)
        except TargetRaised as err:   # refusing Tq != Tk is safe: it cannot misalign silently
            refused.append(f"Tq={Tq}, Tk={Tk} refused ({err})")
            continue
        found, o, errs = _offset(ctx, q, k, v, out, Tq, Tk)
        metrics[f"Tq{Tq}_Tk{Tk}"] = {"alignment": found, "offset": o, "err_bottom_right": errs["bottom-right"],
                                     "err_top_left": errs["top-left"]}
        if found:
            seen[(Tq, Tk)] = found
        else:
            bad.append(f"Tq={Tq}, Tk={Tk}: matches neither convention (diff {_fmt(errs['bottom-right'])} from "
                       f"bottom-right, {_fmt(errs['top-left'])} from top-left); {_off_text(Tq, Tk, o)}")
    if not seen and not bad:
        return Finding("causal_alignment", "skip", "the function refuses is_causal with Tq != Tk: it cannot misalign "
                       "silently; " + "; ".join(refused), metrics)
    kinds = set(seen.values())
    shapes = lambda a: ", ".join(f"Tq={t}, Tk={u}" for (t, u), x in seen.items() if x == a)   # noqa: E731
    if len(kinds) > 1:
        bad.append(f"mixed: bottom-right at {shapes('bottom-right')} but top-left at {shapes('top-left')}")
    if bad:
        return Finding("causal_alignment", "fail", "; ".join(bad), metrics)
    found = kinds.pop()
    ctx.facts["alignment"] = found
    metrics["alignment"] = found
    expect, note = ctx.expect_alignment, ("; " + "; ".join(refused)) if refused else ""
    if expect and found != expect:
        return Finding("causal_alignment", "fail", f"{shapes(found)}: aligned {found}, but {expect} was expected{note}",
                       metrics)
    if found == "bottom-right":
        return Finding("causal_alignment", "pass", f"{shapes(found)}: bottom-right, query i sees keys 0..Tk-Tq+i "
                       f"(the KV-cache convention){note}", metrics)
    status = "pass" if expect == "top-left" else "info"
    return Finding("causal_alignment", status, f"{shapes(found)}: top-left (torch SDPA's convention), query i "
                   f"sees keys 0..i; over a KV cache do not pass is_causal=True for a decode step (the new "
                   f"token would see only key 0): use an explicit mask{note}", metrics)


# -- 6/7. masks ------------------------------------------------------------------------------------
def _random_mask(g, T, p=0.6):
    """Bool [T, T], True = attend; every row keeps one key (its diagonal) and drops one, so
    neither the mask nor its inverse has an empty row."""
    keep = torch.rand(T, T, generator=g) < p
    i = torch.arange(T)
    keep[i, i] = True
    keep[i, (i + 1) % T] = False
    return keep


def probe_mask_polarity(ctx: Ctx) -> Finding:
    g = ctx.gen(6)
    B, T = 2, 10
    q, k, v = ctx.qkv(g, B, 2, T, T, 16)
    keep = _random_mask(g, T)
    out, _ = ctx.target(q, k, v, mask=keep[None, None].to(ctx.device))
    err = max_err(out, self_reference(ctx, q, k, v, keep))
    err_inv = max_err(out, self_reference(ctx, q, k, v, ~keep))
    err_none = max_err(out, ctx.target(q, k, v)[0].detach().to("cpu", torch.float64))
    metrics = {"diff_true_attends": err, "diff_true_masks": err_inv, "diff_mask_ignored": err_none,
               "max_abs_err_vs_reference": max_err(out, reference_attention(q, k, v, mask=keep))}
    if err <= ctx.tol:
        return Finding("mask_polarity", "pass", f"True = attend: each row equals unmasked attention over its True "
                       f"keys (diff {_fmt(err)}; read inverted it would be {_fmt(err_inv)})", metrics)
    if err_inv <= ctx.tol:
        what = "polarity inverted: True is read as masked (nn.MultiheadAttention's convention)"
    elif err_none <= ctx.tol:
        what = "the mask is ignored"
    else:
        what = "the output matches neither polarity nor the unmasked output"
    return Finding("mask_polarity", "fail", f"{what}; diff from attending the True keys {_fmt(err)}, from "
                   f"attending the False keys {_fmt(err_inv)}", metrics)


def masked_rows_case(ctx: Ctx, B: int, Tq: int, Tk: int, empty: list[int], salt: int) -> Finding:
    """Query rows `empty` (at decode, Tq = 1: whole sequences `empty`) with every key masked
    must be finite and leave the other rows as they are without the holes."""
    g = ctx.gen(salt)
    q, k, v = ctx.qkv(g, B, 2, Tq, Tk, 16)
    keep = torch.rand(B, 1, Tq, Tk, generator=g) < 0.6
    keep[..., 0] = True
    holes = keep.clone()
    if Tq == 1:
        holes[empty] = False
    else:
        holes[:, :, empty] = False
    out, _ = ctx.target(q, k, v, mask=holes.to(ctx.device))
    base, _ = ctx.target(q, k, v, mask=keep.to(ctx.device))
    out = out.detach().to("cpu", torch.float64)
    sel = (holes.any(-1) == False).expand(B, q.shape[1], Tq)          # noqa: E712 - (B, H, Tq): the empty rows
    rows = out[sel]
    n_bad = int((~torch.isfinite(rows)).sum())
    diff_others = max_err(out[~sel].view(1, -1), base.detach().to("cpu", torch.float64)[~sel].view(1, -1))
    where = (f"decode Tq=1, Tk={Tk}, B={B}, sequences {empty} fully masked" if Tq == 1
             else f"Tq={Tq}, Tk={Tk}, rows {empty} fully masked")
    metrics = {"case": where, "nonfinite_in_empty_rows": n_bad,
               "empty_row_max_abs": rows.nan_to_num(math.inf).abs().max().item(), "other_rows_diff": diff_others}
    if n_bad or diff_others > ctx.tol:
        what = f"{n_bad} of {rows.numel()} values in the fully masked rows are inf/NaN" if n_bad \
            else "fully masked rows are finite"
        return Finding("fully_masked_rows", "fail", f"{where}: {what}; the other rows moved by {_fmt(diff_others)} "
                       f"(must be 0)", metrics)
    if rows.abs().max().item() <= ctx.tol:
        return Finding("fully_masked_rows", "pass", f"{where}: 0 (as PyTorch returns); other rows unchanged", metrics)
    mean_v = v.to("cpu", torch.float64).mean(2, keepdim=True).expand(B, q.shape[1], Tq, -1)[sel]
    what = "the mean of V (uniform weights, as an additive finfo.min mask gives)" \
        if max_err(rows, mean_v) <= 10 * ctx.tol else f"finite nonzero values (max {rows.abs().max().item():.3g})"
    return Finding("fully_masked_rows", "info", f"{where}: {what}, not 0: finite, so harmless if the caller ignores "
                   f"those rows; other rows unchanged", metrics)


# -- 8/9. heads ------------------------------------------------------------------------------------
def _moved_heads(ctx, out, q, k, v, heads_q: bool, h: int, g) -> list[int]:
    """Perturb query head h (with its k, v when MHA) or KV head h; return the output heads that move."""
    q2, k2, v2 = q.clone(), k.clone(), v.clone()
    targets = (q2, k2, v2) if heads_q else (k2, v2)
    for t in targets:
        t[:, h] += ctx.randn(g, *t[:, h].shape)
    out2, _ = ctx.target(q2, k2, v2)
    delta = changed(out2, out).amax(dim=(0, 2, 3))
    return [i for i in range(out.shape[1]) if delta[i] > ctx.tol]


def probe_head_independence(ctx: Ctx) -> Finding:
    g = ctx.gen(8)
    q, k, v = ctx.qkv(g, 1, 4, 8, 8, 16)
    out, _ = ctx.target(q, k, v)
    needs_finite(out, "which heads a perturbation moves")
    wrong = {}
    for h in (0, 2):
        moved = _moved_heads(ctx, out, q, k, v, True, h, g)
        if moved != [h]:
            wrong[h] = moved
    if wrong:
        h, moved = next(iter(wrong.items()))
        return Finding("head_independence", "fail", f"perturbing head {h}'s q, k, v moved output heads {moved} "
                       f"(expected only [{h}]): heads are mixed, as a reshape without transpose does",
                       {"moved": {str(a): b for a, b in wrong.items()}})
    return Finding("head_independence", "pass", "perturbing head 0 (then 2) of 4 moves only that output head")


GQA_SHAPES = ((4, 2), (6, 2), (8, 2), (4, 1))     # (H, H_kv): G = 2, 3 (odd), 4, MQA


def probe_gqa_grouping(ctx: Ctx) -> Finding:
    if ctx.target.gqa == "repeat":
        from multihead.checker.coverage import heads_value
        for H, H_kv in GQA_SHAPES:
            ctx.target.coverage.not_tried("heads", heads_value(H, H_kv), "the function takes only H_kv == H "
                                          "(the checker expands K/V with repeat_interleave)")
        return Finding("gqa_grouping", "skip", "the function only takes H_kv == H; grouping is the caller's job "
                       "(the checker expands with repeat_interleave)")
    g = ctx.gen(9)
    via = f" (via {ctx.target.gqa.replace('native', 'GQA-shaped k/v')})" if ctx.target.kind == "sdpa" else ""
    passed, metrics = [], {}
    for H, H_kv in GQA_SHAPES:
        grp = H // H_kv
        q, k, v = ctx.qkv(g, 1, H, 8, 8, 16, h_kv=H_kv)
        out, _ = ctx.target(q, k, v)
        needs_finite(out, "which query heads a KV head feeds")
        # The same attention with K/V expanded by hand to H heads: what fn must reproduce.
        err = max_err(out, ctx.target(q, expand_kv(k, H), expand_kv(v, H))[0].detach().to("cpu", torch.float64))
        err_tile = max_err(out, ctx.target(q, expand_kv(k, H, "tile"), expand_kv(v, H, "tile"))[0]
                           .detach().to("cpu", torch.float64))
        moved = {kv: _moved_heads(ctx, out, q, k, v, False, kv, g) for kv in range(H_kv)}
        expect = {kv: list(range(kv * grp, (kv + 1) * grp)) for kv in range(H_kv)}
        metrics[f"H{H}_Hkv{H_kv}"] = {"diff_vs_repeat_interleave": err, "diff_vs_h_mod_hkv": err_tile,
                                      "moved": {str(a): b for a, b in moved.items()}}
        feeds = "; ".join(f"KV head {kv} feeds query heads {m}" for kv, m in moved.items())
        if moved != expect or err > ctx.tol:
            what = "query head h reads KV head h % H_kv (repeat/tile instead of repeat_interleave)" \
                if err_tile <= ctx.tol else f"differs from repeat_interleave by {_fmt(err)}"
            want = "; ".join(f"{kv}: {m}" for kv, m in expect.items())
            ok = f" (right at {', '.join(passed)})" if passed else ""
            return Finding("gqa_grouping", "fail", f"H={H}, H_kv={H_kv} (G={grp}): {feeds} (expected {want}): "
                           f"{what}{ok}", metrics)
        passed.append(f"H={H}/H_kv={H_kv}")
    return Finding("gqa_grouping", "pass", f"{', '.join(passed)}{via}: KV head j feeds query heads jG..jG+G-1 "
                   f"(h // G), equal to repeat_interleave", metrics)


# -- 10. batch -------------------------------------------------------------------------------------
def probe_batch_independence(ctx: Ctx) -> Finding:
    g = ctx.gen(10)
    q, k, v = ctx.qkv(g, 3, 2, 8, 8, 16)
    out, _ = ctx.target(q, k, v)
    needs_finite(out, "whether one sequence moves another")
    q2, k2, v2 = q.clone(), k.clone(), v.clone()
    for t in (q2, k2, v2):
        t[1] += ctx.randn(g, *t[1].shape)
    out2, _ = ctx.target(q2, k2, v2)
    delta = changed(out2, out).amax(dim=(1, 2, 3))
    alone, _ = ctx.target(q[:1], k[:1], v[:1])
    d_alone = max_err(alone, out[:1].to(torch.float64))
    metrics = {"moved_other_sequences": [delta[0].item(), delta[2].item()], "alone_vs_batched": d_alone}
    if delta[0] > ctx.tol or delta[2] > ctx.tol or d_alone > ctx.tol:
        return Finding("batch_independence", "fail", f"perturbing sequence 1 of 3 moved sequences 0 and 2 by "
                       f"{_fmt(delta[0].item())} and {_fmt(delta[2].item())}; sequence 0 alone vs in the batch "
                       f"differs by {_fmt(d_alone)} (all must be 0)", metrics)
    return Finding("batch_independence", "pass", f"perturbing sequence 1 of 3 leaves 0 and 2 unchanged; alone vs "
                   f"batched differs by {_fmt(d_alone)}", metrics)


# -- 11. weights sum to 1 --------------------------------------------------------------------------
def probe_normalization(ctx: Ctx) -> Finding:
    """With every value row equal to c, a convex combination returns exactly c: the implied row
    sums out.c/|c|^2 must be 1. Returned weights (HF) must also sum to 1 over the keys."""
    g = ctx.gen(11)
    B, H, T, d = 1, 2, 12, 16
    q, k, _ = ctx.qkv(g, B, H, T, T, d)
    c = ctx.randn(g, B, H, 1, d)
    v = c.expand(B, H, T, d).contiguous()
    parts, problems, metrics, failed = [], [], {}, []
    for causal in (False, True):
        try:
            out, w = ctx.target(q, k, v, is_causal=causal)
        except Unsupported:
            continue
        c64, o64 = c.to("cpu", torch.float64), out.detach().to("cpu", torch.float64)
        sums = (o64 * c64).sum(-1) / (c64 * c64).sum(-1)          # (B, H, T)
        label = "causal" if causal else "full"
        lo, hi = sums.nan_to_num(math.inf).min().item(), sums.nan_to_num(math.inf).max().item()
        metrics[f"{label}_implied_row_sum_min"], metrics[f"{label}_implied_row_sum_max"] = lo, hi
        if max(abs(lo - 1), abs(hi - 1)) > 10 * ctx.tol or max_err(out, c64.expand_as(o64)) > 10 * ctx.tol:
            problems.append(f"{label}: with every value row equal, outputs are {_near_one(lo, hi)} times it (must be 1)")
            failed.append(label)
        if w is not None:
            ws = w.detach().to("cpu", torch.float64).sum(-1)
            w_err = (ws - 1).abs().nan_to_num(math.inf).max().item()
            metrics[f"{label}_returned_weight_row_sum_err"] = w_err
            if w_err > 10 * ctx.tol or (w.detach() < 0).any():
                problems.append(f"{label}: returned weights' rows sum to {_near_one(ws.min().item(), ws.max().item())}")
                failed.append(label)
            else:
                parts.append(f"{label}: returned weights' rows sum to 1 (max err {_fmt(w_err)})")
    if not metrics:
        raise Unsupported("no call succeeded")
    if problems:
        # Right without is_causal, wrong with it: the weights sum to 1 until the causal mask empties or
        # changes rows, so the causal mask is the suspect (Report.causes reads this).
        metrics["causal_only"] = "full_implied_row_sum_min" in metrics and set(failed) == {"causal"}
        if metrics["causal_only"]:
            problems[-1] += " (right without is_causal: see causal_mask)"
        return Finding("normalization", "fail", "; ".join(problems + parts), metrics)
    return Finding("normalization", "pass", "with every value row equal, every output equals it (weights sum to 1)"
                   + ("; " + "; ".join(parts) if parts else ""), metrics)


BASIC_PROBES = [probe_determinism, probe_finite_output, probe_reference, probe_scale, probe_overflow, probe_causal_mask, probe_causal_alignment,
                probe_mask_polarity, probe_head_independence, probe_gqa_grouping, probe_batch_independence,
                probe_normalization]
