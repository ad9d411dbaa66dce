"""The decision: one full pass, the fewest chunks that fit, or nothing fits; and the chunked alternative.

Positions decide too: learned positions (GPT-2) cannot run past their table, so chunks are capped
there; RoPE runs past its covered length (max_position_embeddings and rope_scaling, cost/spec/positions.py)
but leaves the trained range, so the memory answer stands with a caveat and the factor needed.
"""
from __future__ import annotations

from multihead.cost.counts.formulas import ceil_div
from multihead.cost.spec.positions import coverage, extension_needed
from multihead.cost.serving.answer import batched_tokens
from multihead.cost.spec.units import fmt_bytes, fmt_int, fmt_seconds
from multihead.messages import say
from multihead.planner.accounts import MemoryAccount, Accounts, chunk_groups, chunk_tokens, fewest_chunks
from multihead.planner.plan import Outcome

COMPARE_CHUNKS = 8                      # the reference text's alternative: eight 16k chunks


def positions_report(st: Accounts, tokens: int) -> dict:
    c, ext = coverage(st.spec), extension_needed(st.spec, tokens)
    return {"covered_tokens": c.covered, "base_tokens": c.base, "how": c.how, "learned": c.learned,
            "covered": c.covered is None or tokens <= c.covered,
            "factor_needed": ext.factor if ext else None, "rope_scaling_snippet": ext.snippet if ext else None}


def engine_decides(st: Accounts, tokens: int) -> bool:
    """Whether the engine's account decides one pass vs chunks: a GPU plan (its serving section has an
    account) of one sequence whose request is the plan's T tokens. Otherwise (a measured CPU profile,
    batch > 1, a different --max-model-len, a materialized score matrix, which no engine allocates) the
    plan's own account of one unchunked forward decides."""
    e = st.engine
    return e is not None and st.batch == 1 and e.request.max_model_len == tokens and st.attention == "tiled"


def decide(st: Accounts, tokens: int, chunks: int | None, single: MemoryAccount) -> tuple[str, int, bool, str]:
    """(decision, chunks, fits, reason)."""
    cov = coverage(st.spec)
    learned = cov.covered if cov.learned else None
    if engine_decides(st, tokens):
        return _engine_decision(st, tokens, chunks, single, learned)
    if chunks is not None:
        return _requested(st, tokens, chunks, learned)
    if single.fits and not (learned and tokens > learned):
        return "single_pass", 1, True, say(
            "decision.single_pass", total=fmt_bytes(single.total_bytes), weights=fmt_bytes(single.weights_bytes),
            kv=fmt_bytes(single.kv_cache_bytes), workspace=fmt_bytes(single.workspace_bytes),
            usable=fmt_bytes(st.usable), tokens=fmt_int(tokens))
    best = fewest_chunks(st, tokens, learned)
    if best is None:
        return "does_not_fit", 1, False, say("decision.does_not_fit", weights=fmt_bytes(single.weights_bytes),
                                             usable=fmt_bytes(st.usable))
    why = (say("decision.why_memory", total=fmt_bytes(single.total_bytes), usable=fmt_bytes(st.usable))
           if not single.fits else say("decision.why_learned", tokens=fmt_int(tokens), learned=learned))
    text_split = ""
    if best != COMPARE_CHUNKS and COMPARE_CHUNKS <= tokens:
        split = st.memory(chunk_tokens(tokens, COMPARE_CHUNKS))
        text_split = say("decision.text_split", n=COMPARE_CHUNKS, size=fmt_int(chunk_tokens(tokens, COMPARE_CHUNKS)),
                         total=fmt_bytes(split.total_bytes),
                         _fits=say("decision.they_fit" if split.fits else "decision.they_do_not_fit"))
    reason = say("decision.chunked", _why=why, n=best, size=fmt_int(chunk_tokens(tokens, best)),
                 each=fmt_bytes(st.memory(chunk_tokens(tokens, best)).total_bytes), _text_split=text_split)
    return "chunked", best, True, reason


def _engine_decision(st: Accounts, tokens: int, chunks: int | None, single: MemoryAccount,
                     learned: int | None) -> tuple[str, int, bool, str]:
    """The decision read from the engine's account (the serving section's numbers): one pass when one
    request of T tokens fits it; else chunks no longer than the longest request it fits."""
    e = st.engine
    a, longest = e.account, e.account.max_model_len_fit
    own = (f"one unchunked forward would need {fmt_bytes(single.total_bytes)} of {fmt_bytes(st.usable)} usable: "
           f"the memory table, the reference text's account")
    name = {"vllm": "vLLM", "sglang": "SGLang", "tensorrt-llm": "TensorRT-LLM"}.get(e.request.engine, e.request.engine)
    engine = (f"the engine's account ({name}, the serving section: {a.kv_cache_gib:.2f} GiB KV per GPU after weights, "
              f"activation peak and non-torch memory; prefill in steps of {batched_tokens(e.request, e.total_bytes):,} "
              f"tokens, full attention)")
    limit = min(longest, learned) if learned else longest
    if chunks is not None:
        size = chunk_tokens(tokens, chunks)
        fits = 0 < size <= limit
        return ("single_pass" if chunks == 1 else "chunked", chunks, fits,
                f"{chunks} chunk{'s' if chunks > 1 else ''} requested: the largest ({fmt_int(size)} tokens) "
                f"{'fits' if fits else 'does not fit'} {engine}, whose longest request is {fmt_int(longest)} tokens")
    if a.fits and not e.refusal and not (learned and tokens > learned):
        return "single_pass", 1, True, (
            f"one request of {fmt_int(tokens)} tokens fits {engine}: {a.max_concurrency:.2f}x, so read all "
            f"{fmt_int(tokens)} tokens at once and keep every cross-reference ({own})")
    first = f" (cheapest: {' '.join(_flags(e))})" if e.found else ""
    if limit <= 0:
        return "does_not_fit", 1, False, (
            f"{engine} has no room for one request: {a.reason} No split helps; see the fallbacks{first}")
    best = ceil_div(tokens, limit)
    why = (f"one request of {fmt_int(tokens)} tokens does not fit {engine}; the longest that does is "
           f"{fmt_int(longest)} tokens" if not a.fits else f"{fmt_int(tokens)} tokens exceed the {learned} learned "
           f"positions")
    table = st.memory(chunk_tokens(tokens, best))       # the other account, said when it disagrees
    differ = "" if table.fits else say("decision.engine_differ", total=fmt_bytes(table.total_bytes),
                                       usable=fmt_bytes(st.usable))
    return "chunked", best, True, say("decision.engine_chunked", _why=why, n=best,
                                      size=fmt_int(chunk_tokens(tokens, best)), _differ=differ, _first=first)


def _flags(e) -> list[str]:
    from multihead.planner.search import changes
    return changes(e.found[0][0], e.request)


def _requested(st: Accounts, tokens: int, chunks: int, learned: int | None) -> tuple[str, int, bool, str]:
    """A requested split (--chunks) is evaluated, not chosen."""
    longest = chunk_tokens(tokens, chunks)
    chosen = st.memory(longest)
    fits = chosen.fits
    too_long = bool(learned and longest > learned)
    if too_long:
        fits = False
    reason = say("decision.requested" if chunks > 1 else "decision.requested_one", n=chunks, longest=fmt_int(longest),
                 total=fmt_bytes(chosen.total_bytes), usable=fmt_bytes(st.usable),
                 _fits=say("word.fits" if chosen.fits else "word.does_not_fit"),
                 _learned=say("decision.requested_learned", learned=learned) if too_long else "")
    return "single_pass" if chunks == 1 else "chunked", chunks, fits, reason


def positions_caveat(st: Accounts, tokens: int, n_chunks: int) -> str:
    """The caveat when RoPE runs past its covered length: the factor that would cover it, exactly."""
    longest = chunk_tokens(tokens, n_chunks)
    ext = extension_needed(st.spec, longest)
    if ext is None:
        return ""
    return say("decision.positions_caveat", _base="", _which=say("word.each_chunk" if n_chunks > 1 else "word.the_pass"),
               longest=fmt_int(longest), covered=fmt_int(ext.covered), factor=f"{ext.factor:g}", snippet=ext.snippet,
               covered2=fmt_int(ext.covered))


def chunked_account(st: Accounts, tokens: int, chunks: int, passes: int, causal_skip: bool) -> dict:
    """The chunked alternative: chunks run one after another, each with its own KV cache."""
    biggest = chunk_tokens(tokens, chunks)
    mem = st.memory(biggest)
    groups = chunk_groups(tokens, chunks)          # at most two lengths: ceil and floor of T/n
    flops = sum(n * st.attention_flops(t, causal=False) for t, n in groups)
    flops_causal = sum(n * st.attention_flops(t, causal=True) for t, n in groups)
    attn_s = sum(st.attention_seconds(n * st.attention_flops(t, causal=causal_skip), t, calls_per_layer=n,
                                      causal=causal_skip) for t, n in groups)
    prefill_s = sum(n * st.prefill(t, causal_skip=causal_skip)[0] for t, n in groups)   # chunks one after another
    kv_read = st.decode_seconds(biggest, mem.kv_cache_bytes, 0.0)
    step, _ = st.decode_step(biggest)
    return {
        "chunks": chunks, "chunk_tokens": biggest, "kv_cache_bytes": mem.kv_cache_bytes,
        "workspace_bytes": mem.workspace_bytes, "total_memory_bytes": mem.total_bytes, "fits": mem.fits,
        "attention_flops": flops, "attention_flops_causal": flops_causal,
        "attention_prefill_seconds": attn_s, "attention_prefill_seconds_all_passes": attn_s * passes,
        "prefill_seconds": prefill_s, "prefill_seconds_all_passes": prefill_s * passes,
        "decode_kv_read_seconds": kv_read, "decode_seconds_per_token": step, "tokens_per_second": st.batch / step,
    }


def build_outcome(st: Accounts, tokens: int, passes: int, chunks: int | None, single: MemoryAccount,
                  causal_skip: bool, attention_seconds: float) -> Outcome:
    decision, n_chunks, fits, reason = decide(st, tokens, chunks, single)
    if decision != "does_not_fit" and not coverage(st.spec).learned:
        reason += positions_caveat(st, tokens, n_chunks)
    compare = n_chunks if n_chunks > 1 else min(COMPARE_CHUNKS, tokens)
    chunked = chunked_account(st, tokens, compare, passes, causal_skip)
    chunked["why_this_count"] = ("the decision's split" if n_chunks > 1 else
                                 f"the reference text's comparison ({COMPARE_CHUNKS} chunks)")
    size = fmt_int(chunked["chunk_tokens"])
    loses = (f"Chunking cuts the document into {compare} pieces of ~{size} tokens that never see each other: a "
             f"token in one chunk cannot attend to any token in another, so cross-chunk references (a clause citing "
             f"a definition {size}+ tokens earlier, a pronoun whose antecedent is in a previous chunk) are lost, and "
             f"the per-chunk results must be merged without the model having read the whole. It saves "
             f"{fmt_seconds(attention_seconds - chunked['attention_prefill_seconds'])} of attention per pass.")
    by_engine = engine_decides(st, tokens)
    one_pass = st.engine.account.fits and not st.engine.refusal if by_engine else single.fits   # = serving.fits
    return Outcome(chunked=chunked, fits=one_pass, decision=decision, chunks=n_chunks, decision_fits=fits,
                   reason=reason, chunking_loses=loses, positions=positions_report(st, tokens),
                   decided_by="engine" if by_engine else "plan")
