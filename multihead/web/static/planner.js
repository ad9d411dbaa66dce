// The planner page: the form -> /api/plan (the CLI's `plan --json`) -> plan_view.js.
"use strict";

const DTYPES = ["fp32", "fp16", "bf16", "fp8", "int8", "int4"];
const FIELDS = ["model", "gpu", "gpus", "weights_dtype", "kv_dtype", "tokens", "batch", "passes"];
const state = {config: null, configName: null, seq: 0, plan: null, curve: null};
// The first plan is asked for as soon as this script runs; plotly.js (4.8 MB) loads after the
// first answer is on screen (common.js loadPlotlyAfterPaint), while the server computes the
// memory-vs-context curve that it draws.
const domReady = new Promise(r => document.addEventListener("DOMContentLoaded", r));

function options() {
  const o = {};
  for (const f of FIELDS) {
    const node = document.getElementById(f);
    const v = node.value || node.dataset.default || "";
    if (v !== "" && !(f === "model" && state.config !== null)) o[f] = v;
  }
  return o;
}

function cliLine(o) {
  const model = state.config !== null ? "uploaded/config.json" : (o.model || "");
  const flags = Object.entries(o).filter(([k]) => k !== "model").map(([k, v]) => `--${k.replace(/_/g, "-")} ${v}`);
  return ["multihead plan", model, ...flags, "--json"].join(" ");
}

function showError(err) {
  document.querySelectorAll(".err").forEach(e => { e.textContent = ""; });
  if (!err) return;
  let field = err.field;
  if (!FIELDS.includes(field)) field = state.config !== null ? "model" : "";
  const slot = document.querySelector(`.err[data-field="${field}"]`) || document.getElementById("form-error");
  slot.textContent = err.message;
}

async function update() {
  const seq = ++state.seq, o = options();
  document.getElementById("cli").textContent = cliLine(o);
  const body = {options: o, config: state.config};
  try {
    const plan = await api("/api/plan", body);
    if (seq !== state.seq) return;
    showError(null);
    document.getElementById("results").classList.remove("stale");
    state.plan = plan;
    await domReady;
    await renderPlanView(plan, null);
    loadPlotlyAfterPaint();
    const curve = await api("/api/plan/curve", body);
    if (seq !== state.seq) return;
    state.curve = curve;
    await renderCurve(document.getElementById("curve"), curve);
    document.body.dataset.ready = String(seq);
  } catch (err) {
    if (seq !== state.seq) return;
    if (!(err instanceof ApiError)) throw err;
    await domReady;
    showError(err);
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
  wireLanguageButton();
  applyLanguage();
  const cat = await catalogP, model = document.getElementById("model"), gpu = document.getElementById("gpu");
  fill(model, cat.models, model.dataset.default);
  fill(gpu, cat.gpus, gpu.dataset.default);
  fill(document.getElementById("weights_dtype"), DTYPES, "", true);
  fill(document.getElementById("kv_dtype"), DTYPES, "", true);
  for (const f of FIELDS) {
    const node = document.getElementById(f);
    if (node.tagName === "SELECT") node.addEventListener("change", () => { clearTimeout(timer); update(); });
    else node.addEventListener("input", soon);
  }
  wireDrop();
  LANG_LISTENERS.push(() => { if (state.plan) renderPlanView(state.plan, state.curve); });
}

const catalogP = api("/api/catalog");
update();
domReady.then(() => start(catalogP));
