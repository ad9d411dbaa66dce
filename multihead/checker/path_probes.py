"""The path probes (see checker.paths for the machinery): each runs the few cases that
exercise one path and, when one fails, tests named explanations against the output."""
from __future__ import annotations

import torch

from multihead.checker import cases as C
from multihead.checker.cases import Case
from multihead.checker.coverage import heads_value
from multihead.checker.paths import Outcome, conclude, err_against, run_all, run_case, separating
from multihead.checker.probes import Ctx, max_err
from multihead.checker.reference import reference_attention
from multihead.checker.report import Finding

HEADS = ((4, 2), (6, 2), (8, 2), (4, 1))          # G = 2, 3 (odd), 4, MQA


def _alignment(ctx: Ctx) -> str | None:
    return "bottom-right" if ctx.target.kind == "hf" else ctx.facts.get("alignment")


def _first_match(res, hypotheses) -> str:
    """The first (text, reference kwargs) whose reference the failing output matches."""
    for text, kwargs in hypotheses:
        if err_against(res, **kwargs) <= res.tol:
            return text
    return ""


# -- GQA / MQA with masks --------------------------------------------------------------------------
def _folded_causal(res) -> bool:
    """Does out match a causal mask built over the G*Tq folded rows of packed GQA (query head h,
    row i sees keys j <= (h mod G) * Tq + i), instead of Tq rows repeated G times?"""
    q, k, _, _, _, _ = res.inputs
    G, Tq, Tk = q.shape[1] // k.shape[1], q.shape[2], k.shape[2]
    rows = (torch.arange(q.shape[1]) % G)[:, None] * Tq + torch.arange(Tq)[None, :]      # (H, Tq)
    keep = torch.arange(Tk)[None, None, :] <= rows[..., None]                             # (H, Tq, Tk)
    return err_against(res, mask=keep[None], is_causal=False) <= res.tol


def probe_gqa_masks(ctx: Ctx) -> Finding:
    if ctx.target.gqa == "repeat":
        for H, Hk in HEADS:
            ctx.target.coverage.not_tried("heads", heads_value(H, Hk), "the function takes only H_kv == H")
        return Finding("gqa_masks", "skip", "the function takes only H_kv == H: the checker expands K/V itself, so "
                       "GQA paths are the caller's")
    cases = [Case(f"H={H}, H_kv={Hk} causal Tq=Tk=13", 2, H, Hk, 13, 13, mask="causal") for H, Hk in HEADS]
    cases += [Case("H=4, H_kv=2 bool mask Tq=Tk=11", 2, 4, 2, 11, 11, mask="bool"),
              Case("H=6, H_kv=2 bool mask per head", 1, 6, 2, 9, 9, mask="bool per head"),   # B>1: `padding`
              Case("H=8, H_kv=1 bool mask chunked Tq=5, Tk=19", 2, 8, 1, 5, 19, mask="bool")]
    alignment = _alignment(ctx)
    if alignment:
        cases += [Case(f"H=4, H_kv=2 causal chunked Tq=5, Tk=23 ({alignment})", 2, 4, 2, 5, 23, mask="causal"),
                  Case(f"H=6, H_kv=2 causal chunked Tq=4, Tk=70 ({alignment})", 1, 6, 2, 4, 70, mask="causal")]
    out = run_all(ctx, cases, 21, alignment)
    diagnosis = ""
    causal = [r for r in out.failed if r.case.mask == "causal"]
    if causal and _folded_causal(causal[0]):
        diagnosis = ("with is_causal, query head h's row i sees keys 0..(h mod G)*Tq + i: the causal mask is built "
                     "over the G*Tq rows of packed GQA (G query heads folded into the query axis) instead of the Tq "
                     "rows repeated G times; the first head of each group is right, the others see the future")
    elif out.failed and all(r.case.mask == "causal" for r in out.failed):
        diagnosis = "only with is_causal under GQA/MQA (bool masks are right): the causal mask and the head grouping disagree"
    return conclude("gqa_masks", out, "GQA G=2, 3, 4 and MQA with causal, bool and per-head masks", diagnosis)


# -- long key sequences ------------------------------------------------------------------------------
def _tail_dropped(res) -> str:
    Tk = res.case.Tk
    for b in (16, 32, 64, 128, 256, 512, 1024):
        n = Tk // b * b
        if 0 < n < Tk and err_against(res, mask=_prefix(Tk, n), is_causal=res.inputs[4]) <= res.tol:
            return (f"the output equals attention over the first {n} keys only: the last partial block of "
                    f"{Tk - n} keys (Tk={Tk} is not a multiple of the block size {b}) is dropped")
    return ""


def _query_tail(res) -> str:
    """Only the trailing query rows r0..Tq-1 wrong, r0 a multiple of 16: a skipped last query tile."""
    bad = (res.extra["row_err"] > res.tol).nonzero().flatten().tolist()
    Tq = res.case.Tq
    if bad and bad == list(range(bad[0], Tq)) and bad[0] % 16 == 0 and bad[0] > 0:
        return (f"only query rows {bad[0]}..{Tq - 1} are wrong: the last partial tile of query rows (Tq={Tq} is not "
                f"a multiple of the tile) is skipped or mishandled")
    return ""


def _prefix(Tk: int, n: int) -> torch.Tensor:
    keep = torch.zeros(Tk, dtype=torch.bool)
    keep[:n] = True
    return keep


def _rescale(ctx: Ctx, res, salt: int) -> str:
    if res.case.pattern != "max grows late":
        return ""
    flipped = run_case(ctx, Case(res.case.label + ", max early", res.case.B, res.case.H, res.case.H_kv, res.case.Tq,
                                 res.case.Tk, res.case.d, "max early", res.case.mask, res.case.dtype,
                                 res.case.v_mean), salt, _alignment(ctx))
    if flipped.raised is None and flipped.ok:
        return ("correct when the largest score comes first, wrong when it grows in later key blocks: the running "
                "output (or sum) is not rescaled by exp(m_old - m_new) when the running max grows")
    return ""


def probe_long_keys(ctx: Ctx) -> Finding:
    late = "max grows late"
    cases = [Case("Tq=16, Tk=1000, max grows late", 1, 2, 2, 16, 1000, pattern=late, v_mean=1.0),
             Case("Tq=4, Tk=2048, max grows late", 2, 2, 2, 4, 2048, pattern=late, v_mean=1.0),
             Case("Tq=8, Tk=2900, late spike", 1, 2, 2, 8, 2900, pattern="late spike", v_mean=1.0),
             Case("Tq=Tk=600 causal, max grows late", 1, 2, 2, 600, 600, pattern=late, mask="causal", v_mean=1.0),
             Case("Tq=Tk=333, random", 1, 2, 2, 333, 333, v_mean=1.0)]
    out = run_all(ctx, cases, 22, _alignment(ctx))
    diagnosis = ""
    for r in out.failed:
        diagnosis = _query_tail(r) or _tail_dropped(r) or _rescale(ctx, r, 2299)
        if diagnosis:
            break
    if not diagnosis:
        diagnosis = separating(out, [
            (lambda c: c.mask == "causal", "only the case(s) with is_causal fail, the ones without are right: the "
             "causal mask is wrong on long keys (see causal_mask / causal_alignment if they fail too)"),
            (lambda c: c.Tk % 64 != 0, "only at key lengths that are not a multiple of 64 (those that are pass): "
             "the last partial block is mishandled"),
            (lambda c: c.Tk >= 2048, "only at Tk >= 2048 (shorter caches are right): the path taken for long "
             "sequences is wrong")])
    return conclude("long_keys", out, "Tk = 333..2900 keys (several blocks, max growing late, a spike in the "
                    "last partial block)", diagnosis)


# -- decode (Tq = 1) over a cache -------------------------------------------------------------------
def probe_decode(ctx: Ctx) -> Finding:
    split, late = "split-K (mass in one split)", "max grows late"
    cases = [Case("Tq=1, Tk=1", 2, 4, 2, 1, 1), Case("Tq=1, Tk=37", 2, 4, 2, 1, 37),
             Case("Tq=1, Tk=1024, mass in the first third", 2, 4, 2, 1, 1024, pattern=split, v_mean=1.0),
             Case("Tq=1, Tk=2900, max grows late", 2, 2, 2, 1, 2900, pattern=late, v_mean=1.0),
             Case("Tq=1, Tk=700 MQA, mass in the first third", 2, 4, 1, 1, 700, pattern=split, v_mean=1.0),
             Case("Tq=1, Tk=600 padding per sequence", 3, 4, 2, 1, 600, pattern=late, mask="padding", v_mean=1.0),
             Case("Tq=1, Tk=45 bool mask", 2, 2, 2, 1, 45, mask="bool"),
             Case("Tq=1, Tk=300 ALiBi bias", 1, 4, 2, 1, 300, mask="bias", v_mean=1.0)]
    alignment = _alignment(ctx)
    if alignment:
        cases.append(Case(f"Tq=1, Tk=300 is_causal ({alignment})", 2, 4, 2, 1, 300, mask="causal", v_mean=1.0))
    out = run_all(ctx, cases, 23, alignment)
    masked = [r for r in out.failed if r.case.mask not in ("none", "causal")]
    diagnosis = ""
    if masked and len(masked) == len(out.failed) and err_against(masked[0], mask=None) <= masked[0].tol:
        diagnosis = "the mask is ignored at Tq = 1 (the decode path drops attn_mask)"
    elif out.failed and all(r.case.Tk > 256 for r in out.failed) and all(r.ok for r in out.ran if r.case.Tk <= 64):
        short = max(r.case.Tk for r in out.ran if r.case.Tk <= 64)
        diagnosis = _tail_dropped(out.failed[0]) or (
            f"right on short caches (Tk <= {short}), wrong on every long one whatever the mask: the long-cache "
            f"decode path is wrong; if it splits the keys (split-K), its parts must be merged by log-sum-exp, "
            f"each rescaled by exp(m_part - m)")
    return conclude("decode", out, "Tq = 1 over caches of 1..2900 keys (MHA, GQA, MQA; split-K score patterns; "
                    "padding, bool mask, bias)", diagnosis)


# -- per-sequence padding ----------------------------------------------------------------------------
def _which_padding(res) -> str:
    """For each (sequence, head) that is wrong, whose padding explains its output."""
    q, k, v, _, is_causal, mask = res.inputs
    B, H = q.shape[:2]
    G = H // k.shape[1]
    parts, ignored = [], []
    for b in range(B):
        for h in range(H):
            sq, skv = (slice(b, b + 1), slice(h, h + 1)), (slice(b, b + 1), slice(h // G, h // G + 1))
            own = res.out[sq]
            args = (q[sq], k[skv], v[skv])
            if _err(own, *args, mask[b:b + 1], is_causal) <= res.tol:
                continue
            fits = [c for c in range(B) if c != b and _err(own, *args, mask[c:c + 1], is_causal) <= res.tol]
            if fits:
                parts.append((b, h, fits[0]))
            elif _err(own, *args, None, is_causal) <= res.tol:
                ignored.append(f"{b}")
    texts = []
    for b in dict.fromkeys(b for b, _, _ in parts):
        mine = [(h, c) for b2, h, c in parts if b2 == b]
        if len(mine) == H and len({c for _, c in mine}) == 1:
            texts.append(f"sequence {b} is computed with the padding of sequence {mine[0][1]}")
        else:
            texts += [f"sequence {b} head {h} is computed with the padding of sequence {c}" for h, c in mine]
    if ignored:
        texts.append(f"sequence(s) {', '.join(dict.fromkeys(ignored))}: padding ignored")
    return "; ".join(texts[:4]) + (f" (and {len(texts) - 4} more)" if len(texts) > 4 else "")


def _left_padding_nan(res) -> str:
    """inf/NaN only in left-padded sequences (odd b, see cases.padding_keep): their leading key
    blocks are entirely masked."""
    bad = [b for b in range(res.out.shape[0]) if not torch.isfinite(res.out[b]).all()]
    if bad and all(b % 2 for b in bad):
        return (f"inf/NaN only in the left-padded sequence(s) {bad} at Tk={res.case.Tk} (their first keys are all "
                f"masked): a running max of -inf over whole masked key blocks gives exp(-inf - (-inf)) = NaN; keep "
                f"the running max finite (or skip fully masked blocks)")
    return ""


def _err(out, q, k, v, mask, is_causal) -> float:
    return max_err(out, reference_attention(q, k, v, mask=mask, is_causal=is_causal))


def probe_padding(ctx: Ctx) -> Finding:
    pad = "padding"
    cases = [Case("B=3, Tq=Tk=20", 3, 2, 2, 20, 20, mask=pad),
             Case("B=4, Tq=Tk=24 padding+causal", 4, 2, 2, 24, 24, mask="padding+causal"),
             Case("B=3, H=4, H_kv=2, chunked Tq=6, Tk=40", 3, 4, 2, 6, 40, mask=pad),
             Case("B=2, Tq=8, Tk=900", 2, 2, 2, 8, 900, mask=pad, pattern="max grows late", v_mean=1.0)]
    out = run_all(ctx, cases, 24, _alignment(ctx))
    diagnosis = (_left_padding_nan(out.failed[0]) or _which_padding(out.failed[0])) if out.failed else ""
    return conclude("padding", out, f"padding of lengths {C.padding_lengths(4, 24)} (B=4, Tk=24) and the like, "
                    f"left and right, one length per sequence", diagnosis)


# -- additive (float) masks --------------------------------------------------------------------------
def probe_additive_mask(ctx: Ctx) -> Finding:
    cases = [Case("-inf mask Tq=Tk=12", 2, 2, 2, 12, 12, mask="-inf"),
             Case("finfo.min mask Tq=Tk=12", 2, 2, 2, 12, 12, mask="min"),
             Case("ALiBi bias Tq=Tk=24", 1, 4, 4, 24, 24, mask="bias"),
             Case("ALiBi bias chunked Tq=4, Tk=300", 1, 4, 2, 4, 300, mask="bias", v_mean=1.0)]
    out = run_all(ctx, cases, 25, _alignment(ctx))
    diagnosis = ""
    if out.failed:
        r = out.failed[0]
        m = r.inputs[5]
        s = r.case.d ** -0.5
        diagnosis = _first_match(r, [
            ("the float mask is read as bool (nonzero = attend): -inf keys are attended, 0 keys dropped",
             {"mask": m != 0}),
            ("the bias is multiplied by the softmax scale (added before scaling instead of after)", {"mask": m * s}),
            ("only -inf entries are honoured: the finite bias values are ignored", {"mask": m > -1e30}),
            ("the float mask is ignored", {"mask": None}),
            ("the bias is subtracted instead of added", {"mask": torch.where(m > -1e30, -m, m)})])
    return conclude("additive_mask", out, "float masks: -inf, finfo.min and a real-valued ALiBi bias", diagnosis)


# -- fully masked rows -------------------------------------------------------------------------------
def probe_fully_masked_rows(ctx: Ctx) -> Finding:
    """Rows whose every key is masked must come out finite (0, or the mean of V that a finfo.min
    additive mask gives), without moving the other rows: short (Tk=10), long (Tk=1000) and at
    decode (one whole sequence masked)."""
    from multihead.checker.probes import masked_rows_case
    findings = [masked_rows_case(ctx, B, Tq, Tk, empty, salt)
                for B, Tq, Tk, empty, salt in ((2, 10, 10, [2, 7], 7), (1, 8, 1000, [2, 5], 71), (3, 1, 40, [0], 72))]
    bad = [f for f in findings if f.status == "fail"]
    if bad:
        return Finding("fully_masked_rows", "fail", "; ".join(f.evidence for f in bad), bad[0].metrics)
    status = "info" if any(f.status == "info" for f in findings) else "pass"
    return Finding("fully_masked_rows", status, "; ".join(f.evidence for f in findings),
                   {"cases": [f.metrics for f in findings]})


# -- other dtypes ------------------------------------------------------------------------------------
def probe_dtypes(ctx: Ctx) -> Finding:
    late = "max grows late"
    results, tried = [], []
    # bf16 and fp16 always, with the strict bound (also when the main probes run in them), and
    # float64 (float32 when the main dtype is float64).
    wide = torch.float32 if ctx.dtype == torch.float64 else torch.float64
    for dt in (torch.bfloat16, torch.float16, wide):
        name = str(dt).replace("torch.", "")
        cases = [Case(f"{name} causal Tq=Tk=16", 1, 2, 2, 16, 16, mask="causal", dtype=dt),
                 Case(f"{name} H=4, H_kv=2 decode Tk=300 padding", 2, 4, 2, 1, 300, pattern=late, mask="padding",
                      dtype=dt, v_mean=1.0),
                 # Weights spread over 4000 keys with outputs ~3: the running sum and output are long
                 # accumulations, where 8 bits of mantissa lose ~3% (6-13x what SDPA loses).
                 Case(f"{name} Tq=4, Tk=4000", 1, 2, 2, 4, 4000, dtype=dt, v_mean=3.0)]
        out = run_all(ctx, cases, 26, _alignment(ctx))
        if not out.ran:            # the whole dtype is refused: not tried, whatever it raised
            for r in out.results:
                r.extra["refused"] = True
        else:
            tried.append(name)
        results += out.results
    out = Outcome(results)
    return conclude("dtypes", out, f"{', '.join(tried)} (bound: bfloat16/float16 4x what PyTorch's own SDPA and "
                    f"eager softmax lose in that dtype; float32/float64 derived from the dtype's rounding)", "")


PATH_PROBES = [probe_gqa_masks, probe_long_keys, probe_decode, probe_padding, probe_additive_mask, probe_dtypes]
