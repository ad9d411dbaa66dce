"""Session 8: refit and cross-validate BY DOCUMENT on the fitted documents (every split on the branch, seen-6
included, less the reserved editions) for a model variant; prints the out-of-document median |error| per class
(dense / moe / mla) and metric family, as session7_cv.py does (its report and --table are reused). Usage:
    PYTHONPATH=. python reports/gpu-time/session8_cv.py VARIANT OUTDIR [MAX_NFEV]
VARIANT is a '+'-joined list of switches (_variants below): 's7' is the session-7 model as committed (its terms,
refitted on the new rows), e.g. s7+batch. Every fit (the full one and each fold's) is one warm least-squares
descent from the committed constants, bounded to MAX_NFEV evaluations (default 40)."""
import json, statistics, sys, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from session7_cv import markdown, report        # noqa: E402,F401
from multihead.cost.time import timing           # noqa: E402
from multihead.fits import timing_validation as tv   # noqa: E402


def _set(module, name, value):
    def apply():
        setattr(module, name, value)
    return apply


def _s7():
    """The session-7 terms as shipped to session 12: the switches session 13 turned on, off again (so 's7' means the
    same before and after session 13's adoption; 'waves', 'trt', 'docwsqrt' turn them on after it)."""
    from multihead.cost.time import engine_costs
    timing.ARRIVAL_WAVES = False
    engine_costs.POOLED = ("tensorrt-llm",)
    tv.DOCUMENT_WEIGHTS = 0.0


def _kerneff2():
    from multihead.cost.time import kernel_efficiency
    kernel_efficiency.KERNEL_EFFICIENCY = True
    kernel_efficiency.PER_PHASE = True


def _variants():
    from multihead.cost.time import engine_costs, kernel_efficiency
    return {"s7": _s7,
            "s13": lambda: None,                                # session 14: the terms session 13 adopted (the defaults)
            "batch": _set(timing, "PREFILL_BATCHING", True),     # prompts prefilled together up to the budget
            "mxfp4k": _set(engine_costs, "FUSED_MXFP4_MOE", True),
            "waves": _set(timing, "ARRIVAL_WAVES", True),     # session 12: requests arriving in waves
            "trt": _set(engine_costs, "POOLED", ()),           # session 12: TensorRT-LLM 0.x / 1.x costs apart
            "trtpooled": _set(engine_costs, "POOLED", ("tensorrt-llm",)),   # one TensorRT-LLM entry (s7's)
            "docw": _set(tv, "DOCUMENT_WEIGHTS", 1.0),         # session 12: each document weighs the same
            "docwsqrt": _set(tv, "DOCUMENT_WEIGHTS", 0.5),     # ... as the square root of its rows
            "kerneff": _set(kernel_efficiency, "KERNEL_EFFICIENCY", True),   # session 14: MoE / MLA kernels per engine
            "kerneff2": _kerneff2}                                            # ... per engine and phase


if __name__ == "__main__" and sys.argv[1] == "--table":
    print(markdown([(a.split("=")[0], json.load(open(a.split("=")[1]))) for a in sys.argv[2:]]))
elif __name__ == "__main__":
    variant, out = sys.argv[1], sys.argv[2]
    tv.MAX_NFEV = int(sys.argv[3]) if len(sys.argv) > 3 else 40
    table_v = _variants()
    for part in variant.split("+"):
        table_v[part]()
    table = tv.load_table()
    # the sealed sets' rows are never in the folds (load_table leaves them out), nor reserved editions
    assert not any(tv.split_of(r) in tv.SEALED or tv.reserved(table, r) for r in table["rows"])
    t0 = time.time()
    c = tv.fit(table, start=timing.load_constants(), starts=1, warm=True)
    json.dump({"constants": tv.constants_dict(c)}, open(f"{out}/fit_{variant}.json", "w"), indent=1)
    t1 = time.time()
    print(variant, f"fit {t1 - t0:.0f} s", flush=True)
    errs = tv.out_of_document(table, c, folds=5)
    json.dump(errs, open(f"{out}/ood_{variant}.json", "w"))
    res = tv.evaluate(table, c)
    fitted = [abs(r["error"]) for r in res if r["split"] in tv.FIT_SPLITS]
    print(variant, f"fit {t1 - t0:.0f} s, 5-fold CV {time.time() - t1:.0f} s; in-sample median {statistics.median(fitted):.1%}")
    print(report(errs))
