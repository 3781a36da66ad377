package completion

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
)

// TestStreamChunks: text as it arrives, the model once, usage and finish
// reason at the end.
func TestStreamChunks(t *testing.T) {
	url, _ := serve(t, "POST /completion", events(bytes.NewReader(readFile(t, "llamacpp.sse"))))
	var got []llm.Chunk
	for ch, err := range LlamaCpp(url).Stream(t.Context(), ask) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ch)
	}
	want := []llm.Chunk{
		{Text: "The"}, {Text: " capital"}, {Text: " of France is Paris"}, {Text: " — “la Ville"}, {Text: " Lumière”."},
		{Model: "qwen2.5-7b-instruct-q4_k_m.gguf", FinishReason: "stop", Usage: &ptk.Usage{PromptTokens: 412, CompletionTokens: 16, CacheReadTokens: 384}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
}

// TestCutByClient: a server that does not stop at a turn header (an old
// llama.cpp, a proxy that drops "stop") is cut here; a stream is closed at
// once.
func TestCutByClient(t *testing.T) {
	url, _ := serve(t, "POST /completion", reply(http.StatusOK, `{"content":"Paris.\nUSER: And Rome?\nASSISTANT: Rome.","stop":true,"stop_type":"limit","tokens_evaluated":20,"tokens_predicted":14}`))
	got, err := LlamaCpp(url).Generate(t.Context(), ask)
	want := &llm.Response{Content: "Paris.", FinishReason: "stop", Usage: ptk.Usage{PromptTokens: 20, CompletionTokens: 14}}
	if err != nil || !cmp.Equal(want, got) {
		t.Errorf("Generate: %+v, %v; want %+v", got, err, want)
	}

	closed := make(chan struct{})
	url, _ = serve(t, "POST /completion", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, s := range []string{"Paris.", "\n", "USER", ":", " And Rome?"} {
			io.WriteString(w, `data: {"content":"`+strings.ReplaceAll(s, "\n", `\n`)+`","stop":false}`+"\n\n")
			w.(http.Flusher).Flush()
		}
		<-r.Context().Done() // a model that goes on and on
		close(closed)
	})
	got, err = llm.Collect(LlamaCpp(url).Stream(t.Context(), ask))
	if want := (&llm.Response{Content: "Paris.", FinishReason: "stop"}); err != nil || !cmp.Equal(want, got) {
		t.Errorf("Stream: %+v, %v; want %+v", got, err, want)
	}
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Error("the stream was not closed")
	}
}
