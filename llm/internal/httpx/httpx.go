// Package httpx is what the provider clients (openai, anthropic, gemini,
// completion) share to call an HTTP API: a [Transport] that posts a JSON
// body with the client's headers and retries the call as its options say
// ([Call] for an answer that comes whole, [Transport.Stream] for one that
// comes as it arrives), and how an error status, an error body and a
// broken stream become an *llm.Error ([Classifier], [StatusError],
// [StreamError]). What differs between the providers stays in theirs: the
// URL, the key's header, the wire format and their own notes on an error.
package httpx
