package browser

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// readFixtures are answers as chat pages render them. Each is read twice:
// whole, by the browser's innerText; and without its excluded parts (the
// elements with data-x), by page.js, whose reading must equal the
// innerText of the same answer written without those parts (data-twin).
var readFixtures = []string{
	`<p>Hello   <b>bold</b>
	   and <i>italic</i> text. </p>
	 <p> Second   paragraph.</p>`,
	`<p>line one  <br>  line two<br><br>line four</p>`,
	`<pre><code>func main() {
	fmt.Println("hi")   

}
</code></pre><p>after</p>`,
	`<ul><li>one</li><li>two <b>b</b><ul><li>nested</li></ul></li></ul><ol>
	  <li>first</li>
	  <li>second</li></ol>`,
	`<table><thead><tr><th>a</th><th>b</th></tr></thead><tbody><tr><td>1</td><td> 2 </td></tr><tr><td>3</td><td>4</td></tr></tbody></table><p>t</p>`,
	`<h1>Title</h1><blockquote>quoted <em>text</em></blockquote><hr><h3>Sub</h3>text after`,
	`<div>direct text<div>inner <span>span</span></div>tail<div style="display:flex"><span>a</span><span>b</span></div><button>inline-block</button> after</div>`,
	`<p>shown <span style="display:none">gone</span> <span style="visibility:hidden">hid<span style="visibility:visible">den-but-shown</span></span> end</p>`,
	`<div style="white-space:pre-line">a   b
	   c    d
e</div><p>x <span style="white-space:pre-wrap">  two  spaces  </span> y</p>`,
	`loose text <p>block</p> more loose <span>inline</span>`,
	`<p>Here is the code:</p><pre><div class="head"><span>json</span><button>Copy code</button></div><div><code>{"tool": "read_file",
  "args": {"path": "a.txt"}}</code></div></pre><p>Done.</p>`,
}

func TestReadLikeInnerText(t *testing.T) {
	var page strings.Builder
	page.WriteString("<!doctype html><meta charset=utf-8><body>")
	for i, f := range readFixtures {
		// The answer with parts to exclude: an empty marker (nothing to
		// take away), and for the code block its header.
		withX := strings.Replace(f, `<div class="head">`, `<div class="head" data-x>`, 1) + `<span data-x></span>`
		twin := strings.Replace(f, `<div class="head"><span>json</span><button>Copy code</button></div>`, "", 1)
		fmt.Fprintf(&page, `<div id="f%d" style="width:600px">%s</div><div id="t%d" style="width:600px">%s</div>`, i, withX, i, twin)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, page.String()) }))
	defer srv.Close()
	b := browserAt(t)
	site := &Site{Name: "fixtures", URL: srv.URL + "/", Selectors: Selectors{Input: "body", Answer: "#f0"}}
	c := &call{m: New(site, b), ctx: t.Context()}
	defer c.close()
	if err := c.connect(); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(c.tab, chromedp.Navigate(srv.URL)); err != nil {
		t.Fatal(err)
	}
	for i := range readFixtures {
		cfg, _ := json.Marshal(map[string]any{"selectors": map[string]string{"answer": fmt.Sprintf("#f%d", i), "exclude": "[data-x]"}, "max": 1_000_000})
		st, err := chromedp.Run(c.tab, chromedp.Evaluate[pageState](pageJS+`("state",`+string(cfg)+`,null)`))
		if err != nil {
			t.Fatal(err)
		}
		want, err := chromedp.Run(c.tab, chromedp.Evaluate[string](fmt.Sprintf(`document.getElementById("t%d").innerText`, i)))
		if err != nil {
			t.Fatal(err)
		}
		if st.Text != want {
			t.Errorf("fixture %d:\npage.js   %q\ninnerText %q", i, st.Text, want)
		}
	}
}
