// The chat page: it draws the state the extension posts, and posts what the
// user does. Everything the model or a tool wrote goes through
// renderMarkdown or textContent: escaped, never markup of its own.
import { escapeHtml, renderMarkdown } from "../markdown.js";
import type { FromPage, Item, ToPage, ToolCard, ViewState } from "../protocol.js";

declare function acquireVsCodeApi(): { postMessage(m: FromPage): void };

const vscode = acquireVsCodeApi();
const app = document.getElementById("app")!;
let state: ViewState | undefined;
let draft = "";
const open = new Set<string>(); // tool cards whose details are open

window.addEventListener("message", (e: MessageEvent<ToPage>) => {
  if (e.data?.type === "state") {
    state = e.data.state;
    render();
  }
});

function post(m: FromPage) {
  vscode.postMessage(m);
}

const kinds: Record<string, string> = { read: "read", edit: "edit", search: "search", execute: "run", think: "plan", fetch: "fetch", other: "tool" };
const statusText: Record<string, string> = { pending: "waiting", in_progress: "running", completed: "done", failed: "failed" };

function card(c: ToolCard): string {
  const spinner = c.status === "in_progress" || c.status === "pending" ? '<span class="spinner" aria-label="running"></span>' : "";
  const details: string[] = [];
  if (c.input) details.push(`<div class="label">arguments</div><pre class="input">${escapeHtml(c.input)}</pre>`);
  if (c.diff) details.push(`<div class="label path">diff of ${escapeHtml(c.diff.path)}</div>${diffHtml(c.diff.oldText ?? "", c.diff.newText)}`);
  else if (c.output !== undefined) details.push(`<div class="label">result</div><pre class="output">${escapeHtml(c.output)}</pre>`);
  const isOpen = open.has(c.id) || c.status === "failed" || !!c.diff;
  return `<div class="tool ${c.status}" data-id="${escapeHtml(c.id)}">
  <div class="tool-head" data-toggle="${escapeHtml(c.id)}">
    <span class="kind ${escapeHtml(c.toolKind)}">${kinds[c.toolKind] ?? kinds.other}</span>
    <span class="title">${escapeHtml(c.title)}</span>
    ${spinner}<span class="status">${statusText[c.status] ?? escapeHtml(c.status)}</span>
  </div>
  ${details.length ? `<div class="tool-body"${isOpen ? "" : " hidden"}>${details.join("")}</div>` : ""}
</div>`;
}

/** diffHtml shows the lines that changed between two texts, with a little context. */
function diffHtml(a: string, b: string): string {
  const x = a.split("\n");
  const y = b.split("\n");
  let start = 0;
  while (start < x.length && start < y.length && x[start] === y[start]) start++;
  let ex = x.length;
  let ey = y.length;
  while (ex > start && ey > start && x[ex - 1] === y[ey - 1]) {
    ex--;
    ey--;
  }
  const ctx = 2;
  const rows: string[] = [];
  for (let i = Math.max(0, start - ctx); i < start; i++) rows.push(`<div class="ctx"> ${escapeHtml(x[i])}</div>`);
  for (let i = start; i < ex; i++) rows.push(`<div class="del">-${escapeHtml(x[i])}</div>`);
  for (let i = start; i < ey; i++) rows.push(`<div class="add">+${escapeHtml(y[i])}</div>`);
  for (let i = ex; i < Math.min(x.length, ex + ctx); i++) rows.push(`<div class="ctx"> ${escapeHtml(x[i])}</div>`);
  return `<pre class="diff">${rows.join("")}</pre>`;
}

function item(i: Item): string {
  switch (i.kind) {
    case "user":
      return `<div class="msg user">${escapeHtml(i.text)}</div>`;
    case "agent":
      return `<div class="msg agent">${renderMarkdown(i.text)}</div>`;
    case "thought":
      return `<details class="thought"><summary>reasoning</summary>${escapeHtml(i.text)}</details>`;
    case "notice":
      return `<div class="notice">${escapeHtml(i.text)}</div>`;
    case "error":
      return `<div class="error" role="alert"><strong>Error</strong> ${escapeHtml(i.text)}</div>`;
    case "tool":
      return card(i);
  }
}

function render() {
  if (!state) return;
  const s = state;
  const running = s.status === "running";
  const counts = `${s.counts.iterations} model call${s.counts.iterations === 1 ? "" : "s"} · ${s.counts.toolCalls} tool call${s.counts.toolCalls === 1 ? "" : "s"}` +
    (s.counts.tokens ? ` · ${s.counts.tokens} tokens` : "") + (s.counts.cost ? ` · $${s.counts.cost.toFixed(4)}` : "");
  const modes = s.modes.map((m) => `<option value="${escapeHtml(m.id)}"${m.id === s.mode ? " selected" : ""}>${escapeHtml(m.name)}</option>`).join("");
  const plan = s.plan?.length
    ? `<div class="plan"><div class="label">plan</div><ol>${s.plan.map((p) => `<li class="${escapeHtml(p.status)}">${escapeHtml(p.content)}</li>`).join("")}</ol></div>`
    : "";
  const perm = s.permission
    ? `<div class="permission" role="dialog"><div class="q">Allow <strong>${escapeHtml(s.permission.title)}</strong>?</div>` +
      (s.permission.detail ? `<pre>${escapeHtml(s.permission.detail)}</pre>` : "") +
      (s.permission.diff ? `<div class="label path">${escapeHtml(s.permission.diff.path)}</div>${diffHtml(s.permission.diff.oldText ?? "", s.permission.diff.newText)}` : "") +
      `<div class="buttons">${s.permission.options.map((o) => `<button class="${o.kind.startsWith("allow") ? "allow" : "reject"}" data-option="${escapeHtml(o.optionId)}">${escapeHtml(o.name)}</button>`).join("")}</div></div>`
    : "";
  const convs = s.conversations
    ? `<div class="convs"><div class="label">conversations</div>${s.conversations.length ? s.conversations.map((c) => `<button class="conv" data-load="${escapeHtml(c.sessionId)}">${escapeHtml(c.title)}<span>${escapeHtml((c.updatedAt ?? "").replace("T", " ").replace("Z", ""))}</span></button>`).join("") : "<div class=\"notice\">none yet</div>"}</div>`
    : "";
  const status = s.status === "starting" ? "starting ptk…" : s.status === "stopped" ? "ptk acp is not running" : running ? "working…" : "";
  skeleton();
  byId("head").innerHTML = `<span class="model">${escapeHtml(s.model ?? "")}</span>
  <select id="mode" title="when ptk asks before it changes something"${running ? " disabled" : ""}>${modes}</select>
  <button id="list" title="conversations">History</button>
  <button id="new" title="new conversation">+ New</button>`;
  byId("convs").innerHTML = convs;
  const log = byId("log");
  log.innerHTML = s.items.map(item).join("") + plan + perm;
  log.scrollTop = log.scrollHeight;
  byId("meta").innerHTML = `<span class="counts">${counts}</span><span class="state">${status}</span>`;
  byId("action").innerHTML = running ? '<button id="cancel" class="reject">Cancel</button>' : '<button id="send">Send</button>';
  (byId("prompt") as HTMLTextAreaElement).disabled = s.status === "stopped";
}

function byId(id: string): HTMLElement {
  return document.getElementById(id)!;
}

/** skeleton lays out the page once: the prompt's text area is never redrawn, so typing goes on while the answer streams. */
function skeleton() {
  if (document.getElementById("log")) return;
  app.innerHTML = `<header id="head"></header><div id="convs"></div><main id="log"></main>
<footer><div class="meta" id="meta"></div>
<div class="input"><textarea id="prompt" rows="3" placeholder="Ask ptk… (Enter sends, Shift+Enter a new line)"></textarea><span id="action"></span></div></footer>`;
}

app.addEventListener("click", (e) => {
  const t = (e.target as HTMLElement).closest("button, .tool-head") as HTMLElement | null;
  if (!t) return;
  if (t.dataset.option) post({ type: "permission", optionId: t.dataset.option });
  else if (t.dataset.load) post({ type: "load", sessionId: t.dataset.load });
  else if (t.dataset.toggle) {
    const id = t.dataset.toggle;
    if (open.has(id)) open.delete(id);
    else open.add(id);
    const body = t.parentElement?.querySelector(".tool-body") as HTMLElement | null;
    if (body) body.hidden = !body.hidden;
  } else if (t.id === "send") send();
  else if (t.id === "cancel") post({ type: "cancel" });
  else if (t.id === "new") post({ type: "new" });
  else if (t.id === "list") post({ type: "list" });
});

app.addEventListener("change", (e) => {
  const t = e.target as HTMLSelectElement;
  if (t.id === "mode") post({ type: "mode", mode: t.value });
});

app.addEventListener("input", (e) => {
  const t = e.target as HTMLTextAreaElement;
  if (t.id === "prompt") draft = t.value;
});

app.addEventListener("keydown", (e) => {
  const t = e.target as HTMLElement;
  if (t.id === "prompt" && e.key === "Enter" && !e.shiftKey) {
    e.preventDefault();
    send();
  }
});

function send() {
  const text = draft.trim();
  if (!text || state?.status !== "idle") return;
  draft = "";
  (byId("prompt") as HTMLTextAreaElement).value = "";
  post({ type: "send", text });
}

post({ type: "ready" });
