package ptool_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/ptool"
)

func ExampleWithCheck() {
	type Review struct {
		Text string `json:"text"`
	}
	type Quote struct {
		Quote string `json:"quote" jsonschema:"the review's most telling phrase"`
	}
	model := llmtest.New(
		llmtest.Text(`<answer>{"quote": "the best pizza in town"}</answer>`), // fits the schema, not the check
		llmtest.Text(`<answer>{"quote": "best pizza I had"}</answer>`))
	pick := ptool.New[Review, Quote]("pick_quote", "Quote the review's most telling phrase.", ptool.WithModel(model),
		ptool.WithCheck(func(_ context.Context, in Review, out Quote) error {
			if !strings.Contains(in.Text, out.Quote) {
				return ptool.Retry("%q is not in the text: quote it word for word", out.Quote)
			}
			return nil
		}))
	q, rec, err := pick.CallRecord(context.Background(), Review{Text: "Honestly the best pizza I had this year."})
	fmt.Println(q.Quote, err)
	fmt.Println(rec.Attempts[0].Problems)
	// Output:
	// best pizza I had <nil>
	// [try again: "the best pizza in town" is not in the text: quote it word for word]
}

func ExamplePTool_CallStream() {
	type Order struct {
		Text string `json:"text"`
	}
	type Items struct {
		Customer string   `json:"customer"`
		Items    []string `json:"items"`
	}
	model := llmtest.New(llmtest.Text(`<answer>{"customer": "Ada", "items": ["pizza", "salad", "lemonade"]}</answer>`))
	model.ChunkSize = 5 // the reply comes 5 bytes at a time
	extract := ptool.New[Order, Items]("extract_order", "Read the customer and the items of the order.", ptool.WithModel(model))
	for p, err := range extract.CallStream(context.Background(), Order{"Ada: a pizza, a salad and a lemonade"}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("done=%v %s\n", p.Done, p.JSON)
	}
	// Output:
	// done=false {"customer":"Ada"}
	// done=false {"customer":"Ada","items":[]}
	// done=false {"customer":"Ada","items":["pizza"]}
	// done=false {"customer":"Ada","items":["pizza","salad"]}
	// done=false {"customer":"Ada","items":["pizza","salad","lemonade"]}
	// done=true {"customer":"Ada","items":["pizza","salad","lemonade"]}
}
