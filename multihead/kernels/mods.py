"""Score modifications applied between Q K^T and the softmax: window, softcap, ALiBi.

flash-attention's names and rules, in multihead's bottom-right alignment (query i of Tq sits at
position p_i = i + Tk - Tq among the Tk keys, so the last query is the newest token):

    window_size = (left, right)   query i sees key j iff p_i - left <= j <= p_i + right; -1 (or
                                  None here) is unbounded on that side. Causal is (left, 0).
    softcap = c > 0               s -> c * tanh(s / c), on the scaled scores, before any mask or
                                  bias is added (Gemma-2's attn_logit_softcapping).
    alibi_slopes [B, H] fp32      s -> s - slope[b, h] * |p_i - j|   (Press et al., ALiBi).

The order within a kernel is: s = (q * scale) k^T; softcap; + ALiBi bias; + the user's float mask
/ bool mask; window and causal masks. Kernels that take ``mods`` (reference, tiled, decode) skip
whole key blocks that the window rules out; see multihead.kernels.window for the fast kernels.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

__all__ = ["ScoreMods", "NO_MODS"]


@dataclass(frozen=True)
class ScoreMods:
    """The normalized window / softcap / ALiBi arguments of one attention call."""
    left: int | None = None        # keys before a query's position it may see; None = all
    right: int | None = None       # keys after it; None = all (is_causal makes it 0)
    softcap: float = 0.0           # 0 = off
    alibi: Tensor | None = None    # [B, H] fp32 slopes, or None

    @property
    def active(self) -> bool:
        return self.left is not None or self.right is not None or self.softcap > 0 or self.alibi is not None

    @property
    def score_only(self) -> bool:
        """True when only the window is set: expressible as a mask, so any kernel can run it."""
        return self.softcap == 0 and self.alibi is None

    def with_causal(self, is_causal: bool) -> "ScoreMods":
        """The same mods with causal folded into the window (right = min(right, 0))."""
        if not is_causal:
            return self
        right = 0 if self.right is None else min(self.right, 0)
        return ScoreMods(self.left, right, self.softcap, self.alibi)

    def key_range(self, q0: int, q1: int, offset: int, Tk: int) -> tuple[int, int]:
        """Keys [lo, hi) that any of the queries q0..q1-1 may see (offset = Tk - Tq). Causal must
        be folded in (with_causal). hi <= lo when none is visible."""
        lo = 0 if self.left is None else max(0, q0 + offset - self.left)
        hi = Tk if self.right is None else min(Tk, q1 - 1 + offset + self.right + 1)
        return lo, hi

    def window_cuts(self, q0: int, q1: int, k0: int, k1: int, offset: int) -> bool:
        """Whether the window hides some pair of the block queries q0..q1-1 x keys k0..k1-1."""
        left_cut = self.left is not None and k0 < q1 - 1 + offset - self.left
        right_cut = self.right is not None and k1 - 1 > q0 + offset + self.right
        return left_cut or right_cut

    def apply(self, s: Tensor, rel: Tensor, slopes: Tensor | None, window: bool = True) -> Tensor:
        """Softcap, ALiBi and the window on scores ``s``; returns the new scores (maybe ``s``).

        rel: integer p_i - j (query position minus key position), broadcastable to ``s``.
        slopes: this block's ALiBi slopes broadcastable to ``s`` (or None). window=False skips the
        window mask (the caller knows it cuts nothing here). Out of place where autograd needs it.
        """
        if self.softcap > 0:
            s = torch.tanh(s / self.softcap) * self.softcap
        if slopes is not None:
            s = s - slopes * rel.abs().to(s.dtype)
        if window and (self.left is not None or self.right is not None):
            hide = torch.zeros_like(rel, dtype=torch.bool)
            if self.left is not None:
                hide |= rel > self.left
            if self.right is not None:
                hide |= rel < -self.right
            s = s.masked_fill(hide, float("-inf"))
        return s


NO_MODS = ScoreMods()


def rel_positions(q0: int, q1: int, k0: int, k1: int, offset: int, device) -> Tensor:
    """Int [q1-q0, k1-k0]: p_i - j for queries q0..q1-1 and keys k0..k1-1 (p_i = i + offset)."""
    qi = torch.arange(q0 + offset, q1 + offset, device=device).unsqueeze(1)   # (q, 1)
    kj = torch.arange(k0, k1, device=device).unsqueeze(0)                      # (1, k)
    return qi - kj                                                             # (q, k)
