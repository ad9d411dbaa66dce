"""The lesson's exercises (section 9) and the three-question quiz, checked on the server.

Each numeric answer is computed by multihead (softmax, the planner's JSON), never typed in here;
a reply counts as right within the stated absolute tolerance. The wording is ours, in Chinese and
English. Open questions have no check: the page reveals our reference answer.
"""
from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass, field
from typing import Callable

import torch

from multihead import values
from multihead.softmax_ops import softmax


def _softmax_first(z, temperature=1.0) -> float:
    return float(softmax(torch.tensor(z, dtype=torch.float64), temperature=temperature)[0])


def _kv_fraction(H: int, H_kv: int) -> float:
    from multihead.web.lesson import kv_fraction
    rows = kv_fraction(heads=H, kv_heads=H_kv)["rows"]
    return rows[1]["fraction_of_mha"]


def _plan_value(key: str, **options) -> float:
    from multihead import planner
    from multihead.planner.request import PlanRequest
    return planner.report(PlanRequest(**{"params": 1e9, "tokens": 1, "gpu_memory_gb": 80, "effective_tflops": 100,
                                         "bandwidth_tbps": 2, **options}))[key]


def _facts() -> dict:
    p = softmax(torch.tensor([10.0, 0, 0, 0], dtype=torch.float64))
    return {"first": float(p[0]), "other": float(p[1])}


@dataclass
class Question:
    id: str
    kind: str                           # "number" (checked) or "open" (answer revealed)
    text: dict[str, str]                # {"zh": ..., "en": ...}
    explain: dict[str, str]
    answer: Callable[[], float] | None = None
    tolerance: float = 0.0              # absolute
    group: str = "exercise"             # "exercise" or "quiz"
    meta: dict = field(default_factory=dict)

    def explained(self) -> dict:
        """The explanation with its numbers filled in from multihead (see _FACTS)."""
        facts = _facts()
        return {lang: text.format(**facts) if "{" in text else text for lang, text in self.explain.items()}

    def public(self) -> dict:
        """What the page gets before an answer: no expected value."""
        return {"id": self.id, "kind": self.kind, "text": self.text, "group": self.group,
                "tolerance": self.tolerance if self.kind == "number" else None}


QUESTIONS = [
    Question("ex1", "open",
             {"zh": "概念：计算 softmax 之前为什么先减去最大值？不减会出现什么？",
              "en": "Concept: why subtract the maximum before computing softmax? What happens if you don't?"},
             {"zh": "e 的大指数会上溢成 inf（fp16 里 logit 超过约 11.09 就会），inf/inf 得到 nan。"
                    "每个 logit 减去同一个常数不改变结果（平移不变），却让所有指数 ≤ 0，因此永不上溢。",
              "en": "Large exponents overflow to inf (in fp16 already past a logit of about 11.09) and inf/inf is nan. "
                    "Subtracting one constant from every logit leaves the result unchanged (shift invariance) "
                    "but makes every exponent <= 0, so nothing can overflow."}),
    Question("ex2a", "number",
             {"zh": "计算：z = (1, 1, 1, 1) 的 softmax 第一个分量是多少？",
              "en": "Compute: the first component of softmax(1, 1, 1, 1)?"},
             {"zh": "四个分数相同，预算平分：每个 1/4。", "en": "Four equal scores share the budget equally: 1/4 each."},
             lambda: _softmax_first([1, 1, 1, 1]), 5e-4),
    Question("ex2b", "number",
             {"zh": "计算：z = (10, 0, 0, 0) 的 softmax 第一个分量是多少？（四位小数，和原文一样：0.9999；多写几位也算对）",
              "en": "Compute: the first component of softmax(10, 0, 0, 0), to four decimals as the text gives it "
                    "(0.9999; more decimals are accepted)"},
             {"zh": "e^10 / (e^10 + 3) ≈ {first:.5f}，四位小数是 {first:.4f}：差 10 的分数几乎拿走全部预算，分布接近 one-hot。",
              "en": "e^10 / (e^10 + 3) ~ {first:.5f}, {first:.4f} to four decimals: a lead of 10 takes almost the whole "
                    "budget; nearly one-hot."},
             lambda: _softmax_first([10, 0, 0, 0]), 5e-5),
    Question("ex2c", "number",
             {"zh": "计算：同一个 z = (10, 0, 0, 0)，其余每个分量是多少？（三位有效数字，可写 4.54e-5）",
              "en": "Compute: same z = (10, 0, 0, 0), what is each of the other components? (three significant "
                    "figures, e.g. 4.54e-5)"},
             {"zh": "1 / (e^10 + 3) ≈ {other:.3g}。原文的参考答案写作 0.00003，偏小了：正确值约为 {other:.3g}"
                    "（约 0.00005）。",
              "en": "1 / (e^10 + 3) ~ {other:.3g}. The text's answer key gives 0.00003, which is too small: the value "
                    "is {other:.3g} (about 0.00005)."},
             lambda: float(softmax(torch.tensor([10.0, 0, 0, 0], dtype=torch.float64))[1]), 5e-8),
    Question("ex3a", "number",
             {"zh": "计算：D = 4096，H = 32，每个头的维度 d_k 是多少？",
              "en": "Compute: with D = 4096 and H = 32, what is the per-head width d_k?"},
             {"zh": "d_k = D / H = 128。", "en": "d_k = D / H = 128."},
             lambda: _plan_value("head_dim", hidden=4096, heads=32, layers=1), 0.0),
    Question("ex3b", "number",
             {"zh": "计算：同上（MHA），Q、K、V、O 四个投影一共有多少参数（不含偏置）？",
              "en": "Compute: same model (MHA), how many parameters do the four projections Q, K, V, O hold (no biases)?"},
             {"zh": "每个投影 D×D，共 4D² = 67,108,864；拆成 32 个头并不增加参数。",
              "en": "Each projection is D x D, so 4 D^2 = 67,108,864; splitting into 32 heads adds no parameters."},
             lambda: _plan_value("attention_params_per_layer", hidden=4096, heads=32, kv_heads=32, layers=1), 0.0),
    Question("ex4", "number",
             {"zh": "场景：GQA 中 H = 32、H_kv = 8，KV Cache 是 MHA 的几分之几？（可填 0.25 或 1/4）",
              "en": "Scenario: GQA with H = 32 and H_kv = 8. What fraction of the MHA KV cache is it? (0.25 or 1/4)"},
             {"zh": "KV 与 H_kv 成正比：8/32 = 1/4。代价：每组 K/V 要服务 4 个 query 头，表达力略降。",
              "en": "KV is proportional to H_kv: 8/32 = 1/4. The price: each K/V pair serves 4 query heads, "
                    "slightly less expressive."},
             lambda: _kv_fraction(32, 8), 1e-3),
    Question("ex5", "open",
             {"zh": "开放：如果所有头的 W_Q、W_K、W_V 都相同，多头还有意义吗？",
              "en": "Open: if every head had the same W_Q, W_K and W_V, would multiple heads still help?"},
             {"zh": "没有：每个头算出同一个注意力分布和同一个输出，拼接只是重复，W_O 也造不出新信息。多头的价值来自不同的投影。",
              "en": "No: every head computes the same attention pattern and the same output; concatenating copies "
                    "adds nothing W_O could use. Multiple heads help only because their projections differ."}),
    Question("q1", "number",
             {"zh": "z = (2, 1, 0)，温度 T = 0.5 时，softmax 的第一个分量约为多少？（三位小数）",
              "en": "z = (2, 1, 0) at temperature T = 0.5: what is softmax's first component, to three decimals?"},
             {"zh": "z/T = (4, 2, 0)，e^4 / (e^4 + e^2 + 1) = 54.598 / 62.987 ≈ 0.867：温度低于 1 让分布更尖锐。",
              "en": "z/T = (4, 2, 0); e^4 / (e^4 + e^2 + 1) = 54.598 / 62.987 ~ 0.867: a temperature below 1 sharpens."},
             lambda: _softmax_first([2, 1, 0], 0.5), 5e-4, "quiz"),
    Question("q2", "number",
             {"zh": "fp16 里不减最大值直接算 e^z，z 超过多少就会上溢？（两位小数）",
              "en": "Computing e^z in fp16 without subtracting the max: above which z does it overflow? (two decimals)"},
             {"zh": "fp16 最大值 65504，ln 65504 ≈ 11.09。而 d_k = 128 时未缩放的 q·k 标准差约 11.3，所以很常见。",
              "en": "fp16's largest value is 65504 and ln 65504 ~ 11.09. Unscaled q.k with d_k = 128 has a standard "
                    "deviation of about 11.3, so this is common."},
             lambda: math.log(torch.finfo(torch.float16).max), 5e-3, "quiz"),
    Question("q3", "number",
             {"zh": "13B 模型：40 层、H_kv = 8、d_k = 128、fp16。每个 token 的 KV Cache 是多少字节？",
              "en": "The 13B model: 40 layers, H_kv = 8, d_k = 128, fp16. How many bytes of KV cache per token?"},
             {"zh": "2（K 和 V）× 40 × 8 × 128 × 2 B = 163,840 B；12.8 万 token 约 21 GB。",
              "en": "2 (K and V) x 40 x 8 x 128 x 2 B = 163,840 B; about 21 GB for 128,000 tokens."},
             lambda: _plan_value("kv_cache_bytes_per_token", layers=40, heads=40, kv_heads=8, head_dim=128,
                                 kv_dtype="fp16"), 0.0, "quiz"),
]
BY_ID = {q.id: q for q in QUESTIONS}


_UNITS = {"b": 1, "byte": 1, "bytes": 1, "字节": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
_MAX_REPLY = 80


def _eval(node) -> float:
    """An arithmetic expression's value: numbers, + - * / ^ (or **), parentheses. Nothing else:
    no names, no calls, no attribute access (the reply is parsed by ast, never eval'd)."""
    if isinstance(node, ast.Expression):
        return _eval(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
        v = _eval(node.operand)
        return v if isinstance(node.op, ast.UAdd) else -v
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)):
        a, b = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow):
            if abs(b) > 64 or (a == 0 and b < 0):
                raise ValueError("exponent out of range")
            return float(a) ** b
        return {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b}.get(type(node.op)) if not isinstance(node.op, ast.Div) \
            else a / b
    raise ValueError("not arithmetic")


def parse_number(text) -> float:
    """A reply as a number: 0.867, 1/4, 25%, 67,108,864, 1.6e5, 163840 B, 160 KiB, 4*4096^2, 4 × 4096²."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        value = values.parse_float(text)          # 10**400 is not finite here (no OverflowError)
        if value is not None:
            return value
        raise ValueError(f"answer: expected a finite number, got {repr(text)[:40]}")
    raw = str(text)
    s = raw.strip()
    for a, b in (("×", "*"), ("·", "*"), ("÷", "/"), ("−", "-"), ("²", "^2"), ("³", "^3"), ("，", ","), ("（", "("),
                 ("）", ")"), ("％", "%")):
        s = s.replace(a, b)
    s = re.sub(r"(?<=\d),(?=\d{3}\b)", "", s)                 # 163,840 -> 163840 (thousands only)
    s = s.replace(" ", "")
    scale = 1.0
    m = re.fullmatch(r"(.*?)([a-zA-Z字节]+)", s)
    if m and m.group(2).lower() in _UNITS:
        s, scale = m.group(1), _UNITS[m.group(2).lower()]
    if s.endswith("%"):
        s, scale = s[:-1], scale / 100
    s = s.replace("^", "**")
    try:
        if not s or len(s) > _MAX_REPLY or not re.fullmatch(r"[0-9eE.+\-*/()]+", s):
            raise ValueError("not arithmetic")
        value = _eval(ast.parse(s, mode="eval")) * scale
        if math.isfinite(value):
            return value
    except (ValueError, SyntaxError, ZeroDivisionError, OverflowError, TypeError, RecursionError):
        pass
    raise ValueError(f"answer: expected a number such as 0.867, 1/4, 25%, 163840 B or 4*4096^2, got {raw[:40]!r}")


def check(question_id, reply) -> dict:
    """Compare a reply with multihead's own answer: {correct, expected, tolerance, explain}."""
    q = BY_ID.get(question_id) if isinstance(question_id, str) else None
    if q is None:
        raise ValueError(f"id: unknown question {question_id!r} (known: {', '.join(BY_ID)})")
    if q.kind == "open":
        return {"id": q.id, "correct": None, "expected": None, "tolerance": None, "explain": q.explained()}
    expected = q.answer()
    value = parse_number(reply)
    # an exact question (tolerance 0: integer answers) takes the exact value only; a rounded one its
    # tolerance, widened by 1e-12 relative so that a reply exactly on the boundary is not lost to rounding
    slack = q.tolerance + 1e-12 * abs(expected) if q.tolerance else 0.0
    return {"id": q.id, "correct": abs(value - expected) <= slack,
            "value": value, "expected": expected, "tolerance": q.tolerance, "explain": q.explained()}
