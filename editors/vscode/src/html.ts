// The chat page's HTML, with a Content Security Policy that lets only the
// view's own script and style run: no inline script but the nonce's, no
// remote image, font or frame, so nothing the model writes can load or run.
import { escapeHtml } from "./markdown.js";

export interface PageSources {
  /** The script's and the style's URIs, as the webview can load them. */
  script: string;
  style: string;
  /** The webview's cspSource (vscode-resource origins). */
  cspSource: string;
  /** A random nonce for the script. */
  nonce: string;
}

export function pageHtml(p: PageSources): string {
  const csp = [
    "default-src 'none'",
    `style-src ${p.cspSource}`,
    `script-src 'nonce-${p.nonce}'`,
    `img-src ${p.cspSource} data:`,
    `font-src ${p.cspSource}`,
  ].join("; ");
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${escapeHtml(p.style)}">
<title>ptk</title>
</head>
<body>
<div id="app"></div>
<script nonce="${escapeHtml(p.nonce)}" src="${escapeHtml(p.script)}"></script>
</body>
</html>`;
}
