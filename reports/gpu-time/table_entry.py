"""The one way a session's entry script (add_session*_rows.py) writes its rows into the measurement table.

``enter`` removes what an earlier run of the same script added (its sources' rows and every row of its split), then
adds the sources, models and rows again, so a script can be re-run. What later sessions added is kept: a mark set on
one of its sources since (``reserved_edition``), a model moved to the catalog since (``"catalog": ID``), and the
other sets' sentences of the table's ``_comment`` (the split's own is replaced where it stands). Rows of the split
go at the end of the table."""
import json
import re

P = "reports/gpu-time/measurements.json"
# an InferenceX point's printed figures: (metric, index in the point's tuple, unit, what the table calls it)
IX_METRICS = (("ttft_ms", 5, "ms", "mean TTFT"), ("itl_ms", 6, "ms", "mean TPOT"),
              ("output_tokens_per_s_per_gpu", 4, "tokens/s/GPU", "output tok/s/GPU"))


def serving_row(split, src, i, model, gpu, tp, weights, c, inp, outl, metric, value, unit, note, ep=1, dp=1,
                dp_attn=False) -> dict:
    """One printed figure of a serving run as a table row (KV cache entered as bf16 where a document states none)."""
    rid = f"{src}-run{i}-{model}-{gpu}-tp{tp}-{weights}-c{c}-{inp}-{outl}-{metric}"
    return dict(id=rid, source=src, gpu=gpu, tp=tp, model=model, weights=weights, kv="bf16", batch=c,
                mode="serving", input_len=inp, output_len=outl, metric=metric, value=value, unit=unit, note=note,
                expert_parallel_size=ep, data_parallel_size=dp, enable_dp_attention=dp_attn, split=split)


def enter(split: str, sources: dict, rows: list[dict], session: int, sentence: str, models: dict | None = None,
          path: str = P) -> None:
    """Write ``sources`` (each with ``klass``: dense / moe / mla), ``models`` and ``rows`` of ``split`` into the
    table at ``path``; ``sentence`` says in the table's _comment where the split's rows came from."""
    d = json.load(open(path))
    d["rows"] = [r for r in d["rows"] if r.get("split") != split and r["source"] not in sources]
    for key, src in sources.items():
        src = dict(src)
        src["class"] = src.pop("klass")
        src["session"] = session
        d["sources"][key] = {**d["sources"].get(key, {}), **src}
    for name, entry in (models or {}).items():
        d["models"].setdefault(name, entry)
    ids = {r["id"] for r in d["rows"]}
    assert not ids & {r["id"] for r in rows} and len({r["id"] for r in rows}) == len(rows)
    d["rows"] += rows
    mark = f" Rows with split '{split}'"
    if mark in d["_comment"]:           # the split's sentence replaced where it stands
        d["_comment"] = re.sub(re.escape(mark) + r".*?(?= Rows with split '|$)", lambda _: " " + sentence,
                               d["_comment"], count=1, flags=re.S)
    else:
        d["_comment"] = d["_comment"].rstrip() + " " + sentence
    print(len(rows), "rows of", len(sources), "sources added, split", split)
    with open(path, "w") as f:
        json.dump(d, f, indent=1)
        f.write("\n")
