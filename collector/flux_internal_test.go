package collector

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// The helpers below read literals back the way Flux 0.65 (InfluxDB 1.8)
// does: internal/scanner/scanner.rl decides where a literal ends,
// internal/parser/strconv.go unescapes it.

// unquoteFlux reads a Flux string literal that must span all of lit.
func unquoteFlux(lit string) (string, error) {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return "", errors.New("not quoted")
	}
	body := lit[1 : len(lit)-1]
	var b strings.Builder
	for i := 0; i < len(body); {
		c := body[i]
		switch c {
		case '"':
			return "", fmt.Errorf("unescaped quote at %d ends the literal early", i)
		case '$':
			// "${" starts an interpolation; a '$' before anything else
			// swallows the next character, escapes included.
			return "", fmt.Errorf("raw '$' at %d", i)
		case '\\':
			if i+1 >= len(body) {
				return "", errors.New("dangling backslash")
			}
			switch n := body[i+1]; n {
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case '\\', '"':
				b.WriteByte(n)
			case 'x':
				var v byte
				if _, err := fmt.Sscanf(body[i+2:min(i+4, len(body))], "%02x", &v); err != nil || i+4 > len(body) {
					return "", fmt.Errorf("bad byte escape at %d", i)
				}
				b.WriteByte(v)
				i += 4
				continue
			default:
				return "", fmt.Errorf("invalid escape %q", n)
			}
			i += 2
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), nil
}

// compileFluxRegex reads a Flux regex literal that must span all of lit.
func compileFluxRegex(lit string) (*regexp.Regexp, error) {
	if len(lit) < 3 || lit[0] != '/' || lit[len(lit)-1] != '/' {
		return nil, errors.New("not a regex literal")
	}
	body := lit[1 : len(lit)-1]
	// The scanner ends the literal at the first '/' not preceded by a
	// backslash; we never emit '/' inside at all.
	if i := strings.IndexByte(body, '/'); i >= 0 {
		return nil, fmt.Errorf("'/' at %d inside the literal", i)
	}
	return regexp.Compile(strings.ReplaceAll(body, `\/`, "/"))
}

func TestFluxString(t *testing.T) {
	for in, want := range map[string]string{
		"":            `""`,
		"telegraf":    `"telegraf"`,
		`we"ird`:      `"we\"ird"`,
		`back\slash`:  `"back\\slash"`,
		`${x}`:        `"\x24{x}"`,
		`$"`:          `"\x24\""`,
		"a\nb\tc\rd":  `"a\nb\tc\rd"`,
		"ünï/cödé":    `"ünï/cödé"`,
		`\${"`:        `"\\\x24{\""`,
		"end$":        `"end\x24"`,
		`telegraf/ap`: `"telegraf/ap"`,
	} {
		got := fluxString(in)
		if got != want {
			t.Errorf("fluxString(%q) = %s, want %s", in, got, want)
		}
		back, err := unquoteFlux(got)
		if err != nil || back != in {
			t.Errorf("Flux reads %s as %q (%v), want %q", got, back, err, in)
		}
	}
}

func FuzzFluxString(f *testing.F) {
	for _, s := range []string{"", `"`, `\`, "${", "$", "\n", "ü", `\x24`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			t.Skip()
		}
		lit := fluxString(s)
		back, err := unquoteFlux(lit)
		if err != nil || back != s {
			t.Fatalf("fluxString(%q) = %s reads back as %q (%v)", s, lit, back, err)
		}
	})
}

func TestFluxRegex(t *testing.T) {
	for _, tc := range []struct {
		pattern  string
		match    []string
		nonMatch []string
	}{
		{`^(?:sd[a-z]+[0-9]+)$`, []string{"sda1"}, []string{"sda", "xsda1"}},
		{`^a/b$`, []string{"a/b"}, []string{"ab"}},
		{`^\/x$`, []string{"/x"}, []string{`\/x`}},
		{`^\\/z$`, []string{`\/z`}, []string{"/z"}},
		{`^[/]y$`, []string{"/y"}, []string{"y"}},
		{`^[^/]+$`, []string{"abc"}, []string{"a/c"}},
		{"^a\nb$", []string{"a\nb"}, []string{"ab"}},
		{`^(?i)ETH0$`, []string{"eth0"}, []string{"eth1"}},
		{hostsPattern([]string{"a.b", "sl/ash", `back\slash`, "x|y", "^$", "ü"}),
			[]string{"a.b", "sl/ash", `back\slash`, "x|y", "^$", "ü"},
			[]string{"axb", "x", "y", "", "sl", `back\\slash`, "a.bc"}},
	} {
		lit, err := fluxRegex(tc.pattern)
		if err != nil {
			t.Fatalf("fluxRegex(%q): %v", tc.pattern, err)
		}
		re, err := compileFluxRegex(lit)
		if err != nil {
			t.Fatalf("Flux cannot read %s (from %q): %v", lit, tc.pattern, err)
		}
		for _, s := range tc.match {
			if !re.MatchString(s) {
				t.Errorf("%s (from %q) does not match %q", lit, tc.pattern, s)
			}
		}
		for _, s := range tc.nonMatch {
			if re.MatchString(s) {
				t.Errorf("%s (from %q) matches %q", lit, tc.pattern, s)
			}
		}
	}
	if _, err := fluxRegex("("); err == nil {
		t.Error("fluxRegex accepted an invalid pattern")
	}
}

// FuzzHostsRegex: the host filter Flux compiles matches exactly the hosts.
func FuzzHostsRegex(f *testing.F) {
	f.Add("a.b", "sl/ash", "x")
	f.Add(`\/`, "${", "\n")
	f.Add("a", "a|b", "b")
	f.Fuzz(func(t *testing.T, a, b, probe string) {
		for _, s := range []string{a, b} {
			if s == "" || !utf8.ValidString(s) {
				t.Skip()
			}
		}
		lit, err := fluxRegex(hostsPattern([]string{a, b}))
		if err != nil {
			t.Fatalf("fluxRegex: %v", err)
		}
		re, err := compileFluxRegex(lit)
		if err != nil {
			t.Fatalf("Flux cannot read %s: %v", lit, err)
		}
		if !re.MatchString(a) || !re.MatchString(b) {
			t.Fatalf("%s misses %q or %q", lit, a, b)
		}
		if got, want := re.MatchString(probe), probe == a || probe == b; got != want {
			t.Fatalf("%s matches %q = %v, want %v", lit, probe, got, want)
		}
	})
}

// TestUsageQueryShape pins what the query sends: every value is a literal
// produced by the escapers, the window is exact to the nanosecond (the
// stop 1 ns early, for InfluxDB 1.8's inclusive stop), and nothing follows
// the filter, so storage does all the work Flux would do per table.
func TestUsageQueryShape(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Bucket = `tele"graf/auto${x}`
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	from := time.Date(2024, 3, 1, 12, 0, 0, 5, time.FixedZone("x", 3600))
	q, err := c.usageQuery([]string{"h/1", `h"2`}, false, from, from.Add(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`from(bucket: "tele\"graf/auto\x24{x}")`,
		"range(start: 2024-03-01T11:00:00.000000005Z, stop: 2024-03-01T11:00:30.000000004Z)",
		`r["host"] =~ /(?-m:\Ah(?:\x2f1|"2)$)/`,
		`r._measurement == "cpu" and r["cpu"] == "cpu-total"`,
		`r["name"] !~ /`,
		`r["interface"] != "all"`,
	} {
		if !strings.Contains(q, want) {
			t.Errorf("query lacks %s:\n%s", want, q)
		}
	}
	// Per read: range, filter (pushed to storage), group (storage too), yield.
	if diff := cmp.Diff(12, strings.Count(q, "|>")); diff != "" {
		t.Errorf("pipe count (-want +got):\n%s\n%s", diff, q)
	}
	for _, name := range []string{resultCPU, resultDisk, resultNet} {
		if !strings.Contains(q, "|> group()\n\t|> yield(name: \""+name+"\")") {
			t.Errorf("query lacks the %s read:\n%s", name, q)
		}
	}
	c.cfg.HostPatternMax = 1
	q, err = c.usageQuery([]string{"h/1", `h"2`}, false, from, from.Add(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(q, `r["host"]`) {
		t.Errorf("over HostPatternMax hosts, the query still filters hosts:\n%s", q)
	}
	if got := readStop(from, from.Add(time.Nanosecond)); !got.Equal(from.Add(time.Nanosecond)) {
		t.Errorf("readStop on a 1 ns window = %v, want the window's end", got)
	}
}
