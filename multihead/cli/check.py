"""``multihead check``: probe an attention implementation for the classic bugs."""
from __future__ import annotations

import argparse

from multihead import jsonout
from multihead.cli._args import float_range, int_range

EXAMPLES = """examples:
  multihead check torch.nn.functional:scaled_dot_product_attention
  multihead check multihead:attention --expect-alignment bottom-right
  multihead check mypkg.layers:MyAttention --signature module --d-model 128 --heads 8 --kv-heads 2
  multihead check transformers.integrations.sdpa_attention:sdpa_attention_forward --signature hf
  multihead check tests/broken_impls.py:no_scale --json

exit status: 0 all checks pass, 1 a check failed (or the target hung past --timeout, or ended the
process), 2 the target cannot be imported or called. The target runs in a child process; a pass
covers exactly the coverage table printed with it.
"""


OUTCOMES = ("timeout", "exit")     # the catalogue's entries for a probe that hangs or ends the process
MODULE_ONLY = ("head_layout",)     # x -> x targets only (checker/module_probes.py)
MODULE_CHECKS = 10                 # findings of a module run (tests/test_checker.py checks it against the checker)


def checks_text() -> str:
    """The checks as the checker's own catalogue names them (symptoms.CATALOGUE, torch-free: --help loads
    no torch), and how many a function and a module target run."""
    import textwrap

    from multihead.checker.symptoms import CATALOGUE
    names = [n for n in CATALOGUE if n not in OUTCOMES]
    function = [n for n in names if n not in MODULE_ONLY]
    text = (f"The checks (multihead.checker.CATALOGUE, in its order): {', '.join(names)}. A function (sdpa, hf) "
            f"runs {len(function)}, all but {', '.join(MODULE_ONLY)}; a module runs {MODULE_CHECKS} (scale and "
            f"gqa_grouping reported as skipped: its weights are its own, no float64 reference). A probe that "
            f"hangs past --timeout or ends the process is reported as {' / '.join(OUTCOMES)}.")
    return textwrap.fill(text, 100)


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "check", help="find the classic attention bugs (scale, overflow, masks, causal, heads, GQA) in any implementation",
        description="Black-box probes of an attention function or module: accuracy against a float64 reference, "
                    "the 1/sqrt(d_k) scale, large-logit overflow, causal leaks and alignment, mask polarity, fully "
                    "masked rows, head layout, GQA grouping, batch independence and weight normalization, and the "
                    "paths real models take (GQA with masks, long keys, decode, padding, additive masks, other "
                    "dtypes). Each failure says what a user of a model with the bug would see, and the fix.\n\n"
                    + checks_text(),
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("target", type=_target,
                   help="package.module:name or path/to/file.py:name (a function, module class or instance)")
    p.add_argument("--signature", choices=["auto", "sdpa", "module", "hf"], default="auto",
                   help="sdpa: fn(q, k, v, attn_mask=None, is_causal=False, scale=None); module: x -> x with "
                        "n_heads/n_kv_heads; hf: transformers attention function (module, query, key, value, "
                        "attention_mask, scaling=...); auto (default) picks one")
    p.add_argument("--dtype", choices=["float32", "float64", "bfloat16", "float16"], default="float32",
                   help="dtype of the main probes (default float32; the overflow probe also runs a tiny float16 case)")
    p.add_argument("--device", default="cpu", help="device the target runs on (default cpu)")
    p.add_argument("--expect-alignment", choices=["bottom-right", "top-left"],
                   help="causal alignment the target claims for Tq != Tk (default: report it; only a mixed one fails)")
    p.add_argument("--d-model", type=int_range(1, 8192), default=64,
                   help="width used to build a module class (default 64)")
    p.add_argument("--heads", type=int_range(1, 256), default=4, help="n_heads used to build a module class (default 4)")
    p.add_argument("--kv-heads", type=int_range(1, 256), default=2,
                   help="n_kv_heads used to build a module class (default 2)")
    p.add_argument("--seed", type=int_range(0, 2**31 - 1), default=0, help="seed of the probes' random inputs (default 0)")
    p.add_argument("--timeout", type=float_range(0, 3600, lo_open=True), default=60.0,
                   help="seconds one probe may take before the target is stopped and reported (default 60)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def _target(spec: str) -> str:
    """The spec's form and file checked at parse time (importing nothing); importing it and calling
    it happen in the child process."""
    from multihead.checker.load import split_target
    try:
        split_target(spec)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err).removeprefix("target: ")) from None
    return spec


def options(args) -> dict:
    """check_attention's keyword arguments from the parsed flags (what the child process is sent)."""
    return {"signature": args.signature, "dtype": args.dtype, "device": args.device,
            "expect_alignment": args.expect_alignment, "seed": args.seed,
            "module_sizes": [args.d_model, args.heads, args.kv_heads]}


def run(args) -> int:
    from multihead.checker.isolate import run_isolated

    # A bad device is the caller's mistake, not the target's: exit 2 before any child starts. The
    # default cpu needs no check here, which spares this process torch's import (~1.3 s of CPU;
    # the child checks it again).
    if args.device != "cpu":
        from multihead.checker.check import check_device
        check_device(args.device)
    report = run_isolated(args.target, options(args), args.timeout)
    if args.json:
        print(jsonout.dumps(report.to_dict(), indent=2, default=float))
    else:
        from rich.console import Console

        console = Console()
        report.render(console if console.is_terminal else Console(width=120))   # piped: rich's 80 columns wrap the evidence
    return 0 if report.passed else 1
