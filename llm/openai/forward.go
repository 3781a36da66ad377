package openai

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"

	"github.com/ptkit/ptk/llm/internal/httpx"
)

// Forward posts body, a Chat Completions request the caller wrote, as it is,
// and returns the answer when its status is a success; the caller reads and
// closes it. stream says whether the request asks for a stream (it sets the
// Accept header). A failed request is made again as [Client.Generate] makes
// its calls; what still fails is an *[llm.Error] classified the same way,
// with the HTTP status. This is the pass-through a proxy needs: every field
// of the request, and of the answer, is kept.
func (c *Client) Forward(ctx context.Context, body []byte, stream bool) (*http.Response, error) {
	var resp *http.Response
	err := c.t.Do(ctx, func() (bool, error) {
		r, err := c.post(ctx, body, stream)
		resp = r
		return false, err
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// Models lists the ids of the models the server offers (GET /models),
// sorted.
func (c *Client) Models(ctx context.Context) ([]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.t.BaseURL+"/models", nil)
	if err != nil {
		return nil, httpx.BadRequest(err)
	}
	req.Header = c.t.Header.Clone()
	req.Header.Set("Accept", "application/json")
	if c.apiKey != "" && req.Header.Get("Authorization") == "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	resp, err := c.t.Client().Do(req)
	if err != nil {
		return nil, httpx.ConnectionError(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, httpx.ConnectionError(err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, c.httpError(resp.StatusCode, resp.Header, data)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, httpx.BadResponse(err, data)
	}
	ids := make([]string, 0, len(list.Data))
	for _, m := range list.Data {
		if m.ID != "" {
			ids = append(ids, m.ID)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids), nil
}
