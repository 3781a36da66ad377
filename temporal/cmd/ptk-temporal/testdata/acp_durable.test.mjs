// `ptk acp --temporal` with the official ACP TypeScript SDK as the editor:
// each prompt turn is a durable run on a worker, a call the run waits for
// is the editor's session/request_permission, and session/cancel cancels
// the run. TestACPDurable runs it under node --test with a real ptk
// ($PTK_BIN), the Temporal server ($PTK_TEST_TEMPORAL), the worker's
// workspace ($PTK_TEST_WORKER_WS) and the session's folder
// ($PTK_TEST_WORKSPACE); the worker's scripted model, asked "write X",
// calls write_file for note.txt with X.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { client, methods, ndJsonStream, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";

const bin = process.env.PTK_BIN;
const note = join(process.env.PTK_TEST_WORKER_WS, "note.txt");

class Editor {
  constructor() {
    this.updates = [];
    this.asked = [];
    this.answers = []; // an option id, or "hold": answered "cancelled" when release() is called
    this.waiters = [];
    this.held = [];
  }

  async start() {
    const ed = this;
    this.proc = spawn(bin, ["acp", "--temporal", process.env.PTK_TEST_TEMPORAL, "--mode", "native",
      "--trace-db", process.env.PTK_TEST_TRACE_DB], { stdio: ["pipe", "pipe", "pipe"] });
    this.stderr = "";
    this.proc.stderr.on("data", (d) => { this.stderr += d; });
    const app = client({ name: "ptk-durable-e2e" })
      .onNotification(methods.client.session.update, ({ params }) => {
        ed.updates.push(params);
        ed.wake();
      })
      .onRequest(methods.client.session.requestPermission, async ({ params }) => {
        ed.asked.push(params);
        ed.wake();
        const answer = ed.answers.shift() ?? "reject_once";
        if (answer === "hold") {
          await new Promise((resolve) => ed.held.push(resolve));
          return { outcome: { outcome: "cancelled" } };
        }
        return { outcome: { outcome: "selected", optionId: answer } };
      });
    this.conn = app.connect(ndJsonStream(Writable.toWeb(this.proc.stdin), Readable.toWeb(this.proc.stdout)));
    this.agent = this.conn.agent;
    return this.agent.request(methods.agent.initialize, {
      protocolVersion: PROTOCOL_VERSION,
      clientInfo: { name: "ptk-durable-e2e", version: "1" },
      clientCapabilities: {},
    });
  }

  async stop() {
    const exited = new Promise((resolve) => this.proc.on("exit", (code) => resolve(code)));
    this.proc.stdin.end();
    const code = await exited;
    this.conn.close();
    return code;
  }

  release() {
    for (const r of this.held.splice(0)) r();
  }

  wake() {
    for (const w of this.waiters.splice(0)) w();
  }

  async until(ok, what) {
    const deadline = Date.now() + 60000;
    while (!ok()) {
      if (Date.now() > deadline) throw new Error("timed out waiting for " + what + "\n" + this.stderr);
      await new Promise((resolve) => { this.waiters.push(resolve); setTimeout(resolve, 50); });
    }
  }

  take() {
    return this.updates.splice(0).map((n) => n.update);
  }

  prompt(sessionId, text) {
    return this.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
  }
}

/** The answer's text, and each tool call folded with its updates. */
function fold(updates) {
  let answer = "";
  const calls = new Map();
  for (const u of updates) {
    switch (u.sessionUpdate) {
      case "agent_message_chunk":
        answer += u.content.text;
        break;
      case "tool_call":
        calls.set(u.toolCallId, { ...u });
        break;
      case "tool_call_update": {
        const c = calls.get(u.toolCallId);
        assert.ok(c, `an update of an unknown tool call ${u.toolCallId}`);
        for (const [k, v] of Object.entries(u)) if (v !== undefined && v !== null && k !== "sessionUpdate") c[k] = v;
        break;
      }
    }
  }
  return { answer, calls: [...calls.values()] };
}

function text(content) {
  return (content ?? []).filter((c) => c.type === "content").map((c) => c.content.text).join("\n");
}

test("durable turns with the official ACP client", async (t) => {
  const ed = new Editor();
  const init = await ed.start();
  t.after(() => ed.proc.exitCode === null && ed.proc.kill("SIGKILL"));
  assert.equal(init.agentInfo.name, "ptk");
  const session = await ed.agent.request(methods.agent.session.new, { cwd: process.env.PTK_TEST_WORKSPACE, mcpServers: [] });
  const id = session.sessionId;

  await t.test("a plain turn: the worker's model answers", async () => {
    const r = await ed.prompt(id, "hello");
    assert.equal(r.stopReason, "end_turn", ed.stderr);
    assert.equal(fold(ed.take()).answer, "you said: hello");
  });

  await t.test("the permission the run waits for, rejected: the call is denied", async () => {
    ed.answers.push("reject_once");
    const r = await ed.prompt(id, "write rejected");
    assert.equal(r.stopReason, "end_turn", ed.stderr);
    assert.equal(ed.asked.length, 1);
    const q = ed.asked[0];
    assert.deepEqual(q.options.map((o) => o.kind), ["allow_once", "allow_always", "reject_once"]);
    assert.deepEqual(q.toolCall.rawInput, { path: "note.txt", content: "rejected" });
    const { answer, calls } = fold(ed.take());
    assert.equal(calls.length, 1);
    assert.equal(calls[0].toolCallId, q.toolCall.toolCallId, "the question is about the call the editor was shown");
    assert.equal(calls[0].status, "failed");
    assert.match(text(calls[0].content), /Denied: the user did not allow this call/);
    assert.match(answer, /^done: Error: Denied/);
    assert.equal(existsSync(note), false, "the rejected write ran");
  });

  await t.test("the permission the run waits for, granted: the worker writes", async () => {
    ed.answers.push("allow_once");
    const r = await ed.prompt(id, "write granted");
    assert.equal(r.stopReason, "end_turn", ed.stderr);
    assert.equal(ed.asked.length, 2);
    const { answer, calls } = fold(ed.take());
    assert.equal(calls.length, 1);
    assert.equal(calls[0].status, "completed");
    assert.match(text(calls[0].content), /Created note.txt/);
    assert.match(answer, /^done: Created note.txt/);
    assert.equal(readFileSync(note, "utf8"), "granted");
  });

  await t.test("session/cancel while the run waits: the durable run is canceled", async () => {
    ed.answers.push("hold");
    const p = ed.prompt(id, "write canceled");
    await ed.until(() => ed.asked.length === 3, "the third question");
    await ed.agent.notify(methods.agent.session.cancel, { sessionId: id });
    ed.release();
    const r = await p;
    assert.equal(r.stopReason, "cancelled", ed.stderr);
    ed.take();
    assert.equal(readFileSync(note, "utf8"), "granted", "the canceled run wrote");
  });

  await t.test("the conversation goes on after the cancel", async () => {
    const r = await ed.prompt(id, "again");
    assert.equal(r.stopReason, "end_turn", ed.stderr);
    assert.equal(fold(ed.take()).answer, "you said: again");
  });

  await t.test("the session's mode goes with the run: auto-edit writes without asking", async () => {
    await ed.agent.request(methods.agent.session.setMode, { sessionId: id, modeId: "auto-edit" });
    const r = await ed.prompt(id, "write auto");
    assert.equal(r.stopReason, "end_turn", ed.stderr);
    assert.equal(ed.asked.length, 3, "asked in auto-edit mode");
    const { calls } = fold(ed.take());
    assert.equal(calls[0].status, "completed");
    assert.equal(readFileSync(note, "utf8"), "auto");
  });

  assert.equal(await ed.stop(), 0, ed.stderr);
});
