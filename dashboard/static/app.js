// ptk's dashboard: plain JavaScript, no build step. Everything shown from
// the store goes through esc(): tool results and prompts are data, never
// markup.
"use strict";

const token = new URLSearchParams(location.search).get("token") || "";
const main = document.getElementById("main");
const liveEl = document.getElementById("live");
const PAGE = 50;

function esc(s) {
  return String(s ?? "").replace(/[&<>"']/g, c => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
}
function api(path, params) {
  const q = new URLSearchParams(params || {});
  if (token) q.set("token", token);
  const s = q.toString();
  return fetch("api/" + path + (s ? "?" + s : ""), { headers: token ? { Authorization: "Bearer " + token } : {} })
    .then(r => r.ok ? r.json() : r.text().then(t => { throw new Error(r.status + ": " + t); }));
}
function ms(v) {
  if (v == null) return "-";
  if (v < 1) return (v * 1000).toFixed(0) + " µs";
  if (v < 1000) return v.toFixed(v < 10 ? 1 : 0) + " ms";
  if (v < 60000) return (v / 1000).toFixed(2) + " s";
  return (v / 60000).toFixed(1) + " min";
}
function when(t) {
  const d = new Date(t);
  const pad = n => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}
const num = n => Number(n || 0).toLocaleString("en-US");
const money = c => "$" + Number(c || 0).toFixed(c >= 1 ? 2 : 4);
const tokens = u => (u ? u.prompt_tokens + u.completion_tokens : 0);
const badge = s => `<span class="badge ${s === "ok" ? "ok" : s === "running" ? "running" : "error"}">${esc(s)}</span>`;
let config = { labels: false };
function post(path, body) {
  const headers = { "Content-Type": "application/json" };
  if (token) headers.Authorization = "Bearer " + token;
  return fetch("api/" + path, { method: "POST", headers, body: JSON.stringify(body) })
    .then(r => r.ok ? r.json() : r.text().then(t => { throw new Error(r.status + ": " + t); }));
}
function pretty(raw) {
  if (raw == null || raw === "") return "";
  if (typeof raw === "string") return raw;
  return JSON.stringify(raw, null, 2);
}

// ---- routing: #/runs?filters, #/run/ID, #/analytics

let view = null;
function route() {
  const h = location.hash || "#/runs";
  const [path, query] = h.slice(1).split("?");
  document.getElementById("nav-runs").classList.toggle("active", path.startsWith("/run"));
  document.getElementById("nav-analytics").classList.toggle("active", path === "/analytics");
  if (path.startsWith("/run/")) view = runView(decodeURIComponent(path.slice(5)));
  else if (path === "/analytics") view = analyticsView();
  else view = runsView(new URLSearchParams(query || ""));
}
window.addEventListener("hashchange", route);

// ---- the runs

const FILTERS = ["kind", "status", "model", "name", "text", "since"];

function runsView(params) {
  const state = { offset: Number(params.get("offset") || 0), seen: null };
  main.innerHTML = `
    <form class="filters" id="filters">
      <label>kind<select name="kind"><option value="">any</option><option>agent</option><option>ptool</option><option>workflow</option><option>react</option><option>distill</option><option>request</option></select></label>
      <label>status<select name="status"><option value="">any</option><option>running</option><option>ok</option><option>error</option><option>interrupted</option></select></label>
      <label>model<input name="model" placeholder="any"></label>
      <label>name<input name="name" placeholder="ptool, workflow…"></label>
      <label>text<input name="text" placeholder="prompt, answer, error"></label>
      <label>started<select name="since"><option value="">any time</option><option value="1h">last hour</option><option value="24h">last day</option><option value="168h">last week</option><option value="720h">last 30 days</option></select></label>
    </form>
    <div class="card" style="padding:0"><table id="runs">
      <thead><tr><th>started</th><th>kind</th><th>name</th><th>model</th><th>status</th><th class="num">duration</th><th class="num">tokens</th><th class="num">cost</th><th class="num">tools</th><th>input</th></tr></thead>
      <tbody></tbody></table></div>
    <div class="pager"><span id="count"></span><button id="prev">← newer</button><button id="next">older →</button></div>`;
  const form = document.getElementById("filters");
  for (const k of FILTERS) form.elements[k].value = params.get(k) || "";
  let timer = null;
  const apply = () => {
    const q = new URLSearchParams();
    for (const k of FILTERS) if (form.elements[k].value) q.set(k, form.elements[k].value);
    history.replaceState(null, "", "#/runs" + (q.toString() ? "?" + q : ""));
    state.offset = 0;
    load();
  };
  form.addEventListener("submit", e => e.preventDefault());
  form.addEventListener("change", apply);
  form.addEventListener("input", e => { if (e.target.tagName === "INPUT") { clearTimeout(timer); timer = setTimeout(apply, 300); } });
  document.getElementById("prev").onclick = () => { state.offset = Math.max(0, state.offset - PAGE); load(); };
  document.getElementById("next").onclick = () => { state.offset += PAGE; load(); };

  function query() {
    const q = { limit: PAGE, offset: state.offset };
    for (const k of FILTERS) if (form.elements[k].value) q[k] = form.elements[k].value;
    return q;
  }
  let seq = 0;
  // load shows the runs; live (a run recorded elsewhere) marks the new ones.
  function load(live) {
    const mine = ++seq;
    const t0 = performance.now();
    return api("runs", query()).then(res => {
      if (mine !== seq || view !== self) return;
      const tbody = document.querySelector("#runs tbody");
      const known = live ? state.seen : null;
      state.seen = new Set(res.runs.map(r => r.id));
      tbody.innerHTML = res.runs.length ? res.runs.map(r => `
        <tr class="run${known && !known.has(r.id) ? " fresh" : ""}" data-id="${esc(r.id)}">
          <td class="mono">${when(r.started_at)}</td>
          <td><span class="badge kind">${esc(r.kind)}</span></td>
          <td>${esc(r.name || "-")}</td>
          <td class="nowrap">${esc(r.model || "-")}</td>
          <td class="nowrap">${badge(r.status)}${r.error_code ? ` <span class="muted mono">${esc(r.error_code)}</span>` : ""}</td>
          <td class="num">${ms(r.duration_ms)}</td>
          <td class="num">${num(tokens(r.usage))}</td>
          <td class="num">${money(r.cost)}</td>
          <td class="num">${r.tool_calls}</td>
          <td class="input" title="${esc(r.input)}">${esc(r.input)}</td>
        </tr>`).join("") : `<tr><td colspan="10" class="empty">No runs match.</td></tr>`;
      const from = res.total ? state.offset + 1 : 0, to = state.offset + res.runs.length;
      document.getElementById("count").textContent = `${num(from)}–${num(to)} of ${num(res.total)} runs`;
      document.getElementById("prev").disabled = state.offset === 0;
      document.getElementById("next").disabled = to >= res.total;
      document.getElementById("runs").dataset.loaded = String(seq);
      document.getElementById("runs").dataset.ms = String(Math.round(performance.now() - t0));
    }).catch(showError);
  }
  document.querySelector("#runs tbody").addEventListener("click", e => {
    const tr = e.target.closest("tr.run");
    if (tr) location.hash = "#/run/" + encodeURIComponent(tr.dataset.id);
  });
  const self = { refresh: () => { if (state.offset === 0) load(true); } };
  load();
  return self;
}

// ---- one run: its span tree as a waterfall (each call under its parent,
// placed at its start, with its duration, tokens and cost summed up the
// tree), labels, and the details of each call.

// spanTree is a run's spans as a tree: the run at its root, each call and
// step under its parent span; the runs started under it (kids: a gateway
// request's agent run, full records) hang under the root, placed at their
// own start, with their spans under them (ids prefixed "run:ID/", which
// take no labels here: they are labelled on their own page).
function spanTree(r, kids, prefix, t0) {
  prefix = prefix || "";
  const base = t0 == null ? new Date(r.started_at).getTime() : t0;
  const own = new Date(r.started_at).getTime() - base;
  const root = { id: prefix, kind: r.kind, name: (prefix ? r.kind + " · " : "") + (r.name || r.model || r.kind), start: own, dur: r.duration_ms, usage: r.usage, cost: r.cost,
    children: [], own: !prefix, status: r.status, err: r.status === "error" || r.status === "interrupted" };
  const nodes = { "": root };
  const all = [];
  const add = (kind, list, name) => list.forEach((c, i) => {
    const n = { id: prefix + kind + "/" + i, kind, call: c, parent: c.parent || "", name: name(c, i), dur: kind === "model" ? c.latency_ms : c.duration_ms,
      usage: kind === "tool" || kind === "step" ? null : c.usage, cost: kind === "tool" || kind === "step" ? 0 : c.cost || 0, children: [],
      start: c.start ? new Date(c.start).getTime() - base : null, err: c.is_error || !!c.error || c.status === "failed" };
    nodes[kind + "/" + i] = n;
    all.push(n);
  });
  add("step", r.steps || [], c => c.name + (c.note ? " · " + c.note : ""));
  add("model", r.model_calls, (c, i) => "model call " + (i + 1) + (c.mode ? " · " + c.mode : ""));
  add("tool", r.tool_calls, c => c.tool + (c.error_code ? " · " + c.error_code : ""));
  add("ptool", r.ptool_calls || [], c => "ptool " + c.ptool);
  // calls without a start (recorded by an older ptk) follow each other
  let at = own;
  for (const n of all) { if (n.start == null) n.start = at; at = Math.max(at, n.start + (n.dur || 0)); }
  for (const n of all) (nodes[n.parent] || root).children.push(n);
  for (const k of kids || []) root.children.push(spanTree(k, null, prefix + "run:" + k.id + "/", base));
  const sortKids = n => { n.children.sort((a, b) => a.start - b.start); n.children.forEach(sortKids); };
  sortKids(root);
  // tokens and cost summed up the tree: a ptool call's own usage is its
  // attempts' already, so a node with children of its kind's calls counts them
  const sum = n => {
    n.children.forEach(sum);
    n.tok = n.usage ? tokens(n.usage) : 0;
    n.sumCost = n.cost || 0;
    if (n.kind === "tool" || n.kind === "step") for (const c of n.children) { n.tok += c.tok; n.sumCost += c.sumCost; }
  };
  sum(root);
  root.tok = tokens(r.usage);
  root.sumCost = r.cost;
  return root;
}

function waterfall(r, labels, kids) {
  const root = spanTree(r, kids);
  const total = Math.max(r.duration_ms, 0.001);
  const rows = [];
  const label = id => labels[id] ? `<span class="badge ${labels[id].label === "good" ? "ok" : "error"}" title="${esc(labels[id].note)}">${esc(labels[id].label)}</span>` : "";
  const buttons = id => config.labels && (id === "" || id.startsWith("ptool/")) ? `<span class="lbl"><button data-span="${esc(id)}" data-label="good" title="mark good">good</button><button data-span="${esc(id)}" data-label="bad" title="mark bad">bad</button></span>` : "";
  const walk = (n, depth) => {
    const left = Math.min(100, 100 * Math.max(0, n.start) / total), width = Math.max(0.4, Math.min(100 - left, 100 * (n.dur || 0) / total));
    // a run under this one is drawn as a run; a step as a check (.step is
    // the calls list's)
    const cls = n.id.endsWith("/") ? "run" : n.kind === "step" ? "check" : n.kind;
    rows.push(`<tr class="span ${esc(cls)}${n.err ? " err" : ""}" data-span="${esc(n.id)}">
      <td class="sname" style="padding-left:${8 + depth * 18}px" title="${esc(n.name)}">${depth ? "└ " : ""}${esc(n.name)} ${label(n.id)}</td>
      <td class="wbar"><div class="bar"><i style="left:${left.toFixed(2)}%;width:${width.toFixed(2)}%"></i></div></td>
      <td class="num">${ms(n.dur)}</td><td class="num">${n.tok ? num(n.tok) : "-"}</td><td class="num">${n.sumCost ? money(n.sumCost) : "-"}</td><td class="nowrap">${buttons(n.id)}</td></tr>`);
    n.children.forEach(c => walk(c, depth + 1));
  };
  walk(root, 0);
  return `<table class="waterfall" id="waterfall"><thead><tr><th>span</th><th>time</th><th class="num">duration</th><th class="num">tokens</th><th class="num">cost</th><th></th></tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

function runView(id) {
  main.innerHTML = `<p class="muted">Loading run ${esc(id)}…</p>`;
  const self = { refresh: () => load() };
  function load() {
  api("runs/" + encodeURIComponent(id)).then(({ run: r, children, child_runs: kids }) => {
    if (view !== self) return;
    const labels = {};
    for (const l of r.labels || []) labels[l.span || ""] = l;
    const total = Math.max(r.duration_ms, 0.001);
    // each call's bar where the waterfall puts it: at its start, as long
    // as it took (calls recorded without a start follow each other)
    const spans = {};
    const index = n => { spans[n.id] = n; n.children.forEach(index); };
    index(spanTree(r, kids));
    const bar = id => {
      const n = spans[id] || { start: 0, dur: 0 };
      const left = Math.min(100, 100 * Math.max(0, n.start) / total), width = Math.max(0.5, Math.min(100 - left, 100 * (n.dur || 0) / total));
      return `<div class="bar"><i style="left:${left.toFixed(2)}%;width:${width.toFixed(2)}%"></i></div>`;
    };
    const steps = [];
    const byIter = {};
    for (const tc of r.tool_calls) (byIter[tc.iteration] = byIter[tc.iteration] || []).push(tc);
    r.model_calls.forEach((mc, i) => {
      steps.push(`<div class="step model">
        <h3>model call ${i + 1} <span class="meta">${esc(mc.mode || "")} · ${num(mc.usage.prompt_tokens)} + ${num(mc.usage.completion_tokens)} tokens · ${ms(mc.latency_ms)}${mc.cost ? " · " + money(mc.cost) : ""}${mc.parent ? " · under " + esc(mc.parent) : ""}</span></h3>
        ${bar("model/" + i)}
        ${mc.error ? `<div>${badge("error")} ${esc(mc.error)}</div>` : ""}
        ${mc.text ? `<pre>${esc(mc.text)}</pre>` : ""}
      </div>`);
      for (const tc of byIter[i + 1] || []) steps.push(toolStep(tc, bar("tool/" + r.tool_calls.indexOf(tc))));
      delete byIter[i + 1];
    });
    for (const k of Object.keys(byIter)) for (const tc of byIter[k]) steps.push(toolStep(tc, bar("tool/" + r.tool_calls.indexOf(tc))));
    (r.ptool_calls || []).forEach((pc, i) => {
      steps.push(`<div class="step tool${pc.is_error ? " err" : ""}">
        <h3>ptool ${esc(pc.ptool)} <span class="meta">${esc(pc.source || "model")}${pc.fallback ? " · fell back to the model" : ""} · ${ms(pc.duration_ms)}${pc.parent ? " · under " + esc(pc.parent) : ""}</span></h3>
        ${bar("ptool/" + i)}
        <div class="muted">input</div><pre>${esc(pretty(pc.input))}</pre>
        <div class="muted">output</div><pre>${esc(pretty(pc.output))}</pre>
        ${(pc.attempts || []).map((a, i) => `<div class="repairs">attempt ${i + 1}: ${esc((a.problems || []).join("; ") || "ok")}</div>`).join("")}
        ${pc.repairs && pc.repairs.length ? `<div class="repairs">repairs: ${esc(pc.repairs.join("; "))}</div>` : ""}
      </div>`);
    });
    const calls = r.model_calls.filter(m => !m.parent).length;
    const kidCalls = (kids || []).reduce((n, k) => n + k.model_calls.length, 0), kidTools = (kids || []).reduce((n, k) => n + k.tool_calls.length, 0);
    main.innerHTML = `
      <p><a href="#/runs">← runs</a>${r.parent_id ? ` · step of <a href="#/run/${encodeURIComponent(r.parent_id)}">${esc(r.parent_id)}</a>` : ""}</p>
      <div class="card" id="run" data-id="${esc(r.id)}" data-status="${esc(r.status)}">
        <h2><span class="badge kind">${esc(r.kind)}</span> ${esc(r.name || r.model || "")} ${badge(r.status)} <span class="muted mono">${esc(r.id)}</span></h2>
        <div class="summary">
          <div><b>${ms(r.duration_ms)}</b><span>duration${r.status === "running" ? " so far" : ""}</span></div>
          <div><b>${esc(r.model || "-")}</b><span>model · ${esc(r.mode || "-")}${r.provider ? " · " + esc(r.provider) : ""}</span></div>
          ${r.kind === "request" && r.detail ? `<div><b>→ ${esc(r.detail.status)}</b><span>${esc(r.detail.method)} ${esc(r.detail.route)} · ${esc(r.detail.api)}${r.detail.stream ? " · streamed" : ""}${r.detail.asked && r.detail.asked !== r.detail.model ? " · asked for " + esc(r.detail.asked) : ""}</span></div>` : ""}
          <div><b>${r.model_calls.length + kidCalls}</b><span>model calls${calls !== r.model_calls.length ? ` (${calls} its own)` : ""}${kidCalls ? ` (${kidCalls} in its runs)` : ""}</span></div>
          <div><b>${r.tool_calls.length + kidTools}</b><span>tool calls${kidTools ? ` (${kidTools} in its runs)` : ""}</span></div>
          <div><b>${num(tokens(r.usage))}</b><span>tokens (${num(r.usage.prompt_tokens)} in, ${num(r.usage.completion_tokens)} out)</span></div>
          <div><b>${money(r.cost)}</b><span>cost</span></div>
          <div><b>${when(r.started_at)}</b><span>started</span></div>
        </div>
        ${r.error_code || r.error_message ? `<p>${badge("error")} <b>${esc(r.error_code)}</b> ${esc(r.error_message)}</p>` : ""}
        ${r.input ? `<div class="muted">input</div><pre>${esc(r.input)}</pre>` : ""}
      </div>
      ${children.length ? `<div class="card"><h2>steps</h2><table><tbody>${children.map(c => `
        <tr class="run" data-id="${esc(c.id)}"><td><span class="badge kind">${esc(c.kind)}</span> <a href="#/run/${encodeURIComponent(c.id)}">${esc(c.name || c.id)}</a></td><td>${badge(c.status)}</td><td class="num">${ms(c.duration_ms)}</td><td class="input">${esc(c.input)}</td></tr>`).join("")}</tbody></table></div>` : ""}
      <div class="card"><h2>spans</h2>${waterfall(r, labels, kids)}</div>
      <div class="card"><h2>calls</h2>${steps.length ? `<div class="timeline" id="timeline">${steps.join("")}</div>` : `<p class="muted">No model or tool calls recorded${r.status === "running" ? " yet" : ""}.</p>`}</div>
      ${r.detail && r.detail.ptp ? `<div class="card"><h2>trajectory as PTP</h2><pre class="ptp">${esc(r.detail.ptp)}</pre></div>` : ""}
      ${r.detail ? `<div class="card"><h2>${r.kind === "react" ? "trajectory" : "trace"}</h2><pre>${esc(pretty(r.detail))}</pre></div>` : ""}
      ${r.output ? `<div class="card"><h2>answer</h2><pre>${esc(r.output)}</pre></div>` : ""}`;
    document.getElementById("waterfall").addEventListener("click", e => {
      const b = e.target.closest("button[data-label]");
      if (!b) return;
      const note = prompt(`Why is it ${b.dataset.label}? (optional)`) ;
      if (note === null) return;
      post("runs/" + encodeURIComponent(r.id) + "/labels", { span: b.dataset.span, label: b.dataset.label, note }).then(load).catch(showError);
    });
  }).catch(showError);
  }
  load();
  return self;
}

function toolStep(tc, bar) {
  return `<div class="step tool${tc.is_error ? " err" : ""}">
    <h3>${esc(tc.tool)} <span class="meta">${esc(tc.outcome)} · ${ms(tc.duration_ms)}${tc.is_error ? " · error" : ""}${tc.error_code ? " " + esc(tc.error_code) : ""}${tc.truncated ? " · result cut" : ""}</span></h3>
    ${bar}
    <pre class="args">${esc(pretty(tc.args))}</pre>
    ${tc.repairs && tc.repairs.length ? `<div class="repairs">repairs: ${esc(tc.repairs.join("; "))}</div>` : ""}
    <pre class="result">${esc(tc.result)}</pre>
  </div>`;
}

// ---- analytics

function analyticsView() {
  main.innerHTML = `
    <form class="filters" id="afilters"><label>period<select name="since">
      <option value="24h">last day</option><option value="168h" selected>last week</option><option value="720h">last 30 days</option><option value="">all time</option></select></label>
      <label>kind<select name="kind"><option value="">any</option><option>agent</option><option>ptool</option><option>workflow</option><option>react</option><option>distill</option><option>request</option></select></label>
      <label>model<input name="model" placeholder="any"></label>
      <label>tool<input name="tool" placeholder="runs that called it"></label>
      <label>name<input name="name" placeholder="a ptool, a workflow"></label></form>
    <div id="analytics"><p class="muted">Loading…</p></div>`;
  const form = document.getElementById("afilters");
  const self = { refresh: () => load() };
  // The charts and tables are of the runs the filters select: one tool's,
  // one model's, one ptool's over time.
  function load() {
    const since = form.elements.since.value;
    const step = since === "24h" ? "1h" : since === "168h" ? "6h" : "24h";
    const q = {};
    for (const k of ["since", "kind", "model", "tool", "name"]) if (form.elements[k].value) q[k] = form.elements[k].value;
    Promise.all([api("stats", q), api("series", Object.assign({ step }, q))]).then(([st, series]) => {
      if (view !== self) return;
      const ready = st.ptools.filter(p => p.calls - p.errors >= 20);
      document.getElementById("analytics").innerHTML = `
        <div class="grid2">
          <div class="card"><h2>runs over time</h2>${barChart(series, "runs", "errors")}</div>
          <div class="card"><h2>mean duration and cost over time</h2>${lineChart(series)}</div>
        </div>
        <div class="card"><h2>tools</h2>${statTable(st.tools, "tool")}</div>
        <div class="grid2">
          <div class="card"><h2>models</h2>${statTable(st.models, "model", true)}</div>
          <div class="card"><h2>runs by kind and name</h2>${statTable(st.runs, "run", true)}</div>
        </div>
        <div class="card"><h2>ptools</h2>${st.ptools.length ? `<table><thead><tr><th>ptool</th><th class="num">calls</th><th>success</th><th class="num">p50</th><th class="num">p95</th><th class="num">answered by code (coverage)</th><th class="num">fell back (rate)</th><th>distill</th></tr></thead><tbody>
          ${st.ptools.map(p => `<tr><td>${esc(p.name)}</td><td class="num">${num(p.calls)}</td><td>${rate(p.success_rate)}</td><td class="num">${ms(p.p50_ms)}</td><td class="num">${ms(p.p95_ms)}</td>
            <td class="num">${num(p.code)} (${(100 * (p.code || 0) / Math.max(1, p.calls)).toFixed(0)}%)</td><td class="num">${num(p.fallbacks)} (${(100 * (p.fallback_rate || 0)).toFixed(0)}%)</td>
            <td>${p.calls - p.errors >= 20 ? "ready: " + num(p.calls - p.errors) + " successful calls" : `<span class="muted">${num(p.calls - p.errors)} of 20 successful calls</span>`}</td></tr>`).join("")}
          </tbody></table><p class="muted">${ready.length} ptool(s) have enough successful calls to distill.</p>` : `<p class="muted">No ptool calls recorded in this period.</p>`}</div>`;
    }).catch(showError);
  }
  let timer = null;
  form.addEventListener("submit", e => e.preventDefault());
  form.addEventListener("change", load);
  form.addEventListener("input", e => { if (e.target.tagName === "INPUT") { clearTimeout(timer); timer = setTimeout(load, 300); } });
  load();
  return self;
}

function rate(r) {
  return `<span class="rate"><i style="width:${(100 * r).toFixed(1)}%"></i></span>${(100 * r).toFixed(1)}%`;
}

function statTable(rows, what, withCost) {
  if (!rows.length) return `<p class="muted">Nothing recorded in this period.</p>`;
  const max = Math.max(...rows.map(r => r.calls));
  return `<table class="stats"><thead><tr><th>${what}</th><th class="num">calls</th><th></th><th>success</th><th class="num">p50</th><th class="num">p95</th>${withCost ? `<th class="num">tokens</th><th class="num">cost</th>` : ""}</tr></thead><tbody>
    ${rows.slice(0, 30).map(r => `<tr><td>${r.kind ? `<span class="badge kind">${esc(r.kind)}</span> ` : ""}${esc(r.name || "-")}</td><td class="num">${num(r.calls)}</td>
      <td style="width:120px"><svg width="110" height="10"><rect width="${(110 * r.calls / max).toFixed(1)}" height="10" rx="2" fill="#2f6fed"></rect></svg></td>
      <td class="nowrap">${rate(r.success_rate)}</td><td class="num">${r.p95_ms ? ms(r.p50_ms) : "-"}</td><td class="num">${r.p95_ms ? ms(r.p95_ms) : "-"}</td>
      ${withCost ? `<td class="num">${num(tokens(r.usage))}</td><td class="num">${money(r.cost)}</td>` : ""}</tr>`).join("")}
  </tbody></table>`;
}

function axisLabel(t) {
  const d = new Date(t);
  return `${d.getMonth() + 1}/${d.getDate()} ${String(d.getHours()).padStart(2, "0")}h`;
}

function barChart(series, key, errKey) {
  if (!series.length) return `<p class="muted">No runs in this period.</p>`;
  const W = 600, H = 180, pad = 28, max = Math.max(...series.map(b => b[key]));
  const bw = (W - pad) / series.length;
  const bars = series.map((b, i) => {
    const h = (H - 30) * b[key] / max, he = (H - 30) * b[errKey] / max, x = pad + i * bw;
    return `<rect x="${x.toFixed(1)}" y="${(H - 20 - h).toFixed(1)}" width="${Math.max(1, bw - 2).toFixed(1)}" height="${h.toFixed(1)}" fill="#2f6fed"><title>${esc(axisLabel(b.start))}: ${b[key]} runs, ${b[errKey]} errors</title></rect>
      <rect x="${x.toFixed(1)}" y="${(H - 20 - he).toFixed(1)}" width="${Math.max(1, bw - 2).toFixed(1)}" height="${he.toFixed(1)}" fill="#d64545"></rect>`;
  }).join("");
  // at most three labels, each over its own bucket and never over another
  const marks = series.length === 1 ? [[0, "middle"]] : series.length === 2 ? [[0, "start"], [1, "end"]]
    : [[0, "start"], [Math.floor(series.length / 2), "middle"], [series.length - 1, "end"]];
  const labels = marks.map(([i, anchor]) => {
    const x = anchor === "end" ? W : anchor === "middle" ? pad + (i + 0.5) * bw : pad + i * bw;
    return `<text x="${x.toFixed(1)}" y="${H - 4}" text-anchor="${anchor}">${esc(axisLabel(series[i].start))}</text>`;
  }).join("");
  return `<svg class="chart" viewBox="0 0 ${W} ${H}" width="100%"><text x="0" y="12">${num(max)}</text><line x1="${pad}" x2="${W}" y1="${H - 20}" y2="${H - 20}" stroke="#e3e6ec"></line>${bars}${labels}</svg>
    <p class="muted"><span style="color:#2f6fed">■</span> runs <span style="color:#d64545">■</span> errors</p>`;
}

function lineChart(series) {
  if (!series.length) return `<p class="muted">No runs in this period.</p>`;
  const W = 600, H = 180, pad = 28;
  const line = (key, color) => {
    const vals = series.map(b => b[key]), max = Math.max(...vals) || 1;
    // one bucket is a point in the middle, not a line of no length
    const xy = vals.map((v, i) => [vals.length === 1 ? pad + (W - pad) / 2 : pad + (W - pad) * i / (vals.length - 1), H - 20 - (H - 40) * v / max]);
    const pts = xy.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(" ");
    const dots = xy.map(([x, y]) => `<circle cx="${x.toFixed(1)}" cy="${y.toFixed(1)}" r="3.5" fill="${color}"></circle>`).join("");
    return `<polyline points="${pts}" fill="none" stroke="${color}" stroke-width="2"></polyline>${dots}`;
  };
  const maxD = Math.max(...series.map(b => b.avg_duration_ms));
  return `<svg class="chart" viewBox="0 0 ${W} ${H}" width="100%"><text x="0" y="12">${esc(ms(maxD))}</text><line x1="${pad}" x2="${W}" y1="${H - 20}" y2="${H - 20}" stroke="#e3e6ec"></line>
    ${line("avg_duration_ms", "#7a5af8")}${line("cost", "#0e9384")}
    ${series.length === 1 ? `<text x="${(pad + (W - pad) / 2).toFixed(1)}" y="${H - 4}" text-anchor="middle">${esc(axisLabel(series[0].start))}</text>`
      : `<text x="${pad}" y="${H - 4}">${esc(axisLabel(series[0].start))}</text><text x="${W}" y="${H - 4}" text-anchor="end">${esc(axisLabel(series[series.length - 1].start))}</text>`}</svg>
    <p class="muted"><span style="color:#7a5af8">■</span> mean duration <span style="color:#0e9384">■</span> cost (each scaled to its maximum)</p>`;
}

function showError(err) {
  const p = document.createElement("p");
  p.className = "card";
  p.style.color = "#d64545";
  p.textContent = "Could not load: " + err.message;
  main.prepend(p);
}

// ---- live: the store's mark over a WebSocket; a change reloads the view.
// The page reconnects, with a growing delay, when the dashboard restarts.

let lastMark = null, delay = 500;
function connect() {
  const u = new URL("api/live", location.href);
  u.protocol = location.protocol === "https:" ? "wss:" : "ws:";
  if (token) u.searchParams.set("token", token);
  let ws;
  try { ws = new WebSocket(u); } catch (e) { setTimeout(connect, delay); return; }
  ws.onopen = () => { delay = 500; liveEl.className = "live on"; liveEl.textContent = "live"; };
  ws.onmessage = ev => {
    const m = JSON.parse(ev.data);
    const changed = lastMark && JSON.stringify(m) !== JSON.stringify(lastMark);
    lastMark = m;
    liveEl.dataset.runs = String(m.runs);
    if (changed && view) view.refresh();
  };
  ws.onclose = () => {
    liveEl.className = "live off";
    liveEl.textContent = "reconnecting…";
    setTimeout(connect, delay);
    delay = Math.min(delay * 2, 4000);
  };
  ws.onerror = () => {}; // onclose follows and reconnects
}

api("config").then(c => { config = c; }).catch(() => {}).finally(() => { route(); connect(); });
