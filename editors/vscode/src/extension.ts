// The VS Code side of the chat view, kept thin: a webview view in the
// activity bar whose page (webview/main.ts) draws the state of a
// ChatViewModel, which talks to `ptk acp` through PtkAgent. Neither of
// those imports vscode; this file only wires them to VS Code's API.
import * as vscode from "vscode";
import { randomBytes } from "node:crypto";
import { argsFor } from "./acpClient.js";
import { pageHtml } from "./html.js";
import type { FromPage } from "./protocol.js";
import { ChatViewModel, startWith } from "./viewModel.js";

export function activate(context: vscode.ExtensionContext): void {
  const provider = new ChatView(context.extensionUri);
  context.subscriptions.push(
    vscode.window.registerWebviewViewProvider("ptk.chat", provider, { webviewOptions: { retainContextWhenHidden: true } }),
    vscode.commands.registerCommand("ptk.newConversation", () => provider.model?.newConversation()),
    vscode.commands.registerCommand("ptk.cancel", () => provider.model?.cancel()),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration("ptk")) void provider.restart();
    }),
    { dispose: () => void provider.model?.dispose() },
  );
}

export function deactivate(): void {}

class ChatView implements vscode.WebviewViewProvider {
  model?: ChatViewModel;
  private view?: vscode.WebviewView;

  constructor(private readonly root: vscode.Uri) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const media = vscode.Uri.joinPath(this.root, "media");
    const dist = vscode.Uri.joinPath(this.root, "dist");
    view.webview.options = { enableScripts: true, localResourceRoots: [media, dist] };
    view.webview.html = pageHtml({
      script: view.webview.asWebviewUri(vscode.Uri.joinPath(dist, "webview.js")).toString(),
      style: view.webview.asWebviewUri(vscode.Uri.joinPath(media, "style.css")).toString(),
      cspSource: view.webview.cspSource,
      nonce: randomBytes(16).toString("base64"),
    });
    view.webview.onDidReceiveMessage((m: FromPage) => this.receive(m));
    view.onDidDispose(() => void this.model?.dispose());
  }

  private receive(m: FromPage) {
    const model = this.model;
    switch (m.type) {
      case "ready":
        if (!model) void this.restart();
        else model.flush();
        break;
      case "send":
        void model?.send(m.text);
        break;
      case "cancel":
        void model?.cancel();
        break;
      case "permission":
        model?.answer(m.optionId);
        break;
      case "new":
        void model?.newConversation();
        break;
      case "list":
        void model?.list();
        break;
      case "load":
        void model?.load(m.sessionId);
        break;
      case "mode":
        void model?.setMode(m.mode);
        break;
    }
  }

  /** restart starts ptk acp anew with the settings. */
  async restart(): Promise<void> {
    await this.model?.dispose();
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const cfg = vscode.workspace.getConfiguration("ptk");
    const view = this.view;
    const model = new ChatViewModel(
      startWith({
        command: cfg.get<string>("path") || "ptk",
        args: argsFor({ baseUrl: cfg.get("baseUrl"), model: cfg.get("model"), mode: cfg.get("mode"), args: cfg.get("args") }),
        cwd: folder,
      }),
      folder ?? process.cwd(),
      (state) => void view?.webview.postMessage({ type: "state", state }),
    );
    this.model = model;
    if (!folder) {
      model.state.status = "stopped";
      model.state.items.push({ kind: "error", text: "Open a folder: ptk works in the workspace's folder." });
      model.flush();
      return;
    }
    await model.start();
  }
}
