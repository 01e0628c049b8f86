package collector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/colocd/colocd/internal/testing/endless"
)

func newEndless(t *testing.T, status int, contentType, head, unit string, header map[string]string) *endless.Server {
	t.Helper()
	return endless.Start(t, endless.Options{Status: status, ContentType: contentType, Head: head, Unit: unit, Header: header})
}

const (
	fluxHeader        = ",result,table,_start,_stop,_time,_value,_field,_measurement,cpu,host\r\n"
	fluxRow           = ",cpu,0,2024-03-01T12:00:00Z,2024-03-01T12:00:30Z,2024-03-01T12:00:10Z,60,usage_idle,cpu,cpu-total,h1\r\n"
	influxQLChunkHead = `{"results":[{"statement_id":0,"series":[{"name":"cpu","tags":{"host":"h1"},"columns":["time","usage_idle","usage_iowait"],"values":[`
	influxQLOneChunk  = `{"results":[{"statement_id":0,"series":[{"name":"cpu","tags":{"host":"h1"},"columns":["time","usage_idle","usage_iowait"],"values":[[1709294410000000000,60,5]],"partial":true}],"partial":true}]}` + "\n"
)

// TestEndlessInfluxAnswers: an InfluxDB (or something in its place) that
// never stops answering costs a bounded amount of memory and bytes read,
// and ends the read with an error naming the cap that stopped it
// (errTooLarge, counted as a failed query), in either language, for an
// answer, an error answer and a ping.
func TestEndlessInfluxAnswers(t *testing.T) {
	const (
		small            = 64 << 10
		maxOut, maxAlloc = 32 << 20, 32 << 20
	)
	for name, tc := range map[string]struct {
		lang        string
		status      int
		contentType string
		head, unit  string
		header      map[string]string
		maxAnswer   int64 // 0: the default (1 GiB)
		ping        bool
		want        error
		text        string
	}{
		"flux: a line without end": {lang: languageFlux, status: 200, contentType: "text/csv", head: fluxHeader, unit: "x",
			want: errBadQuery, text: "a Flux CSV record is more than 1 MiB"},
		"flux: a quoted field without end": {lang: languageFlux, status: 200, contentType: "text/csv", head: fluxHeader + `,cpu,0,"`, unit: "a\n",
			want: errBadQuery, text: "a Flux CSV record is more than 1 MiB"},
		"flux: rows without end": {lang: languageFlux, status: 200, contentType: "text/csv", head: fluxHeader, unit: fluxRow, maxAnswer: small,
			want: errBadQuery, text: "the influxdb answer to POST /api/v2/query is more than 64 KiB (influx max_answer_bytes)"},
		"flux: declared over the cap": {lang: languageFlux, status: 200, contentType: "text/csv", head: fluxHeader, unit: fluxRow, maxAnswer: small,
			header: map[string]string{"Content-Length": "1000000"},
			want:   errBadQuery, text: "(Content-Length 1000000) is more than 64 KiB"},
		"flux: an error answer without end": {lang: languageFlux, status: 500, contentType: "text/plain", head: "error: ", unit: "x",
			want: errBadQuery, text: "error answer (500 Internal Server Error) to POST /api/v2/query is more than 64 KiB"},
		"flux: a JSON error answer without end": {lang: languageFlux, status: 503, contentType: "application/json", head: `{"code":"unavailable","message":"`, unit: "x",
			want: ErrUnreachable, text: "is more than 64 KiB"},
		"influxql: a chunk without end": {lang: LanguageInfluxQL, status: 200, contentType: "application/json", head: influxQLChunkHead, unit: "[1709294410000000000,60,5],",
			want: errBadQuery, text: "a JSON value of the InfluxQL answer is more than 1 MiB"},
		"influxql: chunks without end": {lang: LanguageInfluxQL, status: 200, contentType: "application/json", unit: influxQLOneChunk, maxAnswer: small,
			want: errBadQuery, text: "the influxdb answer to POST /query is more than 64 KiB"},
		"ping: an error answer without end": {lang: languageFlux, status: 500, contentType: "text/plain", unit: "x", ping: true,
			want: errBadQuery, text: "error answer (500 Internal Server Error) to GET /ping is more than 64 KiB"},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEndless(t, tc.status, tc.contentType, tc.head, tc.unit, tc.header)
			cfg := DefaultConfig()
			cfg.URL, cfg.Language, cfg.MaxAnswerBytes, cfg.Timeout = e.URL, tc.lang, tc.maxAnswer, 2*time.Second
			c, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.Close)
			c.maxValue = 1 << 20 // 64 MiB by default
			var got error
			alloc := endless.Allocated(func() {
				if tc.ping {
					got = c.Ping(context.Background())
					return
				}
				_, got = c.Usage(context.Background(), []string{"h1"}, promInternalT0, promInternalT0.Add(30*time.Second))
			})
			if !errors.Is(got, errTooLarge) || !errors.Is(got, tc.want) || !strings.Contains(got.Error(), tc.text) {
				t.Errorf("err = %v, want errTooLarge and %v naming %q", got, tc.want, tc.text)
			}
			// Caps of 1 MiB at most: what the socket buffers held besides
			// is a few MiB. Without the record cap, the endless line made
			// 3.9 GB of allocations in 2 s.
			t.Logf("%d bytes out, %d allocated", e.Written.Load(), alloc)
			if n := e.Written.Load(); n > maxOut {
				t.Errorf("the server got %d bytes out before the client stopped, want at most %d", n, maxOut)
			}
			if alloc > maxAlloc {
				t.Errorf("%d bytes allocated, want at most %d", alloc, maxAlloc)
			}
		})
	}
}

// TestEndlessPrometheusAnswers: the Prometheus reader caps an endless
// answer (prometheus max_answer_bytes) and an endless error answer (its
// first 64 KiB say why) with bounded memory.
func TestEndlessPrometheusAnswers(t *testing.T) {
	for name, tc := range map[string]struct {
		status     int
		head, unit string
		want       error
		text       string
	}{
		"answer": {200, `{"status":"success","data":{"resultType":"vector","result":[`, `{"metric":{"instance":"h1:9100"},"value":[1,"1"]},`,
			errBadQuery, "the prometheus answer is more than 1 MiB (prometheus max_answer_bytes)"},
		"error answer": {500, "", "x", errBadQuery, "prometheus answered 500"},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEndless(t, tc.status, "application/json", tc.head, tc.unit, nil)
			p := newTestProm(t, e.URL, func(c *PrometheusConfig) { c.MaxAnswerBytes = 1 << 20 })
			var got error
			alloc := endless.Allocated(func() {
				_, got = p.Usage(context.Background(), []string{"h1"}, promInternalT0, promInternalT0.Add(30*time.Second))
			})
			if !errors.Is(got, tc.want) || !strings.Contains(got.Error(), tc.text) {
				t.Errorf("err = %v, want %v naming %q", got, tc.want, tc.text)
			}
			if n := e.Written.Load(); n > 64<<20 {
				t.Errorf("the server got %d bytes out before the client stopped", n)
			}
			if alloc > 64<<20 {
				t.Errorf("%d bytes allocated for 6 queries capped at 1 MiB each", alloc)
			}
		})
	}
}

// TestTrickledInfluxAnswer: an answer whose bytes trickle in forever is
// cut at the collector's Timeout, which covers reading the body
// (ErrUnreachable, the deadline), having read a few bytes.
func TestTrickledInfluxAnswer(t *testing.T) {
	var written atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		head, drip := fluxHeader, "x" // a Flux record that never ends
		if r.URL.Path == "/query" {
			head, drip = influxQLChunkHead, " " // an InfluxQL array that never ends
		}
		_, _ = io.WriteString(w, head)
		tick := time.NewTicker(20 * time.Millisecond) // the server's pace, not the test's
		defer tick.Stop()
		for {
			select {
			case <-r.Context().Done():
				return
			case <-tick.C:
				if _, err := io.WriteString(w, drip); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				written.Add(1)
			}
		}
	}))
	t.Cleanup(srv.Close)
	for _, lang := range []string{languageFlux, LanguageInfluxQL} {
		t.Run(lang, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.URL, cfg.Language, cfg.Timeout = srv.URL, lang, time.Second
			c, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.Close)
			_, err = c.Usage(context.Background(), []string{"h1"}, promInternalT0, promInternalT0.Add(30*time.Second))
			if !errors.Is(err, ErrUnreachable) || !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("err = %v, want ErrUnreachable and the deadline", err)
			}
		})
	}
	if n := written.Load(); n == 0 {
		t.Error("the server trickled nothing: the test did not test a slow answer")
	}
}

// TestRecordCap: records are counted from the last line break outside
// quotes; doubled quotes inside a quoted field keep it open.
func TestRecordCap(t *testing.T) {
	for name, tc := range map[string]struct {
		in string
		ok bool
	}{
		"short lines":           {strings.Repeat("abcdefgh\n", 100), true},
		"a long line":           {strings.Repeat("a", 65), false},
		"line breaks in quotes": {`x,"` + strings.Repeat("ab\n", 30) + `"` + "\n", false},
		"doubled quotes":        {`x,"a""b` + "\n" + strings.Repeat("c", 60) + "\n", false},
		"closed quotes":         {strings.Repeat(`x,"a""b"`+"\n", 20), true},
	} {
		_, err := io.Copy(io.Discard, &recordCap{r: strings.NewReader(tc.in), max: 64})
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, errTooLarge)) {
			t.Errorf("%s: err = %v, want ok %v", name, err, tc.ok)
		}
	}
}

func TestSizeText(t *testing.T) {
	for n, want := range map[int64]string{1 << 30: "1024 MiB", 64 << 10: "64 KiB", 1000: "1000 bytes", 1<<20 + 1: "1048577 bytes"} {
		if got := sizeText(n); got != want {
			t.Errorf("sizeText(%d) = %q, want %q", n, got, want)
		}
	}
	if err := tooLarge("x", 1<<20, "y"); !errors.Is(err, errTooLarge) || err.Error() != fmt.Sprintf("%v: x is more than 1 MiB (y)", errTooLarge) {
		t.Errorf("tooLarge = %v", err)
	}
}
