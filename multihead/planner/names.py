"""One name per quantity in the plan's JSON: the engines' / HF names, and the old keys as aliases.

The plan's JSON is in bytes and seconds throughout (the top-level keys end ``_bytes`` / ``_seconds``;
the serving object's times end ``_s``, seconds too, as vLLM's benchmark prints them). The serving
object's GiB figures (as vLLM's log prints them) come with a ``_bytes`` twin, the convention's key.

Renamed keys keep working for one release: ``to_dict`` writes the old key beside the new one with the
same value, ``Plan.<old name>`` still resolves, and docs/planner.md lists them. Remove an alias by
deleting its row here (tests/test_names.py then checks nothing else still writes it).
"""
from __future__ import annotations

from multihead.cost.serving.vllm import BYTE_TWINS

# old top-level key -> the name it is now (HF config / vLLM flag names)
RENAMED = {
    "n_kv_heads": "num_kv_heads",            # vLLM's name (HF: num_key_value_heads)
    "n_heads": "num_attention_heads",        # HF config.json
    "n_layers": "num_hidden_layers",         # HF config.json
    "d_model": "hidden_size",                # HF config.json
    "gpus": "tensor_parallel_size",          # vLLM's --tensor-parallel-size
}
# the serving object's GiB keys and their byte twins (the JSON's one unit of memory): the accounts write
# both, the twin from the unrounded bytes (cost/serving/vllm.py ServingAccount.to_json)
SERVING_BYTES = BYTE_TWINS


def with_aliases(d: dict) -> dict:
    """The plan's flat keys with each renamed key's old name beside it (same value, one release)."""
    out = dict(d)
    for old, new in RENAMED.items():
        if new in out:
            out[old] = out[new]
    return out


def serving_bytes(d: dict) -> dict:
    """The serving object, checked to carry the exact ``_bytes`` twin of every GiB key it has (the account
    writes them from the unrounded bytes; rebuilding one from the GiB rounded to 1e-4 was off by up to
    ~54 KB, audit finding 9)."""
    missing = [twin for gib, twin in SERVING_BYTES.items() if isinstance(d.get(gib), (int, float)) and twin not in d]
    if missing:
        raise ValueError(f"serving object without the byte twins {missing}: build it from ServingAccount.to_json")
    return dict(d)
