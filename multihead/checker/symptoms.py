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
    "determinism": Symptom(
        "The same input gives the same output (no dropout or randomness left on)",
        "The same prompt gives different replies, even with greedy decoding, and quality is lower than at "
        "evaluation: dropout left on at inference zeroes a random part of the attention weights (and scales "
        "the rest up) on every call. In tests every comparison of the function with itself sees noise, so "
        "masks, heads and batches all look broken.",
        "Turn dropout off at inference: pass dropout_p=0.0 (or training=self.training to F.dropout) when not "
        "training, and call model.eval() before inference; draw no random numbers in the forward pass."),
    "finite_output": Symptom(
        "The output is finite on ordinary inputs (random q, k, v, no mask)",
        "Every reply is empty or garbage from the first token on: one NaN in an attention output spreads "
        "through every later layer and position.",
        "Find the first operation that gives inf/NaN on plain inputs: a division by a zero sum, log(0), "
        "inf - inf, an uninitialized buffer (torch.empty) returned without being filled, or a cast to a dtype "
        "that overflows."),
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
        "top-left nor bottom-right is off by a fixed number of tokens on every call of that shape: "
        "off by one at a decode step, the new token never sees its own key and value (every "
        "generated token, deterministically), so generation drifts from what a full forward pass "
        "of the same text gives. An alignment that changes with Tq (one at decode, another in "
        "chunked prefill) makes the same text give different results depending on how it was fed.",
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
    "gqa_masks": Symptom(
        "GQA / MQA (G = 2, 3, 4 and H_kv = 1) combined with causal, bool and per-head masks equals the reference",
        "Only GQA/MQA checkpoints (Llama 3, Mistral, Qwen, SmolLM2) are hit; MHA models and unmasked tests look "
        "fine. With the causal mask built over the folded G*Tq rows of packed GQA, every query head but the "
        "first of each group sees future tokens during prefill: prompt processing and token-by-token decoding "
        "of the same text disagree, and answers degrade on every prompt longer than one token.",
        "Build the mask for Tq rows and repeat it for the G heads of a group (row g*Tq + i uses row i's mask), "
        "or index the mask by (query row // G) when rows are interleaved."),
    "long_keys": Symptom(
        "Several hundred to a few thousand keys (several key blocks) give the reference result",
        "Short prompts are fine; once a prompt spans several key blocks, the answer degrades. Without the "
        "running-output rescale, a later block with a larger score (a relevant word late in the prompt) is "
        "mixed with stale, unscaled earlier blocks: outputs have the wrong size and long-context retrieval "
        "fails. With a dropped last partial block, the last tokens of the prompt (often the question itself) "
        "are invisible whenever the length is not a multiple of the block size.",
        "In an online softmax, when the running max grows from m_old to m_new multiply both the running sum "
        "and the running output by exp(m_old - m_new) before adding the new block; loop to the end of the "
        "keys, including the last partial block (mask its padding instead of skipping it)."),
    "decode": Symptom(
        "One query over a KV cache (Tq = 1, the decode step) gives the reference result",
        "The prompt is processed correctly (prefill uses another path), but every generated token is "
        "computed wrongly once the cache is long or the scores are uneven: generation drifts or turns "
        "incoherent a few tokens in, while perplexity measured on full prompts looks normal. A split-K "
        "merge without the parts' maxima weights unimportant parts of the cache far too much.",
        "Merge split-K parts by log-sum-exp: with per-part (m_i, l_i, o_i), m = max m_i, "
        "out = sum_i exp(m_i - m) l_i o_i / sum_i exp(m_i - m) l_i; apply the mask and causal limit in the "
        "decode path exactly as in prefill."),
    "padding": Symptom(
        "A different padding length in every sequence of a batch is applied to its own sequence",
        "Batched generation differs from the same prompts one at a time: sequences attend to padding or "
        "lose real tokens depending on who else is in the batch (with the first sequence's mask applied to "
        "all, only the first request is right). Results change with the batch size and order.",
        "Keep the batch axis of the mask: mask[b] for sequence b (broadcast [B, 1, 1, Tk] or "
        "[B, 1, Tq, Tk] over heads, never over the batch); when flattening (B, H), repeat the mask with "
        "repeat_interleave(H, dim=0), not repeat."),
    "additive_mask": Symptom(
        "A float mask (-inf, finfo.min, or a real-valued bias such as ALiBi) is added to the scaled scores",
        "Models that pass biases (ALiBi, T5/relative positions, soft prompts masks) or HF-style finfo.min "
        "masks get wrong attention: read as bool, -inf positions are attended; scaled with the scores, the "
        "position bias is too weak and long-range behaviour changes; ignored, the model loses its sense of "
        "distance. Bool-mask tests all pass.",
        "Add a float mask after scaling: softmax(q k^T * scale + mask); convert bool masks with "
        "torch.where(mask, 0, -inf), never float masks with .bool()."),
    "dtypes": Symptom(
        "bfloat16 / float16 (and the other float dtypes) stay within a few times PyTorch's own rounding error",
        "The usual deployment dtype (bf16/fp16) drifts from fp32 far more than rounding explains: quality "
        "drops only in production, while fp32 tests pass; worse on long prompts, where sums over thousands "
        "of keys are accumulated in 8 bits of mantissa.",
        "Accumulate scores, the running max, the running sum and the output in float32 for fp16/bf16 "
        "inputs, and round once at the end (as torch SDPA and FlashAttention do)."),
    "input_mutation": Symptom(
        "The function leaves q, k, v and the mask unchanged",
        "The caller's tensors change under it: scaling q in place or writing into k/v corrupts the KV cache, "
        "so every later decode step reads modified keys and values; the error compounds over generation and "
        "differs between the first and second call on the same input.",
        "Never write into the inputs (q = q * scale, not q.mul_(scale)); clone before an in-place op."),
    "timeout": Symptom(
        "Every call returns within the time limit",
        "The request never returns: the serving process hangs on inputs of this shape and must be killed.",
        "Find the loop that does not terminate for this shape (the probe and call are named); loops over "
        "blocks must advance by the block size and stop at Tk."),
    "exit": Symptom(
        "The function returns normally, without ending the process",
        "The calling process exits (sys.exit / os._exit) in the middle of a request: the server dies, and a "
        "test run or CI job that calls it may even read the exit status as a success.",
        "Raise an exception instead of exiting; never call sys.exit or os._exit in library code."),
}


def symptom(check: str) -> Symptom:
    return CATALOGUE[check]
