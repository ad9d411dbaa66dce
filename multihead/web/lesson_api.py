"""The lesson page's section endpoints (POST /api/lesson/...), one FastAPI router.

Every number a lesson card shows is computed here by multihead itself (its softmax,
softmax_jacobian, attention, MultiHeadAttention, the planner's formulas), never in the browser.
Bodies are small pydantic models with bounded fields; a bad field is refused with
{"error": "<field>: <what is wrong, in the user's words>", "field"} (HTTP 400), as every endpoint
of the app does. Tensors go out as lists (inf/nan as strings, lesson.plain).
"""
from __future__ import annotations

import math
from typing import Annotated

import torch
from fastapi import APIRouter, Request
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError
from pydantic_core import PydanticCustomError

import multihead
from multihead import values
from multihead.softmax_ops import softmax, softmax_jacobian
from multihead.web.lesson import LOGIT_BOUND, bound_text, plain

router = APIRouter()

FP16_OVERFLOW = math.log(torch.finfo(torch.float16).max)      # 11.09: e^z past it is inf in fp16


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _parse(model: type[_Body], body: dict) -> _Body:
    """body as the model, or ValueError('<field>: <message>') naming the first bad field."""
    if not isinstance(body, dict):
        raise ValueError("body: expected a JSON object")
    try:
        return model(**body)
    except ValidationError as err:
        e = err.errors()[0]
        loc = [str(x) for x in e.get("loc", ())]
        field = loc[0] if loc else "body"
        where = f"{field}[{loc[1]}]" if len(loc) > 1 else field
        kind, ctx = e.get("type", ""), e.get("ctx") or {}
        if kind == "extra_forbidden":
            msg = f"{field}: not a parameter of this card (expected some of {', '.join(model.model_fields)})"
        elif kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
            meta = model.model_fields[field].metadata if len(loc) == 1 else []
            bounds = {type(m).__name__: getattr(m, n) for m in meta for n in ("ge", "le", "gt", "lt") if hasattr(m, n)}
            if not bounds:                               # a list item: its bounds are the item type's
                bounds = {"Ge": -LOGIT_BOUND, "Le": LOGIT_BOUND}
            msg = f"{where}: must be {_span(bounds)}, got {e.get('input')!r}"
        elif kind == "list_type":
            msg = f"{field}: enter numbers separated by commas"
        elif kind == "finite_number":
            msg = f"{where}: expected a finite number, got {e.get('input')!r}"
        elif kind in ("too_short", "too_long"):
            meta = model.model_fields[field].metadata
            lo = next((m.min_length for m in meta if hasattr(m, "min_length")), 1)
            hi = next((m.max_length for m in meta if hasattr(m, "max_length")), "?")
            msg = f"{field}: enter {lo} to {hi} numbers, got {len(e.get('input') or [])}"
        elif kind in ("float_parsing", "float_type", "int_parsing", "int_type", "int_from_float"):
            got = e.get("input")
            msg = (f"{where}: this entry is empty; enter a number" if got in (None, "")
                   else f"{where}: expected {'a whole number' if 'int' in kind else 'a number'}, got {got!r}")
        else:
            msg = f"{where}: {e.get('msg', 'invalid value')}"
        raise ValueError(msg) from None


def _span(bounds: dict) -> str:
    lo = next((v for k, v in bounds.items() if k in ("Ge", "Gt")), None)
    hi = next((v for k, v in bounds.items() if k in ("Le", "Lt")), None)
    if lo is not None and hi is not None:
        return f"between {bound_text(lo)} and {bound_text(hi)}"
    return f">= {bound_text(lo)}" if lo is not None else f"<= {bound_text(hi)}"


# Numbers read by multihead.values' one rule (the planner request's and the other endpoints'), not
# pydantic's: a whole number is an int, an integral float (128.0) or text spelling one ("128",
# "1e2"); a number is a number or its text ("1"); a bool is neither (pydantic's lax mode took True as 1).
def _whole(value):
    out = values.parse_int(value)
    if out is None:
        raise PydanticCustomError("int_parsing", "expected a whole number")
    return out


def _number(value):
    out = values.parse_float(value)
    if out is None:
        raise PydanticCustomError("float_parsing", "expected a number")
    return out


Whole = Annotated[int, BeforeValidator(_whole)]
Logit = Annotated[float, BeforeValidator(_number), Field(allow_inf_nan=False, ge=-LOGIT_BOUND, le=LOGIT_BOUND)]


# -- 3.1 / 4.1: the Jacobian, and gradient saturation without 1/sqrt(d_k) -------------------------
class JacobianIn(_Body):
    logits: list[Logit] = Field(default=[0.0, 11.3], min_length=2, max_length=6)
    d_k: Whole = Field(default=128, ge=1, le=65536)


def jacobian(body: JacobianIn) -> dict:
    """p and diag(p) - p p^T for the logits as given (an unscaled q.k) and divided by sqrt(d_k);
    and the largest off-diagonal |dp_i/dz_j| of two logits (0, g) for g = 0..16 (the saturation curve)."""
    z = torch.tensor(body.logits, dtype=torch.float64)
    scale = 1 / math.sqrt(body.d_k)
    out = {}
    for name, logits in (("raw", z), ("scaled", z * scale)):
        p = softmax(logits)
        J = softmax_jacobian(p)
        off = (J - torch.diag_embed(torch.diagonal(J))).abs().max()
        out[name] = {"logits": plain(logits), "probs": plain(p), "jacobian": plain(J), "max_offdiag": plain(off),
                     "row_sums": plain(J.sum(-1))}
    gaps = torch.arange(0, 16.5, 0.5, dtype=torch.float64)
    pair = torch.stack([torch.zeros_like(gaps), gaps], -1)                 # [G, 2] logits (0, g)
    J = softmax_jacobian(softmax(pair))
    out["curve"] = {"gap": plain(gaps), "offdiag": plain(J[:, 0, 1].abs())}
    out["d_k"], out["scale"] = body.d_k, scale
    return out


# -- 1.3: q.k has variance d_k --------------------------------------------------------------------
CURVE_SAMPLES = 2000          # per point of the std-vs-d_k curve (11 points, up to d_k = 1024)


class VarianceIn(_Body):
    d_k: Whole = Field(default=128, ge=1, le=1024)
    samples: Whole = Field(default=4000, ge=100, le=20000)
    seed: Whole = Field(default=0, ge=0, le=2**31 - 1)


def variance(body: VarianceIn) -> dict:
    """q, k ~ N(0, I_{d_k}) drawn `samples` times: the sample variance and std of q.k, unscaled and
    divided by sqrt(d_k), the share of |q.k| past fp16's exp limit (11.09), a histogram of both, and
    the sample std for d_k = 1..1024 (powers of two) with the same draws' seed."""
    g = torch.Generator().manual_seed(body.seed)

    def draw(d: int, n: int) -> torch.Tensor:
        """n dot products of independent N(0, I_d) pairs, drawn in blocks of <= 2^20 numbers (16 MB)."""
        rows, out = max(1, 2**20 // d), []
        for start in range(0, n, rows):
            m = min(rows, n - start)
            q = torch.randn(m, d, generator=g, dtype=torch.float64)
            k = torch.randn(m, d, generator=g, dtype=torch.float64)
            out.append((q * k).sum(-1))
        return torch.cat(out)

    s = draw(body.d_k, body.samples)
    scaled = s / math.sqrt(body.d_k)
    edges = torch.linspace(-40, 40, 81, dtype=torch.float64)
    hist = lambda x: plain(torch.histogram(x.clamp(-40, 40), bins=edges).hist)   # noqa: E731
    dks = [2 ** i for i in range(11)]
    return {"d_k": body.d_k, "samples": body.samples, "var": plain(s.var()), "std": plain(s.std()),
            "std_scaled": plain(scaled.std()), "mean": plain(s.mean()),
            "share_over_fp16": plain((s.abs() > FP16_OVERFLOW).double().mean()), "fp16_limit": FP16_OVERFLOW,
            "share_over_fp16_scaled": plain((scaled.abs() > FP16_OVERFLOW).double().mean()),
            "hist_edges": plain(edges), "hist": hist(s), "hist_scaled": hist(scaled),
            "sqrt_d_k": math.sqrt(body.d_k),
            "curve": {"d_k": dks, "samples": CURVE_SAMPLES,
                      "std": [plain(draw(d, CURVE_SAMPLES).std()) for d in dks]}}


# -- 2.4 / 5.3: which K/V head each query head reads (GQA), observed ------------------------------
class GqaIn(_Body):
    heads: Whole = Field(default=8, ge=1, le=64)
    kv_heads: Whole = Field(default=2, ge=1, le=64)


def gqa(body: GqaIn) -> dict:
    """Run multihead.attention with H query heads and H_kv K/V heads where K/V head g's value is the
    one-hot vector e_g: each query head's output then *is* the K/V head it was given. No formula:
    the grouping is read off the library's output."""
    H, Hkv = body.heads, body.kv_heads
    if Hkv > H or H % Hkv:
        raise ValueError(f"kv_heads: H_kv must divide H = {H} (e.g. {', '.join(str(d) for d in range(1, H + 1) if H % d == 0)}), got {Hkv}")
    q = torch.zeros(1, H, 1, 1, dtype=torch.float64)
    k = torch.zeros(1, Hkv, 1, 1, dtype=torch.float64)
    v = torch.eye(Hkv, dtype=torch.float64).view(1, Hkv, 1, Hkv)          # K/V head g holds e_g
    out = multihead.attention(q, k, v)                                      # [1, H, 1, Hkv]
    reads = [int(out[0, h, 0].argmax()) for h in range(H)]
    return {"heads": H, "kv_heads": Hkv, "reads": reads, "query_heads_per_kv_head": H // Hkv,
            "kind": "MHA" if Hkv == H else ("MQA" if Hkv == 1 else f"GQA-{Hkv}")}


# -- 3: why not plain normalization -------------------------------------------------------------------
class NormalizeIn(_Body):
    logits: list[Logit] = Field(default=[2.0, 1.0, -1.5], min_length=2, max_length=8)


def normalize(body: NormalizeIn) -> dict:
    """z / sum(z) beside softmax(z): with a negative score the plain quotient gives a negative
    'weight' (and blows up when the sum nears 0); softmax's exponent keeps every weight > 0."""
    z = torch.tensor(body.logits, dtype=torch.float64)
    total = float(z.sum())
    plain_norm = None if total == 0 else plain(z / total)
    return {"logits": plain(z), "sum": total, "divided": plain_norm, "softmax": plain(softmax(z)),
            "negative": bool(plain_norm is not None and min(plain_norm) < 0)}


# -- 4.3 / 4.4 and misconception 2: the accounts, on real modules ---------------------------------
class AccountsIn(_Body):
    d_model: Whole = Field(default=512, ge=8, le=8192)
    heads: Whole = Field(default=8, ge=1, le=128)
    tokens: Whole = Field(default=4096, ge=1, le=10_000_000)


def accounts(body: AccountsIn) -> dict:
    """Parameters counted on multihead.MultiHeadAttention modules (on the meta device: no memory),
    for H heads and for one head of width D; attention FLOPs per layer 4*T^2*D for both."""
    from multihead.cost.counts.formulas import attention_flops

    D, H, T = body.d_model, body.heads, body.tokens
    if D % H:
        raise ValueError(f"heads: H must divide D = {D} (d_k = D / H), got {H}")
    rows = []
    for h in sorted({H, 1}, reverse=True):
        m = multihead.MultiHeadAttention(D, h, device="meta")
        counted = sum(p.numel() for p in m.parameters())
        per = {name: getattr(m, name).weight.numel() for name in ("q_proj", "k_proj", "v_proj", "o_proj")}
        rows.append({"heads": h, "d_k": D // h, "params": counted, "by_projection": per,
                     "attention_flops": attention_flops(1, h, T, T, D // h),
                     "score_elements": h * T * T})
    return {"d_model": D, "tokens": T, "rows": rows, "d_model_squared": D * D}


# -- 6, misconception 3: softmax is not a calibrated probability ---------------------------------------
class CalibrationIn(_Body):
    logits: list[Logit] = Field(default=[2.0, 1.0, 0.0], min_length=2, max_length=8)


def calibration(body: CalibrationIn) -> dict:
    """The same ranking at temperatures 0.25..4: the top 'probability' runs from near 1 to near
    uniform while the argmax never changes; nothing in softmax ties it to how often it is right."""
    z = torch.tensor(body.logits, dtype=torch.float64)
    temps = [0.25, 0.5, 1.0, 2.0, 4.0]
    rows = [{"temperature": t, "probs": plain(softmax(z, temperature=t)),
             "argmax": int(softmax(z, temperature=t).argmax())} for t in temps]
    return {"logits": plain(z), "rows": rows}


# -- 8: the shape code, run; and the reshape-without-transpose bug ------------------------------------
class ShapesIn(_Body):
    batch: Whole = Field(default=2, ge=1, le=4)
    tokens: Whole = Field(default=5, ge=1, le=64)
    d_model: Whole = Field(default=16, ge=2, le=512)
    heads: Whole = Field(default=4, ge=1, le=32)
    seed: Whole = Field(default=0, ge=0, le=2**31 - 1)


def shapes(body: ShapesIn) -> dict:
    """Section 8's code run on random tensors: the shape after every line, the causal row sums and
    upper triangle, and how far the output moves when [B,H,T,d_k] is reshaped to [B,T,D] without
    the transpose (no error is raised: that is the bug's danger)."""
    B, T, D, H = body.batch, body.tokens, body.d_model, body.heads
    if D % H:
        raise ValueError(f"heads: H must divide D = {D}, got {H}")
    dk = D // H
    g = torch.Generator().manual_seed(body.seed)
    X = torch.randn(B, T, D, generator=g, dtype=torch.float64)
    Wq, Wk, Wv, Wo = (torch.randn(D, D, generator=g, dtype=torch.float64) / math.sqrt(D) for _ in range(4))
    steps = [("X", "[B, T, D]", X.shape)]
    q = X @ Wq
    steps.append(("q = X @ Wq", "[B, T, D]", q.shape))
    q = q.view(B, T, H, dk).transpose(1, 2)
    k = (X @ Wk).view(B, T, H, dk).transpose(1, 2)
    v = (X @ Wv).view(B, T, H, dk).transpose(1, 2)
    steps.append(("q.view(B, T, H, dk).transpose(1, 2)", "[B, H, T, d_k]", q.shape))
    s = q @ k.transpose(-2, -1) / math.sqrt(dk)
    steps.append(("s = q @ k.transpose(-2, -1) / sqrt(dk)", "[B, H, T, T]", s.shape))
    keep = torch.ones(T, T, dtype=torch.bool).tril()
    a = softmax(s, mask=keep)
    steps.append(("a = softmax(s + mask, dim=-1)", "[B, H, T, T]", a.shape))
    heads = a @ v
    steps.append(("a @ v", "[B, H, T, d_k]", heads.shape))
    merged = heads.transpose(1, 2).reshape(B, T, D)
    steps.append(("(a @ v).transpose(1, 2).reshape(B, T, D)", "[B, T, D]", merged.shape))
    out = merged @ Wo
    steps.append(("... @ Wo", "[B, T, D]", out.shape))
    wrong = heads.reshape(B, T, D) @ Wo                  # the bug: no transpose, no error
    lib = multihead.attention(q, k, v, is_causal=True)
    return {"steps": [{"code": c, "expected": e, "shape": list(sh)} for c, e, sh in steps],
            "row_sum_max_error": plain((a.sum(-1) - 1).abs().max()),
            "upper_max": plain(a.masked_fill(keep, 0).abs().max()),
            "matches_multihead_attention": plain((lib - heads).abs().max()),
            "wrong_reshape_shape": list(wrong.shape),
            "wrong_reshape_max_diff": plain((wrong - out).abs().max()),
            "output_max_abs": plain(out.abs().max()),
            "wrong_same_first_token": bool(torch.allclose(wrong[:, 0], out[:, 0])) if T > 1 else True}


# -- 5.2: why the toy's 0.67/0.33 differs from the text's (0.5, 0.5, 0, 0) -------------------------------
def two_heads_note() -> dict:
    """The toy as the page runs it (scores q.k / sqrt(2): self 0.707, the other token 0) and the same
    heads with every score 0 (q = 0), which gives exactly uniform weights: the text's (0.5, 0.5, 0, 0)."""
    X = torch.tensor([[1.0, 0, 0, 0], [0, 1.0, 0, 0]], dtype=torch.float64)
    q = X.view(1, 2, 2, 2).transpose(1, 2)
    real = multihead.attention(q, q, q).transpose(1, 2).reshape(2, 4)
    uniform = multihead.attention(torch.zeros_like(q), q, q).transpose(1, 2).reshape(2, 4)
    scores = (q @ q.transpose(-2, -1))[0, 0] / math.sqrt(2)
    return {"scores_head1": plain(scores), "weights_head1": plain(softmax(scores)),
            "concat": plain(real), "concat_uniform": plain(uniform)}


# -- 9.2: the text's 0.00003 ------------------------------------------------------------------------------
def exercise_note() -> dict:
    p = softmax(torch.tensor([10.0, 0, 0, 0], dtype=torch.float64))
    return {"probs": plain(p), "first": float(p[0]), "other": float(p[1]),
            "first_4dp": round(float(p[0]), 4)}


async def _run(request: Request, fn, model: type[_Body]):
    """The app's JSON reader (bounded, one error shape) and its pool of computing threads."""
    from starlette.concurrency import run_in_threadpool

    from multihead.web.app import json_body
    body = _parse(model, await json_body(request))
    pool = getattr(request.app.state, "heavy_pool", None)
    return await (pool.run(fn, body) if pool is not None else run_in_threadpool(fn, body))


def _endpoint(fn, model: type[_Body]):
    async def endpoint(request: Request):
        return await _run(request, fn, model)
    endpoint.__doc__ = fn.__doc__
    return endpoint


for _path, _fn, _model in (("jacobian", jacobian, JacobianIn), ("variance", variance, VarianceIn), ("gqa", gqa, GqaIn),
                           ("normalize", normalize, NormalizeIn), ("accounts", accounts, AccountsIn),
                           ("calibration", calibration, CalibrationIn), ("shapes", shapes, ShapesIn)):
    router.add_api_route(f"/api/lesson/{_path}", _endpoint(_fn, _model), methods=["POST"], name=f"lesson_{_path}")


@router.get("/api/lesson/notes")
def _notes():
    """The two places where the page's numbers and the text's figures differ, computed."""
    return {"two_heads": two_heads_note(), "exercise_9_2": exercise_note()}


@router.post("/api/messages")
async def _messages(request: Request):
    """Server-made text of a plan (decision, fallbacks, warnings, serving verdict, an error) in the
    language asked: {"plan": <plan JSON>?, "error": "..."?, "lang": "zh" | "en"}."""
    from starlette.concurrency import run_in_threadpool

    from multihead import messages
    from multihead.web.app import json_body
    body = await json_body(request)
    unknown = [k for k in body if k not in ("plan", "error", "lang")]
    if unknown:
        raise ValueError(f"{str(unknown[0])[:60]}: unknown key (expected plan, error, lang)")
    if body.get("lang") not in messages.LANGS:
        raise ValueError(f"lang: expected one of {', '.join(messages.LANGS)}")
    plan, err = body.get("plan"), body.get("error")
    if plan is not None and not isinstance(plan, dict):
        raise ValueError("plan: expected the plan JSON object")
    if err is not None and (not isinstance(err, str) or len(err) > 2000):
        raise ValueError("error: expected one line of text (at most 2000 characters)")
    def texts() -> dict:
        out = {}
        if plan is not None:
            out["plan"] = messages.plan_texts(plan, body["lang"])
        if err is not None:
            out["error"] = messages.translate(err, body["lang"])
        return out
    pool = getattr(request.app.state, "heavy_pool", None)       # regex work: never in the event loop
    from starlette.concurrency import run_in_threadpool
    return await (pool.run(texts) if pool is not None else run_in_threadpool(texts))
