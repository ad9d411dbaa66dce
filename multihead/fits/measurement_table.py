"""The reader of `multihead gpu-time --measurements FILE`: the table's schema, checked by name.

A table (reports/gpu-time/measurements.json is the shipped one) is a JSON object::

    sources   {key: {engine_family: str, engine?: str, engine_version?: str, date?: str,
                     reserved_edition?: bool or its reason, ...}}
    models    {name: {config: {HF config.json fields}, source: str}}      (optional; else the catalog)
    devices   {name: {base: catalog GPU, bandwidth_tbps?: number, mamf_share?: number, source?: str}}
    rows      [{id, source, gpu, tp, model, weights, kv, batch, mode, input_len, output_len, metric,
                value, unit?, note?, split?, expert_parallel_size?, data_parallel_size?,
                enable_dp_attention?, enforce_eager?}, ...]

Every field the GPU-time model reads is checked before anything is predicted: a missing field, an
unknown source / GPU / model / metric, a wrong type, a count of 0, a value of 0 or NaN is one
ValueError naming the row (its index and id) and the field. The file itself is read by the one
JSON reader (cost.spec.config_file: a regular file, bounded in size and depth, NaN refused).
"""
from __future__ import annotations

import math
from pathlib import Path

from multihead.cost.spec.config_file import read_json_file

MAX_TABLE_BYTES = 16 << 20        # the shipped table is ~0.5 MB
MAX_LEN = 10_000_000              # tokens of a request (as the CLI's MAX_TOKENS)
MAX_BATCH = 1_000_000
MAX_GPUS = 4096
METRICS = ("decode_tokens_per_s", "decode_step_ms", "ttft_ms", "itl_ms", "output_tokens_per_s",
           "output_tokens_per_s_per_gpu", "request_latency_s")
MODES = ("serving", "static")
DEVICE_KEYS = ("base", "bandwidth_tbps", "mamf_share", "source")


def read_table(path: str | Path) -> dict:
    """The table at ``path``, read by the one JSON reader and schema-checked (check_table)."""
    table, path = read_json_file(path, what="measurements", max_bytes=MAX_TABLE_BYTES, folder_file=None)
    check_table(table, str(path))
    models = {name: {"source": e["source"], "config": model_config(e)} for name, e in table.get("models", {}).items()}
    return {**table, "models": models, "devices": table.get("devices", {})}


def model_config(entry: dict) -> dict:
    """The config.json a table model stands for: its own ``config``, or the planner catalog's published config of
    the HF id it names (``catalog``: one copy, the one ``multihead plan ID`` reads), less the checkpoint's
    quantization_config: a row states the weights it ran."""
    if "config" in entry:
        return entry["config"]
    from multihead.cost.spec.lookup import catalog_config
    return {k: v for k, v in catalog_config(entry["catalog"]).items() if k != "quantization_config"}


def _where(label: str, at: str) -> str:
    return f"measurements: {label}: {at}"


def _int(value, lo: int, hi: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi


def _positive(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0


def _show(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


def check_table(table, label: str = "the table") -> None:
    """Raise ValueError naming the row and field of the first thing the GPU-time model cannot read."""
    from multihead import cost
    from multihead.cost.time import timing
    from multihead.cost.spec.units import canonical_dtype
    if not isinstance(table, dict):
        raise ValueError(_where(label, f"expected a JSON object with sources and rows, got {type(table).__name__}"))
    for key in ("sources", "rows"):
        if key not in table:
            raise ValueError(_where(label, f"missing {key!r} (a table has sources and rows)"))
    for key in ("sources", "models", "devices"):
        if key in table and not isinstance(table[key], dict):
            raise ValueError(_where(label, f"{key}: expected an object by name, got {type(table[key]).__name__}"))
    rows, sources = table["rows"], table["sources"]
    models, devices = table.get("models", {}), table.get("devices", {})
    if not isinstance(rows, list) or not rows:
        raise ValueError(_where(label, f"rows: expected a non-empty list of measurements, got {_show(rows)}"))
    for key, src in sources.items():
        if not isinstance(src, dict):
            raise ValueError(_where(label, f"sources.{key}: expected an object, got {_show(src)}"))
        if not isinstance(src.get("engine_family"), str):
            raise ValueError(_where(label, f"sources.{key}.engine_family: expected a string (the engine whose "
                                           f"fixed costs apply), got {_show(src.get('engine_family'))}"))
        for field in ("engine", "engine_version", "date"):
            if src.get(field) is not None and not isinstance(src[field], str):
                raise ValueError(_where(label, f"sources.{key}.{field}: expected a string, got {_show(src[field])}"))
        if src.get("reserved_edition") is not None and not isinstance(src["reserved_edition"], (bool, str)):
            raise ValueError(_where(label, f"sources.{key}.reserved_edition: expected true/false or the reason "
                                           f"(a string), got {_show(src['reserved_edition'])}"))
    gpus = cost.gpu_catalog()
    for name, dev in devices.items():
        at = f"devices.{name}"
        if not isinstance(dev, dict):
            raise ValueError(_where(label, f"{at}: expected an object, got {_show(dev)}"))
        unknown = sorted(set(dev) - set(DEVICE_KEYS))
        if unknown:
            raise ValueError(_where(label, f"{at}.{unknown[0]}: not a device field (known: {', '.join(DEVICE_KEYS)})"))
        if dev.get("base") not in gpus:
            raise ValueError(_where(label, f"{at}.base: expected a catalog GPU ({', '.join(gpus)}), "
                                           f"got {_show(dev.get('base'))}"))
        if "bandwidth_tbps" in dev and not (_positive(dev["bandwidth_tbps"]) and dev["bandwidth_tbps"] <= 1e3):
            raise ValueError(_where(label, f"{at}.bandwidth_tbps: expected a number in (0, 1000], "
                                           f"got {_show(dev['bandwidth_tbps'])}"))
        if "mamf_share" in dev and not (_positive(dev["mamf_share"]) and dev["mamf_share"] <= 1):
            raise ValueError(_where(label, f"{at}.mamf_share: expected a number in (0, 1], got {_show(dev['mamf_share'])}"))
    from multihead.cost.spec.hf_config import check_config
    from multihead.cost.spec.lookup import config_index
    for name, entry in models.items():
        at = f"models.{name}"
        if not isinstance(entry, dict) or ("config" in entry) == ("catalog" in entry):
            raise ValueError(_where(label, f"{at}: expected an object with either config (an HF config.json object) "
                                           f"or catalog (a catalog HF id)"))
        if "catalog" in entry and not (isinstance(entry["catalog"], str) and entry["catalog"] in config_index()):
            raise ValueError(_where(label, f"{at}.catalog: expected a catalog HF id (cost/catalog/configs/index.json), "
                                           f"got {_show(entry['catalog'])}"))
        if "config" in entry and not isinstance(entry["config"], dict):
            raise ValueError(_where(label, f"{at}.config: expected an HF config.json object"))
        if not isinstance(entry.get("source"), str):
            raise ValueError(_where(label, f"{at}.source: expected a string (where the config is from)"))
        check_config(model_config(entry), _where(label, f"{at}.{'config' if 'config' in entry else 'catalog'}"))
    known_models = {m.lower() for m in cost.model_names()}
    from multihead.fits.timing_validation import MARKED
    seen: set[str] = set()
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise ValueError(_where(label, f"rows[{i}]: expected an object, got {_show(row)}"))
        rid = row.get("id")
        if not isinstance(rid, str) or not rid:
            raise ValueError(_where(label, f"rows[{i}].id: expected a non-empty string, got {_show(rid)}"))
        at = f"rows[{i}] ({rid})"
        if rid in seen:
            raise ValueError(_where(label, f"{at}.id: given twice"))
        seen.add(rid)
        for field in ("source", "gpu", "tp", "model", "weights", "kv", "batch", "mode", "input_len",
                      "output_len", "metric", "value"):
            if field not in row:
                raise ValueError(_where(label, f"{at}: missing {field!r}"))
        if not isinstance(row["source"], str) or row["source"] not in sources:
            raise ValueError(_where(label, f"{at}.source: {_show(row['source'])} is not a key of sources"))
        if not isinstance(row["gpu"], str) or (row["gpu"] not in devices and row["gpu"] not in gpus):
            raise ValueError(_where(label, f"{at}.gpu: {_show(row['gpu'])} is neither a catalog GPU nor in devices"))
        if not isinstance(row["model"], str) or (row["model"] not in models and row["model"].lower() not in known_models):
            raise ValueError(_where(label, f"{at}.model: {_show(row['model'])} is neither a catalog model nor in models"))
        if row["metric"] not in METRICS:
            raise ValueError(_where(label, f"{at}.metric: expected one of {', '.join(METRICS)}, got {_show(row['metric'])}"))
        if row["mode"] not in MODES:
            raise ValueError(_where(label, f"{at}.mode: expected 'serving' or 'static', got {_show(row['mode'])}"))
        for field, hi in (("tp", MAX_GPUS), ("batch", MAX_BATCH), ("input_len", MAX_LEN), ("output_len", MAX_LEN),
                          ("expert_parallel_size", MAX_GPUS), ("data_parallel_size", MAX_GPUS)):
            if field in row and not _int(row[field], 1, hi):
                raise ValueError(_where(label, f"{at}.{field}: expected an integer in 1..{hi:,}, got {_show(row[field])}"))
        if not _positive(row["value"]):
            raise ValueError(_where(label, f"{at}.value: expected a finite number > 0 (a measurement), "
                                           f"got {_show(row['value'])}"))
        try:
            timing.table_precision(row["weights"]) if isinstance(row["weights"], str) else \
                timing.table_precision(_show(row["weights"]))
            if not isinstance(row["kv"], str):
                raise ValueError(f"kv: expected a dtype name, got {_show(row['kv'])}")
            canonical_dtype(row["kv"], "kv")
        except ValueError as err:
            raise ValueError(_where(label, f"{at}.{err}")) from None
        for field in ("enable_dp_attention", "enforce_eager"):
            if row.get(field) is not None and not isinstance(row[field], bool):
                raise ValueError(_where(label, f"{at}.{field}: expected true or false, got {_show(row[field])}"))
        if row.get("split") is not None and row["split"] not in MARKED:
            raise ValueError(_where(label, f"{at}.split: expected one of {', '.join(MARKED)} (or none), "
                                           f"got {_show(row['split'])}"))
        for field in ("unit", "note"):
            if row.get(field) is not None and not isinstance(row[field], str):
                raise ValueError(_where(label, f"{at}.{field}: expected a string, got {_show(row[field])}"))
