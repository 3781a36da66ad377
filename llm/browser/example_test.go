package browser_test

import (
	"context"
	"fmt"
	"log"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/llm/browser"
)

// A chat page in a browser started with
//
//	chromium --remote-debugging-port=9222 --user-data-dir=$HOME/.config/ptk/chromium
//
// and signed in to the site, as the model of an agent: the agent teaches it
// the PTK protocol, since a chat page takes text only.
func Example() {
	site, ok := browser.Builtin("chatgpt")
	if !ok {
		log.Fatal("no built-in site chatgpt")
	}
	where, err := browser.Attach("http://127.0.0.1:9222")
	if err != nil {
		log.Fatal(err)
	}
	model := browser.New(site, where)
	res, err := agent.Run(context.Background(), agent.Prompt("What is 2+2?"), agent.Options{Model: model, Mode: agent.ModeAuto, Tools: []ptk.Tool{}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content)
}

// A site file: where the chat page is and the selectors of its parts.
func ExampleParseSite() {
	site, err := browser.ParseSite([]byte(`{
		"name": "mychat",
		"url": "https://chat.example.com/new",
		"selectors": {"input": "textarea#prompt", "send": "button[aria-label=Send]", "answer": ".answer", "busy": ".stop"}
	}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(site.Name, site.Selectors.Answer)

	_, err = browser.ParseSite([]byte(`{"name": "mychat", "url": "javascript:alert(1)", "selectors": {"input": "t", "answer": "a"}}`))
	fmt.Println(err)
	// Output:
	// mychat .answer
	// site "mychat": url: "javascript:alert(1)" is not an http or https address
}
