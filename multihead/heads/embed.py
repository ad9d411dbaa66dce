"""Quality of a sentence encoder after a change, measured against the original encoder.

Sentence embedding = mean of the last hidden states over real tokens, L2-normalised (the
all-MiniLM-L6-v2 recipe). Two measures on held-out sentences:

* cosine: cos(e_new(s), e_orig(s)) per sentence (mean and minimum reported);
* retrieval agreement: for each sentence, its nearest neighbours among the other sentences.
  top-1 = fraction whose nearest neighbour is unchanged; top-k overlap = mean |N_k^orig & N_k^new| / k.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from multihead.heads.merge_kv import Batch


def encode_batches(tokenizer, sentences: list[str], batch_size: int = 32, max_length: int = 128) -> list[Batch]:
    """Tokenised, padded batches {"input_ids", "attention_mask"} of ``sentences``."""
    out = []
    for i in range(0, len(sentences), batch_size):
        enc = tokenizer(sentences[i:i + batch_size], padding=True, truncation=True,
                        max_length=max_length, return_tensors="pt")
        out.append({"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"]})
    return out


@torch.no_grad()
def sentence_embeddings(model: nn.Module, batches: list[Batch]) -> torch.Tensor:
    """Mean-pooled, L2-normalised sentence embeddings [N, D] (float64)."""
    rows = []
    for batch in batches:
        hidden = model(**batch).last_hidden_state.double()                 # (B, T, D)
        keep = batch["attention_mask"].double()[..., None]                 # (B, T, 1)
        pooled = (hidden * keep).sum(1) / keep.sum(1)                      # (B, D)
        rows.append(torch.nn.functional.normalize(pooled, dim=-1))
    return torch.cat(rows)


@dataclass
class EmbeddingAgreement:
    cosine_mean: float
    cosine_min: float
    top1: float              # fraction of sentences whose nearest neighbour is unchanged
    topk_overlap: float      # mean |N_k(orig) & N_k(new)| / k
    k: int


def neighbours(emb: torch.Tensor, k: int) -> torch.Tensor:
    """Indices [N, k] of each row's k most cosine-similar other rows (emb is L2-normalised)."""
    sim = emb @ emb.T                                                      # (N, N)
    sim.fill_diagonal_(-float("inf"))
    return sim.topk(k, dim=1).indices


def embedding_agreement(orig: torch.Tensor, new: torch.Tensor, k: int = 5) -> EmbeddingAgreement:
    """Compare normalised embeddings ``new`` [N, D] to ``orig`` [N, D] (see module docstring)."""
    if orig.shape != new.shape or orig.shape[0] <= k:
        raise ValueError(f"embeddings: expected two [N, D] tensors with N > k={k}, got {tuple(orig.shape)}, {tuple(new.shape)}")
    cos = (orig * new).sum(-1)
    n_orig, n_new = neighbours(orig, k), neighbours(new, k)
    top1 = float((n_orig[:, 0] == n_new[:, 0]).double().mean())
    overlap = sum(len(set(a.tolist()) & set(b.tolist())) for a, b in zip(n_orig, n_new)) / (k * orig.shape[0])
    return EmbeddingAgreement(float(cos.mean()), float(cos.min()), top1, overlap, k)
