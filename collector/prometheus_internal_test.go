package collector

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/colocd/colocd/collector/promtest"
	"github.com/google/go-cmp/cmp"
)

var promInternalT0 = time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)

func newTestProm(t *testing.T, u string, mod func(*PrometheusConfig)) *Prometheus {
	t.Helper()
	cfg := DefaultPrometheusConfig()
	cfg.URL, cfg.Job = u, "node"
	if mod != nil {
		mod(&cfg)
	}
	p, err := NewPrometheus(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func TestPromQueries(t *testing.T) {
	p := newTestProm(t, "http://x", func(c *PrometheusConfig) {
		c.DiskExclude, c.NetInclude, c.NetExclude = []string{`sd[a-z]+[0-9]+`, `dm-.*`}, []string{`eth.*`}, []string{`lo`}
	})
	sel := `job="node", instance=~"(?:h\\.1|we\"ird)(?::[0-9]+)?|(?:::1)|\\[(?:::1)\\](?::[0-9]+)?"`
	unrated := func(sel string) string { return "count by (instance) (count_over_time(" + sel + ") < 2)" }
	want := [numPromQueries]string{
		`sum by (instance, mode) (rate(node_cpu_seconds_total{mode=~"idle|iowait", ` + sel + `}[30500ms]))`,
		`sum by (instance) (rate(node_cpu_seconds_total{mode!~"idle|iowait", cpu=~".*[02468]", ` + sel + `}[30500ms]))`,
		`sum by (instance) (rate(node_cpu_seconds_total{mode!~"idle|iowait", cpu!~".*[02468]", ` + sel + `}[30500ms]))`,
		`sum by (instance) (rate(node_disk_read_bytes_total{device!~"(?:dm-.*)|(?:sd[a-z]+[0-9]+)", ` + sel + `}[30500ms]))`,
		`sum by (instance) (rate(node_disk_written_bytes_total{device!~"(?:dm-.*)|(?:sd[a-z]+[0-9]+)", ` + sel + `}[30500ms]))`,
		`sum by (instance) (rate(node_network_receive_bytes_total{device=~"(?:eth.*)", device!~"(?:lo)", ` + sel + `}[30500ms]))`,
		`sum by (instance) (rate(node_network_transmit_bytes_total{device=~"(?:eth.*)", device!~"(?:lo)", ` + sel + `}[30500ms]))`,
		`max by (instance) (timestamp(node_cpu_seconds_total{mode="idle", ` + sel + `}))`,
		"", "", // pressure: off
		unrated(`node_disk_read_bytes_total{device!~"(?:dm-.*)|(?:sd[a-z]+[0-9]+)", ` + sel + `}[30500ms]`),
		unrated(`node_disk_written_bytes_total{device!~"(?:dm-.*)|(?:sd[a-z]+[0-9]+)", ` + sel + `}[30500ms]`),
		unrated(`node_network_receive_bytes_total{device=~"(?:eth.*)", device!~"(?:lo)", ` + sel + `}[30500ms]`),
		unrated(`node_network_transmit_bytes_total{device=~"(?:eth.*)", device!~"(?:lo)", ` + sel + `}[30500ms]`),
	}
	got := p.promQueries([]string{"::1", "h.1", `we"ird`}, 30500*time.Millisecond)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("queries (-want +got):\n%s", diff)
	}
	// Every host, by another label, no job: no host matcher, grouped per
	// target too.
	p = newTestProm(t, "http://x", func(c *PrometheusConfig) { c.Job, c.HostLabel, c.DiskExclude = "", "node", nil })
	got = p.promQueries(nil, time.Second)
	if want := `sum by (node, instance) (rate(node_disk_read_bytes_total{}[1000ms]))`; got[promQDiskRead] != want {
		t.Errorf("disk read query = %s, want %s", got[promQDiskRead], want)
	}
}

func TestStripPort(t *testing.T) {
	for in, want := range map[string]string{
		"node1:9100":       "node1",
		"[::1]:9100":       "::1",
		"[fe80::1%eth0]:1": "fe80::1%eth0",
		"node1":            "node1",
		"node1:":           "node1:",
		"node1:http":       "node1:http",
		"::1":              "::1",
		"::1:9100":         "::1:9100",
		"[node1]:9100":     "[node1]", // not an address: the brackets are part of the name
		"[::1]":            "[::1]",
		"a:b:9100":         "a:b:9100",
		"":                 "",
	} {
		if got := stripPort(in); got != want {
			t.Errorf("stripPort(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestHostsRegexCoversStripPort: the host matcher is only a server-side
// filter before the client's own, so it must match every label value the
// client keeps. Random names over an alphabet of metacharacters; the seed
// is printed so a failure replays.
func TestHostsRegexCoversStripPort(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	const alphabet = `ab.:[]|*\"(^$ü9`
	name := func() string {
		r := []rune(alphabet)
		var b strings.Builder
		for range 1 + rng.IntN(6) {
			b.WriteRune(r[rng.IntN(len(r))])
		}
		return b.String()
	}
	for range 2000 {
		hosts := []string{name(), name(), name()}
		for _, strip := range []bool{false, true} {
			re := regexp.MustCompile("^(?:" + hostsRegex(hosts, strip) + ")$")
			c := promCompiled{PrometheusConfig: PrometheusConfig{StripPort: strip}}
			for _, h := range hosts {
				for _, v := range []string{h, h + ":9100", "[" + h + "]:9100", name(), name() + ":1"} {
					if kept := c.hostKey(v); slices.Contains(hosts, kept) && !re.MatchString(v) {
						t.Fatalf("strip %v: hosts %q: %q maps to %q but the matcher %s misses it", strip, hosts, v, kept, re)
					}
					if !strip && re.MatchString(v) && !slices.Contains(hosts, v) {
						t.Fatalf("hosts %q: matcher %s matches %q", hosts, re, v)
					}
				}
			}
		}
	}
}

// TestPromAnswers replays the answers Prometheus and proxies give, each
// classified by its sentinel.
func TestPromAnswers(t *testing.T) {
	const vector = `{"status":"success","data":{"resultType":"vector","result":[` +
		`{"metric":{"instance":"h1:9100","mode":"idle"},"value":[1709294490,"1"]},` +
		`{"metric":{"instance":"h1:9100","mode":"user"},"value":[1709294490,"NaN"]}]}}`
	big := `{"status":"success","data":{"resultType":"vector","result":[` +
		strings.Repeat(`{"metric":{"instance":"h1:9100","mode":"idle"},"value":[1709294490,"1"]},`, 20000) +
		`{"metric":{},"value":[1709294490,"1"]}]}}`
	text := func(code int, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			_, _ = w.Write([]byte(body))
		}
	}
	promErr := func(code int, typ, msg string) http.HandlerFunc {
		return text(code, fmt.Sprintf(`{"status":"error","errorType":%q,"error":%q}`, typ, msg))
	}
	for name, tc := range map[string]struct {
		h    http.HandlerFunc
		want error  // nil: success
		text string // in the error
	}{
		"ok":               {text(200, vector), nil, ""},
		"bad_data":         {promErr(400, "bad_data", "parse error: unexpected <op:->"), errBadQuery, "bad_data: parse error"},
		"execution":        {promErr(422, "execution", "many-to-many matching"), errBadQuery, "422"},
		"internal":         {promErr(500, "internal", "boom"), errBadQuery, "boom"},
		"timeout":          {promErr(503, "timeout", "query timed out"), ErrUnreachable, "timed out"},
		"error in 200":     {promErr(200, "bad_data", "odd"), errBadQuery, `"error": bad_data: odd`},
		"proxy 401":        {text(401, "Unauthorized\n"), errAuth, "401 Unauthorized: Unauthorized"},
		"proxy 403":        {text(403, "<html>no</html>"), errAuth, "<html>no</html>"},
		"too many":         {text(429, ""), ErrUnreachable, "429"},
		"bad gateway":      {text(502, "bad gateway"), ErrUnreachable, "502"},
		"gateway timeout":  {text(504, ""), ErrUnreachable, "504"},
		"not found":        {text(404, "404 page not found"), errBadQuery, "404"},
		"not json":         {text(200, "<html>"), errBadQuery, "decode answer"},
		"matrix":           {text(200, `{"status":"success","data":{"resultType":"matrix","result":[]}}`), errBadQuery, `"matrix"`},
		"value not number": {text(200, `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"x"]}]}}`), errBadQuery, "value"},
		"too large":        {text(200, big), errBadQuery, "more than 1 MiB"},
		"too large, declared": {func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", fmt.Sprint(2<<20))
			_, _ = w.Write([]byte(vector)) // then the handler returns: the server closes the short body
		}, errBadQuery, "Content-Length"},
		"cut short": {func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "1000")
			_, _ = w.Write([]byte(vector[:40]))
		}, ErrUnreachable, "unexpected EOF"},
		"stalls mid-answer": {func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(vector[:40]))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}, ErrUnreachable, "deadline exceeded"},
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(tc.h)
			t.Cleanup(srv.Close)
			// A second for the answer that stalls (its case waits that
			// long); the others get room on a busy machine (-race, 2 cores).
			timeout := 30 * time.Second
			if name == "stalls mid-answer" {
				timeout = time.Second
			}
			p := newTestProm(t, srv.URL, func(c *PrometheusConfig) { c.Timeout = timeout })
			p.maxAnswer = 1 << 20
			var qs [numPromQueries]string
			for i := range qs {
				qs[i] = "up"
			}
			out, err := p.queryAll(context.Background(), "op", qs, "0")
			if tc.want == nil {
				want := []promRow{{host: "h1:9100", target: "h1:9100", mode: "idle", v: 1}}
				if err != nil || !cmp.Equal(want, out[promQNewest], cmp.AllowUnexported(promRow{})) {
					t.Errorf("queryAll = %+v, %v; want %+v each", out, err, want)
				}
				return
			}
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.text) {
				t.Errorf("err = %v, want %v containing %q", err, tc.want, tc.text)
			}
		})
	}
}

// TestPromBadQueryRealServer: a host label that is no label name, past
// validation, gets Prometheus's own parse error as errBadQuery.
func TestPromBadQueryRealServer(t *testing.T) {
	srv := promtest.Start(t)
	p := newTestProm(t, srv.URL(), nil)
	if err := p.Ping(context.Background()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	p.cfg.HostLabel = "host-name"
	_, err := p.Usage(context.Background(), []string{"h1"}, promInternalT0, promInternalT0.Add(time.Minute))
	if !errors.Is(err, errBadQuery) || !strings.Contains(err.Error(), "bad_data") {
		t.Errorf("err = %v, want errBadQuery naming bad_data", err)
	}
}

func FuzzDecodeVector(f *testing.F) {
	f.Add([]byte(`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"instance":"a","mode":"idle"},"value":[1,"1.5"]}]}}`))
	f.Add([]byte(`{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"+Inf"]},{"value":[]}]}}`))
	f.Add([]byte(`{"status":"error","errorType":"bad_data","error":"x"}`))
	f.Add([]byte(`{"data":{"result":[{"value":[1,""]}]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := decodeVector(bytes.NewReader(b), "instance")
		if err != nil {
			return
		}
		for _, r := range rows {
			if math.IsNaN(r.v) || math.IsInf(r.v, 0) {
				t.Fatalf("row %+v is not finite", r)
			}
		}
	})
}
