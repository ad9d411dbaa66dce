"""Run every head experiment and write reports/heads/: REPORT.md, PNGs, per-experiment JSON, summary.json.

Each stage's JSON is written as soon as it finishes; with ``reuse=True`` a stage whose JSON
already exists is read back instead of re-run (so a report can be re-rendered, or resumed).
The markdown's sentences are generated from the numbers, never written by hand.
"""
from __future__ import annotations

import json
import platform
import time
from dataclasses import asdict
from pathlib import Path

import torch

from multihead.heads import plots
from multihead.heads.importance import agreement
from multihead.heads.experiments import (DEFAULT_FRACTIONS, EncoderConfig, MergeConfig, TextConfig, windows_info, load_lm,
                                         run_importance, run_merge_encoder, run_merge_lm, run_prune)

PRUNE_TOLERANCE = 0.05     # "can go": perplexity within +5% of the full model


def _stage(path: Path, reuse: bool, run, settings: dict) -> tuple[dict, bool]:
    """(result, reused). A reused file must have been made with the same ``settings``."""
    if reuse and path.is_file():
        result = json.loads(path.read_text())
        made_with = {k: result.get(k) for k in settings}
        if made_with != settings:
            raise ValueError(f"--reuse: {path} was made with {made_with}, not {settings}; "
                             "rerun without --reuse or with the same settings")
        return result, True
    result = run()
    path.write_text(json.dumps(result, indent=1) + "\n")
    return result, False


def build_report(out_dir: str | Path, text: TextConfig, merge: MergeConfig, encoder: EncoderConfig,
                 command: str, reuse: bool = False, progress: bool = True) -> dict:
    """Run (or reuse) the four experiments, draw the figures, write REPORT.md and summary.json.

    ``command`` is recorded at the top of REPORT.md. Reused stages are checked against the
    current settings, so the command (without --reuse) always reproduces the numbers.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    cache: dict = {}

    def lm():
        if "lm" not in cache:
            cache["lm"] = load_lm(text)
        return cache["lm"]

    win = windows_info(text)
    imp, r1 = _stage(out / "importance.json", reuse, lambda: run_importance(text, progress, lm()),
                     {"windows": {**win, "importance_windows": text.importance_windows,
                                  "importance_predictions": text.importance_windows * (text.window_tokens - 1)}})
    prn, r2 = _stage(out / "prune.json", reuse, lambda: run_prune(text, imp, progress=progress, model_and_data=lm()),
                     {"windows": win, "fractions": sorted(set(DEFAULT_FRACTIONS) | {0.0})})
    mlm, r3 = _stage(out / "merge_kv_smollm2.json", reuse,
                     lambda: run_merge_lm(text, merge, progress=progress, model_and_data=lm()),
                     {"windows": win, "config": asdict(merge)})
    enc, r4 = _stage(out / "merge_kv_minilm.json", reuse, lambda: run_merge_encoder(encoder, progress=progress),
                     {"sentences": encoder.sentences, "calib_sentences": encoder.calib_sentences,
                      "seed": encoder.seed, "k": encoder.k})
    figures = {
        "importance": plots.importance_heatmap(imp, out / "importance.png"),
        "prune": plots.prune_plot(prn, out / "prune.png"),
        "merge_lm": plots.merge_lm_plot(mlm, out / "merge_kv_smollm2.png"),
        "merge_encoder": plots.merge_encoder_plot(enc, out / "merge_kv_minilm.png"),
    }
    summary = make_summary(imp, prn, mlm, enc)
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    stage_seconds = _stage_seconds(imp, prn, mlm, enc)
    meta = {"command": command.replace(" --reuse", ""), "reused": any((r1, r2, r3, r4)),
            "generated": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "seconds": stage_seconds if any((r1, r2, r3, r4)) else time.perf_counter() - t0,
            "torch": torch.__version__,
            "machine": f"{platform.machine()}, {torch.get_num_threads()} torch threads",
            "configs": {"text": asdict(text), "merge": asdict(merge), "encoder": asdict(encoder)}}
    (out / "REPORT.md").write_text(render(imp, prn, mlm, enc, meta))
    return {"out_dir": str(out), "figures": figures, "summary": summary, "seconds": time.perf_counter() - t0}


def _stage_seconds(imp: dict, prn: dict, mlm: dict, enc: dict) -> float:
    """Compute time the four stages recorded (what a from-scratch run of the command costs)."""
    return (sum(imp.get("seconds", {}).values()) + prn.get("seconds", 0.0) + mlm.get("seconds", 0.0)
            + enc.get("seconds", 0.0))


def _kv_rows(mlm: dict, uptrained: bool) -> list[dict]:
    return [{"kv_heads": r["kv_heads"], "method": r["method"], "perplexity": r["perplexity"],
             "baseline_perplexity": r["baseline_perplexity"], "uptrain_steps": r["uptrain_steps"],
             "kv_bytes_saved_fraction": r["kv_bytes_saved_fraction"]}
            for r in mlm["results"] if (r["uptrain_steps"] > 0) == uptrained]


def prunable_fraction(prn: dict, order: str, tolerance: float = PRUNE_TOLERANCE) -> float:
    """Largest measured fraction whose perplexity stays within (1 + tolerance) x the full model's."""
    curve = next(c for c in prn["curves"] if c["order"] == order)
    limit = prn["baseline_perplexity"] * (1 + tolerance)
    best = 0.0
    for f, p in zip(prn["fractions"], curve["perplexity"]):
        if p <= limit:
            best = max(best, f)
        else:
            break
    return best


def make_summary(imp: dict, prn: dict, mlm: dict, enc: dict) -> dict:
    """The machine-readable answer (the planner reads gqa_quality)."""
    return {
        "model": mlm["model"],
        "baseline_perplexity": mlm["baseline_perplexity"],
        "windows": mlm["windows"],
        "gqa_quality": _kv_rows(mlm, uptrained=False),
        "gqa_quality_uptrained": _kv_rows(mlm, uptrained=True),
        "prunable_fraction_within_5pct": {c["order"]: prunable_fraction(prn, c["order"]) for c in prn["curves"]},
        "importance_spearman_ablation_vs_gradient": imp["spearman_ablation_vs_gradient"],
        "encoder": {"model": enc["model"], "results": [
            {k: r[k] for k in ("kv_heads", "method", "cosine_mean", "cosine_min", "top1", "topk_overlap",
                               "kv_bytes_saved_fraction")} for r in enc["results"]]},
        "report": "reports/heads/REPORT.md",
    }


# ----------------------------------------------------------------------------- markdown

def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def render(imp: dict, prn: dict, mlm: dict, enc: dict, meta: dict) -> str:
    w = mlm["windows"]
    n_heads_total = imp["layers"] * imp["heads"]
    agree = imp.get("agreement") or agreement(torch.tensor(imp["ablation"]), torch.tensor(imp["gradient"]))
    lines = [
        "# Which heads can go, and what GQA/MQA costs: measured on real weights",
        "",
        f"Generated by `{meta['command']}` ({meta['seconds'] / 60:.0f} min of compute, torch {meta['torch']}, "
        f"{meta['machine']}); rendered {meta['generated']}"
        + (" from the stage JSON files of that command (`--reuse`)" if meta.get("reused") else "")
        + ". Do not edit by hand.",
        "",
        "## Setup",
        "",
        f"- Decoder: {mlm['model']} (LlamaForCausalLM, {imp['layers']} layers x {imp['heads']} query heads, "
        f"{mlm['kv_heads_original']} KV heads, head_dim 64; Q4_1 GGUF de-quantized to fp32), sdpa attention, fp32 on CPU.",
        f"- Text: the cleaned English Wikipedia sample from the gensim wheel, cut into non-overlapping "
        f"{w['window_tokens']}-token windows, seed {w['seed']}: {w['eval_windows']} evaluation windows "
        f"({w['eval_predictions']} next-token predictions) and {w['calib_windows']} disjoint calibration windows. "
        f"Head importance uses the first {imp['windows']['importance_windows']} calibration windows "
        f"({imp['windows']['importance_predictions']} predictions); pruning and merging are scored on the evaluation windows.",
        f"- Encoder: {enc['model']} (BERT, 6 layers, {enc['kv_heads_original']} heads, MHA): "
        f"{enc['sentences']} held-out Wikipedia sentences for scoring, {enc['calib_sentences']} other sentences for calibration.",
        f"- Full-model perplexity on the evaluation windows: **{mlm['baseline_perplexity']:.2f}**.",
        "",
        "## 1. Head importance",
        "",
        "![importance](importance.png)",
        "",
        f"Ablation = loss increase when one head's output is zeroed; gradient = Michel et al.'s E|dL/dξ_h|. "
        f"Full-model NLL on these windows: {imp['baseline_nll']:.3f} nats/token. "
        f"Agreement of the two maps: Spearman rho {agree['spearman']:.2f} against the signed ablation, "
        f"{agree['spearman_abs']:.2f} against |ablation| (the gradient is an absolute value: it measures how "
        f"sensitive the loss is to a head, not whether removing it helps); {agree['top_overlap']} of the "
        f"top {agree['top_k']} heads are the same in both.",
        "",
        "| rank | layer.head | ablation (nats/token) | gradient |",
        "|---|---|---|---|",
    ]
    for i, h in enumerate(imp["most_important"], 1):
        lines.append(f"| most {i} | {h['layer']}.{h['head']} | {h['ablation']:+.4f} | {h['gradient']:.4f} |")
    for i, h in enumerate(imp["least_important"], 1):
        lines.append(f"| least {i} | {h['layer']}.{h['head']} | {h['ablation']:+.4f} | {h['gradient']:.4f} |")
    below = imp["heads_below"]
    lines += ["",
              f"Alone, {below['0.0']} of {n_heads_total} heads lower the loss when removed (ablation < 0), "
              f"{below['0.001']} change it by less than 0.001 nats/token and {below['0.01']} by less than 0.01 "
              f"(1% perplexity). Single-head effects do not add up, so the pruning curve below is the real test.",
              "",
              "## 2. Pruning query heads",
              "",
              "![prune](prune.png)",
              "",
              "| heads removed | " + " | ".join(c["order"] for c in prn["curves"]) + " | KV heads freed (ablation order) |",
              "|---|" + "---|" * (len(prn["curves"]) + 1)]
    abl_curve = next(c for c in prn["curves"] if c["order"] == "ablation")
    for i, (f, n) in enumerate(zip(prn["fractions"], prn["heads_removed"])):
        cells = " | ".join(f"{c['perplexity'][i]:.2f}" for c in prn["curves"])
        lines.append(f"| {n} ({_pct(f)}) | {cells} | {abl_curve['kv_heads_freed'][i]} of {prn['kv_heads_total']} |")
    fr = {c["order"]: prunable_fraction(prn, c["order"]) for c in prn["curves"]}
    rnd = [k for k in fr if k.startswith("random")]
    lines += ["",
              "Largest measured fraction of query heads removable with perplexity within +5%: "
              + ", ".join(f"{k} order {_pct(v)}" for k, v in fr.items()) + ".",
              "",
              "## 3. Merging KV heads (MHA/GQA -> fewer KV heads)",
              "",
              "Methods. **mean**: Ainslie et al. 2023, each group's K and V projections mean-pooled (contiguous "
              "groups). **grouped**: mean-pooling, but heads are grouped to minimise mean-pooling's own error on "
              "calibration activations (similar heads share). **fit**: grouped, then each layer's shared K/V "
              "projections are fitted by L-BFGS to reproduce that layer's attention output (after W_O) on the "
              "calibration windows, starting from the mean (see docs/heads.md for why fitting K/V to the heads' "
              "own activations would just give the mean back). For SmolLM2 3 -> 1 there is one group, so grouped = mean.",
              "",
              f"### {mlm['model']}: {mlm['kv_heads_original']} -> fewer KV heads (perplexity, {w['eval_windows']} x "
              f"{w['window_tokens']}-token evaluation windows)",
              "",
              "![merge smollm2](merge_kv_smollm2.png)",
              "",
              "| KV heads | method | uptraining steps | perplexity | vs full | KV bytes/token (bf16) | saved |",
              "|---|---|---|---|---|---|---|",
              f"| {mlm['kv_heads_original']} | original | - | {mlm['baseline_perplexity']:.2f} | 1.00x | "
              f"{mlm['kv_bytes_per_token_bf16_original']:.0f} | 0% |"]
    for r in mlm["results"]:
        lines.append(f"| {r['kv_heads']} | {r['method']} | {r['uptrain_steps'] or '-'} | {r['perplexity']:.2f} | "
                     f"{r['perplexity'] / r['baseline_perplexity']:.2f}x | {r['kv_bytes_per_token_bf16']:.0f} | "
                     f"{_pct(r['kv_bytes_saved_fraction'])} |")
    cfg = meta["configs"]["merge"]
    lines += ["",
              f"Uptraining: {cfg['uptrain_steps']} AdamW steps (lr {cfg['uptrain_lr']:g}, {cfg['uptrain_rows']} "
              f"window(s) per step drawn from {cfg.get('uptrain_windows') or 'the calibration'} windows disjoint from "
              f"the evaluation ones, training {'only the shared K/V projections' if cfg['uptrain_params'] == 'kv' else 'all parameters'}). "
              f"Fit: {cfg['fit_iters']} L-BFGS iterations per layer.",
              "",
              f"### {enc['model']}: {enc['kv_heads_original']} -> fewer KV heads (agreement with the original encoder)",
              "",
              "![merge minilm](merge_kv_minilm.png)",
              "",
              f"| KV heads | method | mean cosine | min cosine | top-1 neighbour kept | top-{enc['k']} overlap | KV bytes saved |",
              "|---|---|---|---|---|---|---|"]
    for r in enc["results"]:
        lines.append(f"| {r['kv_heads']} | {r['method']} | {r['cosine_mean']:.4f} | {r['cosine_min']:.4f} | "
                     f"{_pct(r['top1'])} | {_pct(r['topk_overlap'])} | {_pct(r['kv_bytes_saved_fraction'])} |")
    lines += ["", "## 4. Answers", ""] + answers(imp, prn, mlm, enc, fr, rnd) + [""]
    return "\n".join(lines)


def answers(imp: dict, prn: dict, mlm: dict, enc: dict, fr: dict, rnd: list[str]) -> list[str]:
    """The three questions, answered from the numbers above."""
    out = []
    best_order = max((k for k in fr if not k.startswith("random")), key=lambda k: fr[k])
    n_total = imp["layers"] * imp["heads"]
    rnd_frac = max(fr[k] for k in rnd) if rnd else 0.0
    top = ", ".join(f"{h['layer']}.{h['head']}" for h in imp["most_important"][:3])
    base_p = prn["baseline_perplexity"]
    i1 = 1 if len(prn["fractions"]) > 1 else 0                  # the smallest nonzero fraction measured
    cost = {c["order"]: c["perplexity"][i1] / base_p - 1 for c in prn["curves"]}
    rnd_cost = max(cost[k] for k in rnd) if rnd else float("nan")
    if fr[best_order] > 0:
        can_go = (f"Removing query heads least-important-first ({best_order} order) keeps perplexity within +5% "
                  f"up to {_pct(fr[best_order])} of the {n_total} heads (~{round(fr[best_order] * n_total)} heads); "
                  f"in random order up to {_pct(rnd_frac)}.")
    else:
        can_go = ("Few: no measured fraction keeps perplexity within +5%, even with the best order.")
    out.append(f"**Which heads can go.** {can_go} Removing the {prn['heads_removed'][i1]} least important heads "
               f"({_pct(prn['fractions'][i1])}) costs "
               + ", ".join(f"{cost[k]:+.1%} ({k} order)" for k in cost if not k.startswith("random"))
               + f" against {rnd_cost:+.1%} for the same number of random heads, so importance does identify "
               f"the spare heads; {imp['heads_below']['0.0']} heads even lower the loss when removed alone. "
               f"The heads that cannot go are the top of the ablation map ({top}; section 1). "
               "Pruning query heads saves attention FLOPs and W_Q/W_O parameters but KV bytes only when all "
               "query heads of a KV group go (the 'KV heads freed' column).")
    base = mlm["baseline_perplexity"]
    rows = {(r["method"], r["kv_heads"], r["uptrain_steps"]): r for r in mlm["results"]}
    parts = []
    for g in sorted({r["kv_heads"] for r in mlm["results"]}, reverse=True):
        mean, fit = rows.get(("mean", g, 0)), rows.get(("fit", g, 0))
        if mean and fit:
            parts.append(f"{mlm['kv_heads_original']} -> {g} KV heads ({_pct(mean['kv_bytes_saved_fraction'])} of the KV cache saved) "
                         f"raises perplexity from {base:.2f} to {mean['perplexity']:.2f} with mean-pooling and to "
                         f"{fit['perplexity']:.2f} with the fitted merge")
        ups = [r for r in mlm["results"] if r["kv_heads"] == g and r["uptrain_steps"] > 0]
        if ups:
            parts.append(f"after {ups[0]['uptrain_steps']} uptraining steps: "
                         + ", ".join(f"{r['method']} {r['perplexity']:.2f}" for r in ups))
    enc_parts = []
    for g in sorted({r["kv_heads"] for r in enc["results"]}, reverse=True):
        by = {r["method"]: r for r in enc["results"] if r["kv_heads"] == g}
        enc_parts.append(f"{g} KV heads: cosine {by['mean']['cosine_mean']:.3f} (mean) / "
                         f"{by['fit']['cosine_mean']:.3f} (fit), top-1 kept {_pct(by['mean']['top1'])} / {_pct(by['fit']['top1'])}")
    out.append(f"**What GQA/MQA costs.** {mlm['model']}: " + "; ".join(parts) + ". "
               f"{enc['model']} converted from MHA: " + "; ".join(enc_parts) + ".")
    small_loss = [r for r in enc["results"] if r["method"] == "fit" and r["top1"] >= 0.9]
    keep_all = (f"in {enc['model']} a fitted merge keeps >= 90% of nearest neighbours down to "
                f"{min(r['kv_heads'] for r in small_loss)} KV heads" if small_loss else
                f"in {enc['model']} no merge keeps 90% of nearest neighbours")
    spare = fr[best_order]
    out.append("**When to keep every head.** "
               + (f"Keep every query head of {prn['model']} unless a perplexity loss above 5% is acceptable: "
                  f"its heads are not redundant enough to prune without retraining "
                  f"(+5% is reached before {_pct(prn['fractions'][i1])} of the heads are gone). " if spare == 0 else
                  f"Up to {_pct(spare)} of {prn['model']}'s query heads can go for <= +5% perplexity; beyond that, keep them. ")
               + "Keep every KV head when the KV cache fits: without training, every merge we measured costs "
               f"quality ({keep_all}; {mlm['model']}, already GQA-3, degrades sharply at MQA even with the fitted "
               "merge). Merge (GQA) when the KV cache is what does not fit, prefer the fitted merge over "
               "mean-pooling, and budget uptraining to recover the rest.")
    return out
