"""Perplexity of a causal LM on fixed token windows.

For windows x [N, T], the model predicts token t+1 from tokens 0..t, so each window gives T-1
predictions and

    perplexity = exp( sum_{n,t} -log p(x[n, t+1] | x[n, :t+1]) / (N * (T - 1)) ).

The log-probabilities are taken in fp32 from the model's logits and summed in fp64, so that
two attention implementations can be compared to ~1e-7 relative, far below the 1e-4 bar.
"""
from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass

import torch
from tqdm import tqdm


@dataclass
class PerplexityResult:
    perplexity: float
    nll: float              # mean negative log-likelihood per predicted token (nats)
    tokens: int             # predicted tokens: windows * (window_tokens - 1)
    windows: int
    window_tokens: int
    seconds: float

    def to_dict(self) -> dict:
        return asdict(self)


@torch.no_grad()
def window_nll(model, windows: torch.Tensor) -> torch.Tensor:
    """Summed next-token NLL of each window: windows [N, T] -> float64 [N]."""
    logits = model(input_ids=windows).logits.float()                       # (N, T, V)
    logp = torch.log_softmax(logits[:, :-1], dim=-1)                        # (N, T-1, V)
    target = windows[:, 1:].unsqueeze(-1)                                   # (N, T-1, 1)
    return -logp.gather(-1, target).squeeze(-1).double().sum(dim=1)         # (N,)


def perplexity(model, windows: torch.Tensor, batch_size: int = 4, progress: bool = False) -> PerplexityResult:
    """Perplexity of ``model`` (a causal LM returning ``.logits``) over ``windows`` LongTensor [N, T]."""
    if windows.dim() != 2 or windows.shape[1] < 2:
        raise ValueError(f"windows: expected a LongTensor [N, T] with T >= 2, got shape {tuple(windows.shape)}")
    if batch_size < 1:
        raise ValueError(f"batch_size: expected >= 1, got {batch_size}")
    N, T = windows.shape
    t0 = time.perf_counter()
    total = 0.0
    for i in tqdm(range(0, N, batch_size), desc="perplexity", unit="batch", disable=not progress, leave=False):
        total += float(window_nll(model, windows[i:i + batch_size]).sum())
    tokens = N * (T - 1)
    nll = total / tokens
    return PerplexityResult(perplexity=math.exp(nll), nll=nll, tokens=tokens, windows=N, window_tokens=T,
                            seconds=time.perf_counter() - t0)


def smollm2_perplexity(attention: str = "multihead", windows: int = 8, window_tokens: int = 512, seed: int = 0,
                       batch_size: int = 4, progress: bool = False) -> dict:
    """SmolLM2-135M-Instruct's perplexity on the Wikipedia sample's seeded windows, with one attention.

    Returns PerplexityResult's fields plus attention, seed, model and load_seconds.
    """
    from multihead.models.loading import load_smollm2
    from multihead.models.text import eval_windows
    if windows < 1:
        raise ValueError(f"windows: expected >= 1, got {windows}")
    if window_tokens < 2:
        raise ValueError(f"window-tokens: expected >= 2, got {window_tokens}")
    t0 = time.perf_counter()
    model, tokenizer = load_smollm2(attn_implementation=attention)
    load_seconds = time.perf_counter() - t0
    ids = eval_windows(tokenizer, windows, window_tokens, seed=seed)      # (N, T)
    result = perplexity(model, ids, batch_size=batch_size, progress=progress)
    return {"model": "SmolLM2-135M-Instruct", "attention": attention, "seed": seed, **result.to_dict(),
            "load_seconds": load_seconds}
