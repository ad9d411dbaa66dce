"""Black-box probes for modules with the MultiHeadAttention interface (x [B, T, D] -> [B, T, D]).

A module's weights are its own, so there is no float64 reference to compare with; these probes
use properties every correct attention layer has whatever its weights (and whatever positional
rotation it applies to q and k):

- identical tokens: if every token is the same x, every value vector is the same, so any
  normalized attention returns it, and every position's output equals the 1-token output;
- causality: with is_causal, output t does not depend on tokens after t;
- masks: a masked-out key does not influence the rows that mask it;
- batch: sequences do not influence each other.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from multihead.checker.adapters import ModuleTarget
from multihead.checker.probes import _fmt, _ranges, bound, changed
from multihead.checker.reference import normal
from multihead.checker.report import Finding


@dataclass
class ModuleCtx:
    target: ModuleTarget
    dtype: torch.dtype
    device: torch.device
    seed: int = 0

    def gen(self, salt: int) -> torch.Generator:
        return torch.Generator().manual_seed(self.seed * 1000 + 500 + salt)

    def randn(self, g, *shape, std=1.0):
        return (normal(*shape, generator=g, dtype=self.dtype) * std).to(self.device, self.dtype)

    def tol(self, y: torch.Tensor) -> float:
        """probes.bound scaled to the output's size (the projections set it), n = D plus the 12 keys."""
        return bound(self.dtype, self.target.d_model + 12, max(1.0, y.detach().abs().nan_to_num(0).max().item()),
                     acc=torch.float32)      # the module compared with itself: see probes.Ctx.tol


def _delta(a, b, dims):
    return (a - b).abs().to(torch.float64).nan_to_num(math.inf).amax(dim=dims)


def probe_head_layout(ctx: ModuleCtx) -> Finding:
    g = ctx.gen(1)
    B, T, D = 2, 12, ctx.target.d_model
    x1 = ctx.randn(g, B, 1, D)
    y1 = ctx.target(x1)                                     # (B, 1, D)
    yT = ctx.target(x1.expand(B, T, D).contiguous())        # (B, T, D)
    tol = ctx.tol(y1)
    dev = _delta(yT, y1, dims=(0, 2))                       # (T,)
    spread = _delta(yT, yT[:, :1], dims=(0, 2)).max().item()
    metrics = {"max_dev_from_one_token": dev.max().item(), "spread_across_positions": spread, "tolerance": tol}
    if dev.max().item() <= tol:
        return Finding("head_layout", "pass", f"{T} identical tokens: every position's output equals the 1-token "
                       f"output (max dev {_fmt(dev.max().item())})", metrics)
    bad = [t for t in range(T) if dev[t] > tol]
    if spread <= tol:
        why = ("positions agree with each other but not with the 1-token output: the attention weights do not "
               "sum to 1")
    else:
        why = ("positions disagree although every value vector is identical: output rows receive the wrong heads, "
               "as when [B, H, T, d] is reshaped to [B, T, D] without a transpose")
    return Finding("head_layout", "fail", f"{T} identical tokens: positions {_ranges(bad)} differ from the 1-token "
                   f"output by up to {_fmt(dev.max().item())}; {why}", metrics)


def probe_causal_mask(ctx: ModuleCtx) -> Finding:
    g = ctx.gen(2)
    T, D = 12, ctx.target.d_model
    x = ctx.randn(g, 1, T, D)
    y = ctx.target(x, is_causal=True)
    tol = ctx.tol(y)
    for j in (4, 9):
        x2 = x.clone()
        x2[:, j] += ctx.randn(g, 1, D, std=2.0)
        d = _delta(ctx.target(x2, is_causal=True)[:, :j], y[:, :j], dims=(0, 2))
        moved = [i for i in range(j) if d[i] > tol]
        if moved:
            return Finding("causal_mask", "fail", f"perturbing token {j} moved the outputs of earlier positions "
                           f"{_ranges(moved)} by up to {_fmt(d.max().item())} (must be 0)",
                           {"token": j, "moved": moved})
    return Finding("causal_mask", "pass", "perturbing tokens 4 and 9 never moves an earlier position's output")


def _padding_mask(B, T, P):
    keep = torch.ones(B, 1, T, T, dtype=torch.bool)
    keep[..., T - P:] = False       # the last P tokens are padding: no row attends them
    return keep


def probe_mask_polarity(ctx: ModuleCtx) -> Finding:
    g = ctx.gen(3)
    B, T, P, D = 2, 10, 3, ctx.target.d_model
    x = ctx.randn(g, B, T, D)
    mask = _padding_mask(B, T, P).to(ctx.device)
    y = ctx.target(x, mask=mask)
    tol = ctx.tol(y)
    x2 = x.clone()
    x2[:, T - P:] += ctx.randn(g, B, P, D, std=2.0)
    d_pad = _delta(ctx.target(x2, mask=mask)[:, :T - P], y[:, :T - P], dims=(0, 1, 2)).item()
    if d_pad <= tol:
        return Finding("mask_polarity", "pass", f"True = attend: changing the {P} masked-out tokens leaves the other "
                       f"{T - P} outputs unchanged (max change {_fmt(d_pad)})", {"masked_tokens_influence": d_pad})
    x3 = x.clone()
    x3[:, 0] += ctx.randn(g, B, D, std=2.0)
    d_kept = _delta(ctx.target(x3, mask=mask)[:, 1:T - P], y[:, 1:T - P], dims=(0, 1, 2)).item()
    what = ("polarity inverted: True is read as masked" if d_kept <= tol
            else "masked-out tokens still reach the output (the mask is ignored or half applied)")
    return Finding("mask_polarity", "fail", f"changing the {P} masked-out tokens moved the other outputs by "
                   f"{_fmt(d_pad)} (must be 0); changing an attended token moved them by {_fmt(d_kept)}: {what}",
                   {"masked_tokens_influence": d_pad, "attended_token_influence": d_kept})


def probe_fully_masked_rows(ctx: ModuleCtx) -> Finding:
    g = ctx.gen(4)
    B, T, D = 2, 8, ctx.target.d_model
    x = ctx.randn(g, B, T, D)
    mask = torch.ones(B, 1, T, T, dtype=torch.bool)
    empty = [3]
    mask[..., empty, :] = False
    y = ctx.target(x, mask=mask.to(ctx.device))
    y_full = ctx.target(x)
    n_bad = int((~torch.isfinite(y)).sum())
    others = [i for i in range(T) if i not in empty]
    d_others = _delta(y[:, others], y_full[:, others], dims=(0, 1, 2)).item()
    metrics = {"nonfinite": n_bad, "other_rows_change": d_others}
    if n_bad or d_others > ctx.tol(y_full):
        what = f"{n_bad} of {y.numel()} outputs are inf/NaN" if n_bad else "the outputs are finite"
        return Finding("fully_masked_rows", "fail", f"with query row {empty[0]} fully masked, {what}; the other rows "
                       f"moved by {_fmt(d_others)} (must be 0)", metrics)
    return Finding("fully_masked_rows", "pass", f"query row {empty[0]} fully masked: output finite, other rows "
                   f"unchanged (max change {_fmt(d_others)})", metrics)


def probe_batch_independence(ctx: ModuleCtx) -> Finding:
    g = ctx.gen(5)
    B, T, D = 3, 8, ctx.target.d_model
    x = ctx.randn(g, B, T, D)
    y = ctx.target(x)
    x2 = x.clone()
    x2[1] += ctx.randn(g, T, D)
    d = _delta(ctx.target(x2), y, dims=(1, 2))
    alone = _delta(ctx.target(x[:1]), y[:1], dims=(0, 1, 2)).item()
    tol = ctx.tol(y)
    metrics = {"moved_other_sequences": [d[0].item(), d[2].item()], "alone_vs_batched": alone}
    if d[0] > tol or d[2] > tol or alone > tol:
        return Finding("batch_independence", "fail", f"perturbing sequence 1 of 3 moved sequences 0 and 2 by "
                       f"{_fmt(d[0].item())} and {_fmt(d[2].item())}; alone vs batched: {_fmt(alone)}", metrics)
    return Finding("batch_independence", "pass", f"perturbing sequence 1 of 3 leaves 0 and 2 unchanged; alone vs "
                   f"batched differs by {_fmt(alone)}", metrics)


def probe_overflow(ctx: ModuleCtx) -> Finding:
    """Inputs 100x larger push every logit far beyond exp()'s range (88.7 in fp32): a stable
    softmax turns one-hot and stays finite, an unstable one returns inf/NaN. In float16 such
    logits would not even be representable (65504), so that case runs on a float32 copy."""
    import copy

    g = ctx.gen(6)
    B, T, D = 1, 8, ctx.target.d_model
    target, dtype, note = ctx.target, ctx.dtype, ""
    if ctx.dtype == torch.float16:
        target = ModuleTarget(copy.deepcopy(ctx.target.module).float(), D, ctx.target.n_heads, ctx.target.n_kv_heads)
        dtype, note = torch.float32, " (on a float32 copy: such logits overflow float16 itself)"
    x = (normal(B, T, D, generator=g, dtype=dtype) * 100.0).to(ctx.device, dtype)
    y = target(x)
    n_bad = int((~torch.isfinite(y)).sum())
    if n_bad:
        return Finding("overflow", "fail", f"inputs x100 (logits far above 88.7): {n_bad} of {y.numel()} outputs "
                       f"are inf/NaN{note}", {"nonfinite": n_bad})
    return Finding("overflow", "pass", f"inputs x100 (logits far above 88.7): output finite{note}", {"nonfinite": 0})


def eval_note(target: ModuleTarget) -> str:
    """The note that says the checker switched the module to eval mode (a class is built in
    training mode, nn.Module's default)."""
    if not target.was_training:
        return ("the module was in eval mode; the checks run it in eval mode (the determinism check also tries "
                "training mode)")
    return ("the module was in training mode; the checks run the checker's copy in eval mode (.eval(): dropout and "
            "other training-only behaviour off, as at inference); the determinism check compares training mode")


def probe_determinism(ctx: ModuleCtx) -> Finding:
    """In eval mode two calls on the same x must agree (randomness left on in eval mode is a bug);
    training mode is compared with eval mode and reported (INFO) when it differs, because every
    other check ran in eval mode."""
    g = ctx.gen(7)
    B, T, D = 2, 12, ctx.target.d_model
    x = ctx.randn(g, B, T, D)
    y1, y2 = ctx.target(x), ctx.target(x)
    tol = ctx.tol(y1)
    d_eval = changed(y1, y2)
    metrics = {"eval_values_that_differ": int((d_eval > tol).sum()), "eval_max_diff": d_eval.max().item()}
    if metrics["eval_values_that_differ"]:
        return Finding("determinism", "fail", f"in eval mode, two calls on the same x [{B}, {T}, {D}] gave different "
                       f"outputs: {metrics['eval_values_that_differ']} of {d_eval.numel()} values differ, by up to "
                       f"{_fmt(metrics['eval_max_diff'])}: nondeterministic: dropout or randomness left on (even "
                       f"after .eval(): F.dropout(..., training=True) or random numbers drawn in forward)", metrics)
    module = ctx.target.module
    module.train()             # the checker's own copy (adapters: deepcopy); its buffers may move, the caller's do not
    try:
        y_train = ctx.target(x)
    except Exception as err:    # noqa: BLE001 - an inference-only module may refuse training mode: nothing to compare
        return Finding("determinism", "info", f"eval mode: two calls on the same x agree; training mode is not "
                       f"compared: the module raised {type(err).__name__}: {str(err)[:120]} in it (every other check "
                       f"ran in eval mode)", metrics)
    finally:
        module.eval()
    d_train = changed(y_train, y1).max().item()
    metrics["train_vs_eval_max_diff"] = d_train
    if d_train > tol:
        return Finding("determinism", "info", f"eval mode: two calls on the same x agree; in training mode (the "
                       f"module {'as it was given' if ctx.target.was_training else 'switched to .train()'}) the output differs from eval mode by up to {_fmt(d_train)}: "
                       f"dropout or another training-only path is active in training mode. Every other check ran in "
                       f"eval mode: call .eval() before inference", metrics)
    return Finding("determinism", "pass", f"two calls on the same x agree, and training mode gives the eval-mode "
                   f"output (max diff {_fmt(d_train)})", metrics)


def not_applicable() -> list[Finding]:
    why = ("a module's weights are its own, so there is no float64 reference to compare against; check the "
           "attention function it calls with signature='sdpa'")
    return [Finding("scale", "skip", why),
            Finding("gqa_grouping", "skip", "with the module's own weights any grouping is a relabeling of heads; "
                    "it only matters against a checkpoint's weights (check the attention function instead)")]


MODULE_PROBES = [probe_determinism, probe_head_layout, probe_causal_mask, probe_mask_polarity, probe_fully_masked_rows,
                 probe_batch_independence, probe_overflow]
