package collector

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Every answer a metrics store sends is read through caps, so that a
// broken or hostile server (an endless line, an endless body) costs a
// bounded amount of memory and ends in an error naming the cap, never in
// a truncated result:
//
//   - the whole body of a successful answer: MaxAnswerBytes of the
//     reader's config (influx.max_answer_bytes,
//     prometheus.max_answer_bytes), checked against Content-Length first;
//   - the body of an error answer (4xx, 5xx): maxErrorBody, whoever reads
//     it (influxdb-client-go reads error bodies whole);
//   - what a decoder holds at once: one Flux CSV record (maxRecordBytes),
//     one JSON value of a chunked InfluxQL answer (maxValueBytes). The
//     decoders stream, so these, not the body's cap, bound the memory a
//     read takes; the body's cap bounds its time and CPU.
//
// A read over a cap fails with an error wrapping errTooLarge and
// errBadQuery. Slow answers are bounded by the reader's Timeout, which
// covers reading the body.
const (
	// DefaultMaxAnswerBytes is influx.max_answer_bytes' default. The
	// usage read of 10,000 Telegraf hosts over the default 60 s learning
	// window (Telegraf's 10 s interval; cpu-total, two disks and one
	// interface each: 8 series) is about 67 MB of Flux CSV and 23 MB of
	// InfluxQL JSON: BenchmarkUsage's 1,000 hosts over 30 s answer
	// 3.36 MB and 1.15 MB (InfluxDB 1.8). 1 GiB is 15 times that: room
	// for 12 disks a host (3.5 times the series) and a 4-minute window.
	DefaultMaxAnswerBytes = 1 << 30
	// defaultPromMaxAnswerBytes is prometheus.max_answer_bytes' default:
	// the largest answer, the cpu query's vector of 8 modes for 10,000
	// hosts, is about 10 MB (80,000 elements of about 126 bytes); the
	// reader decodes an answer whole, so the cap also bounds its memory.
	defaultPromMaxAnswerBytes = 64 << 20

	// maxErrorBody caps an error answer's body: its first bytes say why.
	maxErrorBody = 64 << 10
	// maxRecordBytes caps one Flux CSV record: an honest one is a few
	// hundred bytes (a series' tags and one sample).
	maxRecordBytes = 1 << 20
	// maxValueBytes caps one JSON value of an InfluxQL answer: a chunk of
	// influxQLChunkSize rows is about 0.5 MB. A server that ignores
	// chunked=true sends its whole answer as one value, which past this
	// fails rather than take gigabytes to decode.
	maxValueBytes = 64 << 20
)

// tooLarge is the error of a read over a cap: what was capped, the cap,
// and the setting that sets it.
func tooLarge(what string, limit int64, setting string) error {
	return fmt.Errorf("%w: %s is more than %s (%s)", errTooLarge, what, sizeText(limit), setting)
}

// sizeText writes n bytes as MiB or KiB when it is a whole number of them.
func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// capReader reads at most left bytes from r, then fails with err if r has
// more. A negative left fails at once (a declared length over the cap).
type capReader struct {
	r    io.Reader
	left int64
	err  error
}

func (c *capReader) Read(b []byte) (int, error) {
	if c.left < 0 {
		return 0, c.err
	}
	if c.left == 0 {
		var one [1]byte
		if n, err := c.r.Read(one[:]); n == 0 {
			return 0, err
		}
		c.left = -1
		return 0, c.err
	}
	if int64(len(b)) > c.left {
		b = b[:c.left]
	}
	n, err := c.r.Read(b)
	c.left -= int64(n)
	return n, err
}

// capBody is a response body read through a capReader.
type capBody struct {
	capReader
	c io.Closer
}

func (b *capBody) Close() error { return b.c.Close() }

// capTransport caps the body of every answer: max for a 2xx answer
// (setting names the config key), maxErrorBody for any other.
type capTransport struct {
	base    http.RoundTripper
	max     int64
	source  string // "influxdb", "prometheus"
	setting string // the key that sets max
}

func (t *capTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	limit, setting := t.max, t.setting
	what := fmt.Sprintf("the %s answer to %s %s", t.source, req.Method, req.URL.Path)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		limit, setting = maxErrorBody, "the cap on an error answer"
		what = fmt.Sprintf("the %s error answer (%s) to %s %s", t.source, resp.Status, req.Method, req.URL.Path)
	}
	left := limit
	if resp.ContentLength > limit {
		left = -1
		what += fmt.Sprintf(" (Content-Length %d)", resp.ContentLength)
	}
	resp.Body = &capBody{capReader: capReader{r: resp.Body, left: left, err: tooLarge(what, limit, setting)}, c: resp.Body}
	return resp, nil
}

// CloseIdleConnections closes the base transport's idle connections.
func (t *capTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// cappedClient returns a copy of hc (nil: a client of the reader's own
// with timeout) whose transport caps every answer.
func cappedClient(hc *http.Client, timeout time.Duration, max int64, source, setting string) *http.Client {
	var cp http.Client
	if hc != nil {
		cp = *hc
	} else {
		cp.Timeout = timeout
	}
	base := cp.Transport
	if base == nil {
		base = http.DefaultTransport.(*http.Transport).Clone()
	}
	cp.Transport = &capTransport{base: base, max: max, source: source, setting: setting}
	return &cp
}

// recordCap caps a CSV record: the bytes since the last line break
// outside quotes (a quoted field may hold line breaks, and csv.Reader
// then reads on into the same record).
type recordCap struct {
	r      io.Reader
	max    int64 // maxRecordBytes
	n      int64 // bytes of the record being read
	quoted bool  // inside a quoted field
	err    error
}

func (c *recordCap) Read(b []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.r.Read(b)
	for rest := b[:n]; len(rest) > 0; {
		seg := rest
		i := bytes.IndexByte(rest, '\n')
		if i >= 0 {
			seg = rest[:i]
		}
		if bytes.Count(seg, []byte{'"'})%2 == 1 { // "" in a field toggles twice
			c.quoted = !c.quoted
		}
		c.n += int64(len(seg))
		if c.n > c.max {
			c.err = tooLarge("a Flux CSV record", c.max, "the cap on one record")
			return 0, c.err
		}
		if i < 0 {
			break
		}
		if c.quoted {
			c.n++
		} else {
			c.n = 0
		}
		rest = rest[i+1:]
	}
	return n, err
}

// valueCap caps each JSON value a json.Decoder reads: next gives the
// next value a budget of max bytes (maxValueBytes). The decoder reads
// ahead, so a value may also use what was read before it; a value is
// still held to at most twice the cap.
type valueCap struct {
	r         io.Reader
	max, left int64
	err       error
}

func (c *valueCap) next() { c.left = c.max }

func (c *valueCap) Read(b []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if c.left <= 0 {
		c.err = tooLarge("a JSON value of the InfluxQL answer", c.max, "the cap on one chunk")
		return 0, c.err
	}
	if int64(len(b)) > c.left {
		b = b[:c.left]
	}
	n, err := c.r.Read(b)
	c.left -= int64(n)
	return n, err
}
