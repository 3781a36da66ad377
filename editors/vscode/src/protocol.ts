// The messages between the extension and its chat page (the webview). The
// extension posts the whole state of the view after each change; the page
// posts what the user does.

/** One entry of the conversation as the view shows it. */
export type Item =
  | { kind: "user"; text: string }
  | { kind: "agent"; text: string }
  | { kind: "thought"; text: string }
  | { kind: "notice"; text: string }
  | { kind: "error"; text: string }
  | ToolCard;

/** A tool call, shown as a card. */
export interface ToolCard {
  kind: "tool";
  id: string;
  title: string;
  /** ACP's kind: read, edit, search, execute, think, other. */
  toolKind: string;
  /** pending, in_progress, completed or failed. */
  status: string;
  /** The call's arguments, as indented JSON. */
  input?: string;
  /** The result's text. */
  output?: string;
  diff?: { path: string; oldText?: string | null; newText: string };
  /** The model call (iteration) that made it, from 1. */
  iteration?: number;
}

export interface PlanEntry {
  content: string;
  status: string;
  priority: string;
}

/** A question about a tool call, waiting for the user. */
export interface Permission {
  toolCallId: string;
  title: string;
  detail?: string;
  /** For an edit, the change it would make. */
  diff?: { path: string; oldText?: string | null; newText: string };
  options: { optionId: string; name: string; kind: string }[];
}

export interface Conversation {
  sessionId: string;
  title: string;
  updatedAt?: string;
}

/** The whole state of the view. */
export interface ViewState {
  /** starting: ptk acp is starting; idle: waiting for a prompt; running: a turn runs; stopped: ptk acp is gone. */
  status: "starting" | "idle" | "running" | "stopped";
  sessionId?: string;
  mode: string;
  modes: { id: string; name: string }[];
  model?: string;
  items: Item[];
  plan?: PlanEntry[];
  permission?: Permission;
  /** iterations (model calls) and tool calls of the conversation; tokens and cost as ptk reports them. */
  counts: { iterations: number; toolCalls: number; tokens: number; cost: number };
  conversations?: Conversation[];
  commands: string[];
}

/** From the extension to the page. */
export type ToPage = { type: "state"; state: ViewState };

/** From the page to the extension. */
export type FromPage =
  | { type: "ready" }
  | { type: "send"; text: string }
  | { type: "cancel" }
  | { type: "permission"; optionId: string }
  | { type: "new" }
  | { type: "list" }
  | { type: "load"; sessionId: string }
  | { type: "mode"; mode: string };
