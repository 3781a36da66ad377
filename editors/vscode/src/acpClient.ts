// The ACP client of the chat view: it starts `ptk acp`, speaks the Agent
// Client Protocol with it through the official TypeScript SDK, and hands
// what the agent sends to its listener. It does not import vscode, so that
// it runs, and is tested, in plain Node.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { Readable, Writable } from "node:stream";
import {
  client,
  methods,
  ndJsonStream,
  PROTOCOL_VERSION,
  type ClientConnection,
  type InitializeResponse,
  type ListSessionsResponse,
  type LoadSessionResponse,
  type NewSessionResponse,
  type PromptResponse,
  type RequestPermissionRequest,
  type SessionNotification,
} from "@agentclientprotocol/sdk";

/** How to start ptk acp. */
export interface AgentCommand {
  /** The ptk binary. */
  command: string;
  /** Its arguments: acp and the flags. */
  args: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/** What the client tells its listener. */
export interface AgentListener {
  /** A session/update from the agent. */
  update(n: SessionNotification): void;
  /** A question about a tool call: resolve with the option chosen, or null when the turn was cancelled. */
  permission(p: RequestPermissionRequest, signal: AbortSignal): Promise<string | null>;
  /** ptk acp is gone, with what it wrote on stderr last. */
  exited(code: number | null, stderr: string): void;
}

/** argsFor makes ptk acp's arguments from the view's settings. */
export function argsFor(s: { baseUrl?: string; model?: string; mode?: string; args?: string[] }): string[] {
  const args = ["acp"];
  if (s.model) args.push("--model", s.model);
  if (s.baseUrl) args.push("--base-url", s.baseUrl);
  if (s.mode) args.push("--approval", s.mode);
  return args.concat(s.args ?? []);
}

/** A running ptk acp, connected. */
export class PtkAgent {
  private constructor(
    private readonly proc: ChildProcessWithoutNullStreams,
    private readonly conn: ClientConnection,
    readonly info: InitializeResponse,
    private readonly stderrTail: () => string,
  ) {}

  /** start starts ptk acp and initializes the connection. */
  static async start(cmd: AgentCommand, listener: AgentListener): Promise<PtkAgent> {
    const proc = spawn(cmd.command, cmd.args, { cwd: cmd.cwd, env: cmd.env ?? process.env, stdio: ["pipe", "pipe", "pipe"] });
    let stderr = "";
    proc.stderr.setEncoding("utf8");
    proc.stderr.on("data", (d: string) => {
      stderr = (stderr + d).slice(-4000);
    });
    const started = new Promise<void>((resolve, reject) => {
      proc.once("spawn", () => resolve());
      proc.once("error", (err) => reject(new Error(`cannot start ${cmd.command}: ${err.message} (set ptk.path to the ptk binary)`)));
    });
    await started;
    proc.on("exit", (code) => listener.exited(code, stderr));
    const app = client({ name: "ptk-vscode" })
      .onNotification(methods.client.session.update, ({ params }) => listener.update(params))
      .onRequest(methods.client.session.requestPermission, async ({ params, signal }) => {
        const optionId = await listener.permission(params, signal);
        return optionId === null ? { outcome: { outcome: "cancelled" } } : { outcome: { outcome: "selected", optionId } };
      });
    const conn = app.connect(ndJsonStream(Writable.toWeb(proc.stdin), Readable.toWeb(proc.stdout) as ReadableStream<Uint8Array>));
    try {
      const info = await conn.agent.request(methods.agent.initialize, {
        protocolVersion: PROTOCOL_VERSION,
        clientInfo: { name: "ptk-vscode", version: "0.1.0" },
        // The view offers no files or terminals: ptk's own confined tools
        // work on the disk, and VS Code sees the changes there.
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      });
      return new PtkAgent(proc, conn, info, () => stderr);
    } catch (err) {
      proc.kill();
      throw new Error(`ptk acp did not start: ${message(err)}${stderr ? "\n" + stderr.trim() : ""}`);
    }
  }

  newSession(cwd: string): Promise<NewSessionResponse> {
    return this.conn.agent.request(methods.agent.session.new, { cwd, mcpServers: [] });
  }

  async loadSession(sessionId: string, cwd: string): Promise<LoadSessionResponse> {
    return (await this.conn.agent.request(methods.agent.session.load, { sessionId, cwd, mcpServers: [] })) ?? {};
  }

  listSessions(cwd: string): Promise<ListSessionsResponse> {
    return this.conn.agent.request(methods.agent.session.list, { cwd });
  }

  prompt(sessionId: string, text: string): Promise<PromptResponse> {
    return this.conn.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
  }

  cancel(sessionId: string): Promise<void> {
    return this.conn.agent.notify(methods.agent.session.cancel, { sessionId });
  }

  async setMode(sessionId: string, modeId: string): Promise<void> {
    await this.conn.agent.request(methods.agent.session.setMode, { sessionId, modeId });
  }

  /** What ptk acp wrote on stderr last. */
  get stderr(): string {
    return this.stderrTail();
  }

  /** stop ends ptk acp: its stdin closes, and it exits. */
  async stop(): Promise<void> {
    if (this.proc.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => this.proc.once("exit", () => resolve()));
    this.proc.stdin.end();
    const timer = setTimeout(() => this.proc.kill(), 3000);
    await exited;
    clearTimeout(timer);
    this.conn.close();
  }
}

/** message is an error's message, from an Error or a JSON-RPC error. */
export function message(err: unknown): string {
  if (err && typeof err === "object") {
    const e = err as { message?: unknown; data?: unknown };
    let m = typeof e.message === "string" ? e.message : String(err);
    const d = e.data as { error?: unknown } | undefined;
    if (d && typeof d.error === "string" && !m.includes(d.error)) m += ": " + d.error;
    return m;
  }
  return String(err);
}
