// The chat view's model: what the conversation looks like, made from what
// ptk acp sends, and what the user's actions do. It does not import vscode:
// extension.ts gives it a way to post the state to the page, and it runs,
// and is tested, in plain Node against a real ptk acp.
import type { RequestPermissionRequest, SessionNotification, SessionConfigOption, PromptResponse } from "@agentclientprotocol/sdk";
import { message, PtkAgent, type AgentCommand } from "./acpClient.js";
import type { Item, Permission, ToolCard, ViewState } from "./protocol.js";

/** Starts the agent; PtkAgent.start in the extension and the tests. */
export type StartAgent = (listener: Parameters<typeof PtkAgent.start>[1]) => Promise<PtkAgent>;

export function startWith(cmd: AgentCommand): StartAgent {
  return (listener) => PtkAgent.start(cmd, listener);
}

/** The most characters of a tool's output the view keeps. */
const maxOutput = 20000;

export class ChatViewModel {
  state: ViewState = {
    status: "starting",
    mode: "ask",
    modes: [],
    items: [],
    counts: { iterations: 0, toolCalls: 0, tokens: 0, cost: 0 },
    commands: [],
  };
  private agent?: PtkAgent;
  /** The counts of the turns that ended (ptk's _meta), and of the running turn so far. */
  private base = { iterations: 0, toolCalls: 0, tokens: 0, cost: 0 };
  private live = { iterations: 0, toolCalls: 0 };
  private pending?: { resolve: (optionId: string | null) => void };
  private timer?: ReturnType<typeof setTimeout>;
  private closed = false;

  constructor(
    private readonly startAgent: StartAgent,
    private readonly cwd: string,
    private readonly post: (state: ViewState) => void,
  ) {}

  /** start starts ptk acp and a new conversation. */
  async start(): Promise<void> {
    this.state.status = "starting";
    this.flush();
    try {
      this.agent = await this.startAgent({
        update: (n) => this.update(n),
        permission: (p, signal) => this.permission(p, signal),
        exited: (code, stderr) => this.exited(code, stderr),
      });
      await this.newConversation();
    } catch (err) {
      this.state.status = "stopped";
      this.add({ kind: "error", text: message(err) });
      this.flush();
    }
  }

  /** dispose stops ptk acp. */
  async dispose(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.agent?.stop();
  }

  /** send sends a prompt and waits for the turn to end. */
  async send(text: string): Promise<PromptResponse | undefined> {
    const sid = this.state.sessionId;
    if (!this.agent || !sid || this.state.status !== "idle" || !text.trim()) return undefined;
    this.add({ kind: "user", text });
    this.state.status = "running";
    this.flush();
    try {
      const r = await this.agent.prompt(sid, text);
      const meta = (r._meta as { ptk?: Record<string, number> } | undefined)?.ptk;
      if (meta) {
        const b = this.base;
        b.iterations += meta.iterations ?? 0;
        b.toolCalls += meta.toolCalls ?? 0;
        b.tokens += (meta.promptTokens ?? 0) + (meta.completionTokens ?? 0);
        b.cost += meta.cost ?? 0;
      }
      if (r.stopReason === "cancelled") this.add({ kind: "notice", text: "Cancelled." });
      if (r.stopReason === "max_turn_requests" || r.stopReason === "max_tokens") this.add({ kind: "notice", text: "ptk stopped at a limit (" + r.stopReason + ")." });
      return r;
    } catch (err) {
      this.add({ kind: "error", text: message(err) });
      return undefined;
    } finally {
      this.settle();
      this.live = { iterations: 0, toolCalls: 0 };
      this.count();
      if (this.state.status === "running") this.state.status = "idle";
      this.flush();
    }
  }

  /** cancel cancels the running turn. */
  async cancel(): Promise<void> {
    if (this.agent && this.state.sessionId && this.state.status === "running") {
      this.settle();
      await this.agent.cancel(this.state.sessionId);
    }
  }

  /** answer answers the question about a tool call. */
  answer(optionId: string): void {
    const p = this.pending;
    this.pending = undefined;
    this.state.permission = undefined;
    this.flush();
    p?.resolve(optionId);
  }

  /** newConversation starts a new session. */
  async newConversation(): Promise<void> {
    if (!this.agent) return;
    await this.cancel();
    const s = await this.agent.newSession(this.cwd);
    this.reset(s.sessionId);
    this.state.mode = s.modes?.currentModeId ?? this.state.mode;
    this.state.modes = (s.modes?.availableModes ?? []).map((m) => ({ id: m.id, name: m.name }));
    this.options(s.configOptions ?? []);
    this.state.status = "idle";
    this.flush();
  }

  /** list lists the conversations of the folder. */
  async list(): Promise<void> {
    if (!this.agent) return;
    try {
      const r = await this.agent.listSessions(this.cwd);
      this.state.conversations = r.sessions.map((s) => ({ sessionId: s.sessionId, title: s.title ?? s.sessionId, updatedAt: s.updatedAt ?? undefined }));
    } catch (err) {
      this.add({ kind: "error", text: "Listing the conversations: " + message(err) });
    }
    this.flush();
  }

  /** load opens a stored conversation: ptk acp replays it. */
  async load(sessionId: string): Promise<void> {
    if (!this.agent || this.state.status === "running") return;
    this.reset(sessionId);
    this.state.status = "starting";
    this.flush();
    try {
      const r = await this.agent.loadSession(sessionId, this.cwd);
      if (r.modes) this.state.mode = r.modes.currentModeId;
      this.options(r.configOptions ?? []);
    } catch (err) {
      this.add({ kind: "error", text: "Loading the conversation: " + message(err) });
    }
    this.state.status = "idle";
    this.flush();
  }

  async setMode(mode: string): Promise<void> {
    if (!this.agent || !this.state.sessionId) return;
    try {
      await this.agent.setMode(this.state.sessionId, mode);
      this.state.mode = mode;
    } catch (err) {
      this.add({ kind: "error", text: message(err) });
    }
    this.flush();
  }

  private reset(sessionId: string) {
    this.state.sessionId = sessionId;
    this.state.items = [];
    this.state.plan = undefined;
    this.state.permission = undefined;
    this.state.conversations = undefined;
    this.base = { iterations: 0, toolCalls: 0, tokens: 0, cost: 0 };
    this.live = { iterations: 0, toolCalls: 0 };
    this.count();
  }

  /** count shows the counts: the ended turns', and the running turn's so far. */
  private count() {
    const b = this.base;
    this.state.counts = { iterations: b.iterations + this.live.iterations, toolCalls: b.toolCalls + this.live.toolCalls, tokens: b.tokens, cost: b.cost };
  }

  private options(opts: SessionConfigOption[]) {
    for (const o of opts) {
      if (o.type !== "select") continue;
      if (o.id === "model") this.state.model = String(o.currentValue);
      if (o.id === "mode") this.state.mode = String(o.currentValue);
    }
  }

  /** update applies a session/update. */
  update(n: SessionNotification): void {
    if (n.sessionId !== this.state.sessionId) return;
    const u = n.update;
    switch (u.sessionUpdate) {
      case "agent_message_chunk":
      case "agent_thought_chunk":
      case "user_message_chunk": {
        if (u.content.type !== "text") break;
        const kind = u.sessionUpdate === "agent_message_chunk" ? "agent" : u.sessionUpdate === "agent_thought_chunk" ? "thought" : "user";
        const last = this.state.items.at(-1);
        if (last && last.kind === kind) last.text += u.content.text;
        else this.add({ kind, text: u.content.text });
        break;
      }
      case "tool_call": {
        const meta = (u._meta as { ptk?: { iteration?: number } } | undefined)?.ptk;
        const card: ToolCard = { kind: "tool", id: u.toolCallId, title: u.title, toolKind: u.kind ?? "other", status: u.status ?? "pending", iteration: meta?.iteration };
        this.fill(card, u);
        this.add(card);
        if (this.state.status === "running" && meta?.iteration) {
          this.live.iterations = Math.max(this.live.iterations, meta.iteration);
          this.count();
        }
        break;
      }
      case "tool_call_update": {
        const card = this.state.items.find((i): i is ToolCard => i.kind === "tool" && i.id === u.toolCallId);
        if (!card) break;
        if (u.title) card.title = u.title;
        if (u.kind) card.toolKind = u.kind;
        if (u.status && u.status !== card.status && u.status === "completed" && this.state.status === "running") {
          this.live.toolCalls++;
          this.count();
        }
        if (u.status) card.status = u.status;
        this.fill(card, u);
        break;
      }
      case "plan":
        this.state.plan = u.entries.map((e) => ({ content: e.content, status: e.status, priority: e.priority }));
        break;
      case "available_commands_update":
        this.state.commands = u.availableCommands.map((c) => c.name);
        break;
      case "current_mode_update":
        this.state.mode = u.currentModeId;
        break;
      case "config_option_update":
        this.options(u.configOptions);
        break;
    }
    this.schedule();
  }

  /** fill copies a tool call's arguments and content into its card. */
  private fill(card: ToolCard, u: { rawInput?: unknown; content?: Array<{ type: string }> | null }) {
    if (u.rawInput !== undefined && u.rawInput !== null) card.input = JSON.stringify(u.rawInput, null, 2);
    for (const c of u.content ?? []) {
      if (c.type === "diff") {
        const d = c as unknown as { path: string; oldText?: string | null; newText: string };
        card.diff = { path: d.path, oldText: d.oldText, newText: d.newText };
      } else if (c.type === "content") {
        const block = (c as unknown as { content: { type: string; text?: string } }).content;
        if (block.type === "text" && block.text !== undefined) card.output = unfence(block.text).slice(0, maxOutput);
      }
    }
  }

  private permission(p: RequestPermissionRequest, signal: AbortSignal): Promise<string | null> {
    this.settle();
    const tc = p.toolCall;
    let detail: string | undefined;
    let diff: Permission["diff"];
    for (const c of tc.content ?? []) {
      if (c.type === "content" && c.content.type === "text") detail = unfence(c.content.text);
      if (c.type === "diff") diff = { path: c.path, oldText: c.oldText, newText: c.newText };
    }
    this.state.permission = {
      toolCallId: tc.toolCallId,
      title: tc.title ?? "A tool call",
      detail,
      diff,
      options: p.options.map((o) => ({ optionId: o.optionId, name: o.name, kind: o.kind })),
    };
    this.flush();
    return new Promise((resolve) => {
      this.pending = { resolve };
      signal.addEventListener("abort", () => {
        if (this.pending?.resolve === resolve) this.settle();
      });
    });
  }

  /** settle ends a question nobody answered: the turn ends without it. */
  private settle() {
    const p = this.pending;
    this.pending = undefined;
    this.state.permission = undefined;
    p?.resolve(null);
  }

  private exited(code: number | null, stderr: string) {
    if (this.closed) return;
    this.settle();
    this.state.status = "stopped";
    this.add({ kind: "error", text: `ptk acp stopped (exit code ${code})` + (stderr.trim() ? ":\n" + stderr.trim().split("\n").slice(-5).join("\n") : ".") });
    this.flush();
  }

  private add(item: Item) {
    this.state.items.push(item);
  }

  /** schedule posts the state soon: streamed text comes in many small pieces. */
  private schedule() {
    this.timer ??= setTimeout(() => this.flush(), 16);
  }

  /** flush posts the state now. */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.closed) this.post(this.state);
  }
}

/** unfence takes a tool's output out of the code fence ptk puts it in. */
export function unfence(s: string): string {
  const m = /^(`{3,})\n([\s\S]*)\n\1$/.exec(s);
  return m ? m[2] : s;
}
