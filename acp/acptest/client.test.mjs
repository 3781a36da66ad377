// The end-to-end test of `ptk acp` with the official ACP TypeScript SDK as
// the client: an editor nobody here wrote. cmd/ptk's TestACPWithOfficialClient
// runs it under node --test, with a real ptk binary ($PTK_BIN), a folder to
// work in ($PTK_TEST_WORKSPACE), a trace store ($PTK_TEST_TRACE_DB) and a
// scripted OpenAI-compatible model server ($PTK_TEST_BASE_URL) that answers
// by the prompt.
//
// The client offers its files (fs/*: an in-memory buffer per file, over the
// disk) and its terminals (terminal/*: processes it starts), as Zed does.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { client, methods, ndJsonStream, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";

const bin = process.env.PTK_BIN;
const workspace = process.env.PTK_TEST_WORKSPACE;
const baseURL = process.env.PTK_TEST_BASE_URL;
const traceDB = process.env.PTK_TEST_TRACE_DB;

/** An editor: the updates it got, the questions it was asked, its buffers and terminals. */
class Editor {
  constructor() {
    this.updates = [];
    this.asked = [];
    this.answers = [];
    this.buffers = new Map();
    this.reads = [];
    this.terminals = new Map();
    this.nterm = 0;
    this.waiters = [];
  }

  /** Starts ptk acp and connects to it. */
  async start() {
    const ed = this;
    this.proc = spawn(bin, ["acp", "--model", "scripted", "--mode", "native", "--base-url", baseURL,
      "--api-key", "sk-test", "--trace-db", traceDB], { stdio: ["pipe", "pipe", "pipe"] });
    this.stderr = "";
    this.proc.stderr.on("data", (d) => { this.stderr += d; });
    const app = client({ name: "ptk-e2e" })
      .onNotification(methods.client.session.update, ({ params }) => {
        ed.updates.push(params);
        ed.wake();
      })
      .onRequest(methods.client.session.requestPermission, async ({ params }) => {
        ed.asked.push(params);
        ed.wake();
        const answer = ed.answers.shift() ?? "reject_once";
        return { outcome: { outcome: "selected", optionId: answer } };
      })
      .onRequest(methods.client.fs.readTextFile, ({ params }) => {
        ed.reads.push(params.path);
        const text = ed.buffers.has(params.path) ? ed.buffers.get(params.path) : readFileSync(params.path, "utf8");
        return { content: text };
      })
      .onRequest(methods.client.fs.writeTextFile, ({ params }) => {
        ed.buffers.set(params.path, params.content);
        return {};
      })
      .onRequest(methods.client.terminal.create, ({ params }) => {
        const id = `term-${++ed.nterm}`;
        const env = { ...process.env };
        for (const { name, value } of params.env ?? []) env[name] = value;
        const child = spawn(params.command, params.args ?? [], { cwd: params.cwd ?? workspace, env, detached: true });
        const t = { child, output: "", exit: null, limit: params.outputByteLimit ?? 1 << 20 };
        t.exited = new Promise((resolve) => child.on("exit", (code, signal) => { t.exit = { exitCode: code, signal }; resolve(t.exit); }));
        const keep = (d) => { t.output = (t.output + d).slice(-t.limit); };
        child.stdout.on("data", keep);
        child.stderr.on("data", keep);
        ed.terminals.set(id, t);
        ed.wake();
        return { terminalId: id };
      })
      .onRequest(methods.client.terminal.output, ({ params }) => {
        const t = ed.terminals.get(params.terminalId);
        return { output: t.output, truncated: false, exitStatus: t.exit ?? undefined };
      })
      .onRequest(methods.client.terminal.waitForExit, async ({ params }) => ed.terminals.get(params.terminalId).exited)
      .onRequest(methods.client.terminal.kill, async ({ params }) => {
        await kill(ed.terminals.get(params.terminalId));
        return {};
      })
      .onRequest(methods.client.terminal.release, async ({ params }) => {
        await kill(ed.terminals.get(params.terminalId));
        return {};
      });
    this.conn = app.connect(ndJsonStream(Writable.toWeb(this.proc.stdin), Readable.toWeb(this.proc.stdout)));
    this.agent = this.conn.agent;
    return this.agent.request(methods.agent.initialize, {
      protocolVersion: PROTOCOL_VERSION,
      clientInfo: { name: "ptk-e2e", version: "1" },
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true },
    });
  }

  /** Ends ptk acp: its stdin closes, and it exits. */
  async stop() {
    const exited = new Promise((resolve) => this.proc.on("exit", (code) => resolve(code)));
    this.proc.stdin.end();
    const code = await exited;
    this.conn.close();
    return code;
  }

  wake() {
    for (const w of this.waiters.splice(0)) w();
  }

  /** Waits until ok() holds, checking at each update. */
  async until(ok, what) {
    const deadline = Date.now() + 20000;
    while (!ok()) {
      if (Date.now() > deadline) throw new Error("timed out waiting for " + what);
      await new Promise((resolve) => { this.waiters.push(resolve); setTimeout(resolve, 50); });
    }
  }

  /** The updates since the last call, forgotten. */
  take() {
    return this.updates.splice(0).map((n) => n.update);
  }

  prompt(sessionId, text) {
    return this.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
  }
}

async function kill(t) {
  if (t && t.exit === null) {
    try { process.kill(-t.child.pid, "SIGKILL"); } catch { /* gone */ }
    await t.exited;
  }
}

/** The answer's text, and each tool call folded with its updates. */
function fold(updates) {
  let answer = "";
  let chunks = 0;
  const calls = new Map();
  let plan = null;
  for (const u of updates) {
    switch (u.sessionUpdate) {
      case "agent_message_chunk":
        answer += u.content.text;
        chunks++;
        break;
      case "tool_call":
        calls.set(u.toolCallId, { ...u, updates: 0 });
        break;
      case "tool_call_update": {
        const c = calls.get(u.toolCallId);
        assert.ok(c, `an update of an unknown tool call ${u.toolCallId}`);
        for (const [k, v] of Object.entries(u)) if (v !== undefined && v !== null && k !== "sessionUpdate") c[k] = v;
        c.updates++;
        break;
      }
      case "plan":
        plan = u.entries;
        break;
    }
  }
  return { answer, chunks, calls: [...calls.values()], plan };
}

function text(content) {
  return (content ?? []).filter((c) => c.type === "content").map((c) => c.content.text).join("\n");
}

test("a whole session with the official ACP client", async (t) => {
  const ed = new Editor();
  const init = await ed.start();
  t.after(() => ed.proc.exitCode === null && ed.proc.kill("SIGKILL"));
  assert.equal(init.protocolVersion, 1);
  assert.equal(init.agentCapabilities.loadSession, true);
  assert.equal(init.agentCapabilities.promptCapabilities.embeddedContext, true);
  assert.equal(init.agentCapabilities.mcpCapabilities.http, true);
  assert.equal(init.agentInfo.name, "ptk");

  // The session gets the editor's MCP server: ptk's own, as `ptk mcp`.
  const session = await ed.agent.request(methods.agent.session.new, {
    cwd: workspace,
    mcpServers: [{ name: "inner", command: bin, args: ["mcp", "--workspace", workspace], env: [] }],
  });
  const id = session.sessionId;
  assert.equal(session.modes.currentModeId, "ask");
  assert.deepEqual(session.modes.availableModes.map((m) => m.id), ["ask", "auto-edit", "plan"]);
  assert.ok(session.configOptions.find((o) => o.id === "model").options.some((o) => o.value === "qwen3:8b"));

  await t.test("commands are announced, and answered without the model", async () => {
    await ed.until(() => ed.updates.some((n) => n.update.sessionUpdate === "available_commands_update"), "the commands");
    const r = await ed.prompt(id, "/tools");
    assert.equal(r.stopReason, "end_turn");
    const { answer } = fold(ed.take());
    assert.match(answer, /`inner__read_file`/, "the MCP server's tools");
    assert.match(answer, /`edit_file` \(asks first\)/);
    assert.match(answer, /through the editor's buffers; commands run in the editor's terminal/);
  });

  await t.test("a prompt whose answer streams, with a tool call", async () => {
    const r = await ed.prompt(id, "read package.json");
    assert.equal(r.stopReason, "end_turn");
    assert.equal(r._meta.ptk.iterations, 2);
    assert.equal(r._meta.ptk.toolCalls, 1);
    const { answer, chunks, calls } = fold(ed.take());
    assert.equal(answer, "Let me look at it.The package is named **demo**, version `1.0.0`.");
    assert.ok(chunks > 2, `the answer came in ${chunks} pieces`);
    assert.equal(calls.length, 1);
    const c = calls[0];
    assert.equal(c.title, "Read package.json");
    assert.equal(c.kind, "read");
    assert.equal(c.status, "completed");
    assert.deepEqual(c.rawInput, { path: "package.json" });
    assert.equal(c.locations[0].path, join(workspace, "package.json"));
    assert.match(text(c.content), /"name": "demo"/);
    assert.ok(ed.reads.includes(join(workspace, "package.json")), "read_file read through the editor");
  });

  await t.test("a permission request answered each way", async () => {
    const main = join(workspace, "main.go");
    ed.buffers.set(main, 'package main\n\nfunc main() {\n\tprintln("hi") // unsaved\n}\n');

    ed.answers.push("reject_once");
    await ed.prompt(id, "edit main.go");
    let { calls } = fold(ed.take());
    assert.equal(ed.asked.length, 1);
    const q = ed.asked[0];
    assert.deepEqual(q.options.map((o) => o.kind), ["allow_once", "allow_always", "reject_once"]);
    assert.equal(q.toolCall.title, "Edit main.go");
    assert.equal(q.toolCall.content[0].type, "diff");
    assert.match(q.toolCall.content[0].newText, /println\("hello"\) \/\/ unsaved/);
    assert.equal(calls[0].status, "failed");
    assert.match(text(calls[0].content), /Denied: the user did not allow this call/);
    assert.match(ed.buffers.get(main), /"hi"/);

    ed.answers.push("allow_once");
    await ed.prompt(id, "edit main.go");
    ({ calls } = fold(ed.take()));
    assert.equal(calls[0].status, "completed");
    const diff = calls[0].content.find((c) => c.type === "diff");
    assert.equal(diff.path, main);
    assert.match(diff.oldText, /"hi"/);
    assert.match(diff.newText, /"hello"/);
    // The edit landed in the editor's buffer, not on the disk.
    assert.equal(ed.buffers.get(main), 'package main\n\nfunc main() {\n\tprintln("hello") // unsaved\n}\n');
    assert.match(readFileSync(main, "utf8"), /println\("hi"\)\n/);

    ed.answers.push("allow_always");
    await ed.prompt(id, "write notes");
    await ed.prompt(id, "write notes");
    ({ calls } = fold(ed.take()));
    assert.equal(ed.asked.length, 3, "allow always asked once");
    assert.deepEqual(calls.map((c) => c.status), ["completed", "completed"]);
    assert.equal(ed.buffers.get(join(workspace, "notes.md")), "# Notes\n");
  });

  await t.test("a cancel while a tool runs in the editor's terminal", async () => {
    ed.answers.push("allow_once");
    const turn = ed.prompt(id, "sleep");
    await ed.until(() => ed.terminals.size > 0, "the terminal");
    const term = [...ed.terminals.values()].at(-1);
    const started = Date.now();
    await ed.agent.notify(methods.agent.session.cancel, { sessionId: id });
    const r = await turn;
    assert.equal(r.stopReason, "cancelled");
    assert.ok(Date.now() - started < 5000, "the turn ended at once");
    await term.exited;
    assert.equal(term.exit.signal, "SIGKILL", "the command was killed");
    const { calls } = fold(ed.take());
    const c = calls.at(-1);
    assert.equal(c.kind, "execute");
    assert.equal(c.title, "Run sleep 30");
    assert.equal(c.status, "failed");
    assert.ok(c.content.some((x) => x.type === "terminal"), "the call shows its terminal");
  });

  await t.test("the session is loaded after a restart, and goes on", async () => {
    assert.equal(await ed.stop(), 0, "ptk acp exits when the editor goes away:\n" + ed.stderr);
    const ed2 = new Editor();
    await ed2.start();
    t.after(() => ed2.proc.exitCode === null && ed2.proc.kill("SIGKILL"));
    const list = await ed2.agent.request(methods.agent.session.list, { cwd: workspace });
    const listed = list.sessions.find((s) => s.sessionId === id);
    assert.ok(listed, "session/list lists it");
    assert.equal(listed.cwd, workspace);
    assert.equal(listed.title, "read package.json");

    await ed2.agent.request(methods.agent.session.load, { sessionId: id, cwd: workspace, mcpServers: [] });
    const replay = ed2.take();
    const users = replay.filter((u) => u.sessionUpdate === "user_message_chunk").map((u) => u.content.text);
    assert.deepEqual(users, ["read package.json", "edit main.go", "edit main.go", "write notes", "write notes", "sleep"]);
    const { answer, calls } = fold(replay);
    assert.match(answer, /The package is named \*\*demo\*\*/);
    assert.deepEqual(calls.map((c) => c.title), ["Read package.json", "Edit main.go", "Edit main.go", "Write notes.md", "Write notes.md", "Run sleep 30"]);
    assert.deepEqual(calls.map((c) => c.status), ["completed", "failed", "completed", "completed", "completed", "failed"]);

    const r = await ed2.prompt(id, "what did I ask first?");
    assert.equal(r.stopReason, "end_turn");
    assert.equal(fold(ed2.take()).answer, "You asked me to read package.json.");
    assert.equal(await ed2.stop(), 0);
  });
});
