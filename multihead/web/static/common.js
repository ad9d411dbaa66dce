// Shared by both pages and the --html report: language switch, number formatting, API calls.
// Nothing here computes a model quantity: every number is read from the server's JSON.
"use strict";

const I18N = {
  en: {
    "nav.planner": "Planner", "nav.search": "Find a configuration", "nav.lesson": "Lesson playground", "lang": "中文",
    // planner form
    "plan.title": "Will it fit, and how fast? The planner",
    "plan.model": "Model", "plan.drop": "…or drop a config.json here (or click to choose one)",
    "plan.dropped": "Using the dropped file", "plan.clear": "use the catalog instead",
    "plan.gpu": "GPU", "plan.gpus": "GPUs (tensor parallel)", "plan.wdtype": "Weights dtype",
    "plan.kvdtype": "KV cache dtype", "plan.tokens": "Context length T (tokens)",
    "plan.batch": "Concurrency (sequences at once)", "plan.passes": "Passes over the input",
    "plan.engine_h": "Serving engine and load (optional)", "plan.engine": "Engine", "plan.engine_version": "Engine version",
    "plan.measured": "One run of this deployment you measured (optional; its times scale the model)",
    "sv.measured": "Scaled to your measured run: prefill ×{p}, decode ×{d} of the model fitted on published measurements; the intervals are the errors left after such a scaling.",
    "plan.batching": "Batching", "plan.concurrency": "Requests in flight (serving times)", "plan.input_len": "Prompt tokens",
    "plan.output_len": "Output tokens", "plan.dp": "Data parallel size", "plan.ep": "Expert parallel size",
    "plan.dpa": "DP attention (SGLang's --enable-dp-attention)",
    "plan.default": "(default)", "plan.loading": "Planning…",
    // planner results
    "res.decision": "Decision", "res.breakdown": "Memory per GPU",
    "res.curve": "Memory per GPU vs context length (one pass)",
    "res.keys": "Key numbers", "res.serving": "Serving", "res.command": "Engine command",
    "res.warnings": "Warnings", "res.fallbacks": "Fallbacks", "res.copy": "copy",
    "res.single_pass": "ONE FULL PASS", "res.chunked": "CHUNKED", "res.does_not_fit": "DOES NOT FIT",
    "res.notfit": "which does not fit",
    "seg.weights": "weights", "seg.kv": "KV cache", "seg.workspace": "activations (workspace)",
    "seg.reserve": "engine reserve", "seg.free": "free", "seg.over": "over the usable memory",
    "row.onepass": "one pass", "row.chunks": "chunks",
    "curve.usable": "usable", "curve.gpu": "GPU memory", "curve.T": "this T", "curve.trained": "trained length",
    "curve.x": "context length T (tokens, log scale)", "curve.y": "memory per GPU (GB)",
    "k.kv_token": "KV cache per token", "k.kv": "KV cache", "k.weights": "weights",
    "k.workspace": "workspace", "k.total": "total, one pass", "k.usable": "usable per GPU",
    "k.prefill": "prefill, all passes", "k.decode": "decode per token", "k.tps": "tokens/s (batch)",
    "k.params": "parameters", "k.arch": "attention",
    // planner additions (h31): the text's preset, GPU figures, side-by-side, the 40 GB card, serving labels
    "plan.preset": "The text's case: 13B GQA-8, T = 128,000, 3 passes, 80 GB · 100 TFLOPS · 2 TB/s",
    "plan.figures": "…or the GPU's own figures (all three together replace the GPU above)",
    "plan.mem": "memory (GB)", "plan.tflops": "effective TFLOPS", "plan.bw": "bandwidth (TB/s)",
    "cmp.h": "MHA / GQA / MQA side by side (same model, same GPU, only H_kv changed)",
    "cmp.kind": "attention", "cmp.kvtoken": "KV per token", "cmp.kv": "KV cache at T", "cmp.total": "total, one pass",
    "cmp.fits": "one pass fits?", "cmp.decision": "decision", "cmp.score": "score matrix per layer, if stored",
    "cmp.attn": "attention, one pass", "cmp.decode": "decode: KV read per token",
    "cmp.note": "Each row is the planner's answer with --kv-heads set to that value; ◀ marks this model.",
    "c40.h": "On a 40 GB card: the text's fallback beside the fewest chunks that fit",
    "c40.p": "The text falls back to 8 chunks of 16k on a 40 GB card. The planner, asked the same with 40 GB (same TFLOPS and bandwidth), also finds the fewest chunks that fit:",
    "c40.text": "the text's split (--chunks 8)", "c40.fewest": "the planner's decision (the fewest chunks that fit by its account)",
    "c40.split": "chunks × tokens", "c40.each": "memory per chunk (memory table)", "c40.attn": "attention per pass", "c40.usable": "usable on the 40 GB card",
    "c40.tablefits": "memory per chunk ≤ usable?", "c40.decfits": "fits by the decision's account?",
    "c40.byengine": "the serving engine's account", "c40.bytable": "the memory table",
    "yes": "yes", "no": "no", "res.untranslated": "(not yet translated: switch to English for the planner's own words)",
    "res.needed": "● the fallback is needed (or worth it) for this plan; the others are listed for reference.",
    "err.untranslated": "This value is not accepted (switch to English for the server's own message).",
    "err.unreadable": "{name}: not a number (the box holds text the browser cannot read as one, such as \"1e\" or \"--5\"); nothing was computed",
    "u.tokens": "tokens", "u.tps": "tokens/s",
    "sv.fits": "The serving engine can run it", "sv.notfit": "The serving engine cannot run it",
    "sv.engine": "What the engine would say:", "sv.curve": "Latency and throughput vs concurrency",
    "sv.more": "All serving figures", "sv.max_concurrency": "requests of max model length at once",
    "sv.max_model_len": "max model length", "sv.max_model_len_fit": "longest request that fits",
    "sv.kv_cache_tokens": "KV cache capacity", "sv.kv_cache_gib": "KV cache per GPU", "sv.weights_gib": "weights per GPU",
    "sv.activation_gib": "activation peak", "sv.non_torch_gib": "non-torch memory (CUDA context)",
    "sv.requested_gib": "memory the engine may use", "sv.total_gib": "physical GPU memory",
    "sv.gpu_memory_utilization": "GPU memory utilization", "sv.input_len": "input length", "sv.output_len": "output length",
    "sv.concurrency": "concurrency (requests at once)", "sv.ttft_s": "time to first token (TTFT)",
    "sv.tpot_s": "time per output token (TPOT)", "sv.itl_s": "inter-token latency", "sv.output_tokens_per_s": "output throughput",
    "sv.request_latency_s": "latency of one request", "sv.ttft_s_one_request": "TTFT, one request alone",
    "sv.tpot_s_one_request": "TPOT, one request alone", "sv.decode_tokens_per_s": "decode throughput",
    "sv.prefill_s": "prefill time", "sv.num_gpu_blocks": "KV blocks per GPU", "sv.blocks_per_request": "KV blocks per request",
    "sv.page_bytes": "KV page size", "sv.kv_cache_groups": "KV cache groups", "sv.layers_per_group": "layers per group",
    "sv.tensor_parallel_size": "tensor parallel size", "sv.pipeline_parallel_size": "pipeline parallel size",
    "sv.max_num_batched_tokens": "tokens per prefill step",
    "sv.at_c": "At your load: {n} requests at once", "sv.at_r": "At your load: {r} requests per second",
    "sv.at_max": "At the most requests the engine runs at once ({n})", "sv.requests_per_s": "requests per second",
    "sv.band": "{p}%: ", "sv.ttft_axis": "TTFT (s)", "sv.tpot_axis": "TPOT (ms)", "sv.tps_axis": "output tokens/s",
    // lesson
    "l.title": "Softmax and multi-head attention: a playground",
    "l.intro": "Every number below is computed on this machine by multihead itself (its softmax, its attention, its planner); the page only draws them.",
    "l.s1": "1. Softmax is a budget: temperature and shifts",
    "l.s1.text": "Softmax turns scores into non-negative weights that add up to 1. Lower the temperature and the largest score takes more of the budget; raise it and the weights even out. Adding the same constant to every score changes nothing.",
    "l.logits": "logits z", "l.temp": "temperature", "l.shift": "shift c added to every logit",
    "l.add": "+ logit", "l.remove": "− logit", "l.sum": "sum of the weights",
    "l.shiftdiff": "largest |softmax(z + c) − softmax(z)|",
    "l.s2": "2. Overflow: why subtract the max, why divide by √d_k",
    "l.s2.text": "exp() of a large logit is larger than any floating-point number: past ln(65504) ≈ 11.09 in fp16 and ln(3.4e38) ≈ 88.7 in fp32 it becomes inf, and inf / inf is nan. Subtracting the row's maximum first makes every exponent ≤ 0. Dividing q·k by √d_k keeps the logits' spread near 1.",
    "l.dtype": "dtype", "l.submax": "subtract the max first", "l.scale": "divide by √d_k, d_k =",
    "l.preset1": "(1000, 999, 998)", "l.preset2": "q·k = 128 vs 0 (d_k = 128, all-ones vectors)",
    "l.used": "logits used", "l.exp": "exp", "l.probs": "softmax", "l.overflow": "overflows above",
    "l.s3": "3. The causal mask, row by row",
    "l.s3.text": "A decoder may only look back. Scores above the diagonal are set to −∞ before the softmax, so row i spreads its budget over tokens 0…i only, and every row still sums to 1.",
    "l.T": "T", "l.seed": "random seed", "l.scores": "scores (masked: −∞)", "l.weights": "softmax per row",
    "l.rowsums": "row sums",
    "l.s4": "4. Two heads on a 4-dimensional toy",
    "l.s4.text": "D = 4 split into H = 2 heads of d_k = 2: head 1 reads dimensions 1–2, head 2 reads 3–4 (identity projections). Two tokens x1, x2. Each head attends in its own subspace; the outputs are concatenated back to 4 dimensions.",
    "l.causal": "causal", "l.head": "head", "l.concat": "concatenated output (before W_O)",
    "l.s5": "5. Real heads: SmolLM2-135M on a sentence — weight is not importance",
    "l.s5.text": "Left: the attention weights of one head of SmolLM2-135M, run on multihead's attention. Right: how much each token actually adds to the output, ||a_ij · W_O v_j||, normalized per row. A token can get a large weight and still contribute little when its value vector is small (often the first token).",
    "l.sentence": "sentence", "l.layer": "layer", "l.run": "Run", "l.loadingmodel": "Loading SmolLM2 (first time: several seconds)…",
    "l.attw": "attention weight a_ij", "l.imp": "value-weighted contribution",
    "l.s6": "6. MHA, GQA, MQA: how much KV cache",
    "l.s6.text": "Query heads can share key/value heads. The KV cache shrinks in proportion to H_kv: each KV head serves H / H_kv query heads.",
    "l.H": "query heads H", "l.Hkv": "KV heads H_kv", "l.L": "layers L", "l.dk": "head dim d_k",
    "l.kvtoken": "KV bytes per token", "l.fraction": "of MHA",
    "l.s7": "7. Exercises", "l.s8": "8. Quiz (3 questions)",
    "q.check": "Check", "q.show": "Show our answer", "q.right": "Right", "q.wrong": "Not quite",
    "q.expected": "expected", "q.tol": "accepted within ±", "q.exact": "exact answer expected", "q.score": "score",
    "x.query": "query token i", "x.key": "key token j",
  },
  zh: {
    "nav.planner": "部署规划", "nav.search": "找配置", "nav.lesson": "课程练习场", "lang": "English",
    "plan.title": "放得下吗？多快？部署规划器",
    "plan.model": "模型", "plan.drop": "……或把 config.json 拖到这里（也可点击选择）",
    "plan.dropped": "正在使用拖入的文件", "plan.clear": "改用内置模型",
    "plan.gpu": "GPU", "plan.gpus": "GPU 数（张量并行）", "plan.wdtype": "权重精度",
    "plan.kvdtype": "KV Cache 精度", "plan.tokens": "上下文长度 T（token）",
    "plan.batch": "并发（同时处理的序列数）", "plan.passes": "对同一输入的遍数",
    "plan.engine_h": "推理引擎与负载（可选）", "plan.engine": "推理引擎", "plan.engine_version": "引擎版本",
    "plan.measured": "你实测过的一次运行（可选；按它缩放模型的时间）",
    "sv.measured": "已按你的实测运行缩放：预填充 ×{p}、解码 ×{d}（相对于用公开测量拟合的模型）；区间是这样缩放后剩下的误差。",
    "plan.batching": "批处理方式", "plan.concurrency": "同时在途的请求数（服务时间）", "plan.input_len": "提示词 token 数",
    "plan.output_len": "输出 token 数", "plan.dp": "数据并行数", "plan.ep": "专家并行数",
    "plan.dpa": "DP 注意力（SGLang 的 --enable-dp-attention）",
    "plan.default": "（默认）", "plan.loading": "计算中……",
    "res.decision": "决策", "res.breakdown": "每张 GPU 的显存",
    "res.curve": "每张 GPU 的显存随上下文长度变化（一次全量）",
    "res.keys": "关键数字", "res.serving": "服务能力", "res.command": "推理引擎启动命令",
    "res.warnings": "警告", "res.fallbacks": "兜底方案", "res.copy": "复制",
    "res.single_pass": "一次全量前向", "res.chunked": "分段", "res.does_not_fit": "放不下",
    "res.notfit": "但分段后也放不下",
    "seg.weights": "权重", "seg.kv": "KV Cache", "seg.workspace": "激活（工作区）",
    "seg.reserve": "引擎预留", "seg.free": "空闲", "seg.over": "超出可用显存",
    "row.onepass": "一次全量", "row.chunks": "分段",
    "curve.usable": "可用", "curve.gpu": "GPU 显存", "curve.T": "当前 T", "curve.trained": "训练长度",
    "curve.x": "上下文长度 T（token，对数坐标）", "curve.y": "每张 GPU 的显存（GB）",
    "k.kv_token": "每 token 的 KV Cache", "k.kv": "KV Cache", "k.weights": "权重",
    "k.workspace": "工作区", "k.total": "一次全量合计", "k.usable": "每张 GPU 可用",
    "k.prefill": "预填充（全部遍数）", "k.decode": "每 token 解码", "k.tps": "token/s（整批）",
    "k.params": "参数量", "k.arch": "注意力",
    "plan.preset": "课文的场景：13B GQA-8，T = 128,000，3 遍，80 GB · 100 TFLOPS · 2 TB/s",
    "plan.figures": "……或直接给出 GPU 的参数（三项一起给出时代替上面的 GPU）",
    "plan.mem": "显存（GB）", "plan.tflops": "有效 TFLOPS", "plan.bw": "带宽（TB/s）",
    "cmp.h": "MHA / GQA / MQA 并排（同一模型、同一 GPU，只改 H_kv）",
    "cmp.kind": "注意力", "cmp.kvtoken": "每 token 的 KV", "cmp.kv": "T 个 token 的 KV Cache", "cmp.total": "一次全量合计",
    "cmp.fits": "一次全量放得下？", "cmp.decision": "决策", "cmp.score": "每层打分矩阵（若物化）",
    "cmp.attn": "注意力，一遍", "cmp.decode": "解码：每 token 读 KV",
    "cmp.note": "每一行都是规划器把 --kv-heads 设为该值后的回答；◀ 标出当前模型。",
    "c40.h": "40 GB 卡上：课文的退路与放得下的最少分段",
    "c40.p": "课文说只有 40 GB 卡时退化为 8 段 16k。让规划器在 40 GB（TFLOPS 与带宽不变）上回答同一个问题，它还会找出放得下的最少分段：",
    "c40.text": "课文的切法（--chunks 8）", "c40.fewest": "规划器的决策（按它所用的账放得下的最少分段）",
    "c40.split": "段数 × token", "c40.each": "每段显存（显存表）", "c40.attn": "每遍注意力", "c40.usable": "40 GB 卡上可用",
    "c40.tablefits": "每段显存 ≤ 可用？", "c40.decfits": "按决策所用的账放得下？",
    "c40.byengine": "推理引擎的账", "c40.bytable": "显存表",
    "yes": "是", "no": "否", "res.untranslated": "（尚未翻译：切换到 English 查看规划器的原话）",
    "res.needed": "● 表示这个方案需要（或值得）这条兜底；其余列出供参考。",
    "err.untranslated": "这个值不被接受（切换到 English 可看服务器的原话）。",
    "err.unreadable": "{name}：不是一个数（框里的文字浏览器读不成数字，例如「1e」或「--5」）；没有计算",
    "u.tokens": "个 token", "u.tps": "token/s",
    "sv.fits": "推理引擎跑得起来", "sv.notfit": "推理引擎跑不起来",
    "sv.engine": "推理引擎会这样报错（原话）：", "sv.curve": "延迟与吞吐随并发变化",
    "sv.more": "全部服务数字", "sv.max_concurrency": "同时容纳的最大长度请求数",
    "sv.max_model_len": "最大模型长度", "sv.max_model_len_fit": "放得下的最长请求",
    "sv.kv_cache_tokens": "KV Cache 容量", "sv.kv_cache_gib": "每张 GPU 的 KV Cache", "sv.weights_gib": "每张 GPU 的权重",
    "sv.activation_gib": "激活峰值", "sv.non_torch_gib": "非 torch 显存（CUDA 上下文）",
    "sv.requested_gib": "引擎可用的显存", "sv.total_gib": "GPU 物理显存",
    "sv.gpu_memory_utilization": "显存利用率", "sv.input_len": "输入长度", "sv.output_len": "输出长度",
    "sv.concurrency": "并发（同时的请求数）", "sv.ttft_s": "首 token 延迟（TTFT）",
    "sv.tpot_s": "每个输出 token 的时间（TPOT）", "sv.itl_s": "token 间延迟", "sv.output_tokens_per_s": "输出吞吐",
    "sv.request_latency_s": "单个请求的总延迟", "sv.ttft_s_one_request": "单独一个请求的 TTFT",
    "sv.tpot_s_one_request": "单独一个请求的 TPOT", "sv.decode_tokens_per_s": "解码吞吐",
    "sv.prefill_s": "预填充时间", "sv.num_gpu_blocks": "每张 GPU 的 KV 块数", "sv.blocks_per_request": "每个请求的 KV 块数",
    "sv.page_bytes": "KV 页大小", "sv.kv_cache_groups": "KV Cache 组数", "sv.layers_per_group": "每组层数",
    "sv.tensor_parallel_size": "张量并行数", "sv.pipeline_parallel_size": "流水线并行数",
    "sv.max_num_batched_tokens": "每步预填充的 token 数",
    "sv.at_c": "在你给的负载下：同时 {n} 个请求", "sv.at_r": "在你给的负载下：每秒 {r} 个请求",
    "sv.at_max": "在引擎同时能跑的最多请求数下（{n} 个）", "sv.requests_per_s": "每秒请求数",
    "sv.band": "{p}% 区间：", "sv.ttft_axis": "TTFT（秒）", "sv.tpot_axis": "TPOT（毫秒）", "sv.tps_axis": "输出 token/s",
    "l.title": "softmax 与多头注意力：练习场",
    "l.intro": "下面每个数字都由 multihead 在本机算出（它自己的 softmax、注意力和规划器），页面只负责画图。",
    "l.s1": "1. softmax 是一份预算：温度与平移",
    "l.s1.text": "softmax 把分数变成非负、总和为 1 的权重。温度调低，最高分拿走更多预算；调高则趋于平均。所有分数加同一个常数，结果不变。",
    "l.logits": "logits z", "l.temp": "温度", "l.shift": "给每个 logit 加上常数 c",
    "l.add": "+ 一个 logit", "l.remove": "− 一个 logit", "l.sum": "权重之和",
    "l.shiftdiff": "|softmax(z + c) − softmax(z)| 的最大值",
    "l.s2": "2. 上溢：为什么先减最大值，为什么除以 √d_k",
    "l.s2.text": "大 logit 的 exp() 会超过浮点数能表示的最大值：fp16 超过 ln(65504) ≈ 11.09、fp32 超过 ln(3.4e38) ≈ 88.7 就成了 inf，而 inf / inf 是 nan。先减去这一行的最大值，所有指数都 ≤ 0；把 q·k 除以 √d_k，logits 的离散程度回到 1 左右。",
    "l.dtype": "精度", "l.submax": "先减最大值", "l.scale": "除以 √d_k，d_k =",
    "l.preset1": "(1000, 999, 998)", "l.preset2": "q·k = 128 对 0（d_k = 128，全 1 向量）",
    "l.used": "实际 logits", "l.exp": "exp", "l.probs": "softmax", "l.overflow": "超过此值上溢",
    "l.s3": "3. 因果 mask：逐行看",
    "l.s3.text": "解码器只能往前看。softmax 之前把对角线以上的分数设为 −∞，于是第 i 行只在第 0…i 个 token 上分配预算，每行之和仍为 1。",
    "l.T": "T", "l.seed": "随机种子", "l.scores": "分数（被遮住：−∞）", "l.weights": "逐行 softmax",
    "l.rowsums": "每行之和",
    "l.s4": "4. 4 维玩具上的两个头",
    "l.s4.text": "D = 4 拆成 H = 2 个 d_k = 2 的头：头 1 读第 1–2 维，头 2 读第 3–4 维（投影取单位阵）。两个 token x1、x2。每个头在自己的子空间里做注意力，输出再拼回 4 维。",
    "l.causal": "因果", "l.head": "头", "l.concat": "拼接后的输出（乘 W_O 之前）",
    "l.s5": "5. 真实的头：SmolLM2-135M 读一句话——权重不等于重要性",
    "l.s5.text": "左图：SmolLM2-135M 某个头的注意力权重（用 multihead 的注意力运行）。右图：每个 token 实际给输出贡献了多少，即 ||a_ij · W_O v_j||，按行归一化。一个 token 的权重可以很大，但若它的 value 向量很小，贡献依然很少（常见于第一个 token）。",
    "l.sentence": "句子", "l.layer": "层", "l.run": "运行", "l.loadingmodel": "正在加载 SmolLM2（第一次需要几秒）……",
    "l.attw": "注意力权重 a_ij", "l.imp": "按 value 加权的贡献",
    "l.s6": "6. MHA、GQA、MQA：KV Cache 有多大",
    "l.s6.text": "多个 query 头可以共享一组 key/value 头。KV Cache 与 H_kv 成正比：每个 KV 头服务 H / H_kv 个 query 头。",
    "l.H": "query 头数 H", "l.Hkv": "KV 头数 H_kv", "l.L": "层数 L", "l.dk": "头维度 d_k",
    "l.kvtoken": "每 token 的 KV 字节", "l.fraction": "相对 MHA",
    "l.s7": "7. 练习", "l.s8": "8. 随堂测（3 题）",
    "q.check": "检查", "q.show": "看参考答案", "q.right": "正确", "q.wrong": "不对",
    "q.expected": "答案", "q.tol": "允许误差 ±", "q.exact": "需要精确答案", "q.score": "得分",
    "x.query": "query token i", "x.key": "key token j",
  },
};

let LANG = (new URLSearchParams(location.search).get("lang")) || localStorage.getItem("multihead-lang") || "en";
if (!I18N[LANG]) LANG = "en";
const LANG_LISTENERS = [];

function t(key) { return (I18N[LANG] && I18N[LANG][key]) || I18N.en[key] || key; }

function applyLanguage() {
  document.documentElement.lang = LANG === "zh" ? "zh-CN" : "en";
  document.querySelectorAll("[data-i18n]").forEach(el => { el.textContent = t(el.dataset.i18n); });
  LANG_LISTENERS.forEach(fn => fn());
}

function setLanguage(lang) {
  LANG = lang;
  try { localStorage.setItem("multihead-lang", lang); } catch (e) { /* file:// pages may refuse */ }
  applyLanguage();
}

function wireLanguageButton() {
  const btn = document.getElementById("lang");
  if (btn) btn.addEventListener("click", () => setLanguage(LANG === "en" ? "zh" : "en"));
}

// -- formatting (units only; 1 GB = 1e9 B as GPU datasheets count) ---------------------------------
function fmtBytes(x) {
  if (x === null || x === undefined) return "–";
  const units = [["TB", 1e12], ["GB", 1e9], ["MB", 1e6], ["KB", 1e3]];
  for (const [u, s] of units) if (Math.abs(x) >= s) return (x / s).toLocaleString("en-US", {maximumFractionDigits: 2}) + " " + u;
  return x.toLocaleString("en-US") + " B";
}
function fmtSeconds(x) {
  if (x === null || x === undefined) return "–";
  if (x >= 1) return x.toLocaleString("en-US", {maximumFractionDigits: 1}) + " s";
  if (x >= 1e-3) return (x * 1e3).toLocaleString("en-US", {maximumFractionDigits: 2}) + " ms";
  return (x * 1e6).toLocaleString("en-US", {maximumFractionDigits: 1}) + " µs";
}
// A predicted time's interval beside it (the server's ``*_low`` / ``*_high`` keys of obj), as the CLI prints it:
// "25 s (80%: 9.7 s – 95.2 s)". The planner's serving block and the search's best answer use it.
// An interval's cautions (the server's ``interval.cautions``: a family spanning over 10x) as paragraphs, each in
// the page's language: ``zh`` the server's translations (messages.plan_texts serving_cautions), null in English.
function cautionParagraphs(interval, zh) {
  const en = interval && Array.isArray(interval.cautions) ? interval.cautions.filter(c => typeof c === "string") : [];
  return en.map((c, i) => el("p", {class: "caution", text: zh ? (zh[i] || t("res.untranslated")) : c}));
}

function withBand(s, key, text, fmt) {
  const lo = s[key + "_low"], hi = s[key + "_high"];
  if (typeof lo !== "number" || typeof hi !== "number") return text;
  const level = s.interval && typeof s.interval.level === "number" ? Math.round(s.interval.level * 100) : 80;
  return `${text} (${t("sv.band").replace("{p}", level)}${fmt(lo)} – ${fmt(hi)})`;
}

function fmtNum(x, digits) {
  if (typeof x === "string") return x;          // "inf", "nan" from the server
  if (x === null || x === undefined) return "–";
  const d = digits === undefined ? 4 : digits;
  if (d >= 1 && x !== 0 && Math.abs(x) < Number("5e-" + (d + 1))) return x.toExponential(2);   // 4.5e-5, never "0"
  if (Math.abs(x) >= 1e9 && !Number.isInteger(x / 1e6)) return x.toExponential(3);
  if (Math.abs(x) >= 1e15) return x.toExponential(3);
  return x.toLocaleString("en-US", {maximumFractionDigits: digits === undefined ? 4 : digits});
}
function gb(x) { return x / 1e9; }
// Up to 6 significant digits; tiny values in exponent form (1.24e-5).
function fmtSig(x) {
  if (typeof x !== "number") return fmtNum(x);
  if (x !== 0 && Math.abs(x) < 1e-3) return x.toExponential(3).replace(/\.?0+e/, "e");
  return fmtNum(x, 6);
}

// A number box holding text the browser cannot read as a number ("1e", "--5"): its value is "" then,
// as if empty; validity.badInput tells the two apart. Such a box is an error, never a default.
function unreadable(node) { return Boolean(node && node.type === "number" && node.validity && node.validity.badInput); }

// -- API ---------------------------------------------------------------------------------------------
class ApiError extends Error {
  constructor(message, field) { super(message); this.field = field; }
}

async function api(path, body) {
  const init = body === undefined ? {} : {method: "POST", headers: {"Content-Type": "application/json"},
                                          body: JSON.stringify(body)};
  const resp = await fetch(path, init);
  const data = await resp.json().catch(() => ({error: `HTTP ${resp.status}`}));
  if (!resp.ok) throw new ApiError(data.error || `HTTP ${resp.status}`, data.field);
  return data;
}

// A server's error line in the page's language (the message catalogue, /api/messages), for every page.
async function errorText(message) {
  if (typeof message === "function") return message();      // the page's own words, in the page's language
  if (LANG === "en") return message;
  try { return (await api("/api/messages", {error: message, lang: LANG})).error || t("err.untranslated"); }
  catch (e) { return t("err.untranslated"); }
}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v; else if (k === "text") node.textContent = v; else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c);
  return node;
}

// plotly.js is loaded on first use (the planner's first answer does not wait for it); a page that
// inlines it (the --html report) already has window.Plotly.
let plotlyPromise = null;
function loadPlotly() {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (!plotlyPromise) {
    plotlyPromise = new Promise((resolve, reject) => {
      const s = document.createElement("script");
      s.src = "/vendor/plotly.min.js";
      s.onload = () => resolve(window.Plotly);
      s.onerror = () => reject(new Error("could not load /vendor/plotly.min.js"));
      document.head.append(s);
    });
  }
  return plotlyPromise;
}
// Start loading it once this frame is painted: the text and the answer show first, and the chart
// library compiles while the server works on the rest.
function loadPlotlyAfterPaint() { requestAnimationFrame(() => setTimeout(loadPlotly, 0)); }

const PLOT_CONFIG = {displayModeBar: false, responsive: true};
const FONT = {family: "system-ui, -apple-system, 'Segoe UI', 'Noto Sans CJK SC', sans-serif", size: 12};
