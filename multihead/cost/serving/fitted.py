"""The runtime's one door to the committed serving data: the fitted constants (and the catalog configs).

Read-only loaders of files under ``multihead/cost/catalog/`` (parsed once per version of a file,
``multihead.catalog.read_json``). The offline fitting and validation (``serving_fit``,
``serving_validate``, ``serving_report``) write these files and import this door too; the runtime
(the serving account, the planner, the CLI) imports only this door, never the fitting code. The
catalog configs are the model door's (``cost.spec.lookup``: ``config_index``, ``catalog_config``,
``find_model``), re-exported here for the fitting code that reads them beside the constants.
"""
from __future__ import annotations

from importlib import resources

from multihead.catalog import read_json
from multihead.cost.serving.vllm import Fit
from multihead.cost.spec.lookup import catalog_config, config_index  # noqa: F401  (re-exported: the model door's)

CATALOG = resources.files("multihead.cost") / "catalog"


def load_fit() -> Fit:
    """The committed fit (catalog/serving_fit.json); parsed again only when the file changed (a plan
    asks for it once per serving account: ~30 times when it searches fallbacks)."""
    return Fit(**read_json(CATALOG / "serving_fit.json")["fit"])
