"""The symptom catalogue: for every check, what a user of a model with the bug would see, and
the fix. Written from the reference text (section 8, "what users see when it is computed wrong")
and the known bugs in figures.md section 5.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Symptom:
    title: str      # one line: what the check verifies
    user_sees: str  # what a user of a model with this bug would see
    fix: str        # how to fix it


CATALOGUE: dict[str, Symptom] = {
    "reference": Symptom(
        "Output equals exact (float64) attention on ordinary inputs",
        "Hidden states drift away from the ones the model was trained with. Nothing crashes; the "
        "text just gets worse (repetition, wrong facts, ignored instructions), so the bug is "
        "usually blamed on the model.",
        "Read the specific findings below: the one that also fails names the cause."),
    "scale": Symptom(
        "Logits are scaled by 1/sqrt(d_k) (or by the scale= passed in)",
        "Without 1/sqrt(d_k) the logits spread with standard deviation ~sqrt(d_k) (about 11 at "
        "d_k=128) and the softmax turns almost one-hot. In training: loss spikes early and "
        "extreme sensitivity to the learning rate. In a deployed model: a long document is "
        "summarized from its first sentences only, the rest is ignored.",
        "Multiply q.k by 1/sqrt(d_k) (head_dim ** -0.5) exactly once, before the softmax; when "
        "the caller passes scale= (or HF's scaling=), use that value instead."),
    "overflow": Symptom(
        "Large logits stay finite: the row maximum is subtracted before exp()",
        "exp() of a logit above ~11.09 overflows fp16 (65504), above ~88.7 it overflows "
        "fp32/bf16; inf/inf is NaN, and one NaN spreads through every later layer. The reply "
        "comes back blank or as NaN, on some prompts only.",
        "Subtract the row maximum before exp() (softmax is shift invariant, the result is the "
        "same) or call torch.softmax, which does; accumulate in fp32 for fp16/bf16 inputs."),
    "causal_mask": Symptom(
        "With is_causal, a token never sees tokens after it",
        "The model reads the future: training loss looks excellent because the next token is "
        "visible, but at generation time there is no future to copy, so the output is poor; a "
        "full-prompt forward pass and token-by-token decoding disagree.",
        "Mask keys j > i (-inf above the diagonal, keep the diagonal) before the softmax, or pass "
        "is_causal=True to a kernel that implements it."),
    "causal_alignment": Symptom(
        "With is_causal and Tq != Tk, the causal mask is aligned consistently",
        "With top-left alignment, is_causal=True on a decode step (one new query against a cache "
        "of Tk keys) lets the new token see only the first cached token: the model forgets its "
        "prompt and generation turns incoherent after the first token. A mask that is neither "
        "top-left nor bottom-right hides or reveals a few tokens at random.",
        "Align bottom-right (query i sees keys 0..Tk-Tq+i, the FlashAttention and KV-cache "
        "convention) or build the mask from absolute positions. With torch SDPA (top-left), pass "
        "is_causal=False for a one-token decode step and an explicit mask for chunked prefill."),
    "mask_polarity": Symptom(
        "A bool mask means True = attend (PyTorch SDPA convention)",
        "Read with the opposite polarity (nn.MultiheadAttention's True = masked), the mask makes "
        "every token attend only to padding and to masked positions: batched replies depend on "
        "the padding and have nothing to do with the prompt; rows with nothing left become NaN.",
        "Use True = attend; convert with ~mask for nn.MultiheadAttention, and build additive "
        "masks as torch.where(mask, 0, -inf)."),
    "fully_masked_rows": Symptom(
        "A query row with every key masked gives a finite output (zeros), not NaN",
        "A fully masked row (a padded query in batched generation) computes 0/0 = NaN. The NaN "
        "sits in a padding position, then reaches real tokens in the next layer because "
        "0 x NaN = NaN in weights @ values: the whole batch comes back NaN or empty as soon as "
        "one sequence is padded.",
        "Give rows with no attended key a finite output (PyTorch returns 0): subtract a finite "
        "row max and divide by max(sum, tiny), or zero such rows. In fp16, never add two "
        "finfo.min masks (the sum is -inf)."),
    "head_independence": Symptom(
        "Each output head depends only on its own head's q, k, v; heads are laid out [B, H, T, d]",
        "Reshaping [B, H, T, d_k] to [B, T, D] without first transposing to [B, T, H, d_k] "
        "raises no error: each output row receives pieces of several heads and positions. The "
        "model still writes fluent text, but it answers a different question than the one asked; "
        "the hardest of these bugs to find.",
        "out.transpose(1, 2).reshape(B, T, H * d_k): move the head axis next to d_k before "
        "merging (HF functions return out.transpose(1, 2), shape [B, T, H, d])."),
    "head_layout": Symptom(
        "Heads are merged after a transpose ([B, H, T, d] -> [B, T, H, d] -> [B, T, D])",
        "Reshaping [B, H, T, d_k] to [B, T, D] without transposing first raises no error: each "
        "output row receives pieces of several heads and positions. The model still writes fluent "
        "text, but it answers a different question than the one asked; the hardest of these "
        "bugs to find.",
        "out.transpose(1, 2).reshape(B, T, H * d_k) (or .contiguous().view(...)) before W_O."),
    "gqa_grouping": Symptom(
        "Query head h reads KV head h // (H / H_kv)",
        "With .repeat / tile instead of repeat_interleave, query head h reads KV head h % H_kv: "
        "every query head uses another group's keys and values, and a GQA checkpoint produces "
        "plausible but wrong text. (The opposite mistake, configuring a GQA model as MHA, "
        "multiplies the KV cache by H / H_kv and runs out of memory: users see 5xx errors, "
        "not slowness.)",
        "Expand K/V with repeat_interleave(H // H_kv, dim=1) (transformers' repeat_kv), or pass "
        "enable_gqa=True to torch SDPA."),
    "batch_independence": Symptom(
        "Sequences in one batch do not influence each other",
        "A user's reply changes with whoever else shares the batch, one request's content leaks "
        "into another's answer, and results change with the batch size.",
        "Keep the batch axis out of every reduction and reshape; when flattening to (B*H), use "
        "the same view for q, k and v and undo it the same way."),
    "normalization": Symptom(
        "Attention weights are a distribution over keys (each row sums to 1)",
        "Without the division, or with the softmax taken over the query axis instead of the key "
        "axis, the output's size grows or shrinks with the context length: fine on short "
        "prompts, degrading as documents get longer.",
        "Softmax over the last (key) axis: torch.softmax(scores, dim=-1)."),
}


def symptom(check: str) -> Symptom:
    return CATALOGUE[check]
