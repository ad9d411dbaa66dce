"""The runtime's one door to the committed serving data: catalog configs and fitted constants.

Read-only loaders of files under ``multihead/cost/catalog/`` (parsed once per version of a file,
``multihead.catalog.read_json``). The offline fitting and validation (``serving_fit``,
``serving_validate``, ``serving_report``) write these files and import this door too; the runtime
(the serving account, the planner, the CLI) imports only this door, never the fitting code.
"""
from __future__ import annotations

import copy
from importlib import resources

from multihead.catalog import read_json
from multihead.cost.serving.vllm import Fit

CATALOG = resources.files("multihead.cost") / "catalog"


def config_index() -> dict:
    """HF id -> {file, source} of the published configs (catalog/configs/index.json), shared (read-only)."""
    return read_json(CATALOG / "configs" / "index.json")


def catalog_config(model: str) -> dict:
    """The published config.json of a catalog model (catalog/configs/index.json), the caller's own
    copy (see lookup.model_catalog: such dicts go to transformers, which may edit them)."""
    return copy.deepcopy(read_json(CATALOG / "configs" / config_index()[model]["file"]))


def load_fit() -> Fit:
    """The committed fit (catalog/serving_fit.json); parsed again only when the file changed (a plan
    asks for it once per serving account: ~30 times when it searches fallbacks)."""
    return Fit(**read_json(CATALOG / "serving_fit.json")["fit"])
