"""Check the serving account against every real vLLM start-up log (catalog/vllm_runs.json).

Three predictions per log row, so each error has a known source:
- ``predicted``: everything from the config.json and the flags (weights from the cost model's
  parameter counts, activation and non-torch from the committed fit): what a user gets;
- ``held_out``: the same, but each model's activation/non-torch fit never saw that model's logs
  (leave-one-model-out): the honest estimate for models outside the folder;
- ``logged_weights``: the logged weights, fitted activation and non-torch: isolates the fit;
- ``logged_budget``: the logged available KV memory, isolates the paging arithmetic (pages,
  groups, blocks per request), which should match to the GiB rounding of the log.
Errors are (predicted - logged) / logged of kv_cache_tokens and max_concurrency.
"""
from __future__ import annotations

import dataclasses

from multihead.cost.serving.vllm import GIB, Fit, ServingShape, account
from multihead.fits.serving_fit import engine_args_of, held_out_fits, load_fit, log_rows

H100_BYTES = 81089 << 20      # 79.19 GiB, as the logs' memory snapshot reports (catalog/gpu_memory.json)
ACCEPT_MEAN, ACCEPT_MAX = 3.0, 10.0      # issue 13: mean |error| <= 3 %, max <= 10 %


def _err(pred: float, logged: float) -> float:
    return 100.0 * (pred - logged) / logged


def _with_weights(shape: ServingShape, gib_per_gpu: float, tp: int) -> ServingShape:
    """The shape with its weights replaced by a logged per-GPU figure (all in the layers)."""
    return dataclasses.replace(shape, embedding_bytes=0.0, lm_head_bytes=0.0, vision_bytes=0.0,
                               replicated_bytes=0.0, layer_bytes=gib_per_gpu * GIB * tp)


def _logged_budget_fit(run: dict) -> Fit:
    """A 'fit' that reproduces the logged activation and non-torch exactly (for the paging check)."""
    return Fit(act_base_gib=run["activation_gib"], act_forward=0, act_sampler=0, act_moe=0,
               act_multimodal_gib=0, non_torch_gib=run["non_torch_gib"], nccl_gib=0, nccl_per_gpu_gib=0)


def row_report(model: str, shape: ServingShape, run: dict, fit: Fit, predicted: ServingShape | None,
               held: Fit | None = None) -> dict:
    args = engine_args_of(run)
    tp = args.tensor_parallel_size
    out = {"log": run["log"], "model": model, "tp": tp, "pp": args.pipeline_parallel_size,
           "max_model_len": args.max_model_len, "kv_cache_dtype": run["kv_cache_dtype"],
           "quantization": run["quantization"], "logged_kv_cache_tokens": run["kv_tokens"],
           "logged_max_concurrency": run["max_concurrency"], "logged_kv_cache_gib": run["available_kv_gib"],
           "logged_weights_gib": run["weights_gib"]}
    cases = {"logged_budget": (_with_weights(shape, run["weights_gib"], tp), _logged_budget_fit(run)),
             "logged_weights": (_with_weights(shape, run["weights_gib"], tp), fit)}
    if predicted is not None:
        cases["predicted"] = (predicted, fit)
        if held is not None:
            cases["held_out"] = (predicted, held)
    for name, (sh, f) in cases.items():
        a = account(sh, args, f, H100_BYTES)
        out[name] = {"kv_cache_tokens": a.kv_cache_tokens, "max_concurrency": a.max_concurrency,
                     "kv_cache_gib": a.kv_cache_gib, "weights_gib": a.weights_gib,
                     "activation_gib": a.activation_gib, "non_torch_gib": a.non_torch_gib,
                     "tokens_error_pct": round(_err(a.kv_cache_tokens, run["kv_tokens"]), 3),
                     "concurrency_error_pct": round(_err(a.max_concurrency, run["max_concurrency"]), 3)}
    return out


def summary(rows: list[dict], case: str) -> dict:
    errs = [abs(r[case][k]) for r in rows if case in r for k in ("tokens_error_pct", "concurrency_error_pct")]
    tok = [abs(r[case]["tokens_error_pct"]) for r in rows if case in r]
    conc = [abs(r[case]["concurrency_error_pct"]) for r in rows if case in r]
    if not tok:
        return {"rows": 0}
    return {"rows": len(tok), "tokens_mean_abs_pct": round(sum(tok) / len(tok), 3),
            "tokens_max_abs_pct": round(max(tok), 3), "concurrency_mean_abs_pct": round(sum(conc) / len(conc), 3),
            "concurrency_max_abs_pct": round(max(conc), 3),
            "meets_acceptance": max(errs) <= ACCEPT_MAX and sum(tok) / len(tok) <= ACCEPT_MEAN
            and sum(conc) / len(conc) <= ACCEPT_MEAN}


def validate(held_out: bool = False) -> dict:
    """Every log row predicted from its config.json and flags; ``held_out``: also with a fit that
    never saw the row's model (slower: one fit per model)."""
    fit = load_fit()
    logs = log_rows()
    held = held_out_fits(logs) if held_out else {}
    rows = [row_report(model, shape, run, fit, shape, held.get(model)) for model, shape, _, run in logs]
    cases = ("predicted", "held_out", "logged_weights", "logged_budget")
    return {"fit": dataclasses.asdict(fit), "summary": {c: summary(rows, c) for c in cases}, "rows": rows}


# -- other engines and versions (issue 30): reports/serving/logs/, multihead/cost/catalog/engine_logs.json ----
def load_engine_logs() -> list[dict]:
    from importlib import resources

    from multihead.catalog import read_json
    return list(read_json(resources.files("multihead.cost") / "catalog" / "engine_logs.json")["logs"])


def engine_log_row(log: dict) -> dict:
    """One engine log predicted from its model's config.json and its flags: (predicted - logged) / logged
    of the KV tokens. A version no account models is predicted with the engine's newest and flagged."""
    from multihead.cost.serving import answer as S
    from multihead.fits.serving_fit import catalog_config
    f = log["flags"]
    engine = log["engine"]
    version = str(log["version"]).split()[0]
    try:
        modelled = S.engine_version(S.Request(engine=engine, engine_version=version))
        note = ""
    except ValueError:
        modelled = S.engine_version(S.Request(engine=engine))
        note = f"version {log['version']} not modelled: predicted with {engine} {modelled}"
    cfg = catalog_config(log["model"])
    length = f.get("max_model_len") or f.get("context_length") or cfg.get("max_position_embeddings")
    gpu_bytes = log["gpu_gib"] * GIB if log.get("gpu_gib") else None
    req = S.Request(tensor_parallel_size=f.get("tp_size", f.get("tensor_parallel_size", 1)), max_model_len=length,
                    gpu_memory_utilization=f.get("gpu_memory_utilization", 0.9), model=log["model"], gpu=log["gpu"],
                    kv_cache_dtype=f.get("kv_cache_dtype", "auto"), engine=engine, engine_version=modelled,
                    mem_fraction_static=f.get("mem_fraction_static"))
    a, _ = S.serving_account(cfg, req, gpu_bytes=gpu_bytes)
    logged = log["observed"]["kv_cache_tokens"]
    # the pool the engine logs, also when it then refuses the request (kv_cache_tokens is 0 then)
    page = 1 if engine == "sglang" else req.block_size
    pool = a.kv_cache_tokens if a.fits else a.num_gpu_blocks // max(1, a.kv_cache_groups) * page
    return {"id": log["id"], "url": log.get("url"), "source": log.get("source", ""), "engine": engine, "version": log["version"], "modelled_as": modelled,
            "model": log["model"], "gpu": log["gpu"], "flags": f, "split": log["split"], "logged_kv_cache_tokens": logged,
            "predicted_kv_cache_tokens": pool, "predicted_kv_cache_gib": a.kv_cache_gib,
            "tokens_error_pct": round(_err(pool, logged), 3), "predicted_fits": a.fits,
            "logged_fits": log["observed"].get("fits", True), "note": note,
            "informed": log.get("informed", "")}


def engine_summary(rows: list[dict]) -> list[dict]:
    """Per engine and modelled version: held-out rows (the acceptance) and fitted rows apart; rows of
    versions no account models are counted apart too."""
    out = []
    keys = sorted({(r["engine"], r["modelled_as"]) for r in rows})
    for engine, version in keys:
        for split in ("held_out", "fitted", "not_modelled"):
            sel = [r for r in rows if (r["engine"], r["modelled_as"]) == (engine, version)
                   and (("not_modelled" if r["note"] else r["split"]) == split)]
            if not sel:
                continue
            errs = [abs(r["tokens_error_pct"]) for r in sel]
            mean, mx = sum(errs) / len(errs), max(errs)
            out.append({"engine": engine, "version": version, "split": split, "rows": len(sel),
                        "tokens_mean_abs_pct": round(mean, 3), "tokens_max_abs_pct": round(mx, 3),
                        "meets_acceptance": mean <= ACCEPT_MEAN and mx <= ACCEPT_MAX if split == "held_out" else None})
    return out


def validate_engines() -> dict:
    rows = [engine_log_row(log) for log in load_engine_logs()]
    return {"summary": engine_summary(rows), "rows": rows}
