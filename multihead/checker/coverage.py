"""What a check actually tried: every call of the target is recorded along each dimension.

A pass only means something for the paths that were exercised, so every report carries this
table: for each dimension (head grouping, mask kind, query vs key length, key length, score
pattern, batch, dtype) the values that ran, and the ones that could not run with the reason (the
function refused GQA-shaped K/V, a float mask, a length, a dtype, ...). The heads, lengths, batch
and dtype of a call are read from its tensors; the mask kind and score pattern are told by the
probe that built them.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

# dimension -> the values the suite aims to try, in display order.
DIMENSIONS: dict[str, tuple[str, ...]] = {
    "heads": ("MHA (G=1)", "GQA G=2", "GQA G=3 (odd)", "GQA G=4", "MQA (H_kv=1)"),
    "mask": ("none", "causal", "bool", "bool per head", "padding per sequence", "additive -inf/min",
             "additive bias", "fully masked rows"),
    "query_vs_keys": ("Tq = Tk", "chunked Tq < Tk", "decode Tq = 1"),
    "key_length": ("short (<= 64)", "long (> 256)"),
    "score_pattern": ("random", "max grows late", "late spike", "split-K (mass in one split)", "large logits"),
    "batch": ("B = 1", "B > 1, distinct data"),
    "dtype": ("float32", "float64", "bfloat16", "float16"),
}
LONG_KEYS = 256


def heads_value(h: int, h_kv: int) -> str:
    if h_kv == h:
        return "MHA (G=1)"
    if h_kv == 1:
        return "MQA (H_kv=1)"
    g = h // h_kv
    return f"GQA G={g}" + (" (odd)" if g % 2 else "")


def mask_kinds(mask, is_causal: bool) -> list[str]:
    """The mask values of DIMENSIONS that a call's (mask, is_causal) exercises."""
    kinds = ["causal"] if is_causal else []
    if mask is None:
        return kinds or ["none"]
    if mask.dtype == torch.bool:
        dropped = ~mask
    else:
        dropped = mask <= -1e30                                       # -inf or a finfo.min
        only_drops = bool(((mask == 0) | dropped).all())
        kinds.append("additive -inf/min" if only_drops else "additive bias")
    if bool(dropped.all(-1).any()):
        kinds.append("fully masked rows")
    elif mask.dtype == torch.bool:
        per_seq = mask.dim() == 4 and mask.shape[0] > 1 and not bool((mask == mask[:1]).all())
        kinds.append("padding per sequence" if per_seq and mask.shape[-2] == 1 else
                     "bool per head" if mask.dim() == 4 and mask.shape[1] > 1 else "bool")
    return kinds


def call_tags(q, k, mask, is_causal: bool, pattern: str) -> dict[str, list[str]]:
    """The coverage values of each dimension for one call with q [B, H, Tq, d], k [B, H_kv, Tk, d]."""
    B, H, Tq, _ = q.shape
    h_kv, Tk = k.shape[1], k.shape[2]
    qk = "Tq = Tk" if Tq == Tk else "decode Tq = 1" if Tq == 1 else "chunked Tq < Tk" if Tq < Tk else "Tq > Tk"
    tags = {"heads": heads_value(H, h_kv), "mask": mask_kinds(mask, is_causal), "query_vs_keys": qk,
            "key_length": "long (> 256)" if Tk > LONG_KEYS else "short (<= 64)" if Tk <= 64 else "medium (65..256)",
            "score_pattern": pattern, "batch": "B = 1" if B == 1 else "B > 1, distinct data",
            "dtype": str(q.dtype).replace("torch.", "")}
    return {dim: value if isinstance(value, list) else [value] for dim, value in tags.items()}


@dataclass
class Coverage:
    ok: dict[str, dict[str, int]] = field(default_factory=dict)          # dimension -> value -> calls
    refused: dict[str, dict[str, str]] = field(default_factory=dict)     # dimension -> value -> why
    key_lengths: set[int] = field(default_factory=set)
    refusals: dict[str, str] = field(default_factory=dict)              # call description -> why

    def record(self, tags: dict[str, list[str]], why: str | None = None, tk: int | None = None) -> None:
        """One call: it returned (why None) or could not run (why says so)."""
        for dim, values in tags.items():
            for value in values:
                if why is None:
                    self.ok.setdefault(dim, {}).setdefault(value, 0)
                    self.ok[dim][value] += 1
                else:
                    self.refused.setdefault(dim, {}).setdefault(value, why)
        if why is None and tk is not None:
            self.key_lengths.add(tk)

    def not_tried(self, dim: str, value: str, why: str) -> None:
        """A value a probe could not even attempt (e.g. GQA on a function that takes H_kv == H only)."""
        self.refused.setdefault(dim, {}).setdefault(value, why)

    def rows(self) -> list[dict]:
        """[{dimension, tried: [value (calls)], not_tried: [{value, why}]}] in DIMENSIONS order."""
        out = []
        for dim, wanted in DIMENSIONS.items():
            ok = self.ok.get(dim, {})
            values = list(wanted) + [v for v in list(ok) + list(self.refused.get(dim, {})) if v not in wanted]
            tried = [f"{v} ({ok[v]})" for v in dict.fromkeys(values) if ok.get(v)]
            missing = [{"value": v, "why": self.refused.get(dim, {}).get(v, "no probe reached it")}
                       for v in dict.fromkeys(values) if not ok.get(v)]
            if dim == "key_length" and self.key_lengths:
                short = sorted(t for t in self.key_lengths if t <= 64)
                long = sorted(t for t in self.key_lengths if t > 64)
                tried.append(f"Tk = {short[0]}..{short[-1]} ({len(short)} lengths)" if short else "")
                tried.append("Tk = " + ", ".join(map(str, long)) if long else "")
                tried = [t for t in tried if t]
            out.append({"dimension": dim, "tried": tried, "not_tried": missing})
        return out

    def refuse(self, call: str, tags: dict[str, list[str]], why: str) -> None:
        self.refusals.setdefault(call, why)
        self.record(tags, why)
