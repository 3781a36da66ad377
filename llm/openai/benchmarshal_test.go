package openai

import "github.com/ptkit/ptk/llm"

// benchMarshal builds and writes a streamed request's body as c does.
func benchMarshal(c *Client, req llm.Request) ([]byte, error) { return c.marshal(req, true) }
