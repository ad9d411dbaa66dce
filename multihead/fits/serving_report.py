"""reports/serving/: the serving account against every vLLM log, as a table (markdown and JSON)."""
from __future__ import annotations

import json
from pathlib import Path

from multihead.fits.serving_validate import ACCEPT_MAX, ACCEPT_MEAN, validate


def _row(r: dict) -> str:
    p = r.get("predicted", {})
    w = r["logged_weights"]
    return (f"| {r['log']} | {r['tp']}/{r['pp']} | {r['max_model_len']} | {r['kv_cache_dtype']} | "
            f"{r['logged_kv_cache_tokens']:,} | {p.get('kv_cache_tokens', 0):,} | {p.get('tokens_error_pct', 0):+.2f} | "
            f"{r['logged_max_concurrency']:.2f} | {p.get('max_concurrency', 0):.2f} | "
            f"{p.get('concurrency_error_pct', 0):+.2f} | {r['logged_weights_gib']:.2f} | {p.get('weights_gib', 0):.2f} | "
            f"{r.get('held_out', {}).get('tokens_error_pct', 0):+.2f} | "
            f"{w['tokens_error_pct']:+.2f} | {r['logged_budget']['tokens_error_pct']:+.2f} |")


def markdown(result: dict) -> str:
    s = result["summary"]
    lines = ["# Serving account vs real vLLM v0.19 start-up logs (H100-80GB)", "",
             "Made by `multihead serving --validate`. Each row is one log in "
             "`multihead/cost/catalog/vllm_runs.json`; error = (predicted - logged) / logged, in %.",
             f"Acceptance (issue 13): mean |error| <= {ACCEPT_MEAN:g} %, max <= {ACCEPT_MAX:g} %, for KV tokens "
             "and concurrency.", "",
             "| prediction | rows | tokens mean | tokens max | concurrency mean | concurrency max | meets |",
             "|---|---|---|---|---|---|---|"]
    names = {"predicted": "from config.json (what users get)",
             "held_out": "from config.json, fit without the row's model (leave-one-model-out)",
             "logged_weights": "logged weights + fit",
             "logged_budget": "logged KV budget (paging only)"}
    for case, label in names.items():
        c = s[case]
        if c.get("rows"):
            lines.append(f"| {label} | {c['rows']} | {c['tokens_mean_abs_pct']:.2f} | {c['tokens_max_abs_pct']:.2f} | "
                         f"{c['concurrency_mean_abs_pct']:.2f} | {c['concurrency_max_abs_pct']:.2f} | "
                         f"{'yes' if c['meets_acceptance'] else 'no'} |")
    lines += ["", "| log | TP/PP | max len | KV dtype | KV tokens logged | predicted | err % | "
              "concurrency logged | predicted | err % | weights GiB logged | predicted | err % held-out | "
              "err % (logged weights) | err % (logged budget) |", "|" + "---|" * 15]
    lines += [_row(r) for r in result["rows"]]
    fit = result["fit"]
    lines += ["", "Fit used (multihead/cost/catalog/serving_fit.json): " +
              ", ".join(f"{k} = {v}" for k, v in fit.items() if k != "source") + f" ({fit['source']}).", ""]
    return "\n".join(lines)


def engines_markdown(result: dict) -> str:
    """Other engines and versions (issue 30): per engine / modelled version, held-out and fitted apart."""
    lines = ["", "## Other engines and versions (issue 30)", "",
             "Logs from public threads (`multihead/cost/catalog/engine_logs.json`, split by thread in "
             "reports/serving/logs/README.md); error of max_total_num_tokens (SGLang) or GPU KV cache tokens (vLLM).",
             "", "| engine | version modelled | split | rows | tokens mean | tokens max | meets |", "|---|---|---|---|---|---|---|"]
    for c in result["summary"]:
        meets = "-" if c["meets_acceptance"] is None else ("yes" if c["meets_acceptance"] else "no")
        lines.append(f"| {c['engine']} | {c['version']} | {c['split']} | {c['rows']} | {c['tokens_mean_abs_pct']:.2f} | "
                     f"{c['tokens_max_abs_pct']:.2f} | {meets} |")
    lines += ["", "| log | engine / version | model | GPU | flags | split | logged | predicted | err % | note |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for r in result["rows"]:
        flags = ", ".join(f"{k}={v}" for k, v in r["flags"].items())
        link = f"[{r['id']}]({r['url']})" if r["url"] else f"{r['id']} ({r['source']})"
        lines.append(f"| {link} | {r['engine']} {r['version']} (as {r['modelled_as']}) | {r['model']} | "
                     f"{r['gpu']} | {flags} | {r['split']} | {r['logged_kv_cache_tokens']:,} | "
                     f"{r['predicted_kv_cache_tokens']:,} | {r['tokens_error_pct']:+.2f} | {'; '.join(x for x in (r['note'], r.get('informed') and 'seen before a change it informed (training evidence)') if x)} |")
    return "\n".join(lines) + "\n"


def write_report(out_dir: Path) -> dict:
    from multihead.fits.serving_validate import validate_engines
    result = validate(held_out=True)
    engines = validate_engines()
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "table.md").write_text(markdown(result) + engines_markdown(engines))
    (out_dir / "table.json").write_text(json.dumps({**result, "engines": engines}, indent=1) + "\n")
    return {**result["summary"], "engines": engines["summary"]}
