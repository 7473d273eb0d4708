package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// toolCall is the one tool call a scripted session makes.
type toolCall struct {
	Name  string
	Input map[string]any
}

// modelServer is a scripted model API on 127.0.0.1: the first turn of the
// agent's loop gets the scripted tool call, every later turn (one that
// carries a tool result) a final text. It keeps every request body, so a
// test can check what the CLI sent back, and answers at most maxRequests
// requests: past that, an error that ends the CLI's turn.
type modelServer struct {
	URL  string // http://127.0.0.1:PORT
	Port int
	call toolCall
	// proto answers one request: "anthropic", "openai" or "gemini".
	proto string

	mu     sync.Mutex
	bodies []string
	turns  int // requests answered with the tool call
}

const maxRequests = 40

func newModelServer(t *testing.T, proto string, call toolCall) *modelServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("model server: %v", err)
	}
	m := &modelServer{proto: proto, call: call, Port: ln.Addr().(*net.TCPAddr).Port}
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

// Turns is how many times the scripted tool call was sent.
func (m *modelServer) Turns() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.turns
}

func (m *modelServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	m.mu.Lock()
	n := len(m.bodies)
	m.bodies = append(m.bodies, r.Method+" "+r.URL.String()+"\n"+string(body))
	m.mu.Unlock()
	if n >= maxRequests {
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

// firstTurn reports whether a request is the agent loop's first turn: it
// offers the scripted tool and carries no tool result yet. Side requests
// (titles, summaries, quota checks) offer no tools and get plain text.
func (m *modelServer) firstTurn(body []byte, resultMarker string) bool {
	if !bytes.Contains(body, []byte(`"`+m.call.Name+`"`)) || bytes.Contains(body, []byte(resultMarker)) {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.turns >= 3 { // a CLI that keeps retrying the call gets text
		return false
	}
	m.turns++
	return true
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
	if m.firstTurn(body, `"tool_result"`) {
		block = map[string]any{"type": "tool_use", "id": "toolu_scripted1", "name": m.call.Name, "input": m.call.Input}
		stop = "tool_use"
	} else {
		block = map[string]any{"type": "text", "text": "done"}
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
		delta = map[string]any{"type": "input_json_delta", "partial_json": mustJSON(m.call.Input)}
	} else {
		startBlock = map[string]any{"type": "text", "text": ""}
		delta = map[string]any{"type": "text_delta", "text": "done"}
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
	if m.firstTurn(body, `_call_output"`) {
		item = map[string]any{"type": "function_call", "id": "fc_1", "call_id": "call_scripted1", "name": m.call.Name, "arguments": mustJSON(m.call.Input), "status": "completed"}
	} else {
		item = map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": "done", "annotations": []any{}}}}
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
	if m.firstTurn(body, `"functionResponse"`) {
		part = map[string]any{"functionCall": map[string]any{"name": m.call.Name, "args": m.call.Input}}
	} else if bytes.Contains(body, []byte(`"responseSchema"`)) || bytes.Contains(body, []byte(`"responseJsonSchema"`)) {
		// Gemini CLI's side questions (who speaks next, is it looping)
		// want JSON: the model is done.
		part = map[string]any{"text": `{"reasoning":"done","next_speaker":"user"}`}
	} else {
		part = map[string]any{"text": "done"}
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
