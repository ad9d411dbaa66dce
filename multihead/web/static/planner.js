// The planner page: the form -> /api/plan (the CLI's `plan --json`) -> plan_view.js.
"use strict";

const DTYPES = ["fp32", "fp16", "bf16", "fp8", "int8", "int4"];
const FIELDS = ["model", "gpu", "gpu_memory_gb", "effective_tflops", "bandwidth_tbps", "gpus", "weights_dtype", "kv_dtype",
                "tokens", "batch", "passes", "engine", "engine_version", "batching", "concurrency", "input_len", "output_len",
                "data_parallel_size", "expert_parallel_size", "enable_dp_attention", "measured"];
const FIGURES = ["gpu_memory_gb", "effective_tflops", "bandwidth_tbps"];
// The reference text's case (sections 0 and 5.4; `make plan`): its model, T, passes and GPU figures.
const TEXT_CASE = {model: "example-13b-gqa8", tokens: "128000", passes: "3", gpu_memory_gb: "80", effective_tflops: "100",
                   bandwidth_tbps: "2", gpus: "1", batch: "1"};
const state = {config: null, configName: null, seq: 0, plan: null, curve: null};
// The first plan is asked for as soon as this script runs; plotly.js (4.8 MB) loads after the
// first answer is on screen (common.js loadPlotlyAfterPaint), while the server computes the
// memory-vs-context curve that it draws.
const domReady = new Promise(r => document.addEventListener("DOMContentLoaded", r));

// The first box whose text the browser cannot read as a number (its value reads "" then), or null.
function unreadableField() { return FIELDS.find(f => unreadable(document.getElementById(f))) || null; }

function options() {
  const o = {};
  const figures = FIGURES.some(f => (document.getElementById(f).value || "") !== "");
  for (const f of FIELDS) {
    const node = document.getElementById(f);
    if (node.type === "checkbox") { if (node.checked) o[f] = true; continue; }
    const v = node.value || node.dataset.default || "";
    if (f === "gpu" && figures) continue;             // the stated figures replace the catalog GPU
    if (v !== "" && !(f === "model" && state.config !== null)) o[f] = v;
  }
  return o;
}

function isTextCase(o) {
  return Object.entries(TEXT_CASE).every(([k, v]) => String(o[k] || "") === v || (k === "model" && state.config === null && o.model === v))
    && state.config === null;
}

function applyPreset() {
  for (const [k, v] of Object.entries(TEXT_CASE)) document.getElementById(k).value = v;
  for (const f of ["weights_dtype", "kv_dtype"]) document.getElementById(f).value = "";
  clearTimeout(timer);
  update();
}

// Server-made text in the page's language: the message catalogue (/api/messages) at the edge.
async function planTexts(plan) {
  if (LANG === "en") return null;
  try { return (await api("/api/messages", {plan, lang: LANG})).plan; } catch (e) { return null; }
}

// A value as one shell word (the measured run's text may hold spaces: "ttft=150 ms").
const shellWord = v => (/^[A-Za-z0-9_.,=:\/@%+-]+$/.test(String(v)) ? String(v) : `'${String(v).replace(/'/g, "'\\''")}'`);

function cliLine(o) {
  const model = state.config !== null ? "uploaded/config.json" : (o.model || "");
  const flags = Object.entries(o).filter(([k]) => k !== "model")
    .map(([k, v]) => (v === true ? `--${k.replace(/_/g, "-")}` : `--${k.replace(/_/g, "-")} ${shellWord(v)}`));
  return ["multihead plan", model, ...flags, "--json"].join(" ");
}

async function showError(err) {
  state.error = err || null;
  document.querySelectorAll(".err").forEach(e => { e.textContent = ""; });
  if (!err) return;
  let field = err.field;
  if (!err.local && field === "gpu" && FIGURES.some(f => document.getElementById(f).value !== "")) field = "gpu_memory_gb";
  if (!FIELDS.includes(field)) field = state.config !== null ? "model" : "";
  const slot = document.querySelector(`.err[data-field="${field}"]`) || document.getElementById("form-error");
  slot.textContent = await errorText(err.message);
}

async function update() {
  const seq = ++state.seq, o = options();
  document.getElementById("cli").textContent = cliLine(o);
  const bad = unreadableField();
  if (bad !== null) {                  // never a plan for another input than the one on screen
    await domReady;
    await showError({field: bad, local: true, message: () => t("err.unreadable").replace("{name}", bad)});
    document.getElementById("results").classList.add("stale");
    document.body.dataset.ready = String(seq);
    return;
  }
  const body = {options: o, config: state.config};
  try {
    const plan = await api("/api/plan", body);
    if (seq !== state.seq) return;
    showError(null);
    document.getElementById("results").classList.remove("stale");
    state.plan = plan;
    await domReady;
    PLAN_TEXTS = await planTexts(plan);
    if (seq !== state.seq) return;
    await renderPlanView(plan, null);
    if (window.__firstAnswerMs === undefined) window.__firstAnswerMs = performance.now();
    loadPlotlyAfterPaint();
    const [curve] = await Promise.all([api("/api/plan/curve", body), renderCompare(o, plan, seq)]);
    if (seq !== state.seq) return;
    state.curve = curve;
    await renderCurve(document.getElementById("curve"), curve);
    document.body.dataset.ready = String(seq);
  } catch (err) {
    if (seq !== state.seq) return;
    if (!(err instanceof ApiError)) throw err;
    await domReady;
    await showError(err);
    document.getElementById("results").classList.add("stale");
    document.body.dataset.ready = String(seq);
  }
}

// Typing is debounced (one plan per pause, not per keystroke); a choice in a list is final at once.
let timer = null;
function soon() { clearTimeout(timer); timer = setTimeout(update, 250); }

function fill(select, names, selected, blank) {
  select.replaceChildren(...(blank ? [el("option", {value: "", "data-i18n": "plan.default", text: t("plan.default")})] : []),
    ...names.map(n => el("option", {value: n, text: n})));
  if (selected) select.value = selected;
}

function useConfig(name, text) {
  state.config = text; state.configName = name;
  document.getElementById("dropped").hidden = false;
  document.getElementById("dropped-name").textContent = `${t("plan.dropped")}: ${name}`;
  document.getElementById("model").disabled = true;
  update();
}

function wireDrop() {
  const drop = document.getElementById("drop"), input = document.getElementById("config-file");
  const read = file => file && file.text().then(text => useConfig(file.name, text));
  drop.addEventListener("dragover", e => { e.preventDefault(); drop.classList.add("over"); });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", e => { e.preventDefault(); drop.classList.remove("over"); read(e.dataTransfer.files[0]); });
  drop.addEventListener("click", e => { if (e.target.id !== "drop-clear") input.click(); });
  drop.addEventListener("keydown", e => {            // a keyboard user opens the file chooser as a click would
    if ((e.key === "Enter" || e.key === " ") && e.target === drop) { e.preventDefault(); input.click(); }
  });
  input.addEventListener("change", () => read(input.files[0]));
  document.getElementById("drop-clear").addEventListener("click", e => {
    e.preventDefault(); e.stopPropagation();
    state.config = null; input.value = "";
    document.getElementById("dropped").hidden = true;
    document.getElementById("model").disabled = false;
    update();
  });
}

async function start(catalogP) {
  // Enter in a box must not submit the form (a page reload): the plan follows every change already
  document.getElementById("plan-form").addEventListener("submit", e => e.preventDefault());
  wireLanguageButton();
  applyLanguage();
  const cat = await catalogP, model = document.getElementById("model"), gpu = document.getElementById("gpu");
  fill(model, cat.models, model.dataset.default);
  fill(gpu, cat.gpus, gpu.dataset.default);
  fill(document.getElementById("weights_dtype"), DTYPES, "", true);
  fill(document.getElementById("kv_dtype"), DTYPES, "", true);
  fill(document.getElementById("engine"), cat.engines || [], "", true);
  fill(document.getElementById("batching"), cat.batching || [], "", true);
  for (const f of FIELDS) {
    const node = document.getElementById(f);
    if (node.tagName === "SELECT" || node.type === "checkbox") node.addEventListener("change", () => { clearTimeout(timer); update(); });
    else node.addEventListener("input", soon);
  }
  wireDrop();
  document.getElementById("preset-text").addEventListener("click", applyPreset);
  LANG_LISTENERS.push(async () => {
    if (state.plan) {
      PLAN_TEXTS = await planTexts(state.plan);
      await renderPlanView(state.plan, state.curve);
      if (state.compare) drawCompare(state.compare);
    }
    if (state.error) showError(state.error);
  });
}

// MHA / GQA / MQA of this model side by side (the text's 2.4 and 5.4), and in the text's case the
// 40 GB card: every number is a /api/plan answer with one option changed (--kv-heads, --gpu-memory-gb, --chunks).
async function renderCompare(o, plan, seq) {
  const H = plan.n_heads, Hkv = plan.n_kv_heads;
  const kinds = [...new Set([H, Hkv, 1])].sort((a, b) => b - a);
  const body = opts => ({options: opts, config: state.config});
  try {
    const rows = await Promise.all(kinds.map(k => (k === Hkv ? Promise.resolve(plan) : api("/api/plan", body({...o, kv_heads: k})))));
    let card40 = null;
    if (isTextCase(o)) {
      const o40 = {...o, gpu_memory_gb: "40"};
      const [fewest, text8] = await Promise.all([api("/api/plan", body(o40)), api("/api/plan", body({...o40, chunks: 8}))]);
      card40 = {fewest, text8};
    }
    if (seq !== state.seq) return;
    state.compare = {rows, card40, Hkv};
    drawCompare(state.compare);
  } catch (err) {
    if (seq !== state.seq) return;
    state.compare = null;
    document.getElementById("compare").hidden = true;
    document.getElementById("card40").hidden = true;
  }
}

function kindName(p) { return p.n_kv_heads === p.n_heads ? "MHA" : p.n_kv_heads === 1 ? "MQA" : `GQA-${p.n_kv_heads}`; }

function drawCompare(c) {
  const cols = [["cmp.kind", p => `${kindName(p)} (H_kv = ${p.n_kv_heads})${p.n_kv_heads === c.Hkv ? " ◀" : ""}`],
    ["cmp.kvtoken", p => fmtBytes(p.kv_cache_bytes_per_token)], ["cmp.kv", p => fmtBytes(p.kv_cache_bytes)],
    ["cmp.total", p => fmtBytes(p.total_memory_bytes)], ["cmp.fits", p => (p.fits ? t("yes") : t("no"))],
    ["cmp.decision", p => t("res." + p.decision) + (p.decision === "chunked" ? ` × ${p.chunks}` : "")],
    ["cmp.score", p => fmtBytes(p.score_matrix_bytes_per_layer)], ["cmp.attn", p => fmtSeconds(p.attention_prefill_seconds)],
    ["cmp.decode", p => fmtSeconds(p.decode_kv_read_seconds)]];
  const table = el("table", {class: "nums", id: "compare-nums"},
    el("tr", {}, ...cols.map(([k]) => el("th", {text: t(k)}))),
    ...c.rows.map(p => el("tr", {"data-kv-heads": String(p.n_kv_heads)}, ...cols.map(([k, f]) => el("td", {text: f(p), "data-key": k})))));
  document.getElementById("compare-table").replaceChildren(table, el("p", {class: "muted", text: t("cmp.note")}));
  document.getElementById("compare").hidden = false;
  const card = document.getElementById("card40");
  card.hidden = !c.card40;
  if (!c.card40) return;
  // Two fits, each under its own name: the memory table's (chunked.fits: the chunk's total against the
  // usable line) and the one the decision was made on (decision_fits, by decided_by's account: the
  // serving engine's or the memory table's). They can differ; the card shows both, never one under
  // the other's name.
  const yesNo = b => (b === true ? t("yes") : b === false ? t("no") : "–");
  const row = (label, p) => el("tr", {"data-row": label}, el("th", {text: t(label)}),
    el("td", {text: `${p.chunks} × ${fmtNum(p.chunked.chunk_tokens, 0)}`, "data-key": "split"}),
    el("td", {text: fmtBytes(p.chunked.total_memory_bytes), "data-key": "each"}),
    el("td", {text: yesNo(p.chunked.fits), "data-key": "tablefits"}),
    el("td", {text: `${yesNo(p.decision_fits)} (${t(p.decided_by === "engine" ? "c40.byengine" : "c40.bytable")})`,
              "data-key": "decfits"}),
    el("td", {text: fmtSeconds(p.chunked.attention_prefill_seconds), "data-key": "attn"}));
  document.getElementById("card40-table").replaceChildren(el("table", {class: "nums", id: "card40-nums"},
    el("tr", {}, el("th", {}), ...["c40.split", "c40.each", "c40.tablefits", "c40.decfits", "c40.attn"].map(k => el("th", {text: t(k)}))),
    row("c40.text", c.card40.text8), row("c40.fewest", c.card40.fewest)),
    el("p", {class: "muted", text: `${t("c40.usable")}: ${fmtBytes(c.card40.fewest.usable_memory_bytes)} · ${t("cmp.total")}: ` +
      fmtBytes(c.card40.fewest.total_memory_bytes)}));
}

const catalogP = api("/api/catalog");
if (new URLSearchParams(location.search).get("preset") === "text") {
  domReady.then(() => start(catalogP)).then(applyPreset);
} else {
  update();
  domReady.then(() => start(catalogP));
}
