package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
)

// toolCall is one scripted tool call. ID is the call's id, unique in its
// session: the CLI sends the tool's result back under it, which is how a
// result is told apart from the other scenarios' in the same session.
type toolCall struct {
	ID    string
	Name  string
	Input map[string]any
}

// modelServer is a scripted model API on 127.0.0.1 for one CLI session:
// each turn of the agent's loop gets the next scripted tool call, the one
// after the last a final text. It keeps every request body, so a test can
// check what the CLI sent back (every tool result, by call id), and
// answers at most limit requests: past that, an error that ends the CLI's
// turn.
type modelServer struct {
	URL   string // http://127.0.0.1:PORT
	Port  int
	calls []toolCall
	// proto answers one request: "anthropic", "openai" or "gemini".
	proto string
	limit int
	// answer is the final text ("done" unless newModelServerAnswer).
	answer string

	mu     sync.Mutex
	bodies []string
	creds  []string // each request's URL and header values, for Carried
	sent   []int    // how often each call was sent
}

func newModelServer(t *testing.T, proto string, calls []toolCall) *modelServer {
	t.Helper()
	return newModelServerAnswer(t, proto, calls, "done")
}

// newModelServerAnswer is newModelServer with answer as its final text.
func newModelServerAnswer(t *testing.T, proto string, calls []toolCall, answer string) *modelServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("model server: %v", err)
	}
	m := &modelServer{proto: proto, calls: calls, sent: make([]int, len(calls)), answer: answer,
		// A turn per call, a few side requests per turn (titles, quota
		// and loop checks), and room for retries.
		limit: 20 + 4*len(calls),
		Port:  ln.Addr().(*net.TCPAddr).Port}
	m.URL = fmt.Sprintf("http://127.0.0.1:%d", m.Port)
	srv := &http.Server{Handler: m}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return m
}

// Bodies are the request bodies received so far.
func (m *modelServer) Bodies() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.bodies...)
}

// Carried reports whether a request so far carried key in its URL or a
// header (x-api-key, Authorization, x-goog-api-key, ?key=).
func (m *modelServer) Carried(key string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.ContainsFunc(m.creds, func(c string) bool { return strings.Contains(c, key) })
}

// Sent is how many times the call with id was sent to the CLI.
func (m *modelServer) Sent(id string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, c := range m.calls {
		if c.ID == id {
			return m.sent[i]
		}
	}
	return 0
}

// Result is the tool result the CLI sent back for the call with id, as
// the request's JSON has it, from the latest request that carries it.
func (m *modelServer) Result(id string) (string, bool) {
	bodies := m.Bodies()
	for i := len(bodies) - 1; i >= 0; i-- {
		_, body, _ := strings.Cut(bodies[i], "\n")
		if r, ok := m.parse([]byte(body)).results[id]; ok {
			return r, true
		}
	}
	return "", false
}

func (m *modelServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	m.mu.Lock()
	n := len(m.bodies)
	m.bodies = append(m.bodies, r.Method+" "+r.URL.String()+"\n"+string(body))
	cred := r.URL.String()
	for _, v := range r.Header {
		cred += "\n" + strings.Join(v, "\n")
	}
	m.creds = append(m.creds, cred)
	m.mu.Unlock()
	if n >= m.limit {
		http.Error(w, `{"error":{"type":"overloaded_error","message":"scripted model server: request limit reached"}}`, http.StatusBadRequest)
		return
	}
	switch m.proto {
	case "anthropic":
		m.anthropic(w, r, body)
	case "openai":
		m.openai(w, r, body)
	case "gemini":
		m.gemini(w, r, body)
	default:
		http.NotFound(w, r)
	}
}

// request is what the server reads of a request: the tools it offers and
// the tool results it carries, by call id.
type request struct {
	tools   map[string]bool
	results map[string]string
}

// parse reads a request body in m's protocol. The results are the raw
// JSON of each result's content: a test looks for markers in them.
func (m *modelServer) parse(body []byte) request {
	req := request{tools: map[string]bool{}, results: map[string]string{}}
	var v struct {
		Tools    []json.RawMessage `json:"tools"`
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"` // anthropic
		Input    json.RawMessage `json:"input"` // openai
		Contents []struct {
			Parts []struct {
				FunctionResponse *struct {
					ID       string          `json:"id"`
					Response json.RawMessage `json:"response"`
				} `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"` // gemini
	}
	if json.Unmarshal(body, &v) != nil {
		return req
	}
	for _, raw := range v.Tools {
		var tool struct {
			Name  string `json:"name"`
			Decls []struct {
				Name string `json:"name"`
			} `json:"functionDeclarations"`
		}
		json.Unmarshal(raw, &tool)
		req.tools[tool.Name] = true
		for _, d := range tool.Decls {
			req.tools[d.Name] = true
		}
	}
	for _, msg := range v.Messages {
		var blocks []struct {
			Type    string          `json:"type"`
			ID      string          `json:"tool_use_id"`
			Content json.RawMessage `json:"content"`
		}
		json.Unmarshal(msg.Content, &blocks) // a string content holds no result
		for _, b := range blocks {
			if b.Type == "tool_result" {
				req.results[b.ID] = string(b.Content)
			}
		}
	}
	var items []struct {
		Type   string          `json:"type"`
		CallID string          `json:"call_id"`
		Output json.RawMessage `json:"output"`
	}
	json.Unmarshal(v.Input, &items)
	for _, it := range items {
		if strings.HasSuffix(it.Type, "_call_output") {
			req.results[it.CallID] = string(it.Output)
		}
	}
	for _, c := range v.Contents {
		for _, p := range c.Parts {
			if fr := p.FunctionResponse; fr != nil {
				req.results[fr.ID] = string(fr.Response)
			}
		}
	}
	return req
}

// next is the call to answer a request with: the first scripted call the
// request carries no result for, if the request is a turn of the agent's
// loop (it offers that call's tool). Side requests (titles, summaries,
// quota checks) offer no tools and get plain text, as does the turn after
// the last call.
func (m *modelServer) next(body []byte) (toolCall, bool) {
	req := m.parse(body)
	for i, c := range m.calls {
		if _, done := req.results[c.ID]; done {
			continue
		}
		if !req.tools[c.Name] {
			return toolCall{}, false
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.sent[i] >= 3 { // a CLI that keeps dropping the call gets text
			return toolCall{}, false
		}
		m.sent[i]++
		return c, true
	}
	return toolCall{}, false
}

func sse(w http.ResponseWriter, events ...[2]string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	for _, e := range events {
		if e[0] != "" {
			fmt.Fprintf(w, "event: %s\n", e[0])
		}
		fmt.Fprintf(w, "data: %s\n\n", e[1])
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// anthropic speaks the Messages API (POST /v1/messages), streamed or not.
func (m *modelServer) anthropic(w http.ResponseWriter, r *http.Request, body []byte) {
	if !strings.HasSuffix(r.URL.Path, "/v1/messages") {
		if strings.HasSuffix(r.URL.Path, "/count_tokens") {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"input_tokens":10}`)
			return
		}
		http.NotFound(w, r)
		return
	}
	var req struct {
		Stream bool   `json:"stream"`
		Model  string `json:"model"`
	}
	json.Unmarshal(body, &req)
	var block map[string]any
	stop := "end_turn"
	call, ok := m.next(body)
	if ok {
		block = map[string]any{"type": "tool_use", "id": call.ID, "name": call.Name, "input": call.Input}
		stop = "tool_use"
	} else {
		block = map[string]any{"type": "text", "text": m.answer}
	}
	usage := map[string]any{"input_tokens": 10, "output_tokens": 5}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, mustJSON(map[string]any{
			"id": "msg_scripted", "type": "message", "role": "assistant", "model": req.Model,
			"content": []any{block}, "stop_reason": stop, "stop_sequence": nil, "usage": usage,
		}))
		return
	}
	start := map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_scripted", "type": "message", "role": "assistant", "model": req.Model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}}
	var startBlock, delta map[string]any
	if block["type"] == "tool_use" {
		startBlock = map[string]any{"type": "tool_use", "id": block["id"], "name": block["name"], "input": map[string]any{}}
		delta = map[string]any{"type": "input_json_delta", "partial_json": mustJSON(call.Input)}
	} else {
		startBlock = map[string]any{"type": "text", "text": ""}
		delta = map[string]any{"type": "text_delta", "text": m.answer}
	}
	sse(w,
		[2]string{"message_start", mustJSON(start)},
		[2]string{"content_block_start", mustJSON(map[string]any{"type": "content_block_start", "index": 0, "content_block": startBlock})},
		[2]string{"content_block_delta", mustJSON(map[string]any{"type": "content_block_delta", "index": 0, "delta": delta})},
		[2]string{"content_block_stop", `{"type":"content_block_stop","index":0}`},
		[2]string{"message_delta", mustJSON(map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 5}})},
		[2]string{"message_stop", `{"type":"message_stop"}`},
	)
}

// openai speaks the Responses API (POST /v1/responses, streamed), as
// Codex does.
func (m *modelServer) openai(w http.ResponseWriter, r *http.Request, body []byte) {
	if !strings.HasSuffix(r.URL.Path, "/responses") {
		if strings.HasSuffix(r.URL.Path, "/models") {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"object":"list","data":[],"models":[]}`)
			return
		}
		http.NotFound(w, r)
		return
	}
	var item map[string]any
	if call, ok := m.next(body); ok {
		item = map[string]any{"type": "function_call", "id": "fc_" + call.ID, "call_id": call.ID, "name": call.Name, "arguments": mustJSON(call.Input), "status": "completed"}
	} else {
		item = map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": m.answer, "annotations": []any{}}}}
	}
	resp := map[string]any{"id": "resp_scripted", "object": "response", "status": "completed", "output": []any{item},
		"usage": map[string]any{"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
			"input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens_details": map[string]any{"reasoning_tokens": 0}}}
	sse(w,
		[2]string{"response.created", mustJSON(map[string]any{"type": "response.created", "response": map[string]any{"id": "resp_scripted", "status": "in_progress"}})},
		[2]string{"response.output_item.added", mustJSON(map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})},
		[2]string{"response.output_item.done", mustJSON(map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})},
		[2]string{"response.completed", mustJSON(map[string]any{"type": "response.completed", "response": resp})},
	)
}

// gemini speaks the Gemini API (POST .../models/M:generateContent, and
// :streamGenerateContent?alt=sse), as Gemini CLI does with an API key.
func (m *modelServer) gemini(w http.ResponseWriter, r *http.Request, body []byte) {
	if strings.HasSuffix(r.URL.Path, ":countTokens") {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"totalTokens":10}`)
		return
	}
	if !strings.Contains(r.URL.Path, ":generateContent") && !strings.Contains(r.URL.Path, ":streamGenerateContent") {
		http.NotFound(w, r)
		return
	}
	var part map[string]any
	if bytes.Contains(body, []byte(`"responseSchema"`)) || bytes.Contains(body, []byte(`"responseJsonSchema"`)) {
		// Gemini CLI's side questions (who speaks next, is it looping)
		// want JSON, and carry the session's history: the model is done.
		part = map[string]any{"text": `{"reasoning":"done","next_speaker":"user"}`}
	} else if call, ok := m.next(body); ok {
		part = map[string]any{"functionCall": map[string]any{"id": call.ID, "name": call.Name, "args": call.Input}}
	} else {
		part = map[string]any{"text": m.answer}
	}
	resp := mustJSON(map[string]any{
		"candidates": []any{map[string]any{"index": 0, "finishReason": "STOP",
			"content": map[string]any{"role": "model", "parts": []any{part}}}},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
		"modelVersion":  "gemini-e2e",
	})
	if strings.Contains(r.URL.Path, ":streamGenerateContent") {
		sse(w, [2]string{"", resp})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, resp)
}
