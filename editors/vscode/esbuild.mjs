// Builds the extension with esbuild: dist/extension.js (the VS Code side,
// CommonJS, with the ACP SDK bundled in), dist/webview.js (the chat page's
// script) and dist/lib.mjs (the modules that do not import vscode, for the
// tests under node --test). `tsc -p .` type-checks them first (npm run build).
import { build } from "esbuild";

const common = { bundle: true, sourcemap: false, target: "es2022", logLevel: "warning" };
await Promise.all([
  build({ ...common, entryPoints: ["src/extension.ts"], outfile: "dist/extension.js", platform: "node", format: "cjs", external: ["vscode"] }),
  build({ ...common, entryPoints: ["src/webview/main.ts"], outfile: "dist/webview.js", platform: "browser", format: "iife" }),
  build({ ...common, entryPoints: ["src/lib.ts"], outfile: "dist/lib.mjs", platform: "node", format: "esm", packages: "external" }),
]);
