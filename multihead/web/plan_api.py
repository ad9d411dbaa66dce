"""The planner, as the web page and ``plan --html`` see it: the page's JSON -> PlanRequest -> the planner.

Every number on the planner page comes from the planner library (``planner.report``: the object
``multihead plan --json`` prints, byte for byte, for the same request), never from the CLI: no
option becomes a flag, nothing is printed and parsed back. The page's options are PlanRequest's
fields (or their aliases: ``gpus``, ``device``, ``memory_utilization``); an uploaded config.json
arrives as content; ``model`` and ``gpu`` are catalog names, never server paths (unless the
server serves a ``config_dir``; see planner/request.py). The memory-vs-context curve is one plan
and ``planner.curve`` at each length.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class PlanError(ValueError):
    """The planner refused the options: its one-line message and the option it names (or None)."""
    message: str
    field: str | None

    def __str__(self) -> str:
        return self.message


def _field_of(message: str, options: dict, config: bool = False) -> str | None:
    """The field a planner message names ("tokens: ..."), as the key the page sent (an alias
    such as "gpus" stays "gpus", so the page shows the error beside its own input). With an
    uploaded config, a message about the config ("uploaded/config.json: num_hidden_layers: ...",
    a key of the config rather than an option) names ``model``: the page's input it came in."""
    from multihead.planner.request import ALIASES, FIELDS
    head = message.split(":", 1)[0].strip()
    name = head.replace("-", "_")
    name = ALIASES.get(name, name)
    if name not in FIELDS:
        if config:
            return "model"
        return name if head.replace("_", "").isalnum() else None
    for key in options if isinstance(options, dict) else ():
        if isinstance(key, str) and ALIASES.get(key, key) == name:
            return key
    return name


def request(options, config_text=None, config_dir=None):
    """The page's options (and an uploaded config's content) as a PlanRequest; PlanError on bad input."""
    from multihead.planner.request import PlanRequest
    try:
        return PlanRequest.from_json(options, config_text, config_dir=config_dir)
    except ValueError as err:
        raise PlanError(str(err), _field_of(str(err), options, config_text is not None)) from None


def _planned(options, config_text, config_dir, fn):
    req = request(options, config_text, config_dir)
    try:
        return req, fn(req)
    except ValueError as err:
        raise PlanError(str(err), _field_of(str(err), options, config_text is not None)) from None


def plan_json(options, config_text=None, config_dir=None) -> dict:
    """The object ``multihead plan --json`` prints for the same request."""
    from multihead import planner
    return _planned(options, config_text, config_dir, planner.report)[1]


def plan_text(options, config_text=None, config_dir=None) -> str:
    """The exact text ``multihead plan ... --json`` prints (without its final newline)."""
    from multihead import planner
    from multihead.planner.rendering import to_json
    return to_json(_planned(options, config_text, config_dir, planner.plan_request)[1])


def memory_curve(options, config_text=None, config_dir=None) -> dict:
    """Memory per GPU vs context length: one plan, ``planner.curve`` (see planner/front.py)."""
    from multihead import planner
    return _planned(options, config_text, config_dir, planner.curve)[1]


def search(options, config_text=None, config_dir=None) -> dict:
    """The object ``multihead plan --search --json`` prints for the same request (planner/search.py)."""
    from multihead.planner.search import search_report
    if not isinstance(options, dict):
        raise PlanError("options: expected a JSON object of search options", "options")
    return _planned({**options, "search": True}, config_text, config_dir, search_report)[1]


def search_catalog() -> dict:
    """What the search page offers: the models with a config.json the memory account reads (the
    catalog HF ids, then the planner catalog's names: the one model door, cost.spec.lookup), the
    catalog GPUs (one record each: memory account and time model alike), and the search's defaults."""
    from multihead.cost import gpu_catalog
    from multihead.cost.spec.lookup import config_index, model_catalog
    from multihead.planner.search import DEFAULT_GPUS
    gpus = list(gpu_catalog())
    models = list(config_index()) + [m for m, e in model_catalog().items() if "config" in e]
    return {"models": models, "gpus": gpus, "default_gpus": [g for g in DEFAULT_GPUS if g in gpus],
            "default_model": "Llama-3.1-70B"}


def catalog() -> dict:
    """Catalog model and GPU names (the planner's names, then the catalog configs' HF ids: every model
    ``multihead plan`` reads by name), and the engines and batching
    modes a plan takes (planner/request.py's lists: the page offers what the request accepts)."""
    from multihead import cost
    from multihead.cost.spec.lookup import config_index
    from multihead.planner.request import BATCHING, ENGINES

    names = cost.model_names()
    models = names + [m for m in config_index() if m not in names]     # the planner's names, then the HF ids
    return {"models": models, "gpus": list(cost.gpu_catalog()), "engines": list(ENGINES),
            "batching": list(BATCHING)}

