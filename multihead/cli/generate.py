"""``multihead generate``: greedy text from SmolLM2-135M, on multihead's KV cache and decode path or transformers'."""
from __future__ import annotations

import argparse

from multihead import jsonout
from multihead.cli import _args as A
from multihead.hf.shipped import SMOLLM2

EXAMPLES = """examples:
  multihead generate --prompt "What is attention in a transformer?" --max-new-tokens 64
  multihead generate --prompt "The Roman Empire" --raw --attention sdpa --json
  multihead generate --prompt "Hi" --prompt "Name three rivers in Europe." --page-size 16
"""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "generate", help="greedy generation with SmolLM2-135M on multihead's KV cache and decode kernel",
        description="Greedy (argmax) generation with SmolLM2-135M-Instruct (fp32). --attention multihead runs the "
                    "model's weights with multihead.KVCache (preallocated, GQA 3 KV heads) and the decode backend "
                    "for every new token; sdpa runs transformers' own generate(do_sample=False). Both give the "
                    "same tokens. The prompt is wrapped in the model's chat template (a user turn, assistant "
                    "turn opened) unless --raw is given. Stops at max-new-tokens or the end-of-turn token.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--prompt", required=True, action="append",
                   help="prompt text; give it several times for one left-padded batch")
    p.add_argument("--page-size", type=A.int_range(1, SMOLLM2.positions), default=None, metavar="N",
                   help="keep K/V in a paged KVCache with pages of N tokens (read in place by the decode kernel)")
    # The prompt and the new tokens share the model's positions; the exact bound (positions minus
    # the prompt's tokens) is checked once the prompt is tokenized, before the cache is allocated.
    p.add_argument("--max-new-tokens", type=A.int_range(1, SMOLLM2.positions - 1), default=64, metavar="N",
                   help=f"tokens to generate at most, 1 to {SMOLLM2.positions - 1:,}: prompt + new tokens fit the "
                        f"model's {SMOLLM2.positions:,} positions (default 64)")
    p.add_argument("--attention", choices=["multihead", "sdpa", "eager"], default="multihead",
                   help="multihead (KVCache + decode backend, default) or transformers' sdpa / eager")
    p.add_argument("--raw", action="store_true", help="do not apply the chat template; continue the raw text")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args) -> int:
    from multihead.hf.generation import smollm2_generate

    r = smollm2_generate(args.prompt if len(args.prompt) > 1 else args.prompt[0], max_new_tokens=args.max_new_tokens,
                         attention=args.attention, chat=not args.raw, page_size=args.page_size)
    if args.json:
        print(jsonout.dumps(r))
        return 0
    from rich.console import Console
    from rich.panel import Panel

    c = Console()
    for row in r.get("batch", [r]):
        c.print(Panel(row["text"], title=f"{r['model']} (attention={r['attention']}, "
                                        f"{'chat template' if r['chat_template'] else 'raw prompt'})"))
    c.print(f"{r['prompt_tokens']} prompt tokens, {r['new_tokens']} new tokens in {r['seconds']:.1f} s "
            f"({r['tokens_per_second']:.1f} tokens/s)")
    return 0
