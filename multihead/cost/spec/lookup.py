"""Where ModelSpecs come from: the model catalog (config.json dicts with sources), a config file, or a name.

``multihead/catalog/models.json`` holds each model's published config.json (the fields the cost
model reads, verbatim) with the URL it came from and, where the publisher states one, the total
parameter count to check against.
"""
from __future__ import annotations

import copy
import difflib
from importlib import resources
from pathlib import Path

from multihead.catalog import entries
from multihead.cost.spec.config_file import MAX_CONFIG_BYTES, read_config_file  # noqa: F401  (MAX_CONFIG_BYTES: re-exported)
from multihead.cost.spec.hf_config import read_config
from multihead.cost.spec.model import ModelSpec

MODELS_JSON = resources.files("multihead.catalog") / "models.json"


def model_catalog() -> dict[str, dict]:
    """Name -> entry of catalog/models.json, the caller's own copy: its configs are the kind of dict
    handed to transformers, which edits some in place (v5 adds rope_theta into rope_scaling), and
    the parsed file is shared by every plan in the process (multihead.catalog.read_json)."""
    return copy.deepcopy(entries(MODELS_JSON))


def model_names() -> list[str]:
    """The catalog models' names, in the file's order (no copy of their configs)."""
    return list(entries(MODELS_JSON))


def catalog_model(name: str) -> ModelSpec:
    """A catalog model by name (case-insensitive); an unknown name lists the closest ones."""
    catalog = entries(MODELS_JSON)      # shared, read-only: read_config copies what it keeps
    key = {k.lower(): k for k in catalog}.get(name.lower())
    if key is None:
        close = difflib.get_close_matches(name, list(catalog), n=3, cutoff=0.3)
        close = close or difflib.get_close_matches(name.lower(), [k.lower() for k in catalog], n=3, cutoff=0.3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ValueError(f"model: unknown model {name!r}{hint} (known: {', '.join(catalog)}; "
                         f"or give a config.json path)")
    entry = catalog[key]
    return read_config(entry["config"], name=key, params=entry.get("params"),
                       params_published=entry.get("params_published"), source=entry["source"])


def load_config_file(path: str | Path) -> ModelSpec:
    """A ModelSpec from a config.json path (or a model folder holding one), read by the one reader
    (cost.spec.config_file: regular files only, bounded in size and depth); refusals name the file."""
    config, path = read_config_file(path)
    label = path.name if path.name != "config.json" else f"{path.parent.name}/config.json"
    return read_config(config, name=label, source=str(path))


def resolve_model(model: str | Path | ModelSpec | None) -> ModelSpec | None:
    """A ModelSpec from a catalog name, a config.json path or a ModelSpec (None stays None)."""
    if model is None or isinstance(model, ModelSpec):
        return model
    text = str(model)
    if text.endswith(".json") or Path(text).exists() or "/" in text:
        return load_config_file(text)
    return catalog_model(text)
