// Draws one plan (the JSON of `multihead plan --json`) and its memory curve. Used by the planner
// page and by the self-contained `plan --html` report. It reads numbers; it never derives one
// (the engine reserve is GPU memory minus usable memory, both from the JSON, and free space is
// usable minus the plan's total: differences of reported numbers, drawn as bar segments).
"use strict";

// Server-made text in the page's language (planner.js fills it from /api/messages; null: English as in the JSON).
let PLAN_TEXTS = null;
function said(key, english) { return PLAN_TEXTS && PLAN_TEXTS.lang === LANG && PLAN_TEXTS[key] != null ? PLAN_TEXTS[key] : english; }

const COLORS = {weights: "#4c72b0", kv: "#dd8452", workspace: "#55a868", reserve: "#8c8c8c", free: "#e8e8e8"};

function decisionHeadline(plan) {
  const base = t("res." + plan.decision) + (plan.decision === "chunked" ? ` × ${plan.chunks}` : "");
  return plan.decision_fits === false && plan.decision !== "does_not_fit" ? `${base} — ${t("res.notfit")}` : base;
}

function renderDecision(root, plan) {
  root.replaceChildren(
    el("div", {class: "decision " + (plan.decision_fits ? "ok" : "bad"), id: "decision-text",
               "data-decision": plan.decision}, decisionHeadline(plan)),
    el("p", {class: "reason", id: "reason", text: said("reason", plan.reason || "")}),
    el("p", {class: "muted"}, el("span", {translate: "no", text: plan.model}), ` · ${plan.attention_kind} · L=${plan.n_layers}, H=${plan.n_heads}, ` +
      `H_kv=${plan.n_kv_heads}, d_k=${plan.head_dim} · ${said("device", plan.device)} ×${plan.gpus} · ` +
      `${plan.weights_dtype}/${plan.kv_dtype} · T=${fmtNum(plan.tokens, 0)} · B=${plan.batch}`));
}

function breakdownRows(plan) {
  const rows = [{name: t("row.onepass"), kv: plan.kv_cache_bytes, ws: plan.workspace_bytes, total: plan.total_memory_bytes}];
  const c = plan.chunked;
  if (c && plan.decision === "chunked") {
    rows.push({name: `${c.chunks} ${t("row.chunks")}`, kv: c.kv_cache_bytes, ws: c.workspace_bytes, total: c.total_memory_bytes});
  }
  return rows.reverse();            // plotly draws the first category at the bottom
}

// The memory bar is plain HTML (no plotly), so the answer shows before the 4.8 MB chart library
// has loaded: each segment's width is its share of the axis, as any chart library would draw it.
function renderBreakdown(div, plan) {
  const rows = breakdownRows(plan).reverse();
  const reserve = plan.gpu_memory_bytes - plan.usable_memory_bytes;
  const axis = Math.max(plan.gpu_memory_bytes, ...rows.map(r => r.total)) * 1.04;
  const pct = bytes => `${(100 * bytes / axis).toFixed(3)}%`;
  const segments = r => [
    ["weights", "seg.weights", plan.weights_bytes], ["kv", "seg.kv", r.kv], ["workspace", "seg.workspace", r.ws],
    ["free", "seg.free", Math.max(plan.usable_memory_bytes - r.total, 0)],
    ["reserve", "seg.reserve", r.total <= plan.usable_memory_bytes ? reserve : 0]];
  const mark = (bytes, label, cls) => el("div", {class: "mark " + cls, style: `left: ${pct(bytes)}`}, el("span", {text: label}));
  const bars = rows.map(r => el("div", {class: "membar-row", "data-row": r.name},
    el("span", {class: "membar-label", text: r.total > plan.usable_memory_bytes ? `${r.name} · ${t("seg.over")}` : r.name}),
    el("div", {class: "membar"}, ...segments(r).map(([key, label, bytes]) => el("div", {class: "seg", "data-key": key,
      "data-bytes": String(bytes), style: `width: ${pct(bytes)}; background: ${COLORS[key]}`,
      title: `${t(label)}: ${fmtBytes(bytes)}`}, bytes / axis > 0.06 ? fmtNum(gb(bytes), 1) : "")),
      mark(plan.usable_memory_bytes, `${t("curve.usable")} ${fmtNum(gb(plan.usable_memory_bytes), 1)} GB`, "usable"),
      mark(plan.gpu_memory_bytes, `${fmtNum(gb(plan.gpu_memory_bytes), 0)} GB`, "gpu"))));
  const legend = el("div", {class: "legend"}, ...Object.entries({weights: "seg.weights", kv: "seg.kv",
    workspace: "seg.workspace", free: "seg.free", reserve: "seg.reserve"}).map(([key, label]) =>
    el("span", {}, el("i", {style: `background: ${COLORS[key]}`}), t(label))), el("span", {class: "muted", text: "GB = 1e9 B"}));
  div.replaceChildren(...bars, legend);
}

async function renderCurve(div, curve) {
  await loadPlotly();
  const traces = curve.curves.map((c, i) => ({type: "scatter", mode: "lines", x: curve.tokens,
    y: c.total_memory_bytes.map(v => v === null ? null : gb(v)), connectgaps: false,
    name: `${c.label} (H_kv=${c.kv_heads})${c.this_model ? " ◀" : ""}`,
    line: {width: c.this_model ? 3 : 1.5, dash: c.this_model ? "solid" : (i === 0 ? "dot" : "dashdot")}}));
  const ymax = gb(curve.gpu_memory_bytes) * 2.2;
  const shapes = [], anns = [];
  const hline = (v, label, dash) => {
    shapes.push({type: "line", xref: "paper", x0: 0, x1: 1, y0: gb(v), y1: gb(v), line: {color: "#222", width: 1, dash}});
    anns.push({xref: "paper", x: 0.01, y: gb(v), text: `${label} ${fmtNum(gb(v), 1)} GB`, showarrow: false,
               xanchor: "left", yanchor: dash ? "top" : "bottom", font: {size: 11}});
  };
  const vline = (x, label, color, yfrac) => {
    shapes.push({type: "line", yref: "paper", x0: x, x1: x, y0: 0, y1: 1, line: {color, width: 1.5, dash: "dot"}});
    // plotly places annotations on a log axis at log10(x): a coordinate, not a model quantity
    anns.push({x: Math.log10(x), yref: "paper", y: yfrac, text: `${label}<br>${fmtNum(x, 0)}`, showarrow: false,
               xanchor: "left", xshift: 3, font: {size: 11, color}, bgcolor: "rgba(255,255,255,0.8)"});
  };
  hline(curve.gpu_memory_bytes, t("curve.gpu"), null);
  hline(curve.usable_memory_bytes, t("curve.usable"), "dash");
  vline(curve.T, t("curve.T"), "#c0392b", 0.98);
  if (curve.trained_length) vline(curve.trained_length, t("curve.trained"), "#7d3c98", 0.78);
  return Plotly.react(div, traces, {height: 380, font: FONT, margin: {l: 60, r: 20, t: 10, b: 90},
    xaxis: {type: "log", title: {text: t("curve.x")}}, yaxis: {title: {text: t("curve.y")}, range: [0, ymax]},
    legend: {orientation: "h", y: -0.28}, shapes, annotations: anns}, PLOT_CONFIG);
}

function renderKeys(root, plan) {
  const rows = [
    ["k.arch", `${plan.attention_kind} (H=${plan.n_heads}, H_kv=${plan.n_kv_heads})`],
    ["k.params", fmtNum(plan.params / 1e9, 2) + " B"],
    ["k.kv_token", fmtBytes(plan.kv_cache_bytes_per_token)], ["k.kv", fmtBytes(plan.kv_cache_bytes)],
    ["k.weights", fmtBytes(plan.weights_bytes)], ["k.workspace", fmtBytes(plan.workspace_bytes)],
    ["k.total", fmtBytes(plan.total_memory_bytes)], ["k.usable", fmtBytes(plan.usable_memory_bytes)],
    ["k.prefill", fmtSeconds(plan.prefill_seconds_all_passes)], ["k.decode", fmtSeconds(plan.decode_seconds_per_token)],
    ["k.tps", fmtNum(plan.tokens_per_second, 1)],
  ].filter(r => !r[1].includes("undefined") && !r[1].includes("NaN"));
  root.replaceChildren(el("table", {class: "kv"}, ...rows.map(([k, v]) =>
    el("tr", {}, el("th", {text: t(k)}), el("td", {text: v, "data-key": k})))));
}

function fmtByKey(key, v) {
  if (typeof v !== "number") return typeof v === "string" ? v : JSON.stringify(v);
  if (/gib$/.test(key)) return fmtNum(v, 2) + " GiB";
  if (/per_s$/.test(key)) return fmtNum(v, 1) + " /s";
  if (/bytes/.test(key)) return fmtBytes(v);
  if (/seconds|_s$|ttft|tpot/.test(key)) return fmtSeconds(v);
  return fmtNum(v, 4);
}

// An engine command as the JSON gives it: a string, an argv list, or {text | argv, engine, ...}.
function commandText(v) {
  if (typeof v === "string") return v;
  if (Array.isArray(v)) return v.every(x => typeof x === "string") ? v.join(" ") : null;
  if (v && typeof v === "object") return typeof v.text === "string" ? v.text : (Array.isArray(v.argv) ? v.argv.join(" ") : null);
  return null;
}

function findCommands(obj, path, out) {
  for (const [k, v] of Object.entries(obj || {})) {
    const text = /command/.test(k) ? commandText(v) : null;
    const note = v && typeof v === "object" && typeof v.note === "string" ? v.note : "";
    if (text) out.push([path + k + (v && v.engine ? ` (${v.engine})` : ""), text, note]);
    else if (v && typeof v === "object" && !Array.isArray(v)) findCommands(v, path + k + ".", out);
  }
  return out;
}

function kvTable(entries) {
  return el("table", {class: "kv"}, ...entries.map(([k, v]) =>
    el("tr", {}, el("th", {text: k}), el("td", {text: fmtByKey(k, v), "data-key": k}))));
}

function rowsTable(rows) {
  const cols = [...new Set(rows.flatMap(r => Object.keys(r)))];
  return el("table", {class: "nums"}, el("tr", {}, ...cols.map(c => el("th", {text: c}))),
    ...rows.map(r => el("tr", {}, ...cols.map(c => el("td", {text: r[c] === undefined ? "" : fmtByKey(c, r[c])})))));
}

// The serving block as a person reads it: known figures with labels and units, the rest folded;
// the engine's own error (what vLLM would print) quoted as it is; TTFT / TPOT / throughput against
// concurrency as three small charts, one quantity and one unit per axis.
const SERVING_FIELDS = [
  ["max_concurrency", "sv.max_concurrency", v => fmtNum(v, 2)], ["max_model_len", "sv.max_model_len", v => fmtNum(v, 0) + " " + t("u.tokens")],
  ["max_model_len_fit", "sv.max_model_len_fit", v => fmtNum(v, 0) + " " + t("u.tokens")],
  ["kv_cache_tokens", "sv.kv_cache_tokens", v => fmtNum(v, 0) + " " + t("u.tokens")], ["kv_cache_gib", "sv.kv_cache_gib", v => fmtNum(v, 2) + " GiB"],
  ["weights_gib", "sv.weights_gib", v => fmtNum(v, 2) + " GiB"], ["activation_gib", "sv.activation_gib", v => fmtNum(v, 2) + " GiB"],
  ["non_torch_gib", "sv.non_torch_gib", v => fmtNum(v, 2) + " GiB"], ["requested_gib", "sv.requested_gib", v => fmtNum(v, 2) + " GiB"],
  ["total_gib", "sv.total_gib", v => fmtNum(v, 2) + " GiB"], ["gpu_memory_utilization", "sv.gpu_memory_utilization", v => fmtNum(v, 2)],
  ["input_len", "sv.input_len", v => fmtNum(v, 0) + " " + t("u.tokens")], ["output_len", "sv.output_len", v => fmtNum(v, 0) + " " + t("u.tokens")],
  ["concurrency", "sv.concurrency", v => fmtNum(v, 0)], ["ttft_s", "sv.ttft_s", fmtSeconds], ["tpot_s", "sv.tpot_s", fmtSeconds],
  ["itl_s", "sv.itl_s", fmtSeconds], ["output_tokens_per_s", "sv.output_tokens_per_s", v => fmtNum(v, 1) + " " + t("u.tps")],
  ["request_latency_s", "sv.request_latency_s", fmtSeconds], ["ttft_s_one_request", "sv.ttft_s_one_request", fmtSeconds],
  ["tpot_s_one_request", "sv.tpot_s_one_request", fmtSeconds], ["decode_tokens_per_s", "sv.decode_tokens_per_s", v => fmtNum(v, 1) + " " + t("u.tps")],
  ["prefill_s", "sv.prefill_s", fmtSeconds], ["num_gpu_blocks", "sv.num_gpu_blocks", v => fmtNum(v, 0)],
  ["blocks_per_request", "sv.blocks_per_request", v => fmtNum(v, 0)], ["page_bytes", "sv.page_bytes", fmtBytes],
  ["kv_cache_groups", "sv.kv_cache_groups", v => fmtNum(v, 0)], ["layers_per_group", "sv.layers_per_group", v => fmtNum(v, 0)],
  ["tensor_parallel_size", "sv.tensor_parallel_size", v => fmtNum(v, 0)], ["pipeline_parallel_size", "sv.pipeline_parallel_size", v => fmtNum(v, 0)],
  ["max_num_batched_tokens", "sv.max_num_batched_tokens", v => fmtNum(v, 0) + " " + t("u.tokens")],
];
const SERVING_MAIN = ["max_concurrency", "max_model_len", "max_model_len_fit", "kv_cache_tokens", "kv_cache_gib", "ttft_s", "tpot_s",
                      "output_tokens_per_s", "request_latency_s", "concurrency"];

function servingRow(key, v, s) {
  const known = SERVING_FIELDS.find(f => f[0] === key);
  const label = known ? el("th", {text: t(known[1])}) : el("th", {translate: "no", text: key});
  const fmt = known ? known[2] : x => fmtByKey(key, x);
  return el("tr", {}, label, el("td", {text: withBand(s || {}, key, fmt(v), fmt), "data-key": key}));
}

// The interval's cautions (a family whose interval spans over 10x), in the page's language.
function servingCautions(s) {
  return cautionParagraphs(s.interval, PLAN_TEXTS && PLAN_TEXTS.lang === LANG ? PLAN_TEXTS.serving_cautions || [] : null);
}

// The load the user gave (--concurrency / --request-rate: the server's ``serving.at``), first: its times with their
// intervals, and the engine's queue in words when requests wait (or why no time can be given).
const AT_FIELDS = [["ttft_s", "sv.ttft_s", fmtSeconds], ["tpot_s", "sv.tpot_s", fmtSeconds],
                   ["output_tokens_per_s", "sv.output_tokens_per_s", v => fmtNum(v, 1) + " " + t("u.tps")],
                   ["request_latency_s", "sv.request_latency_s", fmtSeconds], ["requests_per_s", "sv.requests_per_s", v => fmtNum(v, 3)]];

function servingAt(s) {
  const at = s.at && typeof s.at === "object" ? s.at : null;
  if (!at || (typeof at.concurrency !== "number" && typeof at.request_rate !== "number")) return [];
  const head = typeof at.concurrency === "number" ? t("sv.at_c").replace("{n}", fmtNum(at.concurrency, 0))
                                                    : t("sv.at_r").replace("{r}", fmtNum(at.request_rate, 3));
  const rows = AT_FIELDS.filter(([k]) => typeof at[k] === "number").map(([k, label, fmt]) =>
    el("tr", {}, el("th", {text: t(label)}), el("td", {"data-key": "at." + k, text: withBand({...at, interval: at.interval || s.interval}, k, fmt(at[k]), fmt)})));
  const parts = [el("h3", {text: head})];
  if (rows.length) parts.push(el("table", {class: "kv", id: "serving-at"}, ...rows));
  if (typeof at.note === "string" && at.note) {
    const zh = PLAN_TEXTS && PLAN_TEXTS.lang === LANG;
    parts.push(el("p", {class: at.overloaded ? "reason bad" : "muted", id: "serving-at-note",
                        text: zh ? (PLAN_TEXTS.serving_at_note || t("res.untranslated")) : at.note}));
  }
  const box = el("div", {id: "serving-at-box"}, ...parts);
  return typeof s.concurrency === "number" ? [box, el("h3", {text: t("sv.at_max").replace("{n}", fmtNum(s.concurrency, 0))})] : [box];
}

function renderServing(root, plan) {
  const s = plan.serving;
  root.hidden = !s;
  if (!s) return;
  // a time's interval ends are shown beside it, not as rows of their own
  const scalars = Object.entries(s).filter(([k, v]) => typeof v === "number" && !/command/.test(k) &&
                                           !(/_(low|high)$/.test(k) && typeof s[k.replace(/_(low|high)$/, "")] === "number"));
  const main = SERVING_MAIN.filter(k => typeof s[k] === "number").map(k => [k, s[k]]);
  const rest = scalars.filter(([k]) => !SERVING_MAIN.includes(k));
  const verdict = said("serving_verdict", typeof s.verdict === "string" ? s.verdict : null);
  const fitsText = s.fits === true ? t("sv.fits") : s.fits === false ? t("sv.notfit") : null;
  const engine = typeof s.reason === "string" && s.reason ? s.reason : null;
  const parts = [el("h2", {text: t("res.serving")})];
  if (fitsText) parts.push(el("div", {class: "decision " + (s.fits ? "ok" : "bad"), id: "serving-fits"}, fitsText));
  if (verdict) parts.push(el("p", {class: "reason", id: "serving-verdict", text: verdict}));
  if (engine) parts.push(el("p", {class: "muted", text: t("sv.engine")}), el("pre", {class: "engine", translate: "no", text: engine}));
  if (s.measured && typeof s.measured.prefill_factor === "number" && typeof s.measured.decode_factor === "number")
    parts.push(el("p", {class: "muted", id: "serving-measured", text: t("sv.measured")
      .replace("{p}", fmtNum(s.measured.prefill_factor, 3)).replace("{d}", fmtNum(s.measured.decode_factor, 3))}));
  parts.push(...servingAt(s));
  parts.push(el("table", {class: "kv", id: "serving-main"}, ...main.map(([k, v]) => servingRow(k, v, s))));
  const cautions = servingCautions(s);
  if (cautions.length) parts.push(el("div", {id: "serving-cautions"}, ...cautions));
  const chart = el("div", {id: "serving-chart"});
  const series = Array.isArray(s.curve) && s.curve.length && s.curve.every(r => r && typeof r.concurrency === "number") ? s.curve : null;
  if (series) parts.push(el("h3", {text: t("sv.curve")}), chart, curveTable(series));
  parts.push(el("details", {}, el("summary", {text: t("sv.more")}), el("table", {class: "kv", id: "serving-more"}, ...rest.map(([k, v]) => servingRow(k, v, s)))));
  root.replaceChildren(...parts);
  if (series) loadPlotly().then(() => drawServingCurve(chart, series));
}

function curveTable(rows) {
  const cols = [["concurrency", "sv.concurrency", v => fmtNum(v, 0)], ["ttft_s", "sv.ttft_s", fmtSeconds], ["tpot_s", "sv.tpot_s", fmtSeconds],
                ["output_tokens_per_s", "sv.output_tokens_per_s", v => fmtNum(v, 1) + " " + t("u.tps")]]
    .filter(([k]) => rows.some(r => typeof r[k] === "number"));
  return el("div", {class: "scroll"}, el("table", {class: "nums", id: "serving-curve"},
    el("tr", {}, ...cols.map(([, l]) => el("th", {text: t(l)}))),
    ...rows.map(r => el("tr", {}, ...cols.map(([k, , f]) => el("td", {text: typeof r[k] === "number" ? f(r[k]) : "–"}))))));
}

function drawServingCurve(div, rows) {
  const x = rows.map(r => r.concurrency);
  const panels = [["ttft_s", "sv.ttft_axis", 1], ["tpot_s", "sv.tpot_axis", 1e3], ["output_tokens_per_s", "sv.tps_axis", 1]]
    .filter(([k]) => rows.some(r => typeof r[k] === "number"));
  const traces = panels.map(([k, , scale], i) => ({type: "scatter", mode: "lines+markers", x, y: rows.map(r => (typeof r[k] === "number" ? r[k] * scale : null)),
    xaxis: i ? `x${i + 1}` : "x", yaxis: i ? `y${i + 1}` : "y", showlegend: false, marker: {size: 8}}));
  const narrow = (div.clientWidth || 800) < 560;           // a phone: one chart under the other
  const layout = {height: narrow ? 220 * panels.length : 260, font: FONT, margin: {l: 60, r: 10, t: 20, b: 50},
    grid: {rows: narrow ? panels.length : 1, columns: narrow ? 1 : panels.length, pattern: "independent",
           ygap: narrow ? 0.35 : 0.2}, annotations: []};
  // the curve's loads double (1, 2, 4, ... max): a log axis past a handful, whole numbers below (a tick per request
  // up to 186 requests ran its labels into one black bar)
  const wide = Math.max(...x) > 10;
  const xaxis = wide ? {type: "log", title: {text: t("sv.concurrency")}}
                     : {title: {text: t("sv.concurrency")}, dtick: 1, rangemode: "tozero"};
  panels.forEach(([, label], i) => {
    const ax = i ? String(i + 1) : "";
    layout["xaxis" + ax] = {...xaxis};
    layout["yaxis" + ax] = {title: {text: t(label)}, rangemode: "tozero"};
  });
  return Plotly.react(div, traces, layout, PLOT_CONFIG);
}

function renderCommand(root, plan) {
  const cmds = findCommands(plan, "", []);
  root.hidden = cmds.length === 0;
  root.replaceChildren(el("h2", {text: t("res.command")}), ...cmds.map(([k, c, note]) => {
    const btn = el("button", {class: "small", type: "button", text: t("res.copy")});
    btn.addEventListener("click", () => navigator.clipboard && navigator.clipboard.writeText(c));
    // the command's note (a placeholder to fill, SGLang's memory fraction, a rope override) as the CLI prints it
    const extra = note ? [el("p", {class: "muted command-note", text: note})] : [];
    return el("div", {class: "command"}, el("div", {class: "muted", text: k}), el("pre", {text: c}), ...extra, btn);
  }));
}

function renderNotes(root, plan) {
  const parts = [];
  const warnings = plan.warnings || [];
  if (warnings.length) {
    const zh = PLAN_TEXTS && PLAN_TEXTS.lang === LANG ? PLAN_TEXTS.warnings : null;
    parts.push(el("h2", {text: t("res.warnings")}), el("ul", {class: "warnings"}, ...warnings.map((w, i) =>
      el("li", {text: zh ? (zh[i] || t("res.untranslated")) : w}))));
  }
  const fallbacks = plan.fallbacks || [];
  if (fallbacks.length) {
    const zh = PLAN_TEXTS && PLAN_TEXTS.lang === LANG ? PLAN_TEXTS.fallbacks : null;
    parts.push(el("h2", {text: t("res.fallbacks")}), el("ul", {}, ...fallbacks.map((f, i) => {
      const action = zh && zh[i] ? zh[i].action : f.action, text = zh && zh[i] ? zh[i].text : f.text;
      return el("li", {"data-name": f.name}, el("b", {text: (action || t("res.untranslated")) + (f.needed ? " ●" : "") + ": "},),
                ` ${text || (zh ? t("res.untranslated") : "")}`);
    })), el("p", {class: "muted", text: t("res.needed")}));
  }
  root.replaceChildren(...parts);
}

// The whole view; ids are the planner page's (the report has the same containers).
async function renderPlanView(plan, curve) {
  renderDecision(document.getElementById("decision"), plan);
  renderKeys(document.getElementById("keys"), plan);
  renderServing(document.getElementById("serving"), plan);
  renderCommand(document.getElementById("command"), plan);
  renderNotes(document.getElementById("notes"), plan);
  renderBreakdown(document.getElementById("breakdown"), plan);
  if (window.__firstChartMs === undefined) window.__firstChartMs = performance.now();
  if (curve) await renderCurve(document.getElementById("curve"), curve);
}
