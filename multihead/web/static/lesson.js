// The lesson playground: every number comes from the server (multihead's softmax, attention,
// planner); this file only collects inputs and draws. plotly.js (4.8 MB, about a second of script
// on a slow machine) loads after the text is on screen (common.js loadPlotlyAfterPaint); the charts
// wait for it.
"use strict";

const domReady = new Promise(r => document.addEventListener("DOMContentLoaded", r));
const last = {};                 // the latest server answer per section, redrawn on language change
const $ = id => document.getElementById(id);

// "1, 0, 2" -> [1, 0, 2]; an empty entry or a word is an error in the user's words (never 0).
class InputError extends Error {}
function fill(template, params) { return template.replace(/\{(\w+)\}/g, (_, k) => (k in params ? params[k] : `{${k}}`)); }
function parseList(text, name, count) {
  const parts = /[,，;；]/.test(text) ? text.split(/[,，;；]/) : text.trim().split(/\s+/);
  const values = parts.map(x => x.trim()).map((v, i) => {
    if (v === "") throw new InputError(fill(t("err.empty"), {name, i: i + 1}));
    const x = Number(v);
    if (!Number.isFinite(x)) throw new InputError(fill(t("err.nan"), {name, v}));
    return x;
  });
  if (count && values.length !== count) throw new InputError(fill(t("err.count"), {name, n: count, got: values.length}));
  return values;
}
function numberOf(id, name) {
  if (unreadable($(id))) throw new InputError(fill(t("err.unreadable"), {name: name || id}));
  const v = $(id).value.trim();
  if (v === "") throw new InputError(fill(t("err.empty1"), {name: name || id}));
  const x = Number(v);
  if (!Number.isFinite(x)) throw new InputError(fill(t("err.nan"), {name: name || id, v}));
  return x;
}

// An error next to its card: ours in the page's language; the server's through the catalogue.
const lastErr = {};
async function showErr(slot, err) {
  const node = document.querySelector(`.err[data-field="${slot}"]`);
  lastErr[slot] = err || null;
  if (!node) return;
  if (!err) { node.textContent = ""; return; }
  if (err instanceof InputError || LANG === "en") { node.textContent = err.message; return; }
  node.textContent = await translated(err.message);
}
async function translated(message) {
  try {
    const r = await api("/api/messages", {lang: LANG, error: message});
    return r.error || (LANG === "zh" ? "输入不被接受，请检查这一项（切换到 English 可看服务器的原话）" : message);
  } catch (e) { return message; }
}

// Run fn on input, debounced; a newer call supersedes an older answer.
function live(fn, delay) {
  let timer = null, seq = 0;
  const trigger = () => {
    clearTimeout(timer);
    timer = setTimeout(async () => { const mine = ++seq; await fn(() => mine === seq); }, delay || 120);
  };
  trigger.now = () => { const mine = ++seq; return fn(() => mine === seq); };   // at once, awaitable
  return trigger;
}

function numCell(v, digits, flag) {
  const bad = typeof v === "string" || flag === true;
  return el("td", {class: bad ? "bad-num" : "", text: fmtNum(v, digits)});
}

// -- 1. softmax, temperature, shift --------------------------------------------------------------
function logitInputs() { return [...document.querySelectorAll("#logits input")]; }

function addLogit(value) {
  const input = el("input", {type: "number", class: "logit", step: "0.5", value: String(value),
                             "aria-label": `z${logitInputs().length + 1}`});
  input.addEventListener("input", softmaxUpdate);
  $("logits").append(input);
}

const softmaxUpdate = live(async current => {
  $("temp-value").textContent = $("temp").value;
  $("shift-value").textContent = $("shift").value;
  try {
    const body = {logits: logitInputs().map((inp, i) => {
      if (unreadable(inp)) throw new InputError(fill(t("err.unreadable"), {name: `z${i + 1}`}));
      if (inp.value.trim() === "") throw new InputError(fill(t("err.empty"), {name: "z", i: i + 1}));
      return Number(inp.value);
    }), temperature: Number($("temp").value), shift: Number($("shift").value), dtype: "fp64"};
    const r = await api("/api/softmax", body);
    await loadPlotly();
    if (!current()) return;
    last.softmax = r; showErr("softmax", null); drawSoftmax();
  } catch (err) { showErr("softmax", err); }
});

function drawSoftmax() {
  const r = last.softmax;
  if (!r) return;
  const x = r.probs.map((_, i) => `z${i + 1}`);
  Plotly.react("softmax-chart", [
    {type: "bar", x, y: r.probs, name: "softmax(z / T)", text: r.probs.map(p => fmtNum(p, 3)), textposition: "outside",
     marker: {color: "#4c72b0"}},
    {type: "scatter", mode: "markers", x, y: r.shifted_probs, name: "softmax((z + c) / T)",
     marker: {symbol: "x", size: 11, color: "#c0392b"}}],
    {height: 280, font: FONT, margin: {l: 50, r: 10, t: 10, b: 30}, yaxis: {range: [0, 1.12]},
     legend: {orientation: "h", y: 1.12}}, PLOT_CONFIG);
  $("softmax-sum").textContent = fmtNum(r.sum_probs, 12);
  $("softmax-shift").textContent = fmtNum(r.shift_max_abs_diff, 12);
}

// -- 2. overflow ------------------------------------------------------------------------------------
const overflowUpdate = live(async current => {
  try {
    const body = {logits: parseList($("ov-logits").value, "logits"), dtype: $("ov-dtype").value,
                  subtract_max: $("ov-submax").checked, d_k: $("ov-scale").checked ? numberOf("ov-dk", "d_k") : null};
    const r = await api("/api/softmax", body);
    if (!current()) return;
    last.overflow = r; showErr("overflow", null); drawOverflow();
  } catch (err) { showErr("overflow", err); }
});

function drawOverflow() {
  const r = last.overflow;
  if (!r) return;
  const row = (label, values, digits) => el("tr", {}, el("th", {text: label}), ...values.map(v => numCell(v, digits)));
  const rows = [row(t("l.used"), r.logits_used, 4), row(t("l.exp") + (r.sum_exp === null ? " (z − max)" : ""), r.exp, 6)];
  if (r.sum_exp !== null) rows.push(row("Σ exp", [r.sum_exp], 6));
  rows.push(row(t("l.probs"), r.probs, 6));
  $("overflow-table").replaceChildren(el("table", {class: "nums", id: "overflow-nums"}, ...rows),
    el("p", {class: "stat"}, `${r.dtype}: ${t("l.overflow")} ln(${fmtNum(r.finfo_max, 6)}) = ${fmtNum(r.overflow_logit, 2)}`));
}

// -- 3. causal mask ----------------------------------------------------------------------------------
const causalUpdate = live(async current => {
  $("causal-T-value").textContent = $("causal-T").value;
  try {
    const r = await api("/api/causal", {T: Number($("causal-T").value), seed: numberOf("causal-seed", t("l.seed"))});
    await loadPlotly();
    if (!current()) return;
    last.causal = r; showErr("causal", null); drawCausal();
  } catch (err) { showErr("causal", err); }
});

const BLUES = [[0, "#f7fbff"], [0.5, "#6baed6"], [1, "#08306b"]];
const ORANGES = [[0, "#fff5eb"], [0.5, "#fd8d3c"], [1, "#7f2704"]];

function heatmap(div, z, title, opts) {
  const o = opts || {};
  const labels = o.labels || z.map((_, i) => String(i));
  const clean = z.map(row => row.map(v => (typeof v === "string" ? null : v)));
  const text = z.map(row => row.map(v => (typeof v === "string" ? (v === "-inf" ? "−∞" : v) : fmtNum(v, 2))));
  return Plotly.react(div, [{type: "heatmap", z: clean, x: labels, y: labels, text, texttemplate: o.noText ? "" : "%{text}",
    colorscale: o.colorscale || BLUES, zmin: o.zmin, zmax: o.zmax, showscale: false, hoverongaps: false,
    xgap: 1, ygap: 1, hovertemplate: "i=%{y}, j=%{x}: %{z:.3f}<extra></extra>"}],
    {title: {text: title, font: {size: 13}}, height: o.height || 320, font: FONT,
     margin: {l: o.margin || 40, r: 10, t: 36, b: o.margin || 40},
     xaxis: {title: {text: t("x.key")}, tickangle: o.labels ? -45 : 0, automargin: true, type: "category"},
     yaxis: {title: {text: t("x.query")}, autorange: "reversed", automargin: true, type: "category"},
     plot_bgcolor: "#f1f3f6"}, PLOT_CONFIG);
}

function drawCausal() {
  const r = last.causal;
  if (!r) return;
  heatmap("causal-scores", r.scores, t("l.scores"), {colorscale: "RdBu", zmin: -3, zmax: 3});
  heatmap("causal-probs", r.probs, t("l.weights"), {zmin: 0, zmax: 1});
  $("causal-sums").textContent = r.row_sums.map(v => fmtNum(v, 6)).join(", ");
}

// -- 4. two heads ------------------------------------------------------------------------------------
const twoHeadsUpdate = live(async current => {
  try {
    const r = await api("/api/two-heads", {x1: parseList($("x1").value, "x1", 4), x2: parseList($("x2").value, "x2", 4),
                                           causal: $("th-causal").checked});
    if (!current()) return;
    last.twoheads = r; showErr("twoheads", null); drawTwoHeads();
  } catch (err) { showErr("twoheads", err); }
});

function matrix(rows, head) {
  return el("table", {class: "nums"}, el("tr", {}, el("th", {text: head}), ...rows[0].map((_, j) => el("th", {text: `x${j + 1}`}))),
    ...rows.map((row, i) => el("tr", {}, el("th", {text: `x${i + 1}`}), ...row.map(v => numCell(v, 3)))));
}

function drawTwoHeads() {
  const r = last.twoheads;
  if (!r) return;
  const blocks = r.heads.map((h, i) => el("div", {},
    el("h3", {text: `${t("l.head")} ${i + 1}: ` + h.inputs.map((v, j) => `x${j + 1} → (${v.map(x => fmtNum(x, 3)).join(", ")})`).join(", ")}), matrix(h.weights, "a_ij")));
  const concat = el("table", {class: "nums", id: "twoheads-concat"},
    ...r.concat.map((row, i) => el("tr", {}, el("th", {text: `x${i + 1}`}), ...row.map(v => numCell(v, 3)))));
  $("twoheads-out").replaceChildren(el("div", {class: "grid2"}, ...blocks), el("h3", {text: t("l.concat")}), concat);
}

// -- 5. SmolLM2's heads -------------------------------------------------------------------------------
async function headsRun() {
  $("heads-status").textContent = t("l.loadingmodel");
  try {
    const r = await api("/api/heads", {sentence: $("heads-sentence").value, layer: numberOf("heads-layer", t("l.layer"))});
    await loadPlotly();
    last.heads = r; showErr("heads", null);
    last.headsStatus = r;
    drawHeadsStatus();
    const sel = $("heads-head"), keep = sel.value;
    sel.replaceChildren(...r.weights.map((_, h) => el("option", {value: String(h), text: String(h)})));
    sel.value = keep && Number(keep) < r.n_heads ? keep : "0";
    drawHeads();
  } catch (err) { $("heads-status").textContent = ""; showErr("heads", err); }
}

function drawHeadsStatus() {
  const r = last.headsStatus;
  if (r) $("heads-status").textContent = fill(t("l.headsstatus"), {L: r.n_layers, H: r.n_heads, Hkv: r.n_kv_heads, T: r.tokens.length});
}

function drawHeads() {
  const r = last.heads;
  if (!r) return;
  const h = Number($("heads-head").value || 0);
  const labels = r.tokens.map((tok, i) => `${i}:${tok.trim() || "␣"}`);
  const opts = {labels, zmin: 0, zmax: 1, noText: r.tokens.length > 10, height: 420, margin: 70};
  heatmap("heads-weights", r.weights[h], `${t("l.attw")} · L${r.layer} H${h}`, opts);
  heatmap("heads-importance", r.importance[h], `${t("l.imp")} · L${r.layer} H${h}`, {...opts, colorscale: ORANGES});
}

// -- 6. KV fraction -------------------------------------------------------------------------------------
const kvUpdate = live(async current => {
  try {
    const r = await api("/api/kv-fraction", {heads: numberOf("kv-H", "H"), kv_heads: numberOf("kv-Hkv", "H_kv"),
                                              layers: numberOf("kv-L", "L"), head_dim: numberOf("kv-dk", "d_k")});
    await loadPlotly();
    if (!current()) return;
    last.kv = r; showErr("kv", null); drawKv();
  } catch (err) { showErr("kv", err); }
});

function drawKv() {
  const r = last.kv;
  if (!r) return;
  Plotly.react("kv-chart", [{type: "bar", x: r.rows.map(x => `${x.name} (H_kv=${x.kv_heads})`),
    y: r.rows.map(x => x.kv_cache_bytes_per_token), marker: {color: ["#8c8c8c", "#dd8452", "#55a868"]},
    text: r.rows.map(x => `${fmtBytes(x.kv_cache_bytes_per_token)} · ${fmtNum(x.fraction_of_mha, 4)} ${t("l.fraction")}`),
    textposition: "outside", cliponaxis: false}],
    {height: 280, font: FONT, margin: {l: 70, r: 10, t: 30, b: 40}, yaxis: {title: {text: t("l.kvtoken")}}},
    PLOT_CONFIG);
}

// -- 7/8. exercises and quiz --------------------------------------------------------------------------
const answered = {}, typed = {};

function tolText(tol) { return tol === 0 ? t("q.exact") : `${t("q.tol")}${tol}`; }

function questionNode(q) {
  const out = el("div", {class: "result"});
  const node = el("div", {class: "question", id: "q-" + q.id}, el("div", {class: "qtext", text: q.text[LANG]}));
  if (q.kind === "number") {
    const input = el("input", {type: "text", id: "a-" + q.id, "aria-label": q.text[LANG], inputmode: "decimal",
                               value: typed[q.id] || ""});
    input.addEventListener("input", () => { typed[q.id] = input.value; });
    const btn = el("button", {type: "button", id: "check-" + q.id, text: t("q.check")});
    const go = () => checkAnswer(q, input.value, out);
    btn.addEventListener("click", go);
    input.addEventListener("keydown", e => { if (e.key === "Enter") go(); });
    node.append(el("div", {class: "controls"}, input, btn, el("span", {class: "muted", text: tolText(q.tolerance)})));
  } else {
    const btn = el("button", {type: "button", id: "check-" + q.id, text: t("q.show")});
    btn.addEventListener("click", () => checkAnswer(q, "", out));
    node.append(el("div", {class: "controls"}, btn));
  }
  const sec = QUESTION_SECTIONS[q.id];
  if (sec) node.append(el("p", {class: "muted stuck"}, t("q.stuck"),
    el("a", {href: "#" + sec, text: (document.querySelector(`#${sec} h2`) || {}).textContent || sec})));
  node.append(out);
  if (answered[q.id]) showVerdict(q, answered[q.id], out);
  return node;
}

async function checkAnswer(q, reply, out) {
  try {
    answered[q.id] = await api("/api/check", {id: q.id, answer: reply});
    typed[q.id] = reply;
    showVerdict(q, answered[q.id], out);
  } catch (err) {
    delete answered[q.id];
    updateScore();                 // a refused reply replaces the verdict it had: the score follows at once
    out.replaceChildren(el("div", {class: "err", text: LANG === "en" ? err.message : await translated(err.message)}));
  }
}

function updateScore() {
  const quiz = (last.questions || []).filter(x => x.group === "quiz");
  $("quiz-score").textContent = `${quiz.filter(x => answered[x.id] && answered[x.id].correct).length} / ${quiz.length}`;
}

function showVerdict(q, r, out) {
  const parts = [];
  if (r.correct !== null) {
    parts.push(el("span", {class: "verdict " + (r.correct ? "right" : "wrong"), text: r.correct ? t("q.right") : t("q.wrong")}),
               ` · ${t("q.expected")} ${fmtSig(r.expected)} (${tolText(r.tolerance)})`);
  }
  parts.push(el("div", {class: "explain", text: r.explain[LANG]}));
  out.replaceChildren(...parts);
  updateScore();
}

function drawQuestions() {
  const qs = last.questions || [];
  $("exercises").replaceChildren(...qs.filter(q => q.group === "exercise").map(questionNode));
  $("quiz").replaceChildren(...qs.filter(q => q.group === "quiz").map(questionNode));
}


// -- 0. the case: the planner's numbers for the text's figures ----------------------------------------
const CASE = {model: "example-13b-gqa8", tokens: 128000, passes: 3, gpu_memory_gb: 80, effective_tflops: 100,
              bandwidth_tbps: 2};
async function caseUpdate() {
  try {
    const [gqa, mha, c40] = await Promise.all([api("/api/plan", {options: CASE}), api("/api/plan", {options: {...CASE, kv_heads: 40}}),
      api("/api/plan", {options: {...CASE, gpu_memory_gb: 40, chunks: 8}})]);
    last.case = {gqa, mha, c40}; drawCase();
  } catch (err) { /* the planner page shows planner errors; this card just stays empty */ }
}
function drawCase() {
  const c = last.case;
  if (!c) return;
  const rows = [["case.kv", fmtBytes(c.gqa.kv_cache_bytes) + ` (${fmtBytes(c.gqa.kv_cache_bytes_per_token)} ${t("case.tokens")})`],
    ["case.kvmha", fmtBytes(c.mha.kv_cache_bytes)], ["case.score", fmtBytes(c.gqa.score_matrix_bytes_per_layer)],
    ["case.attn", fmtSeconds(c.gqa.attention_prefill_seconds) + ` · ×${c.gqa.passes} = ${fmtSeconds(c.gqa.attention_prefill_seconds_all_passes)}`],
    ["case.decode", fmtSeconds(c.gqa.decode_kv_read_seconds)], ["case.decision", t("res." + c.gqa.decision)]];
  $("case-numbers").replaceChildren(...rows.map(([k, v]) => el("tr", {}, el("th", {text: t(k)}), el("td", {text: v, "data-key": k}))));
  // 5.4: the planner's figures for each of the text's closing claims (its own words are the card's text above)
  const g = c.gqa, ch = c.c40.chunked;
  const rows54 = [["s54.total", `${fmtBytes(g.total_memory_bytes)} / ${fmtBytes(g.usable_memory_bytes)} · ${t("res." + g.decision)}`],
    ["s54.attn", fmtSeconds(g.attention_prefill_seconds)],
    ["s54.chunks", `${ch.chunks} × ${fmtNum(ch.chunk_tokens, 0)}: ${fmtSeconds(ch.attention_prefill_seconds)} · ${fmtBytes(ch.total_memory_bytes)}`],
    ["s54.decode", fmtSeconds(g.decode_kv_read_seconds)], ["s54.tps", `${fmtNum(g.tokens_per_second_kv_only, 0)} ${t("u.tps")}`]];
  $("case54-numbers").replaceChildren(...rows54.map(([k, v]) => el("tr", {}, el("th", {text: t(k)}), el("td", {text: v, "data-key": k}))));
}

// -- 1.3 q.k variance ------------------------------------------------------------------------------------
const DK = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];
const varianceUpdate = live(async current => {
  const dk = DK[Number($("var-dk").value)];
  $("var-dk-value").textContent = String(dk);
  try {
    const r = await api("/api/lesson/variance", {d_k: dk, samples: numberOf("var-n", t("s13.samples")), seed: numberOf("var-seed", t("l.seed"))});
    await loadPlotly();
    if (!current()) return;
    last.variance = r; showErr("variance", null); drawVariance();
  } catch (err) { showErr("variance", err); }
});
function drawVariance() {
  const r = last.variance;
  if (!r) return;
  $("var-stats").textContent = `d_k = ${r.d_k}: ${t("s13.var")} ${fmtNum(r.var, 2)} · ${t("s13.std")} ${fmtNum(r.std, 2)} ` +
    `(${t("s13.sqrt")} = ${fmtNum(r.sqrt_d_k, 2)}) · ${t("s13.scaled")} ${fmtNum(r.std_scaled, 3)} · ${t("s13.over")} ` +
    `(${fmtNum(r.fp16_limit, 2)}): ${fmtNum(100 * r.share_over_fp16, 1)}% → ${fmtNum(100 * r.share_over_fp16_scaled, 1)}%`;
  const mids = r.hist_edges.slice(0, -1).map((e, i) => (e + r.hist_edges[i + 1]) / 2);
  Plotly.react("var-hist", [{type: "bar", x: mids, y: r.hist, name: "q·k", marker: {color: "#9aa3b2"}},
    {type: "bar", x: mids, y: r.hist_scaled, name: "q·k / √d_k", marker: {color: "#4c72b0"}}],
    {height: 260, font: FONT, margin: {l: 50, r: 10, t: 30, b: 40}, barmode: "overlay", title: {text: t("s13.hist"), font: {size: 12}},
     xaxis: {title: {text: "q·k"}}, yaxis: {title: {text: t("s13.samples")}}, legend: {orientation: "h", y: -0.3},
     shapes: [-1, 1].map(s => ({type: "line", x0: s * r.fp16_limit, x1: s * r.fp16_limit, yref: "paper", y0: 0, y1: 1,
                                 line: {color: "#c0392b", dash: "dot"}}))}, PLOT_CONFIG);
  Plotly.react("var-curve", [{type: "scatter", mode: "lines+markers", x: r.curve.d_k, y: r.curve.std, name: t("s13.std")}],
    {height: 260, font: FONT, margin: {l: 50, r: 10, t: 30, b: 40}, title: {text: t("s13.curve"), font: {size: 12}},
     xaxis: {type: "log", title: {text: "d_k"}}, yaxis: {type: "log", title: {text: t("s13.std")}}, showlegend: false}, PLOT_CONFIG);
}

// -- 2.4 GQA sharing -------------------------------------------------------------------------------------
function divisors(n) { const out = []; for (let d = 1; d <= n; d++) if (n % d === 0) out.push(d); return out; }
const gqaUpdate = live(async current => {
  try {
    const H = numberOf("gqa-H", "H");
    const ds = Number.isInteger(H) && H >= 1 && H <= 64 ? divisors(H) : [1];
    const slider = $("gqa-Hkv");
    slider.max = String(ds.length - 1);
    if (Number(slider.value) > ds.length - 1) slider.value = String(ds.length - 1);
    const Hkv = ds[Number(slider.value)];
    $("gqa-Hkv-value").textContent = String(Hkv);
    const r = await api("/api/lesson/gqa", {heads: H, kv_heads: Hkv});
    if (!current()) return;
    last.gqa = r; showErr("gqa", null); drawGqa();
  } catch (err) { showErr("gqa", err); }
});
const GROUP_COLORS = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c"];
function drawGqa() {
  const r = last.gqa;
  if (!r) return;
  const cell = (label, g, cls) => el("span", {class: "gcell " + cls, style: `background: ${GROUP_COLORS[g % 8]}`, title: label}, label);
  $("gqa-map").replaceChildren(
    el("div", {class: "grow"}, el("b", {text: t("gqa.q") + " "}), ...r.reads.map((g, h) => cell(`Q${h}`, g, "q"))),
    el("div", {class: "grow"}, el("b", {text: t("gqa.reads") + " "}), ...r.reads.map((g, h) => cell(`KV${g}`, g, "kv"))),
    el("p", {class: "stat", text: `${r.kind}: ${t("gqa.per")} = ${r.query_heads_per_kv_head}`}));
}

// -- 3. plain normalization ------------------------------------------------------------------------------
const normUpdate = live(async current => {
  try {
    const r = await api("/api/lesson/normalize", {logits: parseList($("norm-logits").value, "logits")});
    if (!current()) return;
    last.norm = r; showErr("normalize", null); drawNorm();
  } catch (err) { showErr("normalize", err); }
});
function drawNorm() {
  const r = last.norm;
  if (!r) return;
  const row = (label, vals) => el("tr", {}, el("th", {text: label}), ...vals.map(v => numCell(v, 4, v < 0)));
  const rows = [row("z", r.logits), r.divided ? row(t("norm.div"), r.divided) : el("tr", {}, el("th", {text: t("norm.zero")})),
                row(t("norm.sm"), r.softmax)];
  $("norm-table").replaceChildren(el("table", {class: "nums", id: "norm-nums"}, ...rows));
}

// -- 3.1 saturation and the Jacobian ---------------------------------------------------------------------
const jacobianUpdate = live(async current => {
  $("jac-gap-value").textContent = $("jac-gap").value;
  try {
    const r = await api("/api/lesson/jacobian", {logits: [0, Number($("jac-gap").value)], d_k: numberOf("jac-dk", "d_k")});
    await loadPlotly();
    if (!current()) return;
    last.jacobian = r; showErr("jacobian", null); drawJacobian();
  } catch (err) { showErr("jacobian", err); }
});
function jacTable(part) {
  const head = el("tr", {}, el("th", {text: "∂p/∂z"}), ...part.probs.map((_, j) => el("th", {text: `z${j + 1}`})));
  const rows = part.jacobian.map((row, i) => el("tr", {}, el("th", {text: `p${i + 1}`}), ...row.map(v => numCell(v, 4))));
  return el("div", {}, el("p", {class: "stat"}, `z = (${part.logits.map(v => fmtNum(v, 3)).join(", ")}) → ${t("s31.probs")} = (` +
    part.probs.map(v => fmtSig(v)).join(", ") + ")"), el("table", {class: "nums"}, head, ...rows),
    el("p", {class: "stat"}, `${t("s31.offdiag")}: `, el("b", {class: "offdiag", text: fmtSig(part.max_offdiag)}),
      ` · ${t("s31.rowsum")}: ${part.row_sums.map(v => fmtSig(v)).join(", ")}`));
}
function drawJacobian() {
  const r = last.jacobian;
  if (!r) return;
  $("jac-raw").replaceChildren(jacTable(r.raw));
  $("jac-scaled").replaceChildren(jacTable(r.scaled));
  const g = Number($("jac-gap").value);
  Plotly.react("jac-curve", [{type: "scatter", mode: "lines", x: r.curve.gap, y: r.curve.offdiag, name: "|∂p₁/∂z₂|"},
    {type: "scatter", mode: "markers", x: [r.raw.logits[1], r.scaled.logits[1]], y: [r.raw.max_offdiag, r.scaled.max_offdiag],
     marker: {size: 10, color: ["#c0392b", "#1e7b45"]}, text: [t("s31.raw"), t("s31.scaled")], name: `g = ${g}`}],
    {height: 260, font: FONT, margin: {l: 60, r: 10, t: 30, b: 40}, title: {text: t("s31.curve"), font: {size: 12}},
     xaxis: {title: {text: t("s31.gapx")}}, yaxis: {type: "log", title: {text: "|∂p₁/∂z₂|"}, exponentformat: "e"},
     showlegend: false}, PLOT_CONFIG);
}

// -- 4.3 / 4.4 accounts, misconception 2 ----------------------------------------------------------------------
const accountsUpdate = live(async current => {
  try {
    const r = await api("/api/lesson/accounts", {d_model: numberOf("acc-D", "D"), heads: numberOf("acc-H", "H"), tokens: numberOf("acc-T", "T")});
    if (!current()) return;
    last.accounts = r; showErr("accounts", null); drawAccounts();
  } catch (err) { showErr("accounts", err); }
});
function drawAccounts() {
  const r = last.accounts;
  if (!r) return;
  const cols = ["acc.heads", "acc.dk", "acc.params", "acc.flops", "acc.scores"];
  const head = el("tr", {}, ...cols.map(c => el("th", {text: t(c)})));
  const rows = r.rows.map(x => el("tr", {}, ...[x.heads, x.d_k, x.params, x.attention_flops, x.score_elements].map(v => numCell(v, 0))));
  $("acc-table").replaceChildren(el("table", {class: "nums", id: "acc-nums"}, head, ...rows),
    el("p", {class: "stat", text: `${t("acc.d2")} = 4 × ${fmtNum(r.d_model_squared, 0)}`}));
  $("myth2").textContent = fill(t("myth2"), {H: r.rows[0].heads, p1: fmtNum(r.rows[0].params, 0),
    p2: fmtNum(r.rows[r.rows.length - 1].params, 0), d2: `4 × ${fmtNum(r.d_model_squared, 0)}`});
}

// -- 6, misconception 3: calibration ---------------------------------------------------------------------------
async function calibrationUpdate() {
  try { last.calib = await api("/api/lesson/calibration", {logits: [2, 1, 0]}); drawCalibration(); } catch (err) { /* static card stays */ }
}
function drawCalibration() {
  const r = last.calib;
  if (!r) return;
  const head = el("tr", {}, el("th", {text: t("calib.t")}), el("th", {text: t("calib.p") + ", z = (" + r.logits.join(", ") + ")"}), el("th", {text: t("calib.top")}));
  $("calib-table").replaceChildren(el("table", {class: "nums", id: "calib-nums"}, head, ...r.rows.map(x =>
    el("tr", {}, el("td", {text: fmtNum(x.temperature, 2)}), el("td", {text: x.probs.map(p => fmtNum(p, 3)).join(", ")}),
       el("td", {text: `z${x.argmax + 1}`})))));
}

// -- 5.2 note and 9.2 -----------------------------------------------------------------------------------------
async function notesUpdate() {
  try { last.notes = await api("/api/lesson/notes"); drawNotes(); } catch (err) { /* the note stays empty */ }
}
function drawNotes() {
  const n = last.notes;
  if (!n) return;
  const h = n.two_heads;
  $("twoheads-note").textContent = fill(t("th.note"), {self: fmtNum(h.scores_head1[0][0], 3), other: fmtNum(h.scores_head1[0][1], 3),
    w1: fmtNum(h.weights_head1[0][0], 2), w2: fmtNum(h.weights_head1[0][1], 2), c1: fmtNum(h.concat[0][0], 2),
    c2: fmtNum(h.concat[0][1], 2), u1: fmtNum(h.concat_uniform[0][0], 2), u2: fmtNum(h.concat_uniform[0][1], 2)});
}

// -- 8. the shape code, run --------------------------------------------------------------------------------------
const shapesUpdate = live(async current => {
  try {
    const r = await api("/api/lesson/shapes", {batch: numberOf("sh-B", "B"), tokens: numberOf("sh-T", "T"),
                                               d_model: numberOf("sh-D", "D"), heads: numberOf("sh-H", "H")});
    if (!current()) return;
    last.shapes = r; showErr("shapes", null); drawShapes();
  } catch (err) { showErr("shapes", err); }
});
function drawShapes() {
  const r = last.shapes;
  if (!r) return;
  const head = el("tr", {}, el("th", {text: t("s8.code")}), el("th", {text: t("s8.expect")}), el("th", {text: t("s8.got")}));
  $("shape-steps").replaceChildren(el("table", {class: "nums code-table", id: "shape-nums"}, head, ...r.steps.map(s =>
    el("tr", {}, el("td", {}, el("code", {text: s.code})), el("td", {}, el("code", {text: s.expected})),
       el("td", {}, el("code", {text: "[" + s.shape.join(", ") + "]"}))))));
  $("shape-checks").textContent = fill(t("s8.checks"), {rs: fmtSig(r.row_sum_max_error), up: fmtSig(r.upper_max),
                                                         lib: fmtSig(r.matches_multihead_attention)});
  $("w4").textContent = t("s8.w4") + fill(t("s8.w4demo"), {shape: "[" + r.wrong_reshape_shape.join(", ") + "]",
    diff: fmtNum(r.wrong_reshape_max_diff, 3), scale: fmtNum(r.output_max_abs, 3)});
}

function drawToc() {
  $("toc").replaceChildren(...[...document.querySelectorAll("main.lesson > section")].map(sec =>
    el("a", {href: "#" + sec.id, text: sec.dataset.section === "quiz" ? t("toc.quiz") : sec.dataset.section})));
}

// -- wiring ---------------------------------------------------------------------------------------------
async function start() {
  wireLanguageButton();
  applyLanguage();
  [2, 1, 0].forEach(addLogit);
  $("logit-add").addEventListener("click", () => { addLogit(0); softmaxUpdate(); });
  $("logit-remove").addEventListener("click", () => { const ins = logitInputs(); if (ins.length > 1) ins.at(-1).remove(); softmaxUpdate(); });
  ["temp", "shift"].forEach(id => $(id).addEventListener("input", softmaxUpdate));
  $("preset1").addEventListener("click", () => { $("ov-logits").value = "1000, 999, 998"; $("ov-scale").checked = false; overflowUpdate(); });
  $("preset2").addEventListener("click", () => { $("ov-logits").value = "128, 0"; $("ov-dk").value = "128"; overflowUpdate(); });
  ["ov-logits", "ov-dtype", "ov-submax", "ov-scale", "ov-dk"].forEach(id => $(id).addEventListener("input", overflowUpdate));
  ["ov-dtype", "ov-submax", "ov-scale"].forEach(id => $(id).addEventListener("change", overflowUpdate));
  ["causal-T", "causal-seed"].forEach(id => $(id).addEventListener("input", causalUpdate));
  ["x1", "x2", "th-causal"].forEach(id => $(id).addEventListener("input", twoHeadsUpdate));
  $("th-causal").addEventListener("change", twoHeadsUpdate);
  $("heads-run").addEventListener("click", headsRun);
  $("heads-layer").addEventListener("change", () => { if (last.heads) headsRun(); });
  $("heads-head").addEventListener("change", drawHeads);
  ["kv-H", "kv-Hkv", "kv-L", "kv-dk"].forEach(id => $(id).addEventListener("input", kvUpdate));
  $("t-half").addEventListener("click", () => { $("temp").value = "0.5"; softmaxUpdate(); });
  $("t-two").addEventListener("click", () => { $("temp").value = "2"; softmaxUpdate(); });
  ["var-dk", "var-n", "var-seed"].forEach(id => $(id).addEventListener("input", varianceUpdate));
  ["gqa-H", "gqa-Hkv"].forEach(id => $(id).addEventListener("input", gqaUpdate));
  $("norm-logits").addEventListener("input", normUpdate);
  ["jac-gap", "jac-dk"].forEach(id => $(id).addEventListener("input", jacobianUpdate));
  ["acc-D", "acc-H", "acc-T"].forEach(id => $(id).addEventListener("input", accountsUpdate));
  ["sh-B", "sh-T", "sh-D", "sh-H"].forEach(id => $(id).addEventListener("input", shapesUpdate));
  LANG_LISTENERS.push(() => {
    drawOverflow(); drawCausal(); drawTwoHeads(); drawHeadsStatus(); drawHeads(); drawKv(); drawQuestions(); drawCase(); drawVariance();
    drawGqa(); drawNorm(); drawJacobian(); drawAccounts(); drawCalibration(); drawNotes(); drawShapes(); drawToc();
    for (const [slot, err] of Object.entries(lastErr)) if (err) showErr(slot, err);
  });
  drawToc();
  loadPlotlyAfterPaint();
  const sections = Promise.all([softmaxUpdate, overflowUpdate, causalUpdate, twoHeadsUpdate, kvUpdate, varianceUpdate,
    gqaUpdate, normUpdate, jacobianUpdate, accountsUpdate, shapesUpdate].map(f => f.now())
    .concat([caseUpdate(), calibrationUpdate(), notesUpdate()]));
  last.questions = await api("/api/questions");
  drawQuestions();
  await sections;
  document.body.dataset.ready = "1";
}

domReady.then(start);
