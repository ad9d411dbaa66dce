"""Next-token loss and perplexity of a causal LM on fixed token windows: the one NLL.

For windows x [N, T], the model predicts token t+1 from tokens 0..t, so each window gives T-1
predictions and

    perplexity = exp( sum_{n,t} -log p(x[n, t+1] | x[n, :t+1]) / (N * (T - 1)) ).

Each prediction's NLL is computed from fp32 logits (fp64 logits stay fp64) and the sums are
taken in fp64, so two attention implementations can be compared to ~1e-7 relative, far below
the 1e-4 bar, and a sum over thousands of tokens loses nothing to rounding. The head
experiments (``multihead.heads``) use these same functions, under a head mask.
"""
from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from tqdm import tqdm


def logits_nll(logits: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """Summed next-token NLL per row: logits [B, T, V] predict ids[:, 1:] -> float64 [B].

    Differentiable: the gradient flows back through the fp64 sum into the logits."""
    if logits.dtype != torch.float64:
        logits = logits.float()                                            # bf16/fp16 logits: fp32 softmax
    nll = F.cross_entropy(logits[:, :-1].flatten(0, 1), ids[:, 1:].flatten(), reduction="none")   # (B*(T-1),)
    return nll.double().view(ids.shape[0], -1).sum(dim=1)                  # (B,) fp64 sums


def window_nll(model, ids: torch.Tensor) -> torch.Tensor:
    """Summed next-token NLL of each row of ``ids`` [B, T] under ``model`` -> float64 [B]
    (differentiable when grad is enabled)."""
    return logits_nll(model(input_ids=ids, use_cache=False).logits, ids)


@torch.no_grad()
def total_nll(model, windows: torch.Tensor, batch_size: int = 4, progress: bool = False) -> float:
    """Sum of every next-token NLL over ``windows`` [N, T], run in batches of ``batch_size`` rows."""
    if windows.dim() != 2 or windows.shape[1] < 2:
        raise ValueError(f"windows: expected a LongTensor [N, T] with T >= 2, got shape {tuple(windows.shape)}")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size: expected an integer >= 1, got {batch_size!r}")
    total = 0.0
    for i in tqdm(range(0, windows.shape[0], batch_size), desc="perplexity", unit="batch", disable=not progress,
                  leave=False):
        total += float(window_nll(model, windows[i:i + batch_size]).sum())
    return total


def mean_nll(model, windows: torch.Tensor, batch_size: int = 4, progress: bool = False) -> float:
    """Mean next-token NLL (nats/token) over ``windows`` [N, T]: T - 1 predictions per window."""
    return total_nll(model, windows, batch_size, progress) / (windows.shape[0] * (windows.shape[1] - 1))


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


def perplexity(model, windows: torch.Tensor, batch_size: int = 4, progress: bool = False) -> PerplexityResult:
    """Perplexity of ``model`` (a causal LM returning ``.logits``) over ``windows`` LongTensor [N, T]."""
    t0 = time.perf_counter()
    nll = mean_nll(model, windows, batch_size, progress)
    N, T = windows.shape
    return PerplexityResult(perplexity=math.exp(nll), nll=nll, tokens=N * (T - 1), windows=N, window_tokens=T,
                            seconds=time.perf_counter() - t0)


def smollm2_perplexity(attention: str = "multihead", windows: int = 8, window_tokens: int = 512, seed: int = 0,
                       batch_size: int = 4, progress: bool = False) -> dict:
    """SmolLM2-135M-Instruct's perplexity on the Wikipedia sample's seeded windows, with one attention.

    Every argument is checked before the model's weights load (``windows`` against what the corpus
    holds, which needs only the tokenizer); ``window_tokens`` is bounded by the model's positions
    (``max_position_embeddings``) once its config is read. Errors name the CLI flags
    (``--windows``, ...). Returns PerplexityResult's fields plus attention, seed, model and load_seconds.
    """
    from multihead.hf.cache import max_positions
    from multihead.hf.loading import load_smollm2, load_smollm2_tokenizer
    from multihead.hf.text import eval_windows, windows_available
    for name, value, low in (("--windows", windows, 1), ("--window-tokens", window_tokens, 2),
                             ("--batch-size", batch_size, 1), ("--seed", seed, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{name}: expected an integer >= {low}, got {value!r}")
    available = windows_available(load_smollm2_tokenizer(), window_tokens)
    if windows > available:
        raise ValueError(f"--windows: the corpus holds {available:,} windows of {window_tokens} tokens "
                         f"(--window-tokens), got {windows:,}")
    t0 = time.perf_counter()
    model, tokenizer = load_smollm2(attn_implementation=attention)
    load_seconds = time.perf_counter() - t0
    limit = max_positions(model.config)
    if window_tokens > limit:
        raise ValueError(f"--window-tokens: SmolLM2-135M-Instruct has {limit} positions "
                         f"(max_position_embeddings), got {window_tokens}")
    ids = eval_windows(tokenizer, windows, window_tokens, seed=seed)      # (N, T)
    result = perplexity(model, ids, batch_size=batch_size, progress=progress)
    return {"model": "SmolLM2-135M-Instruct", "attention": attention, "seed": seed, **result.to_dict(),
            "load_seconds": load_seconds}
