package api

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	v1 "github.com/colocd/colocd/api/v1"
)

func TestParseACL(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want ACL
		err  bool
	}{
		{"*", ACL{All: true}, false},
		{"alice,bob etl,ops", ACL{Users: []string{"alice", "bob"}, Groups: []string{"etl", "ops"}}, false},
		{" etl", ACL{Groups: []string{"etl"}}, false},
		{"alice", ACL{Users: []string{"alice"}}, false},
		{"", ACL{}, false},
		{"alice,* ops", ACL{}, true},
	} {
		got, err := ParseACL(tc.in)
		if (err != nil) != tc.err {
			t.Errorf("ParseACL(%q): %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); !tc.err && diff != "" {
			t.Errorf("ParseACL(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
	ACL, _ := ParseACL("alice etl")
	if !ACL.Allows("alice", nil) || !ACL.Allows("bob", []string{"etl"}) || ACL.Allows("bob", []string{"ops"}) {
		t.Error("Allows")
	}
}

// Tokens of the identity tests: a service account that may act for
// others, and one whose token expired.
const (
	airflowTok = "airflow-secret-0005"
	expiredTok = "expired-secret-0006"
)

func identityHarness(t *testing.T, change func(*Deps)) *harness {
	return newHarness(t, withDeps(func(d *Deps) {
		d.Tokens = append(append([]Token(nil), testTokens...),
			Token{Secret: airflowTok, User: "airflow", Role: RoleSubmitter},
			Token{Secret: expiredTok, User: "old", Role: RoleAdmin, Expires: time.Now().Add(-time.Hour)})
		g, _ := ParseGroupsFile(strings.NewReader("etl: sam, sue, alice\nops: ada\n"))
		d.Groups, d.ACLs = g, DefaultACLs()
		d.ProxyUsers = []ProxyRule{{User: "airflow", Users: []string{"alice"}, Groups: []string{"ops"}, Hosts: []string{"127.0.0.0/8"}}}
		if change != nil {
			change(d)
		}
	}))
}

// TestProxyUsers: a proxy rule lets airflow act for alice (?doAs=, any
// case) and for members of ops; the job is alice's, and the refusal of
// anyone else is a 403 proxy_refused naming api.proxy_users and why.
func TestProxyUsers(t *testing.T) {
	h := identityHarness(t, nil)
	j := h.submit(airflowTok, jobBody("wordcount"), http.StatusCreated)
	if j.User != "airflow" {
		t.Errorf("without doAs the job is %s's, want airflow's", j.User)
	}
	for _, q := range []string{"?doAs=alice", "?doas=alice", "?DOAS=alice"} {
		r := h.do("POST", "/v1/jobs"+q, airflowTok, jobBody("wordcount", `"user":"mallory"`))
		var v v1.Job
		r.decode(t, &v)
		if r.Code != http.StatusCreated || v.User != "alice" {
			t.Errorf("POST %s: %d, user %q; want 201 as alice", q, r.Code, v.User)
		}
	}
	if j := h.submit(airflowTok, jobBody("wordcount"), http.StatusCreated, "X-Ignored", ""); j.User != "airflow" {
		t.Errorf("user %s", j.User)
	}
	r := h.do("GET", "/v1/whoami?doAs=ada", airflowTok, "")
	var who v1.WhoAmI
	r.decode(t, &who)
	want := v1.WhoAmI{User: "ada", Role: "submitter", RoleRule: "api.acl.submitter", Groups: []string{"ops"}, Principal: "token:airflow",
		Method: "token", RealUser: "airflow", ProxyRule: "api.proxy_users[0]"}
	if diff := cmp.Diff(want, who); diff != "" {
		t.Errorf("whoami as ada through airflow (-want +got):\n%s", diff)
	}
	for _, tc := range []struct{ name, token, query, why string }{
		{"a user the rule does not name", airflowTok, "?doAs=carol", "does not name user carol"},
		{"no rule for the caller", submitterTok, "?doAs=alice", "no rule of api.proxy_users is for user sam"},
		{"an admin without a rule", adminTok, "?doAs=alice", "no rule of api.proxy_users is for user ada"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do("POST", "/v1/jobs"+tc.query, tc.token, jobBody("wordcount"))
			e := r.errBody(t)
			if r.Code != http.StatusForbidden || e.Code != v1.CodeProxyRefused || e.Rule != "api.proxy_users" || !strings.Contains(e.Error, tc.why) {
				t.Errorf("got %d %+v; want 403 proxy_refused, rule api.proxy_users, %q", r.Code, e, tc.why)
			}
		})
	}
	t.Run("from a host the rule does not name", func(t *testing.T) {
		h := identityHarness(t, func(d *Deps) { d.ProxyUsers[0].Hosts = []string{"10.0.0.0/8"} })
		r := h.do("POST", "/v1/jobs?doAs=alice", airflowTok, jobBody("wordcount"))
		if e := r.errBody(t); r.Code != http.StatusForbidden || !strings.Contains(e.Error, "client address 127.0.0.1") {
			t.Errorf("got %d %+v", r.Code, e)
		}
	})
}

func TestProxyRuleHosts(t *testing.T) {
	r := ProxyRule{User: "airflow", Users: []string{"*"}, Hosts: []string{"10.1.2.0/24", "192.0.2.7"}, Name: "r"}
	if err := r.compile(); err != nil {
		t.Fatal(err)
	}
	for addr, want := range map[string]bool{"10.1.2.9": true, "10.1.3.1": false, "192.0.2.7": true, "::ffff:192.0.2.7": true, "192.0.2.8": false} {
		if ok, _ := r.allows("x", nil, netip.MustParseAddr(addr)); ok != want {
			t.Errorf("from %s: %v, want %v", addr, ok, want)
		}
	}
	bad := ProxyRule{User: "airflow", Hosts: []string{"gw.example.org"}}
	if err := bad.compile(); err == nil {
		t.Error("a host name accepted")
	}
}

// TestJobGroups: a group api.job_groups names shares its members' jobs
// (whole, cancellable); without the rule, another member's job is
// redacted and its cancel a 403 naming the rule.
func TestJobGroups(t *testing.T) {
	for _, shared := range []bool{false, true} {
		t.Run(fmt.Sprintf("shared=%v", shared), func(t *testing.T) {
			h := identityHarness(t, func(d *Deps) {
				if shared {
					d.JobGroups = []string{"etl"}
				}
			})
			j := h.submit(submitterTok, jobBody("wordcount", `"labels":{"team":"etl"}`), http.StatusCreated)
			r := h.do("GET", "/v1/jobs/"+j.ID, submitter2Tok, "")
			var v v1.Job
			r.decode(t, &v)
			if v.Redacted == shared || (len(v.Labels) > 0) != shared {
				t.Errorf("sue reads sam's job: redacted %v, labels %v", v.Redacted, v.Labels)
			}
			r = h.do("DELETE", "/v1/jobs/"+j.ID, submitter2Tok, "")
			if shared {
				if r.Code != http.StatusOK {
					t.Errorf("sue cancels sam's job in etl: %d %s", r.Code, r.Body)
				}
				return
			}
			if e := r.errBody(t); r.Code != http.StatusForbidden || e.Rule != "owner" || e.Code != v1.CodeForbidden {
				t.Errorf("sue cancels sam's job: %d %+v; want 403 naming owner", r.Code, e)
			}
			r = h.do("DELETE", "/v1/jobs/"+j.ID, readerTok, "")
			if e := r.errBody(t); r.Code != http.StatusForbidden || e.Rule != "tokens" {
				t.Errorf("a reader cancels: %d %+v; want 403 naming tokens", r.Code, e)
			}
		})
	}
}

func TestTokenExpiry(t *testing.T) {
	h := identityHarness(t, nil)
	r := h.do("GET", "/v1/jobs", expiredTok, "")
	if e := r.errBody(t); r.Code != http.StatusUnauthorized || e.Code != v1.CodeTokenExpired || !strings.Contains(e.Error, "expired at") {
		t.Errorf("an expired token: %d %+v", r.Code, e)
	}
	if got := r.Header.Get("WWW-Authenticate"); got != `Bearer realm="colocd"` {
		t.Errorf("WWW-Authenticate %q", got)
	}
}

func TestUnknownParameter(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct{ path, param string }{
		{"/v1/jobs?offset=100", "offset"}, {"/v1/jobs?limit=5&usr=sam", "usr"}, {"/v1/jobs/J1?x=1", "x"}, {"/healthz?verbose=1", "verbose"},
	} {
		r := h.do("GET", tc.path, readerTok, "")
		if e := r.errBody(t); r.Code != http.StatusBadRequest || e.Code != v1.CodeUnknownParameter || e.Field != tc.param {
			t.Errorf("GET %s: %d %+v; want 400 unknown_parameter on %s", tc.path, r.Code, e, tc.param)
		}
	}
	if r := h.do("GET", "/v1/jobs?limit=5&state=all&doAs=rita", readerTok, ""); r.Code != http.StatusOK {
		t.Errorf("known parameters: %d %s", r.Code, r.Body)
	}
}

// TestJobsCursor: pages of GET /v1/jobs, followed by their cursors, list
// exactly the jobs one big page lists, with every filter; a cursor is
// refused with other filters.
func TestJobsCursor(t *testing.T) {
	h := newHarness(t)
	var ids []string
	for i := range 9 {
		tok, kind := submitterTok, "wordcount"
		if i%3 == 0 {
			tok = submitter2Tok
		}
		if i%2 == 0 {
			kind = "kmeans"
		}
		j := h.submit(tok, jobBody(kind, fmt.Sprintf(`"labels":{"n":"%d","team":"t%d"}`, i, i%2)), http.StatusCreated)
		ids = append(ids, j.ID)
		h.clock.Advance(time.Minute)
	}
	h.runJob(ids[1], time.Minute)
	h.runJobStart(ids[2])
	list := func(q string) v1.JobList {
		t.Helper()
		r := h.do("GET", "/v1/jobs?"+q, adminTok, "")
		if r.Code != http.StatusOK {
			t.Fatalf("GET /v1/jobs?%s: %d %s", q, r.Code, r.Body)
		}
		var l v1.JobList
		r.decode(t, &l)
		return l
	}
	for _, filter := range []string{"state=all", "", "state=all&user=sue", "state=all&kind=kmeans", "state=all&label=team%3Dt1",
		"state=pending,succeeded&kind=wordcount", "state=all&since=" + url.QueryEscape(h.clock.Now().Add(-4*time.Minute).Format(time.RFC3339))} {
		whole := list(filter + "&limit=1000")
		var paged []string
		var positions []int
		cursor := ""
		for range 20 {
			l := list(filter + "&limit=2&cursor=" + cursor)
			for _, j := range l.Jobs {
				paged = append(paged, j.ID)
				if j.Position != nil {
					positions = append(positions, *j.Position)
				}
			}
			if cursor = l.NextCursor; cursor == "" {
				break
			}
		}
		var want []string
		var wantPos []int
		for _, j := range whole.Jobs {
			want = append(want, j.ID)
			if j.Position != nil {
				wantPos = append(wantPos, *j.Position)
			}
		}
		if diff := cmp.Diff(want, paged); diff != "" || len(want) == 0 {
			t.Errorf("%q: paged (-whole +pages):\n%s", filter, diff)
		}
		if diff := cmp.Diff(wantPos, positions); diff != "" {
			t.Errorf("%q: positions (-whole +pages):\n%s", filter, diff)
		}
	}
	first := list("state=all&limit=2")
	r := h.do("GET", "/v1/jobs?state=all&user=sam&cursor="+first.NextCursor, adminTok, "")
	if e := r.errBody(t); r.Code != http.StatusBadRequest || e.Field != "cursor" {
		t.Errorf("a cursor with other filters: %d %+v", r.Code, e)
	}
	if got := list("state=all&user=sue&label=n%3D3").Jobs; len(got) != 1 || got[0].ID != ids[3] {
		t.Errorf("user sue with label n=3: %v", got)
	}
}

// fakeReplica is a follower whose leader is at leader.
type fakeReplica struct{ leader string }

func (f fakeReplica) Leading() (bool, string) { return false, f.leader }
func (fakeReplica) Status() v1.HAStatus       { return v1.HAStatus{Role: "follower"} }
func (fakeReplica) Applied() uint64           { return 1 }
func (fakeReplica) FollowerReady() error      { return nil }

// TestForwardedIdentity: a follower authenticates a write itself and
// forwards the identity, signed with the replicas' key, without the
// Authorization; the leader takes it (and applies doAs itself). A
// forwarded identity signed with another key, or sent by anyone but a
// replica, is refused.
func TestForwardedIdentity(t *testing.T) {
	key := []byte(strings.Repeat("k", 32))
	leader := identityHarness(t, func(d *Deps) { d.ForwardKey = key })
	// The follower knows only the airflow token: the leader cannot check
	// it, so a job accepted there came by the forwarded identity.
	fh := identityHarness(t, func(d *Deps) { d.ForwardKey = key })
	follower := httptest.NewServer(NewReplicated(fh.srv.Config.Handler, fakeReplica{leader.srv.URL}, "f1", http.DefaultTransport, 0))
	t.Cleanup(follower.Close)
	leader.api.auth.tokens, _ = newAuthenticator([]Token{{Secret: "only-the-leaders-own", User: "x", Role: RoleReader}})

	post := func(path, tok string, hdr ...string) response {
		req, _ := http.NewRequest("POST", follower.URL+path, strings.NewReader(jobBody("wordcount")))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var b strings.Builder
		_, _ = fmt.Fprint(&b, readAll(res))
		return response{Code: res.StatusCode, Header: res.Header, Body: []byte(b.String())}
	}
	r := post("/v1/jobs?doAs=alice", airflowTok)
	var j v1.Job
	r.decode(t, &j)
	if r.Code != http.StatusCreated || j.User != "alice" {
		t.Fatalf("through the follower as alice: %d %s", r.Code, r.Body)
	}
	if got, err := leader.store.Get(j.ID); err != nil || got.User != "alice" {
		t.Errorf("the leader's store: %+v, %v", got, err)
	}
	if r := post("/v1/jobs", "not-a-token"); r.Code != http.StatusUnauthorized {
		t.Errorf("a bad token through the follower: %d", r.Code)
	}
	// A forged identity straight to the leader: refused.
	forged := signForward([]byte(strings.Repeat("x", 32)), identity{User: "ada", Method: methodToken, TokenRole: RoleAdmin, At: time.Now().Unix()}, "POST", "/v1/jobs")
	r = leader.do("POST", "/v1/jobs", "", jobBody("wordcount"), headerForwardedIdentity, forged)
	if e := r.errBody(t); r.Code != http.StatusUnauthorized || !strings.Contains(e.Error, "does not verify") {
		t.Errorf("a forged identity: %d %+v", r.Code, e)
	}
	// A real one replayed for another request: refused.
	real := signForward(key, identity{User: "ada", Method: methodToken, TokenRole: RoleAdmin, At: time.Now().Unix()}, "GET", "/v1/whoami")
	if r := leader.do("POST", "/v1/jobs", "", jobBody("wordcount"), headerForwardedIdentity, real); r.Code != http.StatusUnauthorized {
		t.Errorf("an identity signed for another request: %d", r.Code)
	}
	if r := leader.do("GET", "/v1/whoami", "", "", headerForwardedIdentity, real); r.Code != http.StatusOK {
		t.Errorf("the same identity for its request: %d %s", r.Code, r.Body)
	}
	old := signForward(key, identity{User: "ada", Method: methodToken, TokenRole: RoleAdmin, At: time.Now().Add(-time.Minute).Unix()}, "GET", "/v1/whoami")
	if r := leader.do("GET", "/v1/whoami", "", "", headerForwardedIdentity, old); r.Code != http.StatusUnauthorized {
		t.Errorf("an identity signed a minute ago: %d", r.Code)
	}
}

func readAll(res *http.Response) string {
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := res.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String()
		}
	}
}
