"""Fit the serving account's two measured terms on real vLLM start-up logs (torch-free, numpy only).

What is fitted, and only that (everything else in ``serving.py`` is the engine's arithmetic):
- the activation peak of the profile run, as a function of the architecture (not a constant per
  model): ``base + max(c_f * forward, c_s * sampler) + c_m * moe_workspace + c_mm * [vision tower]``
  with forward, sampler and moe_workspace the byte counts in ``serving.activation_bytes``;
- non-torch memory: one GPU alone, and the extra once it has peers (``a + b * GPUs``).

Rows are the logs in ``catalog/vllm_runs.json``; rows repeating a (model, TP, PP, batched tokens)
setting are fitted once (Qwen2.5-7B appears nine times and would otherwise dominate). The
residuals are reported in-sample and leave-one-model-out (each model predicted by a fit that never
saw it), the honest estimate for models outside the logs.

    python -m multihead.fits.serving_fit        # writes catalog/serving_fit.json, prints residuals

numpy is imported by the fitting functions only: a plan reads the committed fit (``load_fit``) and
never fits, so ``multihead plan`` starts without numpy.
"""
from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from multihead.catalog import read_json
from multihead.cost.serving.fitted import CATALOG, catalog_config, load_fit  # noqa: F401  (the data door)
from multihead.cost.serving.vllm import GIB, EngineArgs, Fit, ServingShape, activation_bytes, non_torch_bytes

if TYPE_CHECKING:
    import numpy as np

_UNIT = Fit(0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0)


def load_runs() -> list[dict]:
    return list(read_json(CATALOG / "vllm_runs.json")["runs"])      # a new list of shared rows (read-only)


def features(shape: ServingShape, args: EngineArgs) -> tuple[float, float, float, float]:
    """(forward, sampler, moe workspace, vision flag) in GiB at unit coefficients."""
    f = activation_bytes(shape, args, Fit(0, 1, 0, 0, 0, 0, 0, 0)) / GIB
    s = activation_bytes(shape, args, Fit(0, 0, 1, 0, 0, 0, 0, 0)) / GIB
    m = activation_bytes(shape, args, Fit(0, 0, 0, 1, 0, 0, 0, 0)) / GIB
    return f, s, m, float(shape.multimodal)


def _linear(y: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, float]:
    """Non-negative least squares for a few columns: drop the most negative one until none is."""
    import numpy as np
    keep = list(range(cols.shape[1]))
    while True:
        coef = np.zeros(cols.shape[1])
        sol = np.linalg.lstsq(cols[:, keep], y, rcond=None)[0]
        coef[keep] = sol
        if (sol >= 0).all():
            r = y - cols @ coef
            return coef, float(r @ r)
        keep.pop(int(np.argmin(sol)))


def fit_activation(x: np.ndarray, y: np.ndarray) -> dict:
    """Best (c_f, c_s) on the grid, with (base, c_m, c_mm) solved for each; x columns: f, s, m, mm."""
    import numpy as np
    # Grids for the two coefficients inside max(): bytes-per-byte multipliers of forward and sampler.
    grid_f = np.round(np.arange(0.0, 3.01, 0.05), 2)
    grid_s = np.round(np.arange(0.0, 6.01, 0.05), 2)
    best = None
    ones = np.ones(len(y))
    for cf in grid_f:
        for cs in grid_s:
            peak = np.maximum(cf * x[:, 0], cs * x[:, 1])
            coef, sse = _linear(y - peak, np.column_stack([ones, x[:, 2], x[:, 3]]))
            if best is None or sse < best[0]:
                best = (sse, float(cf), float(cs), coef)
    _, cf, cs, (base, cm, cmm) = best
    return {"act_base_gib": float(base), "act_forward": cf, "act_sampler": cs, "act_moe": float(cm),
            "act_multimodal_gib": float(cmm)}


def predict_activation(c: dict, x: np.ndarray) -> np.ndarray:
    import numpy as np
    return (c["act_base_gib"] + np.maximum(c["act_forward"] * x[:, 0], c["act_sampler"] * x[:, 1])
            + c["act_moe"] * x[:, 2] + c["act_multimodal_gib"] * x[:, 3])


def fit_non_torch(gpus: np.ndarray, y: np.ndarray) -> dict:
    """Alone: the mean of one-GPU rows. With peers: y - alone = a + b * GPUs (least squares)."""
    import numpy as np
    alone = float(np.mean(y[gpus == 1]))
    many = gpus > 1
    if many.sum() >= 2 and len(set(gpus[many])) >= 2:
        b, a = np.polyfit(gpus[many], y[many] - alone, 1)
    else:
        a, b = float(np.mean(y[many]) - alone) if many.any() else 0.0, 0.0
    return {"non_torch_gib": alone, "nccl_gib": float(a), "nccl_per_gpu_gib": float(b)}


def _distinct(rows):
    """Rows repeating a (model, TP, PP, batched tokens) setting count once."""
    seen, out = set(), []
    for model, shape, args, run in rows:
        key = (model, args.tensor_parallel_size, args.pipeline_parallel_size, args.max_num_batched_tokens)
        if key not in seen:
            seen.add(key)
            out.append((model, shape, args, run))
    return out


def _coefficients(uniq) -> tuple[dict, np.ndarray, np.ndarray]:
    import numpy as np
    x = np.array([features(s, a) for _, s, a, _ in uniq])
    y = np.array([r["activation_gib"] for *_, r in uniq])
    gpus = np.array([a.tensor_parallel_size * a.pipeline_parallel_size for _, _, a, _ in uniq])
    nt = np.array([r["non_torch_gib"] for *_, r in uniq])
    return {**fit_activation(x, y), **fit_non_torch(gpus, nt)}, x, y


def _fit_of(coef: dict, uniq, note: str = "") -> Fit:
    models = {m for m, *_ in uniq}
    return Fit(**{k: round(v, 4) for k, v in coef.items()},
               source=f"fitted by multihead.fits.serving_fit on {len(uniq)} distinct settings of "
                      f"{len(models)} models (vLLM v0.19.0, H100-80GB logs){note}")


def fit_rows(rows: list[tuple[str, ServingShape, EngineArgs, dict]]) -> Fit:
    """The fit on (model, shape, args, logged row) tuples."""
    uniq = _distinct(rows)
    coef, _, _ = _coefficients(uniq)
    return _fit_of(coef, uniq)


def held_out_fits(rows) -> dict[str, Fit]:
    """For each model, the fit of all the other models' rows (leave-one-model-out)."""
    uniq = _distinct(rows)
    out = {}
    for model in dict.fromkeys(m for m, *_ in uniq):
        rest = [r for r in uniq if r[0] != model]
        coef, _, _ = _coefficients(rest)
        out[model] = _fit_of(coef, rest, f", without {model}")
    return out


def residuals(rows, fit: Fit, held: dict[str, Fit]) -> list[dict]:
    """Activation and non-torch per distinct setting: logged, fitted, held-out (GiB)."""
    out = []
    for model, shape, args, run in _distinct(rows):
        act = lambda f: activation_bytes(shape, args, f) / GIB  # noqa: E731
        out.append({"model": model, "tp": args.tensor_parallel_size, "logged_gib": run["activation_gib"],
                    "fitted_gib": round(act(fit), 3), "held_out_gib": round(act(held[model]), 3),
                    "non_torch_logged_gib": run["non_torch_gib"],
                    "non_torch_fitted_gib": round(non_torch_bytes(args, fit) / GIB, 3)})
    return out


def log_rows() -> list[tuple[str, ServingShape, EngineArgs, dict]]:
    """Every log row as (model, shape, engine args, logged row): the shape from the catalog config
    alone, served with the row's flags (dtype, TP, the checkpoint's quantization)."""
    from multihead.cost.serving.shape import shape_for
    out, shapes = [], {}
    for run in load_runs():
        args = engine_args_of(run)
        dtype = "bfloat16" if run["dtype"] == "float32" else run["dtype"]
        key = (run["model"], dtype, args.tensor_parallel_size)
        if key not in shapes:
            shapes[key] = shape_for(catalog_config(run["model"]), run["model"], dtype, args.tensor_parallel_size)
        out.append((run["model"], shapes[key], args, run))
    return out


def engine_args_of(run: dict) -> EngineArgs:
    """The flags one log row ran with (vLLM's defaults for what it did not set)."""
    kv = 1.0 if str(run["kv_cache_dtype"]).startswith("fp8") else (4.0 if run["dtype"] == "float32" else 2.0)
    act = 4.0 if run["dtype"] == "float32" else 2.0
    return EngineArgs(tensor_parallel_size=run["tp"], pipeline_parallel_size=run["pp"],
                      gpu_memory_utilization=run["util"], max_model_len=run["max_seq_len"],
                      max_num_batched_tokens=run.get("max_num_batched_tokens", 8192),
                      kv_cache_dtype_bytes=kv, activation_dtype_bytes=act)


def main(out: str | None = None) -> int:
    import numpy as np
    rows = log_rows()
    fit, held = fit_rows(rows), held_out_fits(rows)
    res = residuals(rows, fit, held)
    path = Path(out) if out else Path(str(CATALOG / "serving_fit.json"))
    err = lambda key: [abs(r[key] - r["logged_gib"]) for r in res]  # noqa: E731
    doc = {"fit": asdict(fit), "residuals": res,
           "summary": {"settings": len(res), "in_sample_mean_abs_gib": round(float(np.mean(err("fitted_gib"))), 3),
                       "in_sample_max_abs_gib": round(float(np.max(err("fitted_gib"))), 3),
                       "held_out_mean_abs_gib": round(float(np.mean(err("held_out_gib"))), 3),
                       "held_out_max_abs_gib": round(float(np.max(err("held_out_gib"))), 3)}}
    path.write_text(json.dumps(doc, indent=1) + "\n")
    print(json.dumps(doc["fit"], indent=1))
    for r in res:
        print(f"{r['model'][:44]:44s} tp{r['tp']}  logged {r['logged_gib']:5.2f}  fit {r['fitted_gib']:5.2f}"
              f"  held-out {r['held_out_gib']:5.2f}")
    print(json.dumps(doc["summary"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
