// The search page: the form -> POST /api/search (the JSON of `multihead plan --search --json`) ->
// a ranked table, the winner and its launch command, and the Pareto plot. No model quantity is
// computed here: every number is the server's.
"use strict";

Object.assign(I18N.en, {
  "nav.search": "Find a configuration",
  "s.title": "Which configuration meets my latency target?", "s.model": "Model",
  "s.input": "prompt tokens", "s.output": "output tokens", "s.load": "Load",
  "s.conc": "requests in flight (closed loop)", "s.rate": "requests per second (Poisson arrivals)", "s.loadv": "value",
  "s.slo": "Targets (empty: none)", "s.ttft": "TTFT ≤ (ms)", "s.tpot": "TPOT ≤ (ms)", "s.e2e": "whole request ≤ (s)",
  "s.gpus": "GPUs allowed", "s.gpusmax": "GPUs in all, at most", "s.objective": "Rank by",
  "s.obj.gpus": "fewest GPUs", "s.obj.cost": "lowest cost per million output tokens", "s.obj.tput": "most output tokens/s per GPU",
  "s.go": "Search", "s.busy": "Searching…", "s.ranked": "Ranked configurations (best first)",
  "s.pareto": "Output tokens/s per GPU against TPOT: the Pareto front and the ranked results",
  "s.summary": "{n} configurations evaluated in {sec}; {f} carry the load, {m} meet the targets.",
  "s.best": "Best", "s.none": "Nothing meets the targets.", "s.closest": "Closest miss",
  "s.launch": "Launch command", "s.binding": "binding limit",
  "s.bandnote": "≈: within the time model's error band of the best (it cannot tell them apart; measure).",
  "s.c.gpu": "GPU", "s.c.gpus": "GPUs", "s.c.tp": "TP", "s.c.pp": "PP", "s.c.dp": "replicas", "s.c.w": "weights",
  "s.c.kv": "KV cache", "s.c.seqs": "max seqs", "s.c.ttft": "TTFT", "s.c.tpot": "TPOT", "s.c.e2e": "request",
  "s.c.tps": "tokens/s per GPU", "s.c.usd": "$ per M tokens", "s.c.bind": "binds", "s.c.ok": "meets",
  "s.ckpt": "checkpoint", "s.front": "Pareto front", "s.results": "ranked results", "s.target": "TPOT target",
  "s.x": "TPOT (ms per output token)", "s.y": "output tokens/s per GPU",
  "b.tpot": "TPOT", "b.ttft": "TTFT", "b.e2e": "request latency", "b.memory": "memory", "b.kv_pool": "KV pool",
  "b.max_num_seqs": "max seqs", "b.throughput": "throughput", "b.unsupported": "unsupported", "b.memory-bound": "memory",
});
Object.assign(I18N.zh, {
  "nav.search": "找配置",
  "s.title": "哪种配置能满足我的延迟目标？", "s.model": "模型",
  "s.input": "提示词 token 数", "s.output": "输出 token 数", "s.load": "负载",
  "s.conc": "同时在途的请求数（闭环）", "s.rate": "每秒到达的请求数（泊松到达）", "s.loadv": "数值",
  "s.slo": "目标（留空表示不限）", "s.ttft": "首 token 延迟 TTFT ≤（毫秒）", "s.tpot": "每个输出 token 的时间 TPOT ≤（毫秒）",
  "s.e2e": "整个请求 ≤（秒）", "s.gpus": "允许的 GPU", "s.gpusmax": "GPU 总数上限", "s.objective": "排序依据",
  "s.obj.gpus": "GPU 最少", "s.obj.cost": "每百万输出 token 成本最低", "s.obj.tput": "每块 GPU 的输出 token/s 最高",
  "s.go": "搜索", "s.busy": "搜索中…", "s.ranked": "排好序的配置（最好的在前）",
  "s.pareto": "每块 GPU 的输出 token/s 与 TPOT：帕累托前沿与排序结果",
  "s.summary": "共评估 {n} 种配置，用时 {sec}；{f} 种能承载该负载，{m} 种满足目标。",
  "s.best": "最佳", "s.none": "没有配置满足目标。", "s.closest": "最接近的一个",
  "s.launch": "启动命令", "s.binding": "起约束作用的限制",
  "s.bandnote": "≈：与最佳结果之差在时间模型的误差范围内（模型分辨不出二者，需实测）。",
  "s.c.gpu": "GPU", "s.c.gpus": "GPU 数", "s.c.tp": "TP", "s.c.pp": "PP", "s.c.dp": "副本", "s.c.w": "权重",
  "s.c.kv": "KV 缓存", "s.c.seqs": "最大序列数", "s.c.ttft": "TTFT", "s.c.tpot": "TPOT", "s.c.e2e": "请求",
  "s.c.tps": "每 GPU token/s", "s.c.usd": "每百万 token 美元", "s.c.bind": "约束", "s.c.ok": "达标",
  "s.ckpt": "检查点原样", "s.front": "帕累托前沿", "s.results": "排序结果", "s.target": "TPOT 目标",
  "s.x": "TPOT（每个输出 token 的毫秒数）", "s.y": "每块 GPU 的输出 token/s",
  "b.tpot": "TPOT", "b.ttft": "TTFT", "b.e2e": "请求延迟", "b.memory": "显存", "b.kv_pool": "KV 池",
  "b.max_num_seqs": "最大序列数", "b.throughput": "吞吐", "b.unsupported": "不支持", "b.memory-bound": "显存",
  "yes": "是", "no": "否",
});

const S = {seq: 0, result: null};

function fill(template, values) { return template.replace(/\{(\w+)\}/g, (_, k) => values[k]); }

function value(id) { return document.getElementById(id).value.trim(); }

// The number boxes and the field each is sent as (the server's error names that field too).
const NUMBER_BOXES = {"s-input_len": "input_len", "s-output_len": "output_len", "s-load": null, "s-ttft": "slo",
                      "s-tpot": "slo", "s-e2e": "slo", "s-gpus_max": "gpus_max"};
// The first box whose text the browser cannot read as a number ("1e": its value reads "" as if
// empty, and an empty target means none): [field, name], or null.
function unreadableBox() {
  const id = Object.keys(NUMBER_BOXES).find(i => unreadable(document.getElementById(i)));
  if (!id) return null;
  const load = document.getElementById("s-load-r").checked ? "request_rate" : "concurrency";
  const field = NUMBER_BOXES[id] || load, name = {"s-ttft": "slo ttft", "s-tpot": "slo tpot", "s-e2e": "slo e2e"}[id] || field;
  return [field, name];
}

function searchOptions() {
  const o = {model: value("s-model"), input_len: value("s-input_len"), output_len: value("s-output_len"),
             gpus_max: value("s-gpus_max"), objective: value("s-objective")};
  const load = document.getElementById("s-load-r").checked ? "request_rate" : "concurrency";
  o[load] = value("s-load");
  const slo = [];
  if (value("s-ttft")) slo.push(`ttft=${value("s-ttft")}ms`);
  if (value("s-tpot")) slo.push(`tpot=${value("s-tpot")}ms`);
  if (value("s-e2e")) slo.push(`e2e=${value("s-e2e")}s`);
  if (slo.length) o.slo = slo.join(",");
  const gpus = [...document.querySelectorAll("#s-gpus input:checked")].map(n => n.value);
  if (gpus.length) o.gpu = gpus.join(",");
  return o;
}

async function showErrors(err) {
  document.querySelectorAll("#search-form .err").forEach(n => { n.textContent = ""; });
  if (!err) return;
  const box = document.querySelector(`#search-form .err[data-field="${err.field}"]`) || document.getElementById("s-error");
  box.textContent = await errorText(err.message);     // the server's line in the page's language (common.js)
}

function ms(x) { return fmtSeconds(x); }

function row(r, i) {
  const a = r.at;
  const ok = r.meets_slo ? (t("yes") + (r.within_band_of_best && i > 0 ? " ≈" : "")) : t("no");
  return [String(i + 1), r.gpu, String(r.gpus), String(r.tensor_parallel_size), String(r.pipeline_parallel_size),
          String(r.data_parallel_size), r.quantization || t("s.ckpt"), r.kv_cache_dtype, String(r.max_num_seqs),
          ms(a.ttft_s), ms(a.tpot_s), ms(a.request_latency_s),
          a.output_tokens_per_s_per_gpu === null ? "–" : fmtNum(a.output_tokens_per_s_per_gpu, 0),
          r.usd_per_million_output_tokens === null ? "–" : fmtNum(r.usd_per_million_output_tokens, 2),
          t("b." + r.binding), ok];
}

function renderTable(res) {
  const head = ["#", "s.c.gpu", "s.c.gpus", "s.c.tp", "s.c.pp", "s.c.dp", "s.c.w", "s.c.kv", "s.c.seqs", "s.c.ttft",
                "s.c.tpot", "s.c.e2e", "s.c.tps", "s.c.usd", "s.c.bind", "s.c.ok"];
  const table = el("table", {class: "nums", id: "s-ranked"});
  table.append(el("tr", {}, ...head.map(h => el("th", {text: h === "#" ? "#" : t(h)}))));
  res.results.forEach((r, i) => {
    const tr = el("tr", {class: r.meets_slo ? "" : "muted"}, ...row(r, i).map(c => el("td", {text: c})));
    table.append(tr);
  });
  const box = document.getElementById("s-table");
  box.replaceChildren(table);
  document.getElementById("s-table-card").hidden = res.results.length === 0;
}

// The interval's cautions (a family whose interval spans over 10x) under the best answer; in Chinese mode
// each is translated by the server's message catalogue (as the planner's serving block does).
function cautionsOf(interval) {
  const box = el("div", {id: "s-cautions"});
  if (!cautionParagraphs(interval, null).length) return box;
  const show = texts => box.replaceChildren(...cautionParagraphs(interval, texts));
  if (LANG === "en") show(null);
  else api("/api/messages", {plan: {serving: {interval}}, lang: LANG})
    .then(r => show((r.plan && r.plan.serving_cautions) || [])).catch(() => show([]));
  return box;
}

function renderBest(res) {
  const card = document.getElementById("s-best");
  const best = res.results.length && res.results[0].meets_slo ? res.results[0] : null;
  card.hidden = false;
  if (best) {
    const a = best.at;
    card.replaceChildren(
      el("h2", {text: t("s.best")}),
      el("p", {class: "decision ok", text: `${best.gpus}× ${best.gpu} · TP ${best.tensor_parallel_size} · PP ${best.pipeline_parallel_size} · ${best.data_parallel_size}×`}),
      el("p", {id: "s-best-times", text: `TTFT ${withBand(a, "ttft_s", ms(a.ttft_s), ms)} · TPOT ${withBand(a, "tpot_s", ms(a.tpot_s), ms)} · ` +
               `${withBand(a, "output_tokens_per_s", fmtNum(a.output_tokens_per_s, 0), x => fmtNum(x, 0))} tokens/s · ${t("s.binding")}: ${t("b." + best.binding)}`}),
      cautionsOf(a.interval),
      el("h3", {text: t("s.launch")}), el("pre", {id: "s-command", translate: "no", text: best.command ? best.command.text : ""}));
  } else {
    const miss = res.closest_miss || {};
    const parts = [el("p", {class: "decision bad", text: t("s.none")})];
    if (miss.gpu) {
      const over = Object.entries(miss.over_target).map(([k, v]) => `${t("b." + k)} ×${fmtNum(v, 2)}`).join(", ");
      parts.push(el("p", {text: `${t("s.closest")}: ${miss.gpus}× ${miss.gpu} TP ${miss.tensor_parallel_size}: ${over}`}));
    } else if (miss.note) parts.push(el("p", {text: miss.note}));
    card.replaceChildren(...parts);
  }
}

async function renderPlot(res) {
  const card = document.getElementById("s-plot-card");
  card.hidden = res.pareto.length === 0;
  if (card.hidden) return;
  const Plotly = await loadPlotly();
  const ranked = res.results.filter(r => !r.at.overloaded);
  const traces = [
    {x: res.pareto.map(p => p.tpot_s * 1e3), y: res.pareto.map(p => p.output_tokens_per_s_per_gpu), mode: "lines+markers",
     name: t("s.front"), text: res.pareto.map(p => `${p.gpus}× ${p.gpu} TP${p.tensor_parallel_size}`)},
    {x: ranked.map(r => r.at.tpot_s * 1e3), y: ranked.map(r => r.at.output_tokens_per_s_per_gpu), mode: "markers",
     name: t("s.results"), marker: {size: 10, color: ranked.map(r => r.meets_slo ? "#1e7b45" : "#98a2b3")},
     text: ranked.map((r, i) => `#${i + 1} ${r.gpus}× ${r.gpu}`)},
  ];
  const shapes = res.slo.tpot_s ? [{type: "line", x0: res.slo.tpot_s * 1e3, x1: res.slo.tpot_s * 1e3, y0: 0, y1: 1,
                                    yref: "paper", line: {dash: "dash", color: "#b42318"}}] : [];
  Plotly.react("s-plot", traces, {font: FONT, margin: {t: 10, r: 10}, height: 360, shapes,
    xaxis: {title: {text: t("s.x")}, rangemode: "tozero"}, yaxis: {title: {text: t("s.y")}, rangemode: "tozero"},
    legend: {orientation: "h"}}, PLOT_CONFIG);
}

function render(res) {
  S.result = res;
  document.getElementById("s-summary").replaceChildren(el("p", {id: "s-summary-text", text: fill(t("s.summary"), {
    n: fmtNum(res.candidates, 0), sec: fmtSeconds(res.seconds), f: fmtNum(res.feasible, 0), m: fmtNum(res.meeting_slo, 0)})}));
  renderBest(res);
  renderTable(res);
  renderPlot(res);
}

async function runSearch(ev) {
  if (ev) ev.preventDefault();
  const seq = ++S.seq;
  const o = searchOptions();
  document.getElementById("s-cli").textContent = "multihead plan " + o.model + " --search " +
    Object.entries(o).filter(([k]) => k !== "model").map(([k, v]) => `--${k.replace(/_/g, "-")} ${v}`).join(" ");
  const bad = unreadableBox();
  if (bad) {                         // never a search for other targets than the ones on screen
    await showErrors({field: bad[0], message: () => t("err.unreadable").replace("{name}", bad[1])});
    document.getElementById("s-summary").replaceChildren();
    document.body.dataset.searchDone = String(seq);
    return;
  }
  document.getElementById("s-summary").replaceChildren(el("p", {text: t("s.busy")}));
  try {
    const res = await api("/api/search", {options: o});
    if (seq !== S.seq) return;
    showErrors(null);
    render(res.search);
    document.body.dataset.searchDone = String(seq);     // for tests and scripts: this answer is on screen
  } catch (err) {
    if (seq !== S.seq) return;
    await showErrors(err);
    document.getElementById("s-summary").replaceChildren();
    document.body.dataset.searchDone = String(seq);
  }
}

async function init() {
  wireLanguageButton();
  applyLanguage();
  LANG_LISTENERS.push(() => { if (S.result) render(S.result); });
  const cat = await api("/api/search/catalog");
  const model = document.getElementById("s-model");
  model.replaceChildren(...cat.models.map(m => el("option", {value: m, text: m})));
  model.value = cat.default_model;
  const box = document.getElementById("s-gpus");
  box.replaceChildren(...cat.gpus.map(g => el("label", {class: "check"},
    el("input", {type: "checkbox", value: g, ...(cat.default_gpus.includes(g) ? {checked: ""} : {})}), " " + g)));
  document.getElementById("search-form").addEventListener("submit", runSearch);
  runSearch();
}

document.addEventListener("DOMContentLoaded", init);
