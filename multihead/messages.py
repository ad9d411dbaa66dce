"""One catalogue for server-made text: the planner's decision, its warnings, fallbacks, the serving
verdict and the CLI's error lines, each in English and Chinese. Torch-free (the CLI imports it).

    say("decision.single_pass", "en", total="58.90 GB", ...)   # the CLI's English
    translate(english_line, "zh")                              # the page's Chinese, at the edge
    plan_texts(plan_json, "zh")                                # every server-made string of a plan

The planner builds its English through ``say`` (planner/decision.py), so the English and the
Chinese come from the same entry; ``translate`` reads an English line back into (id, parameters)
by matching it against the entries' English templates (a parameter named ``_x`` is itself a
message, translated recursively) and renders the other language. A line no entry matches comes
back as None: the caller decides (the page shows a Chinese notice, never the English in zh mode).
Numbers and units inside parameters are kept as written (58.90 GB, 128,000).
"""
from __future__ import annotations

import functools
import re

LANGS = ("en", "zh")

# id -> {"en": template, "zh": template}; {name} is a parameter, {_name} a nested message.
CATALOGUE: dict[str, dict[str, str]] = {
    # -- the decision (planner/decision.py builds its reason from these) --------------------------
    "decision.single_pass": {
        "en": "one full pass needs {total} (weights {weights} + KV {kv} + workspace {workspace}) of {usable} usable: "
              "it fits, so read all {tokens} tokens at once and keep every cross-reference",
        "zh": "一次全量前向需要 {total}（权重 {weights} + KV {kv} + 工作区 {workspace}），可用 {usable}：放得下，"
              "一次读完全部 {tokens} 个 token，保留所有跨段引用"},
    "decision.does_not_fit": {
        "en": "the weights alone ({weights}) plus a one-token workspace exceed the {usable} usable: no split helps; "
              "see the fallbacks (more GPUs, quantized weights)",
        "zh": "仅权重（{weights}）加一个 token 的工作区就超过可用的 {usable}：怎么切分都没用；见兜底方案（更多 GPU、量化权重）"},
    "decision.why_memory": {"en": "one full pass needs {total} > {usable} usable",
                            "zh": "一次全量前向需要 {total}，超过可用的 {usable}"},
    "decision.why_learned": {"en": "{tokens} tokens exceed the {learned} learned positions",
                             "zh": "{tokens} 个 token 超过了 {learned} 个可学习位置"},
    "decision.chunked": {
        "en": "{_why}; the fewest chunks that fit: {n} of about {size} tokens, each {each}{_text_split}",
        "zh": "{_why}；放得下的最少分段：{n} 段，每段约 {size} 个 token，各需 {each}{_text_split}"},
    "decision.text_split": {
        "en": " (the reference text's {n} chunks of {size} need {total}: {_fits})",
        "zh": "（原文的 {n} 段、每段 {size} 个 token 需要 {total}：{_fits}）"},
    "decision.they_fit": {"en": "they fit too", "zh": "同样放得下"},
    "decision.they_do_not_fit": {"en": "they do not fit", "zh": "放不下"},
    "decision.requested_one": {
        "en": "1 chunk requested: the largest ({longest} tokens) needs {total} of {usable} usable -> {_fits}{_learned}",
        "zh": "指定 1 段：最长一段（{longest} 个 token）需要 {total}，可用 {usable} → {_fits}{_learned}"},
    "decision.requested": {
        "en": "{n} chunks requested: the largest ({longest} tokens) needs {total} of {usable} usable -> {_fits}{_learned}",
        "zh": "指定 {n} 段：最长一段（{longest} 个 token）需要 {total}，可用 {usable} → {_fits}{_learned}"},
    "decision.requested_learned": {"en": "; but chunks longer than the {learned} learned positions cannot run",
                                   "zh": "；但超过 {learned} 个可学习位置的分段无法运行"},
    # the decision read from the engine's account (planner/decision.py, _engine_decision)
    "decision.engine_single": {
        "en": "one request of {tokens} tokens fits {_engine}: {x}x, so read all {tokens2} tokens at once and keep "
              "every cross-reference ({_own})",
        "zh": "一个 {tokens} token 的请求放得下{_engine}：{x} 倍，所以一次读完全部 {tokens2} 个 token，保留所有跨段引用"
              "（{_own}）"},
    "decision.engine_chunked": {
        "en": "{_why}; the fewest chunks that fit: {n} of about {size} tokens{_differ}; or see the fallbacks{_first}",
        "zh": "{_why}；放得下的最少分段：{n} 段，每段约 {size} 个 token{_differ}；或见兜底方案{_first}"},
    "decision.engine_differ": {
        "en": " (the memory table, the reference text's account, counts {total} for such a chunk, over its {usable} "
              "usable: the two accounts disagree here, and this decision reads the engine's)",
        "zh": "（内存表即原文的账算出这样一段需要 {total}，超过其可用的 {usable}：两本账在这里不一致，本决定按推理引擎的账）"},
    "decision.engine_why": {
        "en": "one request of {tokens} tokens does not fit {_engine}; the longest that does is {longest} tokens",
        "zh": "一个 {tokens} token 的请求放不下{_engine}；放得下的最长请求是 {longest} 个 token"},
    "decision.engine_none": {
        "en": "{_engine} has no room for one request: {engine_message} No split helps; see the fallbacks{_first}",
        "zh": "{_engine}连一个请求都放不下（引擎的原话见服务能力一栏）；怎么切分都没用；见兜底方案{_first}"},
    "decision.engine_requested": {
        "en": "{n} chunks requested: the largest ({size} tokens) {_fits} {_engine}, whose longest request is {longest} tokens",
        "zh": "指定 {n} 段：最长一段（{size} 个 token）{_fits}{_engine}，它能放下的最长请求是 {longest} 个 token"},
    "decision.engine_requested_one": {
        "en": "1 chunk requested: the largest ({size} tokens) {_fits} {_engine}, whose longest request is {longest} tokens",
        "zh": "指定 1 段：最长一段（{size} 个 token）{_fits}{_engine}，它能放下的最长请求是 {longest} 个 token"},
    "decision.engine": {
        "en": "the engine's account ({engine}, the serving section: {kv} GiB KV per GPU after weights, activation peak "
              "and non-torch memory; prefill in steps of {step} tokens, full attention)",
        "zh": "推理引擎的账（{engine}，见服务能力一栏：扣除权重、激活峰值和非 torch 显存后每张 GPU 有 {kv} GiB KV；"
              "预填充每步 {step} 个 token，全量注意力）"},
    "decision.engine_own": {
        "en": "one unchunked forward would need {total} of {usable} usable: the memory table, the reference text's account",
        "zh": "不分段的一次前向需要 {total}，可用 {usable}：即显存表，也就是课文的算法"},
    "decision.engine_first": {"en": " (cheapest: {flags})", "zh": "（最省的改法：{flags}）"},
    "word.fits": {"en": "fits", "zh": "放得下"},
    "word.does_not_fit": {"en": "does not fit", "zh": "放不下"},
    "decision.positions_caveat": {
        "en": "{_base}; but {_which} ({longest} tokens) is longer than the {covered} positions the model covers: "
              "interpolate positions by >= {factor}x (config.json {snippet}) or use chunks of <= {covered2} tokens "
              "(see the fallbacks)",
        "zh": "{_base}；但{_which}（{longest} 个 token）超过模型覆盖的 {covered} 个位置：把位置插值放大 ≥ {factor} 倍"
              "（config.json 中写 {snippet}），或改用 ≤ {covered2} 个 token 的分段（见兜底方案）"},
    "word.each_chunk": {"en": "each chunk", "zh": "每一段"},
    "word.the_pass": {"en": "the pass", "zh": "这次前向"},
    # -- warnings (planner/notes.py; matched, not built) ---------------------------------------------
    "warn.positions_unknown": {
        "en": "positions: the training length (max_position_embeddings) is unknown; give --max-position to check "
              "T = {tokens} against it",
        "zh": "位置：训练长度（max_position_embeddings）未知；用 --max-position 给出它，才能检查 T = {tokens} 是否超出"},
    "warn.workspace_llama": {
        "en": "workspace: intermediate_size unknown; assumed I = {width} (LLaMA's rule: 2/3*4D rounded up to a "
              "multiple of 256)",
        "zh": "工作区：intermediate_size 未知；按 LLaMA 的规则（2/3×4D，向上取到 256 的倍数）假设 I = {width}"},
    "warn.workspace_4d": {"en": "workspace: intermediate_size unknown; assumed I = {width} (4D)",
                          "zh": "工作区：intermediate_size 未知；假设 I = {width}（4D）"},
    "warn.headroom": {"en": "memory: the single pass uses {share} of usable memory; little headroom",
                      "zh": "显存：一次全量前向占可用显存的 {share}，余量很小"},
    "warn.materialized": {
        "en": "attention: a materialized score matrix needs {bytes} per layer, more than the GPU; use tiled attention",
        "zh": "注意力：物化的打分矩阵每层需要 {bytes}，超过整张 GPU；请用分块（tiled）注意力"},
    "warn.chunking": {
        "en": "chunking: a token in one chunk cannot attend to any token in another, so cross-chunk references "
              "(a clause citing a definition {size}+ tokens earlier, a pronoun whose antecedent is in a previous "
              "chunk) are lost",
        "zh": "分段：一段里的 token 看不到其它段的任何 token，所以跨段引用会丢失（例如引用 {size}+ 个 token 之前定义的"
              "条款、指代上一段里的先行词）"},
    "warn.positions_rope": {
        "en": "positions: T = {tokens} exceeds {how} (RoPE angles leave the trained range: attention drifts, "
              "summaries repeat; interpolate positions by {factor}x over {base} with {snippet}, or chunk to <= {covered})",
        "zh": "位置：T = {tokens} 超过 {how}（RoPE 角度离开训练区间：注意力分布漂移、摘要开始重复；用 {snippet} "
              "在 {base} 的基础上把位置插值 {factor} 倍，或分段到 ≤ {covered}）"},
    "warn.positions_learned": {
        "en": "positions: T = {tokens} exceeds {how} (learned positions: impossible beyond the table)",
        "zh": "位置：T = {tokens} 超过 {how}（可学习的位置表：超出表长就无法运行）"},
    "warn.window_last": {
        "en": "{kind}: {n} of {total} layers attend to the last {window} tokens only; their KV cache is capped there",
        "zh": "{kind}：{total} 层中有 {n} 层只关注最近的 {window} 个 token；这些层的 KV Cache 到此封顶"},
    "warn.window_chunks": {
        "en": "{kind}: {n} of {total} layers attend within chunks of {window} tokens only; their KV cache is capped there",
        "zh": "{kind}：{total} 层中有 {n} 层只在 {window} 个 token 的分块内做注意力；这些层的 KV Cache 到此封顶"},
    "warn.moe": {
        "en": "MoE: memory holds all {experts} experts of {layers} layers ({layout}); a token uses {k}; a decode step at "
              "batch {batch} reads {read} experts per layer (E*(1-(1-k/E)^B), uniform routing)",
        "zh": "MoE：显存里存着 {layers} 层（{layout}）的全部 {experts} 个专家；每个 token 用 {k} 个；batch {batch} 时"
              "一步解码每层读 {read} 个专家（E*(1-(1-k/E)^B)，均匀路由）"},
    "warn.mla": {
        "en": "MLA: the KV cache holds the {latent}-number latent per token and layer; prefill attention FLOPs use the "
              "naive form (K, V decompressed: 2*(qk+v) per pair and head), decode the absorbed one (2*(latent + "
              "kv_lora_rank))",
        "zh": "MLA：KV Cache 每个 token、每层存 {latent} 个数的潜向量；预填充的注意力 FLOPs 按朴素形式计（K、V 解压："
              "每对、每头 2*(qk+v)），解码按吸收后的形式计（2*(latent + kv_lora_rank)）"},
    "warn.model_note": {"en": "{model}: {_cfg}", "zh": "{model}：{_cfg}"},
    "cfg.n_inner": {"en": "intermediate_size: n_inner is absent or null, so 4 * n_embd (GPT-2 convention)",
                    "zh": "intermediate_size：n_inner 缺失或为 null，因此取 4 * n_embd（GPT-2 的约定）"},
    "cfg.kv_heads": {"en": "num_key_value_heads: absent, so H_kv = H (MHA), as transformers assumes",
                     "zh": "num_key_value_heads：缺失，因此 H_kv = H（MHA），与 transformers 的假设相同"},
    "cfg.model_type": {"en": "model_type: absent, so a dense Llama-style decoder is assumed (gated MLP, RMSNorm)",
                       "zh": "model_type：缺失，因此假设是稠密的 Llama 式解码器（门控 MLP、RMSNorm）"},
    "cfg.defaults": {"en": "{pairs}: not in the file; transformers' {family} defaults",
                     "zh": "{pairs}：文件里没有；取 transformers 中 {family} 的默认值"},
    "warn.fp32_checkpoint": {
        "en": "torch_dtype: the config says float32; vLLM/SGLang --dtype auto serve float32 checkpoints in bf16 (fp16 "
              "on GPUs without bf16), so weights and KV are 2 B each",
        "zh": "torch_dtype：config 写的是 float32；vLLM/SGLang 的 --dtype auto 会以 bf16 提供 float32 检查点（不支持 bf16 "
              "的 GPU 上用 fp16），因此权重和 KV 每个数都是 2 B"},
    "warn.quantization": {"en": "quantization: {desc} from config.json quantization_config",
                          "zh": "量化：{desc}（来自 config.json 的 quantization_config）"},
    # -- the serving verdict (cost/serving/answer.py; matched) ---------------------------------------
    "serving.fits": {
        "en": "fits on {_where}: {n} requests of {len} tokens at once ({kv_tokens} KV-cache tokens, {kv} KV per "
              "GPU); prefill runs as chunked prefill of {step} tokens per step, full attention over the whole "
              "request (nothing is cut)",
        "zh": "放得下，{_where}：同时 {n} 个 {len} token 的请求（KV Cache 共 {kv_tokens} 个 token，每张 GPU "
              "{kv}）；预填充按每步 {step} 个 token 的分块预填充进行，整个请求仍是全量注意力（不切文档）"},
    "serving.fits_sglang": {
        "en": "fits on {_where}: {n} requests of {len} tokens at once ({kv_tokens} SGLang max_total_num_tokens, {kv} KV "
              "per GPU); prefill runs as chunked prefill of {step} tokens per step, full attention over the whole "
              "request (nothing is cut)",
        "zh": "放得下，{_where}：同时 {n} 个 {len} token 的请求（SGLang max_total_num_tokens 为 {kv_tokens}，每张 GPU "
              "{kv}）；预填充按每步 {step} 个 token 的分块预填充进行，整个请求仍是全量注意力（不切文档）"},
    "serving.does_not_fit": {"en": "does not fit on {_where}: {engine_message}",
                             "zh": "放不下，{_where}（推理引擎的原话见下）"},
    "serving.where_dp": {"en": "{_where1} per replica, {dp} replicas ({total} GPUs in all)",
                         "zh": "每个副本 {_where1}，共 {dp} 个副本（总计 {total} 张 GPU）"},
    "serving.where_pp": {"en": "{gpus}x {gpu} (TP {tp} x PP {pp})", "zh": "{gpus} 张 {gpu}（TP {tp} × PP {pp}）"},
    "serving.where": {"en": "{gpus}x {gpu}", "zh": "{gpus} 张 {gpu}"},
    "serving.prefill_chunked": {
        "en": "chunked prefill: full attention, max_num_batched_tokens tokens per step (no document cut)",
        "zh": "分块预填充：全量注意力，每步 max_num_batched_tokens 个 token（不切文档）"},
    # -- a time interval wider than WIDE_SPREAD (cost/time/timing_intervals.py builds it from these) -------
    "interval.caution": {
        "en": "the {phase} interval spans {spread}x: the model's out-of-document errors on the {documents} documents "
              "of family {family} vary widely (and the interval is widened for held-out documents), so its {_what} "
              "is a rough guide",
        "zh": "{_what}的 80% 区间上下相差 {spread} 倍：模型在 {family} 这一族的 {documents} 份文档上的文档外误差相差很大"
              "（对没见过的文档，区间还要再放宽），所以这里的{_what}只能粗略参考"},
    "interval.caution_measured": {
        "en": "the {phase} interval spans {spread}x even scaled to the measured point: the model's errors on the other "
              "rows of the {documents} documents of family {family}, once scaled to one row of each, vary widely, so "
              "its {_what} is a rough guide",
        "zh": "即使按实测点缩放，{_what}的 80% 区间上下仍相差 {spread} 倍：模型在 {family} 这一族 {documents} 份文档上、"
              "按每份文档的一个实测点缩放后，对其余数据的误差仍相差很大，所以这里的{_what}只能粗略参考"},
    "interval.what_prefill": {"en": "TTFT", "zh": "首 token 延迟（TTFT）"},
    "interval.what_decode": {"en": "TPOT", "zh": "每个输出 token 的时间（TPOT）"},
    "interval.what_serving": {"en": "throughput and request latency", "zh": "吞吐与请求延迟"},
    # -- the requested load's note (cost/time/operating_point.py builds it from these) --------------------------
    "load.queued": {
        "en": "{queued} of {concurrency} requests wait in the engine's queue: a replica runs at most {cap} at once "
              "(max_num_seqs {max_num_seqs}, KV pool {pool} requests); their wait is in TTFT. Growing contexts beyond "
              "the pool are preempted (vLLM), not timed here",
        "zh": "{concurrency} 个请求中有 {queued} 个在引擎队列里等待：每个副本同时最多跑 {cap} 个（max_num_seqs {max_num_seqs}，"
              "KV 池容纳 {pool} 个请求）；等待时间计入 TTFT。超出 KV 池的增长上下文会被抢占（vLLM），这里不计时"},
    "load.no_request": {"en": "the KV pool holds no request of input_len + output_len tokens",
                        "zh": "KV 池连一个 input_len + output_len 个 token 的请求都放不下"},
    "load.unbounded": {
        "en": "the request rate is at or above what the replicas can serve: the queue grows without bound",
        "zh": "请求速率达到或超过了副本的服务能力：队列会无限增长"},
    # -- the CLI's error lines (cli/_args.py, argparse; matched) ---------------------------------------
    "error.int_range": {"en": "argument {flag}: expected an integer in [{lo}, {hi}], got {got} (see multihead plan --help)",
                        "zh": "参数 {flag}：需要 [{lo}, {hi}] 之间的整数，收到的是 {got}（见 multihead plan --help）"},
    "error.int_min": {"en": "argument {flag}: expected an integer >= {lo}, got {got} (see multihead plan --help)",
                      "zh": "参数 {flag}：需要 ≥ {lo} 的整数，收到的是 {got}（见 multihead plan --help）"},
    "error.float_range": {"en": "argument {flag}: expected a finite number in {span}, got {got} (see multihead plan --help)",
                          "zh": "参数 {flag}：需要 {span} 范围内的有限数，收到的是 {got}（见 multihead plan --help）"},
    "error.choice": {"en": "argument {flag}: invalid choice: {got} (choose from {choices}) (see multihead plan --help)",
                     "zh": "参数 {flag}：无效的选项 {got}（可选：{choices}）（见 multihead plan --help）"},
    "error.tokens_missing": {"en": "tokens: expected --tokens T (or --max-model-len; a positive integer)",
                             "zh": "tokens：需要 --tokens T（或 --max-model-len；一个正整数）"},
    # -- the planner's request (planner/request.py: the page's errors, one line naming the field) ---------
    "error.field_int_range": {"en": "{field}: expected an integer in [{lo}, {hi}], got {got}",
                              "zh": "{field}：需要 [{lo}, {hi}] 之间的整数，收到的是 {got}"},
    "error.field_float_range": {"en": "{field}: expected a finite number in {span}, got {got}",
                                "zh": "{field}：需要 {span} 范围内的有限数，收到的是 {got}"},
    "error.field_choice": {"en": "{field}: expected one of {choices}, got {got}",
                           "zh": "{field}：需要以下之一：{choices}，收到的是 {got}"},
    "error.field_unknown": {"en": "{field}: unknown option (expected some of {known})",
                            "zh": "{field}：未知的选项（可用：{known}）"},
    "error.tokens_default": {"en": "tokens: give tokens (--tokens T) or max_model_len; the model states no training "
                                   "length (max_position_embeddings) to default to",
                             "zh": "tokens：请给出 tokens（--tokens T）或 max_model_len；该模型没有写明训练长度"
                                   "（max_position_embeddings），无法取默认值"},
    "error.unknown_gpu": {"en": "gpu: unknown GPU {got} (known: {known})",
                          "zh": "gpu：未知的 GPU {got}（已知：{known}）"},
    "error.config_json": {"en": "model: {file} is not valid JSON ({detail})",
                          "zh": "model：{file} 不是合法的 JSON（{detail}）"},
    "error.internal": {"en": "internal error ({kind}); see the server log", "zh": "服务器内部错误（{kind}）；详见服务器日志"},
    # the measured run (cost/time/measured_point.py, serving_time.scaled_to_measured; matched)
    "measured.pairs": {"en": "measured: expected KEY=VALUE pairs like concurrency=16,ttft=250ms,tpot=30ms, got {got}",
                       "zh": "measured：需要 KEY=VALUE 形式，例如 concurrency=16,ttft=250ms,tpot=30ms，收到的是 {got}"},
    "measured.pairs_empty": {"en": "measured: expected KEY=VALUE pairs like concurrency=16,ttft=250ms,tpot=30ms",
                             "zh": "measured：需要 KEY=VALUE 形式，例如 concurrency=16,ttft=250ms,tpot=30ms"},
    "measured.long": {"en": "measured: at most 300 characters, got {n}", "zh": "measured：最多 300 个字符，收到 {n} 个"},
    "measured.unknown_key": {
        "en": "measured: unknown key {key} (known: concurrency, request_rate, input_len, output_len, ttft, tpot, itl, "
              "throughput)",
        "zh": "measured：未知的键 {key}（可用：concurrency、request_rate、input_len、output_len、ttft、tpot、itl、"
              "throughput）"},
    "measured.unit": {"en": "measured: unknown unit {unit} for {key} (use s, ms, us or min)",
                      "zh": "measured：{key} 的单位 {unit} 不认识（请用 s、ms、us 或 min）"},
    "measured.time_range": {"en": "measured: {key} must be between 1 us and 24 h, got {got}",
                            "zh": "measured：{key} 必须在 1 微秒到 24 小时之间，收到的是 {got}"},
    "measured.plain": {"en": "measured: {key} takes a plain number, got {got}",
                       "zh": "measured：{key} 只接受不带单位的数，收到的是 {got}"},
    "measured.twice": {"en": "measured: {key} given twice", "zh": "measured：{key} 给了两次"},
    "measured.whole": {"en": "measured: {key} must be a whole number from 1 to {hi}, got {got}",
                       "zh": "measured：{key} 必须是 1 到 {hi} 之间的整数，收到的是 {got}"},
    "measured.rate_range": {"en": "measured: request_rate must be between 1e-6 and 1e6 per second, got {got}",
                            "zh": "measured：request_rate 必须在每秒 1e-6 到 1e6 之间，收到的是 {got}"},
    "measured.throughput_range": {
        "en": "measured: throughput must be between 1e-6 and 1e9 output tokens/s, got {got}",
        "zh": "measured：throughput 必须在每秒 1e-6 到 1e9 个输出 token 之间，收到的是 {got}"},
    "measured.both": {"en": "measured: give concurrency or request_rate, not both",
                      "zh": "measured：concurrency 和 request_rate 只能给一个"},
    "measured.no_time": {"en": "measured: give at least one of ttft, tpot, throughput",
                         "zh": "measured：ttft、tpot、throughput 至少给一个"},
    "measured.no_load": {
        "en": "measured: give the run's load, concurrency=N (requests in flight) or request_rate=R (per second)",
        "zh": "measured：请给出这次运行的负载：concurrency=N（同时在途的请求数）或 request_rate=R（每秒请求数）"},
    "measured.rate_throughput": {
        "en": "measured: at a request_rate the output throughput is the rate's (rate x output_len), whatever the "
              "decode speed; give tpot",
        "zh": "measured：按 request_rate 发请求时，输出吞吐就是速率乘以 output_len，与解码快慢无关；请给出 tpot"},
    "measured.search": {
        "en": "measured: a point measured on one deployment scales that deployment's times; the search ranks other "
              "configurations it was not measured on (plan one setting)",
        "zh": "measured：一次实测只能缩放那一个部署的时间；搜索排列的是没有实测过的其他配置（请只规划一个配置）"},
    "measured.overloaded": {
        "en": "measured: the model has this deployment overloaded at the measured load ({_note}); measure at a load it "
              "serves",
        "zh": "measured：按模型，这个部署在实测负载下已经过载（{_note}）；请在它服务得过来的负载下测"},
    "measured.factor": {
        "en": "measured: the point needs a {name} factor of about {f} on the model, outside {lo}-{hi}: was it measured "
              "on this model, GPU, TP and engine, in these units?",
        "zh": "measured：要让模型对上这次实测，{name}需要约为 {f}，超出了 {lo}-{hi}：它是在同一个模型、GPU、TP 和引擎上、"
              "用这些单位测的吗？"},
    "measured.not_reproduced": {
        "en": "measured: the model scaled by two factors does not reproduce the point within {pct} (TTFT {a}x, TPOT "
              "{b}x off): its TTFT and TPOT disagree with each other for this load (a queue the model puts in TTFT, "
              "say); give one of them",
        "zh": "measured：两个系数缩放后的模型在 {pct} 以内对不上这次实测（TTFT 差 {a} 倍，TPOT 差 {b} 倍）：在这个负载下它的 "
              "TTFT 与 TPOT 互相矛盾（比如模型把排队算进了 TTFT）；请只给其中一个"},
    "measured.queued": {
        "en": "measured: at concurrency {c} this deployment runs fewer at once and {q} requests wait in the queue, so "
              "the run's TTFT is mostly waiting; give a run at a load the engine runs all at once",
        "zh": "measured：并发 {c} 时这个部署同时跑不了那么多，有 {q} 个请求在队列里等，所以这次运行的 TTFT 大多是等待；"
              "请给一次引擎能同时跑完全部请求的负载下的实测"},
    # -- the lesson's own input errors (web/lesson_api.py, web/lesson.py) -------------------------------
    "error.empty_entry": {"en": "{field}: this entry is empty; enter a number",
                          "zh": "{field}：这一项是空的，请填一个数"},
    "error.not_a_number": {"en": "{field}: expected a number, got {got}", "zh": "{field}：需要一个数，收到的是 {got}"},
    "error.between": {"en": "{field}: must be between {lo} and {hi}, got {got}",
                      "zh": "{field}：必须在 {lo} 到 {hi} 之间，收到的是 {got}"},
    "error.must_divide": {"en": "{field}: H must divide D = {d} (d_k = D / H), got {got}",
                          "zh": "{field}：H 必须整除 D = {d}（d_k = D / H），收到的是 {got}"},
    # tensor parallelism's placement rule (cost/counts/memory.py check_tensor_parallel; matched): the
    # page's words (the flags in parentheses are the planner's; the page shows the line beside "GPUs")
    "error.tp_divide": {"en": "{field}: expected a divisor of heads={h} for tensor parallelism ({flags}), got {got}",
                        "zh": "{field}：张量并行的 GPU 数必须整除 heads={h}（{flags}），收到的是 {got}"},
    "error.tp_divide_bare": {"en": "{field}: expected a divisor of heads={h} for tensor parallelism, got {got}",
                             "zh": "{field}：张量并行的 GPU 数必须整除 heads={h}，收到的是 {got}"},
    "error.tp_kv_place": {"en": "{field}: kv_heads={kv} neither divides by {n} nor divides it; tensor parallelism "
                                "({flags}) cannot place the KV heads",
                          "zh": "{field}：kv_heads={kv} 既不能被 {n} 整除，也不能整除 {n}；张量并行（{flags}）无法安放这些 KV 头"},
    "error.kv_divide": {"en": "kv_heads: H_kv must divide H = {h} (e.g. {examples}), got {got}",
                        "zh": "kv_heads：H_kv 必须整除 H = {h}（例如 {examples}），收到的是 {got}"},
    "error.four_numbers": {"en": "{field}: needs 4 numbers (D = 4), got {n}", "zh": "{field}：需要 4 个数（D = 4），收到 {n} 个"},
    "error.answer": {"en": "answer: expected a number such as 0.867, 1/4, 25%, 163840 B or 4*4096^2, got {got}",
                     "zh": "answer：需要一个数，例如 0.867、1/4、25%、163840 B 或 4*4096^2，收到的是 {got}"},
}

# Fallbacks are rendered in Chinese from their numbers (effect), by name: the English text stays
# the planner's (planner/fallbacks.py) and the CLI's.
FALLBACK_TITLES = {
    "fewer_kv_heads": "减少 KV 头（让更多 query 头共享一组 K/V）",
    "kv_quantization": "用更少的位数存 KV Cache",
    "tiled_attention": "分块计算 softmax(QKᵀ)V（FlashAttention 式），不存 [B,H,T,T]",
    "position_interpolation": "RoPE 位置插值",
    "more_gpus": "张量并行：更多 GPU",
    "weight_quantization": "用更少的位数存权重（仅各层；词嵌入保持 16 位）",
    "reuse_kv_across_passes": "前缀缓存：多遍之间复用文档的 KV Cache",
}


def say(msg_id: str, lang: str = "en", **params) -> str:
    """The message in lang with its parameters filled in (nested ``_x`` parameters are given as text)."""
    return CATALOGUE[msg_id][lang].format(**params)


_FIELD = re.compile(r"\{(_?[a-z][a-z0-9_]*)\}")
_DECISIONS = ("decision.single_pass", "decision.chunked", "decision.requested", "decision.requested_one",
              "decision.engine_single", "decision.engine_chunked", "decision.engine_none", "decision.engine_requested",
              "decision.engine_requested_one")
# Which messages a nested parameter may be (so a match backtracks through them as one regex).
NESTED = {"_why": ("decision.why_memory", "decision.why_learned", "decision.engine_why"),
          "_engine": ("decision.engine",), "_own": ("decision.engine_own",), "_first": ("decision.engine_first",), "_differ": ("decision.engine_differ",), "_text_split": ("decision.text_split",),
          "_fits": ("decision.they_fit", "decision.they_do_not_fit", "word.fits", "word.does_not_fit"),
          "_learned": ("decision.requested_learned",), "_base": _DECISIONS,
          "_which": ("word.each_chunk", "word.the_pass"),
          "_what": ("interval.what_prefill", "interval.what_decode", "interval.what_serving"),
          "_note": ("load.no_request", "load.unbounded"),
          "_where": ("serving.where_dp", "serving.where_pp", "serving.where"),
          "_cfg": ("cfg.n_inner", "cfg.kv_heads", "cfg.model_type", "cfg.defaults"),
          "_where1": ("serving.where_pp", "serving.where")}


@functools.lru_cache(maxsize=None)
def _regex(msg_id: str, named: bool) -> str:
    template, out, pos = CATALOGUE[msg_id]["en"], [], 0
    fields = list(_FIELD.finditer(template))
    for i, m in enumerate(fields):
        out.append(re.escape(template[pos:m.start()]))
        name = m.group(1)
        if name.startswith("_"):
            inner = "|".join(f"(?:{_regex(i, False)})" for i in NESTED[name])
            body = f"(?:{inner})?"
        else:
            # a parameter ends at the first occurrence of the text after it: one way to split, not
            # every way (".+?" alone let a hostile line backtrack for minutes: 1,300 chars, 13 s)
            after = template[m.end():_FIELD.search(template, m.end()).start()
                             if _FIELD.search(template, m.end()) else len(template)]
            body = f"(?:(?!{re.escape(after)}).)+?" if after else ".+?"
        out.append(f"(?P<{name}>{body})" if named else body)
        pos = m.end()
    out.append(re.escape(template[pos:]))
    return "".join(out)


@functools.lru_cache(maxsize=None)
def _pattern(msg_id: str) -> re.Pattern:
    return re.compile(_regex(msg_id, True), re.S)


# A caveat wraps a whole reason: try it before the reasons it wraps (a plain parameter would swallow it). The
# fragments that only stand inside other lines (NESTED: "{gpus}x {gpu}" matches any line with an "x ") come last.
_FRAGMENTS = {i for ids in NESTED.values() for i in ids}
_ORDER = ("decision.positions_caveat",
          *(k for k in CATALOGUE if k != "decision.positions_caveat" and k not in _FRAGMENTS),
          *(k for k in CATALOGUE if k != "decision.positions_caveat" and k in _FRAGMENTS))


def parse(text: str, among=None) -> tuple[str, dict] | None:
    """(id, parameters) of the first entry whose English matches text whole, nested ones resolved."""
    for msg_id in among or _ORDER:
        m = _pattern(msg_id).fullmatch(text)
        if m is None:
            continue
        params = {}
        for name, value in m.groupdict().items():
            params[name] = (parse(value, NESTED[name]) if value else None) if name.startswith("_") else value
        return msg_id, params
    return None


def render(parsed: tuple[str, dict], lang: str) -> str:
    msg_id, params = parsed
    filled = {k: ("" if v is None else render(v, lang)) if k.startswith("_") else _words(v, lang)
              for k, v in params.items()}
    return CATALOGUE[msg_id][lang].format(**filled)


MAX_TEXT = 2000      # the longest server string of the catalog plans is ~600 characters; a longer one is not ours
MAX_ITEMS = 64       # warnings / fallbacks of one plan read (a plan has a handful); the rest is not read


def translate(text: str | None, lang: str) -> str | None:
    """text (English, as the planner or the CLI wrote it) in lang; None when no entry matches (or the
    text is not a line of ours: not a string, or longer than MAX_TEXT)."""
    if text is None or lang == "en":
        return text
    if lang not in LANGS:
        raise ValueError(f"lang: expected one of {', '.join(LANGS)}, got {lang!r}")
    if not isinstance(text, str) or len(text) > MAX_TEXT:    # not a line the planner writes: untranslated
        return None
    text = text.strip()
    if text.startswith("multihead plan: error: "):
        text = text[len("multihead plan: error: "):]
    parsed = parse(text)
    return None if parsed is None else render(parsed, lang)


# Words inside parameters (device names the planner builds) -> Chinese.
PARAM_WORDS = {"zh": {" (explicit figures)": "（命令行给出的数字）", "stated GPU memory": "给定的 GPU 显存",
                     "sliding attention": "滑动窗口注意力", "chunked attention": "分块注意力",
                     "every layer": "每一层", "every other layer": "每隔一层",
                     "prefill (TTFT)": "预填充（TTFT）的系数", "decode (TPOT)": "解码（TPOT）的系数"}}


def _words(value: str, lang: str) -> str:
    for en, other in PARAM_WORDS.get(lang, {}).items():
        value = value.replace(en, other)
    return value


def _gb(x) -> str:
    if not isinstance(x, (int, float)):
        return "–"
    return f"{x / 1e12:,.2f} TB" if abs(x) >= 1e12 else f"{x / 1e9:,.2f} GB"


def _s(x) -> str:
    if not isinstance(x, (int, float)):
        return "–"
    return f"{x:,.1f} 秒" if x >= 1 else f"{x * 1e3:,.2f} 毫秒"


def _fallback_zh(f: dict, plan: dict) -> str | None:
    """One fallback in Chinese, from its numbers."""
    name, e = f.get("name"), f.get("effect") or {}
    fit = lambda ok: "放得下" if ok else "放不下"      # noqa: E731
    if name == "fewer_kv_heads":
        return "；".join(f"H_kv {r['kv_heads']}（{r['kind']}）：KV {_gb(r['kv_cache_bytes'])}（现在的 "
                        f"{r['kv_fraction_of_now']:.3g} 倍），合计 {_gb(r['total_memory_bytes'])}，{fit(r['fits'])}"
                        for r in e.get("options", []))
    if name == "kv_quantization":
        return "；".join(f"{r['kv_dtype']}：KV {_gb(r['kv_cache_bytes'])}，解码读 KV {_s(r['decode_kv_read_seconds'])}，"
                        f"合计 {_gb(r['total_memory_bytes'])}，{fit(r['fits'])}" for r in e.get("options", []))
    if name == "tiled_attention":
        return (f"物化的打分矩阵每层 {_gb(e.get('score_matrix_bytes_per_layer'))}，分块状态每层 "
                f"{_gb(e.get('tiled_bytes_per_layer'))}（少 {e.get('ratio', 0):,.0f} 倍）"
                f"{'，本方案已按分块计算' if e.get('already_assumed') else ''}；FLOPs 不变（O(T²)），显存 O(T·d_k)")
    if name == "position_interpolation":
        if e.get("factor") is None:
            return f"可学习的绝对位置只有 {e.get('max_position_embeddings')} 个，没有插值可言；分段到 ≤ {e.get('max_position_embeddings')} 个 token"
        return (f"需要放大 {e.get('factor_needed', 0):.3g} 倍；在 config.json 中写 {e.get('config_snippet')}"
                f"（在 {e.get('base_tokens')} 的基础上放大 {e.get('factor'):g} 倍），最好再做短时间微调；或分段到 ≤ "
                f"{e.get('covered_tokens')} 个 token")
    if name == "more_gpus":
        if e.get("gpus") is None:
            return "H 以内没有能整除头数且放得下的 GPU 数"
        return (f"{e['gpus']} 张 GPU：每张 {_gb(e.get('memory_per_gpu_bytes'))}，每遍预填充约 "
                f"{_s(e.get('prefill_seconds'))}（未计通信）")
    if name == "weight_quantization":
        return "；".join(f"{r['weights_dtype']}：权重 {_gb(r['weights_bytes'])}，合计 {_gb(r['total_memory_bytes'])}，"
                        f"{fit(r['fits'])}" for r in e.get("options", []))
    if name == "reuse_kv_across_passes":
        return (f"若 {plan.get('passes')} 遍都以同一份文档为前缀（指令放在文档之后），只需预填充一次："
                f"{_s(e.get('prefill_seconds_all_passes'))}，而不是 {_s(plan.get('prefill_seconds_all_passes'))}"
                f"（省下 {_s(e.get('prefill_seconds_saved'))}）")
    return None


def plan_texts(plan: dict, lang: str) -> dict:
    """Every server-made string of a plan in lang: {"reason", "warnings", "fallbacks": [{"name",
    "action", "text"}], "serving_verdict", "serving_reason", "serving_prefill", "serving_cautions": [...],
    "serving_at_note" (the requested load's note), "untranslated": [...]}.
    A string with no Chinese entry is None there and listed in "untranslated" (English as written)."""
    if lang not in LANGS:
        raise ValueError(f"lang: expected one of {', '.join(LANGS)}, got {lang!r}")
    missing: list[str] = []

    def tr(text):
        if text is None or lang == "en":
            return text
        out = translate(text, lang)
        if out is None:
            missing.append(text if isinstance(text, str) else repr(text)[:200])
        return out

    def items(value) -> list:
        return value[:MAX_ITEMS] if isinstance(value, list) else []

    serving = plan.get("serving") if isinstance(plan.get("serving"), dict) else {}
    interval = serving.get("interval") if isinstance(serving.get("interval"), dict) else {}
    at = serving.get("at") if isinstance(serving.get("at"), dict) else {}
    fallbacks = []
    for f in items(plan.get("fallbacks")):
        if not isinstance(f, dict):
            continue
        if lang == "en":
            fallbacks.append({"name": f.get("name"), "action": f.get("action"), "text": f.get("text")})
            continue
        try:
            text = _fallback_zh(f, plan)
        except (KeyError, TypeError, ValueError, AttributeError):   # a fallback shaped unlike the planner's
            text = None
        if text is None:
            missing.append(str(f.get("text")))
        fallbacks.append({"name": f.get("name"), "action": FALLBACK_TITLES.get(f.get("name")), "text": text})
    # serving "reason" is the engine's own error text (what vLLM would print): quoted, not translated
    engine_message = serving.get("reason") if serving.get("fits") is False else None
    device = plan.get("device") if isinstance(plan.get("device"), str) else None
    return {"lang": lang, "reason": tr(plan.get("reason")), "engine_message": engine_message,
            "device": _words(device, lang) if device else device,
            "warnings": [tr(w) for w in items(plan.get("warnings"))],
            "fallbacks": fallbacks,
            "serving_verdict": tr(serving.get("verdict")), "serving_reason": None if engine_message else tr(serving.get("reason")),
            "serving_prefill": tr(serving.get("prefill")),
            "serving_cautions": [tr(c) for c in items(interval.get("cautions"))],
            "serving_at_note": tr(at.get("note") or None), "untranslated": missing}
