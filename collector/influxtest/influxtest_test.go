package influxtest_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/colocd/colocd/collector/influxtest"
	"github.com/google/go-cmp/cmp"
)

// count runs an InfluxQL count over the telegraf database.
func count(t testing.TB, s *influxtest.Server, user, pass string) (int, int) {
	t.Helper()
	u := s.URL() + "/query?" + url.Values{"db": {influxtest.Database}, "q": {"SELECT count(v) FROM m"}}.Encode()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var r struct {
		Results []struct {
			Series []struct {
				Values [][]any `json:"values"`
			} `json:"series"`
		} `json:"results"`
	}
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, 0
	}
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	if len(r.Results) == 0 || len(r.Results[0].Series) == 0 {
		return resp.StatusCode, 0
	}
	return resp.StatusCode, int(r.Results[0].Series[0].Values[0][1].(float64))
}

func TestStartWriteStop(t *testing.T) {
	s := influxtest.Start(t)
	if got, want := s.Bucket(), "telegraf/autogen"; got != want {
		t.Errorf("Bucket() = %q, want %q", got, want)
	}
	if s.Token() != "" {
		t.Errorf("Token() = %q without auth, want empty", s.Token())
	}
	s.Write(t, "m,host=a v=1 1000000000\nm,host=b v=2 2000000000\n")
	code, n := count(t, s, "", "")
	if diff := cmp.Diff([2]int{200, 2}, [2]int{code, n}); diff != "" {
		t.Errorf("status and count (-want +got):\n%s", diff)
	}
	if err := s.WriteErr(context.Background(), "not line protocol"); err == nil {
		t.Error("WriteErr accepted malformed line protocol")
	}
	if err := s.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	select {
	case <-s.Exited():
	case <-time.After(time.Second):
		t.Fatal("Exited not closed after Stop")
	}
	if err := s.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if _, err := http.Get(s.URL() + "/ping"); err == nil {
		t.Error("server still answers /ping after Stop")
	}
}

func TestStartWithAuth(t *testing.T) {
	s := influxtest.Start(t, influxtest.WithAuth("admin", "pa'ss"))
	if got, want := s.Token(), "admin:pa'ss"; got != want {
		t.Errorf("Token() = %q, want %q", got, want)
	}
	s.Write(t, "m v=1 1000000000\n")
	if code, n := count(t, s, "admin", "pa'ss"); code != 200 || n != 1 {
		t.Errorf("authorised count: status %d, n %d; want 200, 1", code, n)
	}
	if code, _ := count(t, s, "", ""); code != http.StatusUnauthorized {
		t.Errorf("anonymous query: status %d, want 401", code)
	}
}
