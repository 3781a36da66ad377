// The modules that do not import vscode, bundled as dist/lib.mjs for the
// tests under node --test.
export * from "./acpClient.js";
export * from "./viewModel.js";
export * from "./markdown.js";
export * from "./html.js";
export type * from "./protocol.js";
