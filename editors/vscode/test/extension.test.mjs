// The extension's pieces against the real ptk acp: the ACP client and the
// view-model drive a session (streaming, a tool card, an approval, an
// error, a cancel, the conversation list), recording every state the
// view-model posts; then the chat page, in a real headless Chromium, is fed
// those same states, and what it draws is checked and photographed.
//
// cmd/ptk's TestVSCodeExtension runs it with $PTK_BIN, $PTK_TEST_WORKSPACE,
// $PTK_TEST_BASE_URL (a scripted model) and $PTK_TEST_TRACE_DB; Chromium is
// $PTK_TEST_CHROMIUM (or chromium on PATH), the screenshots go to
// $PTK_ARTIFACTS.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync, mkdirSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { argsFor, ChatViewModel, pageHtml, startWith } from "../dist/lib.mjs";

const bin = process.env.PTK_BIN;
const workspace = process.env.PTK_TEST_WORKSPACE;
const here = resolve(import.meta.dirname, "..");

function newModel(posted) {
  return new ChatViewModel(
    startWith({
      command: bin,
      args: argsFor({ baseUrl: process.env.PTK_TEST_BASE_URL, model: "scripted", mode: "ask",
        args: ["--mode", "native", "--api-key", "sk-test", "--trace-db", process.env.PTK_TEST_TRACE_DB] }),
    }),
    workspace,
    (s) => posted.push(structuredClone(s)),
  );
}

async function until(ok, what) {
  const deadline = Date.now() + 20000;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error("timed out waiting for " + what);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const shots = {};

test("the view-model drives ptk acp", { skip: !bin && "no PTK_BIN: run it through go test ./cmd/ptk -run TestVSCodeExtension" }, async (t) => {
  const posted = [];
  const vm = newModel(posted);
  t.after(() => vm.dispose());
  await vm.start();
  assert.equal(vm.state.status, "idle", JSON.stringify(vm.state.items));
  assert.deepEqual(vm.state.modes.map((m) => m.id), ["ask", "auto-edit", "plan"]);
  assert.equal(vm.state.model, "scripted");
  const first = vm.state.sessionId;

  await t.test("the answer streams, and the tool call is a card", async () => {
    const from = posted.length;
    const r = await vm.send("read package.json");
    assert.equal(r.stopReason, "end_turn");
    const items = vm.state.items;
    assert.deepEqual(items.map((i) => i.kind), ["user", "agent", "tool", "agent"]);
    const card = items[2];
    assert.equal(card.title, "Read package.json");
    assert.equal(card.toolKind, "read");
    assert.equal(card.status, "completed");
    assert.equal(card.iteration, 1);
    assert.match(card.input, /"path": "package.json"/);
    assert.match(card.output, /"name": "demo"/);
    assert.equal(items[3].text, "The package is named **demo**, version `1.0.0`.");
    assert.deepEqual(vm.state.counts.iterations, 2);
    assert.deepEqual(vm.state.counts.toolCalls, 1);
    // While it ran, the page got the answer piece by piece.
    const partial = posted.slice(from).filter((s) => s.status === "running" && s.items.at(-1)?.kind === "agent" && s.items.length === 4);
    assert.ok(partial.length >= 2, `the answer was posted ${partial.length} times while it streamed`);
    shots.streaming = partial[Math.floor(partial.length / 2)];
    shots.card = structuredClone(vm.state);
  });

  await t.test("an approval, rejected then allowed, and the diff", async () => {
    let turn = vm.send("edit main.go");
    await until(() => vm.state.permission, "the question");
    shots.approval = structuredClone(vm.state);
    assert.equal(vm.state.permission.title, "Edit main.go");
    assert.deepEqual(vm.state.permission.options.map((o) => o.kind), ["allow_once", "allow_always", "reject_once"]);
    vm.answer("reject_once");
    await turn;
    let card = vm.state.items.filter((i) => i.kind === "tool").at(-1);
    assert.equal(card.status, "failed");
    assert.match(card.output, /Denied/);
    assert.match(readFileSync(join(workspace, "main.go"), "utf8"), /"hi"/);

    turn = vm.send("edit main.go");
    await until(() => vm.state.permission, "the question");
    vm.answer("allow_once");
    await turn;
    card = vm.state.items.filter((i) => i.kind === "tool").at(-1);
    assert.equal(card.status, "completed");
    assert.match(card.diff.oldText, /"hi"/);
    assert.match(card.diff.newText, /"hello"/);
    assert.match(readFileSync(join(workspace, "main.go"), "utf8"), /"hello"/);
    shots.diff = structuredClone(vm.state);
  });

  await t.test("a plan", async () => {
    await vm.send("plan it");
    assert.deepEqual(vm.state.plan.map((p) => p.status), ["completed", "in_progress", "pending"]);
  });

  await t.test("an error is shown, and the view goes on", async () => {
    const r = await vm.send("fail");
    assert.equal(r, undefined);
    const err = vm.state.items.at(-1);
    assert.equal(err.kind, "error");
    assert.match(err.text, /the model is overloaded/);
    assert.equal(vm.state.status, "idle");
    shots.error = structuredClone(vm.state);
  });

  await t.test("a cancel while a command runs", async () => {
    const turn = vm.send("sleep");
    await until(() => vm.state.permission, "the question");
    vm.answer("allow_once");
    await until(() => vm.state.items.at(-1)?.status === "in_progress", "the command to run");
    shots.running = structuredClone(vm.state);
    const started = Date.now();
    await vm.cancel();
    const r = await turn;
    assert.equal(r.stopReason, "cancelled");
    assert.ok(Date.now() - started < 5000);
    assert.equal(vm.state.items.filter((i) => i.kind === "tool").at(-1).status, "failed");
    assert.equal(vm.state.items.at(-1).text, "Cancelled.");
  });

  await t.test("what the model writes stays text", async () => {
    await vm.send("show html");
    shots.xss = structuredClone(vm.state);
  });

  await t.test("the conversation list, a new conversation, and loading the old one", async () => {
    await vm.newConversation();
    assert.notEqual(vm.state.sessionId, first);
    assert.equal(vm.state.items.length, 0);
    await vm.list();
    const c = vm.state.conversations.find((c) => c.sessionId === first);
    assert.ok(c, "the first conversation is listed");
    assert.equal(c.title, "read package.json");
    shots.list = structuredClone(vm.state);
    await vm.load(first);
    assert.equal(vm.state.sessionId, first);
    assert.equal(vm.state.items[0].text, "read package.json");
    assert.equal(vm.state.items.find((i) => i.kind === "tool").title, "Read package.json");
  });
});

function chromium() {
  for (const c of [process.env.PTK_TEST_CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser"]) {
    if (c && existsSync(c)) return c;
  }
  return null;
}

/** page writes the real chat page, with a stand-in for VS Code's API that records what the page posts, fed state. */
function page(dir, state) {
  const nonce = "n0nce";
  let html = pageHtml({
    script: pathToFileURL(join(here, "dist", "webview.js")).href,
    style: pathToFileURL(join(here, "media", "style.css")).href,
    cspSource: "file:",
    nonce,
  });
  const stub = `<script nonce="${nonce}">window.acquireVsCodeApi = () => ({ postMessage: (m) => { document.documentElement.dataset.posted = (document.documentElement.dataset.posted || "") + m.type + " "; } });</script>`;
  const feed = `<script nonce="${nonce}">window.postMessage(${JSON.stringify({ type: "state", state }).replace(/</g, "\\u003c")}, "*");</script>`;
  html = html.replace('<div id="app"></div>', '<div id="app"></div>' + stub).replace("</body>", feed + "</body>");
  const file = join(dir, "page.html");
  writeFileSync(file, html);
  return pathToFileURL(file).href;
}

function run(chrome, args) {
  return execFileSync(chrome, ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--mute-audio",
    "--no-first-run", "--allow-file-access-from-files", "--window-size=440,820", ...args],
  { encoding: "utf8", timeout: 60000, stdio: ["ignore", "pipe", "ignore"] });
}

test("the chat page in Chromium", { skip: (!bin && "no PTK_BIN") || (!chromium() && "no Chromium") }, async (t) => {
  const chrome = chromium();
  const out = process.env.PTK_ARTIFACTS || mkdtempSync(join(tmpdir(), "ptk-vscode-"));
  mkdirSync(out, { recursive: true });
  const look = (name, state) => {
    const dir = mkdtempSync(join(tmpdir(), "ptk-page-"));
    const url = page(dir, state);
    assert.ok(state, `no state for ${name}: the session test did not get that far`);
    return run(chrome, ["--dump-dom", `--screenshot=${join(out, `vscode-${name}.png`)}`, url]);
  };
  await t.test("streaming", () => {
    const dom = look("streaming", shots.streaming);
    assert.match(dom, /working…/);
    assert.match(dom, /1 model call · 1 tool call/, "the counts go up as the turn runs");
    assert.match(dom, /id="cancel"/);
    assert.match(dom, /data-posted="ready /, "the page said it is ready");
  });
  await t.test("a tool card and the answer in Markdown", () => {
    const dom = look("tool-card", shots.card);
    assert.match(dom, /class="tool completed"/);
    assert.match(dom, /Read package.json/);
    assert.match(dom, /<strong>demo<\/strong>, version <code>1.0.0<\/code>/);
    assert.match(dom, /2 model calls · 1 tool call/);
  });
  await t.test("an approval", () => {
    const dom = look("approval", shots.approval);
    assert.match(dom, /Allow <strong>Edit main.go<\/strong>\?/);
    assert.match(dom, /data-option="allow_once">Allow</);
    assert.match(dom, /data-option="reject_once">Reject</);
    assert.match(dom, /class="add">\+\tprintln\("hello"\)/, "the question shows the diff");
  });
  await t.test("a diff", () => {
    const dom = look("diff", shots.diff);
    assert.match(dom, /class="del">-\tprintln\("hi"\)/);
    assert.match(dom, /class="add">\+\tprintln\("hello"\)/);
  });
  await t.test("an error", () => {
    const dom = look("error", shots.error);
    assert.match(dom, /class="error" role="alert"><strong>Error<\/strong>[^<]*the model is overloaded/);
  });
  await t.test("a running command", () => {
    const dom = look("running", shots.running);
    assert.match(dom, /class="spinner"/);
  });
  await t.test("the conversation list", () => {
    const dom = look("conversations", shots.list);
    assert.match(dom, /data-load="acp-[^"]+">read package.json/);
  });
  await t.test("the model's HTML stays text", () => {
    const dom = look("xss", shots.xss);
    assert.match(dom, /<title>ptk<\/title>/, "a script of the model's ran");
    assert.doesNotMatch(dom, /<img/);
    assert.doesNotMatch(dom, /href="javascript:/);
    assert.match(dom, /&lt;img src=x onerror=/);
    assert.match(dom, /image: exfil/);
    assert.match(dom, /<a href="https:\/\/example.com\/docs"/);
  });
});
