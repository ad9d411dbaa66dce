// The lesson playground: every number comes from the server (multihead's softmax, attention,
// planner); this file only collects inputs and draws. plotly.js (4.8 MB, about a second of script
// on a slow machine) loads after the text is on screen (common.js loadPlotlyAfterPaint); the charts
// wait for it.
"use strict";

const domReady = new Promise(r => document.addEventListener("DOMContentLoaded", r));
const last = {};                 // the latest server answer per section, redrawn on language change
const $ = id => document.getElementById(id);

function parseList(text) { return text.split(/[,\s，]+/).filter(Boolean).map(Number); }

function showErr(slot, err) {
  const node = document.querySelector(`.err[data-field="${slot}"]`);
  if (node) node.textContent = err ? err.message : "";
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

function numCell(v, digits) {
  const bad = typeof v === "string";
  return el("td", {class: bad ? "bad-num" : "", text: fmtNum(v, digits)});
}

// -- 1. softmax, temperature, shift --------------------------------------------------------------
function logitInputs() { return [...document.querySelectorAll("#logits input")]; }

function addLogit(value) {
  const input = el("input", {type: "number", class: "logit", step: "0.5", value: String(value)});
  input.addEventListener("input", softmaxUpdate);
  $("logits").append(input);
}

const softmaxUpdate = live(async current => {
  $("temp-value").textContent = $("temp").value;
  $("shift-value").textContent = $("shift").value;
  const body = {logits: logitInputs().map(i => Number(i.value)), temperature: Number($("temp").value),
                shift: Number($("shift").value), dtype: "fp64"};
  try {
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
  const body = {logits: parseList($("ov-logits").value), dtype: $("ov-dtype").value,
                subtract_max: $("ov-submax").checked, d_k: $("ov-scale").checked ? Number($("ov-dk").value) : null};
  try {
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
  const r = await api("/api/causal", {T: Number($("causal-T").value), seed: Number($("causal-seed").value) || 0});
  await loadPlotly();
  if (!current()) return;
  last.causal = r; drawCausal();
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
    const r = await api("/api/two-heads", {x1: parseList($("x1").value), x2: parseList($("x2").value),
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
    const r = await api("/api/heads", {sentence: $("heads-sentence").value, layer: Number($("heads-layer").value)});
    await loadPlotly();
    last.heads = r; showErr("heads", null);
    $("heads-status").textContent = `SmolLM2-135M: ${r.n_layers} layers, H=${r.n_heads}, H_kv=${r.n_kv_heads}; ${r.tokens.length} tokens`;
    const sel = $("heads-head"), keep = sel.value;
    sel.replaceChildren(...r.weights.map((_, h) => el("option", {value: String(h), text: String(h)})));
    sel.value = keep && Number(keep) < r.n_heads ? keep : "0";
    drawHeads();
  } catch (err) { $("heads-status").textContent = ""; showErr("heads", err); }
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
    const r = await api("/api/kv-fraction", {heads: Number($("kv-H").value), kv_heads: Number($("kv-Hkv").value),
                                              layers: Number($("kv-L").value), head_dim: Number($("kv-dk").value)});
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
const answered = {};

function tolText(tol) { return tol === 0 ? t("q.exact") : `${t("q.tol")}${tol}`; }

function questionNode(q) {
  const out = el("div", {class: "result"});
  const node = el("div", {class: "question", id: "q-" + q.id}, el("div", {class: "qtext", text: q.text[LANG]}));
  if (q.kind === "number") {
    const input = el("input", {type: "text", id: "a-" + q.id});
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
  node.append(out);
  if (answered[q.id]) showVerdict(q, answered[q.id], out);
  return node;
}

async function checkAnswer(q, reply, out) {
  try {
    answered[q.id] = await api("/api/check", {id: q.id, answer: reply});
    showVerdict(q, answered[q.id], out);
  } catch (err) {
    out.replaceChildren(el("div", {class: "err", text: err.message}));
  }
}

function showVerdict(q, r, out) {
  const parts = [];
  if (r.correct !== null) {
    parts.push(el("span", {class: "verdict " + (r.correct ? "right" : "wrong"), text: r.correct ? t("q.right") : t("q.wrong")}),
               ` · ${t("q.expected")} ${fmtNum(r.expected, 6)} (${tolText(r.tolerance)})`);
  }
  parts.push(el("div", {class: "explain", text: r.explain[LANG]}));
  out.replaceChildren(...parts);
  const quiz = (last.questions || []).filter(x => x.group === "quiz");
  $("quiz-score").textContent = `${quiz.filter(x => answered[x.id] && answered[x.id].correct).length} / ${quiz.length}`;
}

function drawQuestions() {
  const qs = last.questions || [];
  $("exercises").replaceChildren(...qs.filter(q => q.group === "exercise").map(questionNode));
  $("quiz").replaceChildren(...qs.filter(q => q.group === "quiz").map(questionNode));
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
  LANG_LISTENERS.push(() => { drawOverflow(); drawCausal(); drawTwoHeads(); drawHeads(); drawKv(); drawQuestions(); });
  loadPlotlyAfterPaint();
  const sections = Promise.all([softmaxUpdate, overflowUpdate, causalUpdate, twoHeadsUpdate, kvUpdate].map(f => f.now()));
  last.questions = await api("/api/questions");
  drawQuestions();
  await sections;
  document.body.dataset.ready = "1";
}

domReady.then(start);
