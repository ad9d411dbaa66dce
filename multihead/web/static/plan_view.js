// Draws one plan (the JSON of `multihead plan --json`) and its memory curve. Used by the planner
// page and by the self-contained `plan --html` report. It reads numbers; it never derives one
// (the engine reserve is GPU memory minus usable memory, both from the JSON, and free space is
// usable minus the plan's total: differences of reported numbers, drawn as bar segments).
"use strict";

const COLORS = {weights: "#4c72b0", kv: "#dd8452", workspace: "#55a868", reserve: "#8c8c8c", free: "#e8e8e8"};

function decisionHeadline(plan) {
  const base = t("res." + plan.decision) + (plan.decision === "chunked" ? ` × ${plan.chunks}` : "");
  return plan.decision_fits === false && plan.decision !== "does_not_fit" ? `${base} — ${t("res.notfit")}` : base;
}

function renderDecision(root, plan) {
  root.replaceChildren(
    el("div", {class: "decision " + (plan.decision_fits ? "ok" : "bad"), id: "decision-text",
               "data-decision": plan.decision}, decisionHeadline(plan)),
    el("p", {class: "reason", text: plan.reason || ""}),
    el("p", {class: "muted", text: `${plan.model} · ${plan.attention_kind} · L=${plan.n_layers}, H=${plan.n_heads}, ` +
      `H_kv=${plan.n_kv_heads}, d_k=${plan.head_dim} · ${plan.device} ×${plan.gpus} · ` +
      `${plan.weights_dtype}/${plan.kv_dtype} · T=${fmtNum(plan.tokens, 0)} · B=${plan.batch}`}));
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
    el("span", {class: "membar-label", text: r.name}),
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
    if (text) out.push([path + k + (v && v.engine ? ` (${v.engine})` : ""), text]);
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

// The serving block, whatever keys it has: scalars as a table, lists of objects as tables (a list
// with "concurrency" also as a chart), other objects folded; commands go to the command card.
function renderServing(root, plan) {
  const s = plan.serving;
  root.hidden = !s;
  if (!s) return;
  const entries = Object.entries(s).filter(([k]) => !/command/.test(k));
  const scalars = entries.filter(([k, v]) => (v === null || typeof v !== "object") && k !== "verdict");
  const lists = entries.filter(([, v]) => Array.isArray(v) && v.length && v.every(x => x && typeof x === "object"));
  const objects = entries.filter(([, v]) => v && typeof v === "object" && !Array.isArray(v));
  const chart = el("div", {id: "serving-chart"});
  const folded = ([k, v]) => el("details", {}, el("summary", {text: k}), Array.isArray(v) ? rowsTable(v)
    : kvTable(Object.entries(v).filter(([, x]) => x === null || typeof x !== "object")));
  const half = Math.ceil(scalars.length / 2), verdict = typeof s.verdict === "string" ? s.verdict : null;
  root.replaceChildren(el("h2", {text: t("res.serving")}), ...(verdict ? [el("p", {class: "reason", text: verdict})] : []),
                       el("div", {class: "grid2"}, kvTable(scalars.slice(0, half)), kvTable(scalars.slice(half))),
                       ...lists.map(folded), ...objects.map(folded), chart);
  const series = lists.find(([, v]) => "concurrency" in v[0]);
  if (series) loadPlotly().then(() => {
    const rows = series[1], keys = Object.keys(rows[0]).filter(k => k !== "concurrency" && typeof rows[0][k] === "number");
    Plotly.react(chart, keys.map(k => ({type: "scatter", mode: "lines+markers", name: k, x: rows.map(r => r.concurrency),
      y: rows.map(r => r[k]), yaxis: /throughput|tokens_per/.test(k) ? "y2" : "y"})), {height: 320, font: FONT,
      margin: {l: 60, r: 60, t: 10, b: 80}, xaxis: {title: {text: "concurrency"}}, yaxis: {title: {text: "s"}, type: "log"},
      yaxis2: {overlaying: "y", side: "right", title: {text: "tokens/s"}}, legend: {orientation: "h", y: -0.3}}, PLOT_CONFIG);
  });
}

function renderCommand(root, plan) {
  const cmds = findCommands(plan, "", []);
  root.hidden = cmds.length === 0;
  root.replaceChildren(el("h2", {text: t("res.command")}), ...cmds.map(([k, c]) => {
    const btn = el("button", {class: "small", type: "button", text: t("res.copy")});
    btn.addEventListener("click", () => navigator.clipboard && navigator.clipboard.writeText(c));
    return el("div", {class: "command"}, el("div", {class: "muted", text: k}), el("pre", {text: c}), btn);
  }));
}

function renderNotes(root, plan) {
  const parts = [];
  if ((plan.warnings || []).length) {
    parts.push(el("h2", {text: t("res.warnings")}), el("ul", {class: "warnings"}, ...plan.warnings.map(w => el("li", {text: w}))));
  }
  if ((plan.fallbacks || []).length) {
    parts.push(el("h2", {text: t("res.fallbacks")}), el("ul", {}, ...plan.fallbacks.map(f =>
      el("li", {}, el("b", {text: f.name + (f.needed ? " ●" : "") + ": "}), `${f.action || ""} — ${f.text || ""}`))));
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
