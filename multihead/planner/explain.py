"""The derivation (--explain): every formula with the plan's own numbers substituted, one line each.

Lines are written from the finished Plan (and its Accounts for the symbols), never recomputed, so the
explanation cannot disagree with the numbers it explains.
"""
from __future__ import annotations

from multihead.cost.counts.formulas import attention_params
from multihead.cost.counts.memory import kv_heads_per_gpu
from multihead.cost.counts.params import mlp_width, non_embedding_params, param_counts
from multihead.cost.spec.units import dtype_bytes, fmt_bytes, fmt_int, fmt_passes, fmt_seconds
from multihead.planner.plan import Plan


def explain(p: Plan) -> list[str]:
    return _parameters(p) + _memory(p) + _compute(p) + _decision(p)


def _parameters(p: Plan) -> list[str]:
    s = p.accounts.spec
    D, H, Hkv, dk, L = s.hidden_size, s.num_heads, s.num_kv_heads, s.head_dim, s.num_layers
    a = p.parameters
    out = [f"d_k = head_dim = {dk}" + (f" (= D/H = {D}/{H})" if D == H * dk else
                                       f" (stated; D/H would be {D / H:g}, so H*d_k = {H * dk} != D = {D})")]
    if s.mla:
        m = s.mla
        out.append(f"MLA attention params/layer = q + kv_a (D*(r_kv+rope)) + kv_b (r_kv*H*(nope+v)) + o (H*v*D) = "
                   f"{fmt_int(a.attention_params_per_layer)} (r_kv={m.kv_lora_rank}, rope={m.qk_rope_head_dim}, "
                   f"nope={m.qk_nope_head_dim}, v={m.v_head_dim}, r_q={m.q_lora_rank})")
    else:
        extra = a.attention_params_per_layer - attention_params(D, H, Hkv, dk)
        out.append(f"attention params/layer = 2*D*H*d_k + 2*D*H_kv*d_k{' + biases' if extra else ''} = 2*{D}*{H}*{dk} "
                   f"+ 2*{D}*{Hkv}*{dk}{f' + {fmt_int(extra)}' if extra else ''} = {fmt_int(a.attention_params_per_layer)}"
                   + (f" (MHA with d_k = D/H: 4*D^2 = {fmt_int(4 * D * D)})" if H == Hkv and H * dk == D and not extra
                      else ""))
    out.append(f"attention params, all layers = L * per layer = {L} * {fmt_int(a.attention_params_per_layer)} = "
               f"{fmt_int(a.attention_params)}")
    return out + _param_breakdown(p)


def _param_breakdown(p: Plan) -> list[str]:
    s, a = p.accounts.spec, p.parameters
    c = param_counts(s)
    if c is None:
        return [f"params = {fmt_int(a.params)} (stated; the config lacks intermediate_size/vocab_size, so no "
                f"breakdown" + (f": attention is {a.attention_params / a.params:.1%} of it)" if a.params else ")")]
    out = []
    if c.n_dense_layers:
        out.append(f"MLP params/layer = {s.mlp_matrices}*D*I = {s.mlp_matrices}*{s.hidden_size}*{s.intermediate_size}"
                   f"{' (+ biases)' if s.mlp_bias else ''} = {fmt_int(c.mlp_per_layer)} ({s.mlp.value} MLP)"
                   + (f" on {c.n_dense_layers} dense layers" if s.moe else ""))
    if s.moe:
        m = s.moe
        out.append(f"MoE layer = router D*E {fmt_int(c.router_per_layer)} + {m.num_experts} experts * 3*D*I_e "
                   f"(3*{s.hidden_size}*{m.expert_intermediate_size} = {fmt_int(c.expert)} each) + shared "
                   f"{fmt_int(c.shared_per_layer)}, on {c.n_moe_layers} layers: all experts {fmt_int(c.experts_total)}")
        out.append(f"active params per token = total - idle experts = {fmt_int(c.total)} - "
                   f"{c.n_moe_layers}*({m.num_experts}-{m.experts_per_token})*{fmt_int(c.expert)} = {fmt_int(c.active)}")
    out.append(f"embedding = V*D = {s.vocab_size}*{s.hidden_size}{' + positions P*D' if s.positions.value == 'learned' else ''}"
               f" = {fmt_int(c.embedding)}; LM head = {'tied (0)' if s.tie_word_embeddings else fmt_int(c.lm_head)}")
    out.append(f"params from the architecture = embedding + LM head + layers + final norm = {fmt_int(c.total)}")
    if s.params_published:
        out.append(f"published total {fmt_int(s.params_published)}: architecture count differs by "
                   f"{(c.total - s.params_published) / s.params_published:+.3%}")
    if s.params is not None:
        out.append(f"stated params {fmt_int(s.params)} override the architecture count "
                   f"({(s.params - c.total) / c.total:+.1%})")
    return out


def _memory(p: Plan) -> list[str]:
    st, m, i = p.accounts, p.memory, p.inputs
    s = st.spec
    L, Hkv, dk, T, B = s.num_layers, s.num_kv_heads, s.head_dim, i.tokens, i.batch
    kvb = dtype_bytes(i.kv_dtype)
    if s.mla:
        out = [f"KV cache per token = (kv_lora_rank + qk_rope_head_dim)*L*bytes = ({s.mla.kv_lora_rank}+"
               f"{s.mla.qk_rope_head_dim})*{L}*{kvb:g} B = {fmt_int(m.kv_cache_bytes_per_token)} B ({i.kv_dtype}, MLA latent)"]
    else:
        mha = m.kv_cache_bytes_per_token * s.num_heads // Hkv
        out = [f"KV cache per token = 2*L*H_kv*d_k*bytes = 2*{L}*{Hkv}*{dk}*{kvb:g} B = "
               f"{fmt_int(m.kv_cache_bytes_per_token)} B ({i.kv_dtype})"
               + (f"; H_kv/H = {Hkv}/{s.num_heads} = {Hkv / s.num_heads:.3g} of MHA's {fmt_int(mha)} B"
                  if Hkv != s.num_heads else "")]
    windowed = [g for g in m.kv_layer_groups if g["window"] is not None and T > g["window"]]
    out.append(f"KV cache = per token * T * B = {fmt_int(m.kv_cache_bytes_per_token)} * {fmt_int(T)} * {B} = "
               f"{fmt_bytes(m.kv_cache_bytes_no_window)}"
               + (f"; with {', '.join(f'''{g['layers']} layers capped at {fmt_int(g['window'])}''' for g in windowed)}:"
                  f" {fmt_bytes(st.kv_bytes(T, gpus=1))}" if windowed else ""))
    if i.tensor_parallel_size > 1:
        out.append("KV cache per GPU = " + ("the whole MLA latent on each GPU" if s.mla else
                   f"{kv_heads_per_gpu(Hkv, i.tensor_parallel_size)} of {Hkv} KV heads on each of {i.tensor_parallel_size} GPUs")
                   + f" = {fmt_bytes(m.kv_cache_bytes)}")
    out.append(_weights_line(p))
    return out + _workspace_lines(p)


def _weights_line(p: Plan) -> str:
    st, i, m = p.accounts, p.inputs, p.memory
    w = st.weights()
    per_gpu = f" / {i.tensor_parallel_size}" if i.tensor_parallel_size > 1 else ""
    if not w.quantization:
        return (f"weights = params * bytes{' / GPUs' if i.tensor_parallel_size > 1 else ''} = {fmt_int(p.parameters.params)} * "
                f"{dtype_bytes(w.plain_dtype):g} B{per_gpu} = {fmt_bytes(m.weights_bytes)} ({w.plain_dtype})")
    n = i.tensor_parallel_size
    return (f"weights = 16-bit part (embedding, LM head, norms, routers) {fmt_int(w.plain_params * n)} * "
            f"{dtype_bytes(w.plain_dtype):g} B + quantized {fmt_int(w.quantized_params * n)} * "
            f"{w.bytes_per_quantized:.4g} B ({w.quantization.describe()}: bits/8 + scales and zeros per group)"
            f"{per_gpu} = {fmt_bytes(m.weights_bytes)}")


def _workspace_lines(p: Plan) -> list[str]:
    st, m, i = p.accounts, p.memory, p.inputs
    s = st.spec
    B, H, T, dk = i.batch, s.num_heads, i.tokens, s.head_dim
    ab = dtype_bytes(i.activation_dtype)
    score, tiled = m.score_matrix_bytes_per_layer, m.tiled_attention_bytes_per_layer
    mlp_peak, attn_peak, logits = st.workspace_parts(T)
    width, assumed = mlp_width(s)
    return [
        f"score matrix [B,H,T,T] of one layer, if materialized = B*H*T^2*bytes = {B}*{H}*{fmt_int(T)}^2*{ab:g} B = "
        f"{fmt_bytes(score)}",
        f"tiled attention state of one layer = B*H*T*(d_k+2)*4 B (fp32 accumulator, running max and sum) = "
        f"{B}*{H}*{fmt_int(T)}*{dk + 2}*4 = {fmt_bytes(tiled)}: O(T*d_k), {score / tiled:,.0f}x smaller",
        f"workspace = max(MLP peak B*T*(D+{s.mlp_matrices}I)*bytes, attention peak B*T*(D+H*d_k)*bytes"
        f"{' + tiled state' if i.attention_mode == 'tiled' else ''}) + last-position logits B*V*4 = "
        f"max({fmt_bytes(mlp_peak)}, {fmt_bytes(attn_peak)}) + {fmt_bytes(logits)} = {fmt_bytes(m.workspace_bytes)}"
        + (f" (I = {st.mlp_peak_width()}: k routed + shared experts)" if s.moe else "")
        + (f" (I = {width} assumed)" if assumed and not s.moe else ""),
        f"total = weights + KV + workspace{' + score matrix' if i.attention_mode == 'materialized' else ''} = "
        f"{fmt_bytes(m.weights_bytes)} + {fmt_bytes(m.kv_cache_bytes)} + {fmt_bytes(m.workspace_bytes)}"
        f"{' + ' + fmt_bytes(score / i.tensor_parallel_size) if i.attention_mode == 'materialized' else ''} = "
        f"{fmt_bytes(m.total_memory_bytes)} vs usable {fmt_bytes(i.usable_memory_bytes)} (= "
        f"{fmt_bytes(i.gpu_memory_bytes)} * {st.memory_utilization:g}) -> {'fits' if p.fits else 'does not fit'}"]


def _compute(p: Plan) -> list[str]:
    return _attention_lines(p) + _decode_lines(p)


def _attention_lines(p: Plan) -> list[str]:
    st, c, i = p.accounts, p.compute, p.inputs
    s, dev = st.spec, st.device
    T, B, L, n = i.tokens, i.batch, s.num_layers, i.tensor_parallel_size
    plain = all(g["window"] is None for g in p.memory.kv_layer_groups) and not s.mla
    out = [f"attention FLOPs (the text's count, no causal halving) = 4*T^2*(H*d_k)*L*B = 4*{fmt_int(T)}^2*"
           f"{s.attention_width}*{L}*{B} = {c.attention_flops:.3g}" if plain else
           f"attention FLOPs = sum over layers of B*H*(FLOPs per pair)*pairs = {c.attention_flops:.3g} (windowed "
           f"layers meet at most their window of keys per query; MLA in the naive, decompressed form)",
           f"attention FLOPs with the causal mask (kept pairs T(T+1)/2 per head and layer) = "
           f"{c.attention_flops_causal:.3g} = {c.attention_flops_causal / c.attention_flops:.4f} of the full count"]
    eff = st.effective_rates()[0] * n
    if c.prefill_terms is not None:
        ts = st.setup
        out.append(f"effective compute (the GPU-time model's attention rate) = {ts.gpu.peak_flops('fp16') / 1e12:g} TFLOP/s "
                   f"* measured matmul ceiling {ts.gpu.mamf_share:g} * fitted efficiency "
                   f"{ts.constants.flops_efficiency:.3g}{f' * {n} GPUs' if n > 1 else ''} = {eff / 1e12:.4g} TFLOP/s "
                   f"(explicit figures are taken as achievable: ceiling and efficiency 1)")
    else:
        out.append(f"effective compute = {dev.peak_flops(i.activation_dtype) / 1e12:g} TFLOP/s * efficiency "
                   f"{dev.flops_efficiency:g}{f' * {n} GPUs' if n > 1 else ''} = {eff / 1e12:g} TFLOP/s "
                   f"({i.activation_dtype})")
    used = c.attention_flops_causal if i.causal_skip else c.attention_flops
    att = c.attention_prefill_seconds
    alt = st.attention_seconds(c.attention_flops, T) if i.causal_skip else c.attention_prefill_seconds_causal
    out.append(f"attention prefill = FLOPs / effective FLOP/s = {used:.3g} / {eff:.3g} = {fmt_seconds(att)} per pass "
               f"({'causal count: --causal-skip' if i.causal_skip else 'the text: full count'}; the other count "
               f"gives {fmt_seconds(alt)})")
    if abs(att - used / eff) > 1e-9 * max(att, 1e-12):
        out.append(f"  + the measured profile's per-score, per-row and per-call terms: {fmt_seconds(att)} in all "
                   f"(roofline alone {fmt_seconds(used / eff)})")
    non_emb, how = non_embedding_params(s)
    out += [f"attention prefill, {fmt_passes(i.passes)} = {i.passes} * {fmt_seconds(att)} = "
            f"{fmt_seconds(c.attention_prefill_seconds_all_passes)}",
            f"linear layers = 2 * N_non_embedding * T * B = 2 * {non_emb:.4g} * {fmt_int(T)} * {B} = "
            f"{c.linear_flops:.3g} FLOPs -> {fmt_seconds(c.linear_prefill_seconds)} (N: {how})",
            ]
    t = c.prefill_terms
    if t is None:
        out.append(f"prefill per pass = attention + linear = {fmt_seconds(att)} + "
                   f"{fmt_seconds(c.linear_prefill_seconds)} = {fmt_seconds(c.prefill_seconds)}; "
                   f"{fmt_passes(i.passes)} = {fmt_seconds(c.prefill_seconds_all_passes)}")
        return out
    out.append(f"prefill per pass (GPU-time model, docs/gpu-time.md; the serving section's TTFT uses the same "
               f"phase) = max(compute {fmt_seconds(t['compute_s'])} = linear "
               f"{fmt_seconds(c.linear_prefill_seconds)} + causal attention "
               f"{fmt_seconds(c.attention_prefill_seconds_causal)}, memory {fmt_seconds(t['memory_s'])}) + "
               f"dequantization {fmt_seconds(t['dequant_s'])} + fixed costs {fmt_seconds(t['overhead_s'])} + "
               f"all-reduces {fmt_seconds(t['comm_s'])} = {fmt_seconds(c.prefill_seconds)}; {fmt_passes(i.passes)} "
               f"= {fmt_seconds(c.prefill_seconds_all_passes)}")
    return out


def _decode_lines(p: Plan) -> list[str]:
    st, c, i, m = p.accounts, p.compute, p.inputs, p.memory
    dev, n = st.device, i.tensor_parallel_size
    bw = st.effective_rates()[1] * n
    kv_roof = m.kv_cache_bytes * n / bw
    ts = st.setup
    out = [f"effective bandwidth = {dev.bandwidth_bytes_per_s / 1e12:g} TB/s * "
           f"{ts.constants.bandwidth_efficiency if ts else dev.bandwidth_efficiency:.3g}"
           f"{' (the GPU-time model: fitted; explicit figures: 1)' if ts else ''}"
           f"{f' * {n} GPUs' if n > 1 else ''} = {bw / 1e12:.4g} TB/s",
           f"decode KV read per token = KV bytes / bandwidth = {fmt_bytes(m.kv_cache_bytes * n)} / {bw / 1e12:g} TB/s = "
           f"{fmt_seconds(kv_roof)} (KV-only upper bound {c.tokens_per_second_kv_only:,.0f} tokens/s)"]
    if abs(c.decode_kv_read_seconds - kv_roof) > 1e-9 * max(c.decode_kv_read_seconds, 1e-12):
        out.append(f"  + the measured profile's per-call, compute and cache terms of the decode kernel: "
                   f"{fmt_seconds(c.decode_kv_read_seconds)} in all (bandwidth alone {fmt_seconds(kv_roof)})")
    if st.spec.moe:
        out.append(f"decode weight read = all weights less the idle experts: {c.decode_experts_read:.3g} of "
                   f"{st.spec.moe.num_experts} experts per MoE layer at batch {i.batch} -> "
                   f"{fmt_bytes(c.decode_weight_read_bytes)} of {fmt_bytes(m.weights_bytes)}")
    rate = f"{c.tokens_per_second:,.1f} tokens/s{' (whole batch)' if i.batch > 1 else ''}"
    t = c.decode_terms
    if t is None:
        out.append(f"decode per token = (KV + weights) / bandwidth = {fmt_seconds(c.decode_kv_read_seconds)} + "
                   f"{fmt_seconds(c.decode_weight_read_seconds)} = {fmt_seconds(c.decode_seconds_per_token)} -> {rate}")
        return out
    split = t.get("attention_s", 0.0) > 0      # the separate-kernel variant (cost/time/decode_attention.py)
    att = f" + attention kernel {fmt_seconds(t['attention_s'])}" if split else ""
    out.append(f"decode per token (GPU-time model, docs/gpu-time.md) = max(compute {fmt_seconds(t['compute_s'])}, "
               f"memory {fmt_seconds(t['memory_s'])}){att} + dequantization {fmt_seconds(t['dequant_s'])} + fixed costs "
               f"{fmt_seconds(t['overhead_s'])} ({t['engine']}) + all-reduces {fmt_seconds(t['comm_s'])} "
               f"({n} GPUs over {t['link']}) = {fmt_seconds(c.decode_seconds_per_token)} -> {rate}")
    what = ("weight bytes per GPU / (bandwidth x fitted efficiency); attention kernel = max(its FLOPs, KV bytes / "
            "bandwidth) after the GEMMs" if split else "weight and KV bytes per GPU / (bandwidth x fitted efficiency)")
    out.append(f"  memory = {what}; constants: {t['constants']}")
    return out


def _decision(p: Plan) -> list[str]:
    o, c = p.outcome, p.outcome.chunked
    ratio = p.compute.attention_flops / c["attention_flops"] if c["attention_flops"] else float("inf")
    return [f"decision: {o.decision}{f' ({o.chunks} chunks)' if o.decision == 'chunked' else ''}: {o.reason}",
            f"chunked alternative: {c['chunks']} chunks of {fmt_int(c['chunk_tokens'])} tokens: attention FLOPs = "
            f"sum 4*t^2*(H*d_k)*L*B = {c['attention_flops']:.3g} (1/{ratio:.3g} of one pass) -> "
            f"{fmt_seconds(c['attention_prefill_seconds'])} per pass, "
            f"{fmt_seconds(c['attention_prefill_seconds_all_passes'])} for {p.inputs.passes}; KV "
            f"{fmt_bytes(c['kv_cache_bytes'])}, total {fmt_bytes(c['total_memory_bytes'])}"]
