package main

import (
	"encoding/csv"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/profile"
	"github.com/colocd/colocd/profile/profiletest"
)

// train fits the model on profiletest's synthetic nodes.
func (s *cliServer) train() { profiletest.Train(s.profiles) }

// wantProfileRow is a kind's table row as the test formats it (the API's
// tests check the dominant resource's name).
func (s *cliServer) wantProfileRow(kind string) []string {
	p := s.profiles.Profile(kind)
	r, _ := p.Dominant()
	dominant := r.String()
	if r == profile.DiskRead {
		dominant = "disk"
	}
	known := "no"
	if p.Known {
		known = "yes"
	}
	pct := func(r profile.Resource) string {
		return strconv.FormatFloat(100*p.Demand[r], 'f', 1, 64) + " ± " + strconv.FormatFloat(100*p.Std[r], 'f', 1, 64)
	}
	mb := func(r profile.Resource, limit float64) string {
		return strconv.FormatFloat(p.Demand[r]*limit/1e6, 'f', 2, 64) + " ± " + strconv.FormatFloat(p.Std[r]*limit/1e6, 'f', 2, 64)
	}
	return []string{kind, known, strconv.FormatInt(p.Ticks, 10), strconv.FormatFloat(p.Weight, 'f', 1, 64), dominant,
		pct(profile.CPU), pct(profile.IOWait), mb(profile.DiskRead, cliLimits.DiskRead), mb(profile.DiskWrite, cliLimits.DiskWrite),
		mb(profile.NetIn, cliLimits.NetRecv), mb(profile.NetOut, cliLimits.NetSent)}
}

// tableCells splits the table lines of out (up to the first blank line)
// into cells: the tabwriter pads columns with at least two spaces, and no
// cell holds two spaces in a row.
func tableCells(out string) [][]string {
	sep := regexp.MustCompile(` {2,}`)
	var rows [][]string
	for line := range strings.SplitSeq(out, "\n") {
		if strings.TrimSpace(line) == "" {
			break
		}
		rows = append(rows, sep.Split(strings.TrimRight(line, " "), -1))
	}
	return rows
}

func TestClientProfiles(t *testing.T) {
	s := startAPI(t)
	out, err := s.runCLI(t, cliReader, "", "profiles")
	if err != nil || !strings.HasPrefix(out, "no kinds profiled yet\n") {
		t.Errorf("empty model: %q, %v", out, err)
	}
	s.train()
	header := []string{"KIND", "KNOWN", "TICKS", "WEIGHT", "DOMINANT", "CPU %", "IOWAIT %",
		"DISK READ MB/s", "DISK WRITE MB/s", "NET IN MB/s", "NET OUT MB/s"}

	for _, tc := range []struct {
		name string
		args []string
		want [][]string
	}{
		{"every kind", []string{"profiles"}, [][]string{header,
			s.wantProfileRow("cpubound"), s.wantProfileRow("diskbound"), s.wantProfileRow("netbound")}},
		{"filter with an unknown kind", []string{"profiles", "--kind", "nosuch,netbound"}, [][]string{header,
			s.wantProfileRow("netbound"), s.wantProfileRow("nosuch")}},
		{"kinds", []string{"profiles", "--kinds", "nosuch,netbound"}, [][]string{header,
			s.wantProfileRow("netbound"), s.wantProfileRow("nosuch")}},
		{"a page", []string{"profiles", "--limit", "1", "--offset", "2"}, [][]string{header, s.wantProfileRow("netbound")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := s.runCLI(t, cliReader, "", tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, tableCells(out)); diff != "" {
				t.Errorf("table (-want +got):\n%s\n%s", diff, out)
			}
			for _, want := range []string{"\n60 node observations\n", "\nidle node:  cpu 2.0 %, iowait 0.1 %, disk read 1.00, write 0.50 MB/s, net in 0.25, out 0.25 MB/s\n",
				"\nresidual σ: cpu ", "\nlimits:     disk read 200.00, write 100.00 MB/s, net in 125.00, out 125.00 MB/s\n"} {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
		})
	}

	t.Run("json is the server's", func(t *testing.T) {
		for _, q := range []string{"", "?kind=nosuch%2Cnetbound"} {
			want := s.get(t, "/v1/profiles"+q)
			args := []string{"profiles", "--json"}
			if q != "" {
				args = append(args, "--kind", "nosuch,netbound")
			}
			got, err := s.runCLI(t, cliReader, "", args...)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("profiles --json%s (-want +got):\n%s", q, diff)
			}
		}
	})
	t.Run("csv", func(t *testing.T) {
		out, err := s.runCLI(t, cliReader, "", "profiles", "--csv", "--kind", "diskbound")
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if err != nil || len(recs) != 2 {
			t.Fatalf("--csv: %v, %d records:\n%s", err, len(recs), out)
		}
		wantHeader := []string{"kind", "known", "ticks", "weight", "dominant", "cpu", "iowait",
			"disk_read_bps", "disk_write_bps", "net_in_bps", "net_out_bps"}
		if diff := cmp.Diff(wantHeader, recs[0]); diff != "" {
			t.Errorf("csv header (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"diskbound", "true", "10"}, recs[1][:3]); diff != "" {
			t.Errorf("csv row (-want +got):\n%s", diff)
		}
	})
	if _, err := s.runCLI(t, cliReader, "", "profiles", "--csv", "--json"); err == nil {
		t.Error("--csv with --json accepted")
	}
	if _, err := s.runCLI(t, cliReader, "", "profiles", "--kind", "a", "--kinds", "b"); err == nil {
		t.Error("--kind with --kinds accepted")
	}
	out, err = s.runCLI(t, cliReader, "", "profiles", "--limit", "1")
	if err != nil || !strings.Contains(out, "\nkinds 1 to 1 of 3 (--offset, --limit for others)\n") {
		t.Errorf("profiles --limit 1: %v\n%s", err, out)
	}
}

// get returns the body of a GET as a reader, which must succeed.
func (s *cliServer) get(t *testing.T, path string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, s.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+cliReader)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v: %s", path, res.StatusCode, err, b)
	}
	return string(b)
}
