// Compatibility driver: sends one message of every type through the real,
// unmodified deprecated github.com/segmentio/analytics-go v2 client (tag
// 2.1.1) to a Switchyard ingest server, then closes the client to flush.
//
// Env: SWITCHYARD_ENDPOINT (base URL; the library POSTs to <base>/v1/batch),
// SWITCHYARD_WRITE_KEY, RUN_ID (embedded in ids so tests can find records),
// DEBUG (non-empty enables the library's verbose logging).
//
// Stdout: one JSON line {"type","messageId"} per enqueued call.
// v2 has no delivery callback: it only logs send errors to its Logger, so any
// non-verbose log output is treated as a failure (exit 1).
package main

import (
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	analytics "github.com/segmentio/analytics-go"
	"github.com/segmentio/backo-go"
)

// line is one stdout record per call.
type line struct {
	Type      string `json:"type"`
	MessageID string `json:"messageId"`
}

// errWriter forwards library logs to stderr and counts send errors, which
// v2 logs as "error ..." or "response <status>: <code> – <body>" (verbose
// lines, only with DEBUG, are "response 200 OK", "buffer ...", etc.).
type errWriter struct{ n atomic.Int32 }

func (w *errWriter) Write(p []byte) (int, error) {
	msg := strings.TrimPrefix(string(p), "segment ")
	if strings.HasPrefix(msg, "error ") || strings.HasPrefix(msg, "response ") && strings.Contains(msg, ": ") {
		w.n.Add(1)
	}
	return os.Stderr.Write(p)
}

func mustEnv(name string) string {
	v := os.Getenv(name)
	if v == "" {
		fmt.Fprintf(os.Stderr, "missing env %s\n", name)
		os.Exit(2)
	}
	return v
}

func main() {
	endpoint := strings.TrimRight(mustEnv("SWITCHYARD_ENDPOINT"), "/")
	writeKey := mustEnv("SWITCHYARD_WRITE_KEY")
	run := mustEnv("RUN_ID")

	// v2 retries a failed batch 10 times with a package-level backoff
	// (default 100ms doubling, capped at 10s: ~43s); keep refusals fast.
	analytics.Backo = backo.NewBacko(10*time.Millisecond, 2, 0, 100*time.Millisecond)

	errs := &errWriter{}
	client := analytics.New(writeKey)
	client.Endpoint = endpoint // library appends "/v1/batch"
	client.Size = 100
	client.Interval = 200 * time.Millisecond
	client.Verbose = os.Getenv("DEBUG") != ""
	client.Logger = log.New(errs, "segment ", 0)
	client.Client = http.Client{Timeout: 10 * time.Second}

	user := "go-v2-user-" + run
	id := func(kind string) string { return "go-v2-" + kind + "-" + run }

	// v2 has no screen call and no context/integrations on alias. Page
	// "Traits" are serialized as "properties".
	calls := []struct {
		kind string
		send func() error
	}{
		{"identify", func() error {
			return client.Identify(&analytics.Identify{Message: analytics.Message{MessageId: id("identify")}, UserId: user,
				Traits: map[string]interface{}{"name": "Ada", "plan": "pro", "ünïcode": "日本"}})
		}},
		{"track", func() error {
			return client.Track(&analytics.Track{Message: analytics.Message{MessageId: id("track")}, UserId: user,
				Event:        "Order Completed",
				Properties:   map[string]interface{}{"revenue": 9.99, "currency": "EUR"},
				Integrations: map[string]interface{}{"All": false, "Webhooks": true},
				Context:      map[string]interface{}{"app": map[string]interface{}{"name": "compat", "version": "1.0"}}})
		}},
		{"page", func() error {
			return client.Page(&analytics.Page{Message: analytics.Message{MessageId: id("page")}, UserId: user,
				Name: "Pricing", Category: "Docs",
				Traits: map[string]interface{}{"url": "https://example.com/pricing", "title": "Pricing",
					"path": "/pricing", "referrer": "https://example.com/"}})
		}},
		{"group", func() error {
			return client.Group(&analytics.Group{Message: analytics.Message{MessageId: id("group")}, UserId: user,
				GroupId: "g-" + run, Traits: map[string]interface{}{"plan": "enterprise"}})
		}},
		{"alias", func() error {
			return client.Alias(&analytics.Alias{Message: analytics.Message{MessageId: id("alias")},
				PreviousId: "go-v2-anon-" + run, UserId: user})
		}},
	}

	out := json.NewEncoder(os.Stdout)
	for _, c := range calls {
		if err := c.send(); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", c.kind, err)
			os.Exit(1)
		}
		out.Encode(line{c.kind, id(c.kind)})
	}

	// Close drains the queue, sends the last batch and waits for all uploads
	// (including retries) to finish.
	client.Close()
	if errs.n.Load() > 0 {
		fmt.Fprintln(os.Stderr, "analytics-go v2 reported send errors")
		os.Exit(1)
	}
}
