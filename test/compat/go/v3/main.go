// Compatibility driver: sends one message of every type through the real,
// unmodified github.com/segmentio/analytics-go/v3 (v3.3.0) client to a
// Switchyard ingest server, then closes the client so everything is flushed.
//
// Env: SWITCHYARD_ENDPOINT (base URL; the library POSTs to <base>/v1/batch),
// SWITCHYARD_WRITE_KEY, RUN_ID (embedded in ids so tests can find records),
// DEBUG (non-empty enables the library's verbose logging).
//
// Stdout: one JSON line {"type","messageId"} per enqueued call.
// Exit 1 if any message is reported as failed (e.g. the server refused it).
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	analytics "github.com/segmentio/analytics-go/v3"
)

// line is one stdout record per call.
type line struct {
	Type      string `json:"type"`
	MessageID string `json:"messageId"`
}

// callback counts delivery results reported by the library.
type callback struct{ ok, failed atomic.Int32 }

func (c *callback) Success(analytics.Message) { c.ok.Add(1) }
func (c *callback) Failure(m analytics.Message, err error) {
	c.failed.Add(1)
	fmt.Fprintf(os.Stderr, "send failed: %v (%T)\n", err, m)
}

// logger forwards library logs (errors, non-2xx responses) to stderr.
type logger struct{}

func (logger) Logf(f string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, "segment INFO: "+f+"\n", a...)
}
func (logger) Errorf(f string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, "segment ERROR: "+f+"\n", a...)
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

	cb := &callback{}
	client, err := analytics.NewWithConfig(writeKey, analytics.Config{
		Endpoint:   endpoint,
		BatchSize:  100,
		Interval:   100 * time.Millisecond,
		Verbose:    os.Getenv("DEBUG") != "",
		Logger:     logger{},
		Callback:   cb,
		RetryAfter: func(int) time.Duration { return 50 * time.Millisecond },
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "config:", err)
		os.Exit(1)
	}

	user := "go-v3-user-" + run
	id := func(kind string) string { return "go-v3-" + kind + "-" + run }
	historical := time.Date(2020, 1, 2, 3, 4, 5, 678e6, time.UTC)

	// Exactly one call per type (plus a track with a historical timestamp).
	msgs := []struct {
		kind string
		msg  analytics.Message
		mid  string
	}{
		{"identify", analytics.Identify{MessageId: id("identify"), UserId: user,
			Traits: analytics.Traits{"name": "Ada", "plan": "pro", "ünïcode": "日本"}}, id("identify")},
		{"track", analytics.Track{MessageId: id("track"), UserId: user, Event: "Order Completed",
			Properties:   analytics.Properties{"revenue": 9.99, "currency": "EUR"},
			Integrations: analytics.Integrations{"All": false, "Webhooks": true},
			Context:      &analytics.Context{App: analytics.AppInfo{Name: "compat", Version: "1.0"}}}, id("track")},
		{"track", analytics.Track{MessageId: id("track-historical"), UserId: user, Event: "Order Completed",
			Properties: analytics.Properties{"revenue": 9.99, "currency": "EUR"}, Timestamp: historical}, id("track-historical")},
		// v3's Page has no top-level category field: it goes into properties.
		{"page", analytics.Page{MessageId: id("page"), UserId: user, Name: "Pricing",
			Properties: analytics.Properties{"category": "Docs", "url": "https://example.com/pricing",
				"title": "Pricing", "path": "/pricing", "referrer": "https://example.com/"}}, id("page")},
		{"screen", analytics.Screen{MessageId: id("screen"), UserId: user, Name: "Home",
			Properties: analytics.Properties{"from": "test"}}, id("screen")},
		{"group", analytics.Group{MessageId: id("group"), UserId: user, GroupId: "g-" + run,
			Traits: analytics.Traits{"plan": "enterprise"}}, id("group")},
		{"alias", analytics.Alias{MessageId: id("alias"), PreviousId: "go-v3-anon-" + run, UserId: user}, id("alias")},
	}

	out := json.NewEncoder(os.Stdout)
	for _, m := range msgs {
		if err := client.Enqueue(m.msg); err != nil {
			fmt.Fprintf(os.Stderr, "enqueue %s: %v\n", m.kind, err)
			os.Exit(1)
		}
		out.Encode(line{m.kind, m.mid})
	}

	// Close flushes the queue and waits for in-flight requests.
	if err := client.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "close:", err)
		os.Exit(1)
	}
	if f, ok := cb.failed.Load(), cb.ok.Load(); f > 0 || int(ok) != len(msgs) {
		fmt.Fprintf(os.Stderr, "delivery: %d ok, %d failed, %d sent\n", ok, f, len(msgs))
		os.Exit(1)
	}
}
