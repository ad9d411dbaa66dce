"""Where models come from: ONE door (``find_model``) from a name to its ModelSpec and raw config.json.

A name is, in this order: a config.json path or a model folder (where the caller may name paths),
a catalog HF id (``cost/catalog/configs/index.json``: published config.json files with their
sources, what the serving accounts were fitted on), or a planner catalog name
(``multihead/catalog/models.json``: each model's published config fields verbatim with the URL
they came from and, where the publisher states one, the total parameter count). Every door
(``multihead plan``, ``multihead serving``, ``gpu-time``, the page, library callers) resolves its
model here, reading the file or the catalog entry once; ``resolve_model`` is the same door for
callers that want the ModelSpec alone.
"""
from __future__ import annotations

import copy
import difflib
import os
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from multihead.catalog import entries, read_json
from multihead.cost.spec.config_file import MAX_CONFIG_BYTES, read_config_file  # noqa: F401  (MAX_CONFIG_BYTES: re-exported)
from multihead.cost.spec.hf_config import read_config
from multihead.cost.spec.model import ModelSpec

MODELS_JSON = resources.files("multihead.catalog") / "models.json"
CONFIGS = resources.files("multihead.cost") / "catalog" / "configs"


@dataclass(frozen=True)
class ResolvedModel:
    """What a model name stands for: its ModelSpec, the raw config.json the engines' accounts read
    (the caller's own copy), and the name `vllm serve` takes (HF id or model folder)."""
    spec: ModelSpec
    config: dict
    model_id: str


def config_index() -> dict:
    """HF id -> {file, source} of the published configs (cost/catalog/configs/index.json), shared (read-only)."""
    return read_json(CONFIGS / "index.json")


def catalog_config(model: str) -> dict:
    """The published config.json of a catalog HF id, the caller's own copy (such dicts go to
    transformers, which may edit them). An id whose entry says ``same_as`` (a variant whose published
    config.json equals another catalog model's in every field multihead reads: an instruct or chat
    release of the same weights' shape) reads that model's config."""
    entry = config_index()[model]
    if "same_as" in entry:
        target = entry["same_as"]
        if target in config_index():
            return catalog_config(target)
        return copy.deepcopy(entries(MODELS_JSON)[target]["config"])
    return copy.deepcopy(read_json(CONFIGS / entry["file"]))


def catalog_key(name: str) -> str | None:
    """The catalog's own spelling of a model name or HF id (case-insensitive; HF ids first, then the
    planner catalog's names, then the HF ids their sources name: ``meta-llama/Llama-2-70b-hf`` is
    Llama-2-70B), or None."""
    low = str(name).lower()
    planner = entries(MODELS_JSON)
    for keys in (config_index(), planner):
        key = {k.lower(): k for k in keys if not k.startswith("_")}.get(low)
        if key is not None:
            return key
    by_id = {hf_id(e.get("source", ""), k).lower(): k for k, e in planner.items() if not k.startswith("_")}
    return by_id.get(low) if "/" in low else None


def hf_id(source: str, fallback: str) -> str:
    """The HF repo id a catalog source names ('https://huggingface.co/ORG/NAME/...' or 'ORG/NAME
    config.json ...'), which is what `vllm serve` takes; else the catalog name."""
    text = source.removeprefix("https://huggingface.co/").split()[0] if source else ""
    parts = text.split("/")
    return f"{parts[0]}/{parts[1]}" if len(parts) >= 2 and parts[0] and parts[1] else fallback


MODEL_DIR = "$MODEL_DIR"     # the launch target when a config file is not its folder's config.json (engines/)


def _serve_target(given: Path, path: Path) -> str:
    """What `vllm serve` / SGLang's --model-path take for a config given as ``given`` (read at ``path``):
    the folder itself, or the file's folder when the file is that folder's config.json; a config
    under another name (my-model.json) is no model folder an engine loads, so the command names the
    placeholder MODEL_DIR and says what to put there (engines.command)."""
    if given.is_dir():
        return str(given)
    try:
        if (given.parent / "config.json").exists() and (given.parent / "config.json").samefile(path):
            return str(given.parent)
    except OSError:
        pass
    return MODEL_DIR


def find_model(name: str | Path, *, paths: bool = True) -> ResolvedModel:
    """The model a name stands for, by the module doc's rule; ``paths`` False: catalog names only
    (the page: never a file of that name in the server's folder). Each source is read once."""
    text = str(name)
    if paths and os.path.lexists(text):     # a FIFO or device exists too: the one reader refuses it by name
        config, path = read_config_file(text)
        label = path.name if path.name != "config.json" else f"{path.parent.name}/config.json"
        return ResolvedModel(read_config(config, name=label, source=str(path)), copy.deepcopy(config),
                             _serve_target(Path(text), path))
    key = catalog_key(text)
    index = config_index()
    if key in index:                        # a catalog HF id: its published config
        config = catalog_config(key)
        source = index[key].get("source")
        target = index[key].get("same_as")
        if target in entries(MODELS_JSON):  # a variant of a planner catalog model: its stated counts too
            spec = catalog_model(target).with_overrides(name=key)
        else:
            spec = read_config(copy.deepcopy(config), key)
        return ResolvedModel(spec.with_overrides(source=f"{key} config.json ({source})") if source else spec,
                             config, key)
    if key is not None:                     # a planner catalog name: its config fields and stated params
        entry = entries(MODELS_JSON)[key]
        return ResolvedModel(catalog_model(key), copy.deepcopy(entry["config"]), hf_id(entry.get("source", ""), key))
    if paths and text.endswith(".json"):
        read_config_file(text)              # raises: names the missing file
    if "/" in text:
        _refuse_quantized_variant(text)     # raises when the id reads as a quantized checkpoint of a catalog id
    if paths and "/" in text:               # an HF id we do not hold, or a folder that is not there
        raise ValueError(f"model: {text!r} is neither a config.json path nor a catalog model or HF id "
                         f"(known: {', '.join(list(index) + model_names())})")
    _refuse_short_hf_name(text)             # raises when the name is the tail of catalog HF ids
    catalog_model(text)                     # raises: the closest catalog names
    raise AssertionError("unreachable")


# repository-name suffixes of quantized checkpoints, and the --quantization each stands for
QUANTIZED_SUFFIXES = ((r"awq(-int4)?", "awq"), (r"gptq(-int4)?", "gptq"),   # GPTQ-Int8: no 8-bit gptq flag here
                      (r"fp8(-dynamic)?", "fp8"),
                      (r"(quantized\.)?w8a8", "int8"), (r"int8", "int8"), (r"mxfp4", "mxfp4"),
                      (r"bnb-4bit", "bitsandbytes"))
ARTICLED = {"awq": "an AWQ", "gptq": "a GPTQ", "fp8": "an FP8", "int8": "an INT8 (W8A8)", "mxfp4": "an MXFP4",
            "bitsandbytes": "a bitsandbytes"}


def _refuse_quantized_variant(hf_id: str) -> None:
    """An HF id the catalog lacks whose name is a catalog id's name plus a quantization suffix
    ("org/DeepSeek-V3-0324-AWQ") is refused naming the plan that stands for it: the catalog id with --quantization
    (the accounts assume the catalog's format for that method, and the launch command asks for the checkpoint). The
    organisation is not matched: quantized copies are usually published by others. Otherwise nothing is raised."""
    tail = hf_id.rstrip("/").split("/")[-1]
    for suffix, flag in QUANTIZED_SUFFIXES:
        m = re.search(rf"[-_.]{suffix}$", tail, re.IGNORECASE)
        if not m:
            continue
        stem = tail[:m.start()].lower()
        ids = [hf for hf in config_index() if hf.split("/")[-1].lower() == stem]
        if ids:
            raise ValueError(f"model: {hf_id!r} is not in the catalog; it reads as {ARTICLED[flag]} checkpoint of {ids[0]}: "
                             f"plan {ids[0]} --quantization {flag}, or give the checkpoint's config.json path")
        return


def _refuse_short_hf_name(name: str) -> None:
    """A name that is an HF id without its organisation ("DeepSeek-R1" for deepseek-ai/DeepSeek-R1) is refused,
    naming the ids it could be: the organisation is part of the name `vllm serve` takes, and one tail may stand
    for two repositories. Close tails are suggested the same way; otherwise nothing is raised."""
    tails: dict[str, list[str]] = {}
    for hf in config_index():
        tails.setdefault(hf.split("/")[-1].lower(), []).append(hf)
    low = name.lower()
    ids = tails.get(low) or [i for t in difflib.get_close_matches(low, list(tails), n=3, cutoff=0.85) for i in tails[t]]
    if ids:
        raise ValueError(f"model: unknown model {name!r}; did you mean {', '.join(ids)}? (catalog HF ids are "
                         f"named with their organisation; `multihead serving --list` shows them all)")


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
    """A ModelSpec from a name or path (find_model) or a ModelSpec (None stays None)."""
    if model is None or isinstance(model, ModelSpec):
        return model
    return find_model(model).spec
