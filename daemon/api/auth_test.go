package api

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	v1 "github.com/colocd/colocd/api/v1"
	"github.com/colocd/colocd/queue"
)

func TestAuth(t *testing.T) {
	h := newHarness(t)
	sam := h.submit(submitterTok, jobBody("wordcount"), http.StatusCreated)
	for _, tc := range []struct {
		name, method, path, token, body string
		want                            int
	}{
		{"no token", "GET", "/v1/jobs", "", "", 401},
		{"bad token", "GET", "/v1/jobs", "nope", "", 401},
		{"token prefix", "GET", "/v1/jobs", readerTok[:len(readerTok)-1], "", 401},
		{"token plus suffix", "GET", "/v1/jobs", readerTok + "x", "", 401},
		{"reader GET jobs", "GET", "/v1/jobs", readerTok, "", 200},
		{"reader GET job", "GET", "/v1/jobs/" + sam.ID, readerTok, "", 200},
		{"reader POST job", "POST", "/v1/jobs", readerTok, jobBody("wordcount"), 403},
		{"reader DELETE job", "DELETE", "/v1/jobs/" + sam.ID, readerTok, "", 403},
		{"submitter PUT prefs", "PUT", "/v1/preferences", submitterTok, `{}`, 403},
		{"submitter DELETE prefs", "DELETE", "/v1/preferences", submitterTok, "", 403},
		{"reader prefs", "GET", "/v1/preferences", readerTok, "", 200},
		{"reader heatmap", "GET", "/v1/preferences/heatmap.svg", readerTok, "", 200},
		{"reader decisions", "GET", "/v1/decisions", readerTok, "", 200},
		{"reader goodness", "GET", "/v1/goodness", readerTok, "", 200},
		{"metrics no token", "GET", "/metrics", "", "", 401},
		{"metrics reader", "GET", "/metrics", readerTok, "", 200},
		{"healthz no token", "GET", "/healthz", "", "", 200},
		{"readyz no token", "GET", "/readyz", "", "", 200},
		{"status page no token", "GET", "/", "", "", 200},
		{"static no token", "GET", "/static/app.js", "", "", 200},
		{"admin DELETE prefs", "DELETE", "/v1/preferences", adminTok, "", 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do(tc.method, tc.path, tc.token, tc.body)
			if r.Code != tc.want {
				t.Fatalf("%s %s: got %d, want %d: %s", tc.method, tc.path, r.Code, tc.want, r.Body)
			}
			switch tc.want {
			case 401:
				r.errBody(t)
				if got := r.Header.Get("WWW-Authenticate"); !strings.HasPrefix(got, "Bearer") {
					t.Errorf("WWW-Authenticate = %q, want Bearer ...", got)
				}
			case 403:
				r.errBody(t)
			}
		})
	}
	t.Run("basic scheme refused", func(t *testing.T) {
		r := h.do("GET", "/v1/jobs", "", "", "Authorization", "Basic "+readerTok)
		if r.Code != 401 {
			t.Fatalf("got %d, want 401", r.Code)
		}
	})
	t.Run("scheme is case-insensitive", func(t *testing.T) {
		r := h.do("GET", "/v1/jobs", "", "", "Authorization", "bearer "+readerTok)
		if r.Code != 200 {
			t.Fatalf("got %d, want 200: %s", r.Code, r.Body)
		}
	})
}

func TestAuthenticatorMatchesEveryToken(t *testing.T) {
	a, err := newAuthenticator(testTokens)
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range testTokens {
		got, ok, expired := a.check(tok.Secret, time.Now())
		if !ok || expired {
			t.Fatalf("token of %s refused (expired %v)", tok.User, expired)
		}
		if diff := cmp.Diff(tok, got, cmpopts.EquateApproxTime(0)); diff != "" {
			t.Errorf("token (-want +got):\n%s", diff)
		}
	}
}

func TestNewRejectsBadTokens(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tokens []Token
		want   string
	}{
		{"none", nil, "none configured"},
		{"empty secret", []Token{{Secret: "", User: "a", Role: RoleAdmin}}, "tokens[0].secret is empty"},
		{"space in secret", []Token{{Secret: "a b", User: "a", Role: RoleAdmin}}, "white space"},
		{"no user", []Token{{Secret: "abc", Role: RoleAdmin}}, "tokens[0].user"},
		{"no role", []Token{{Secret: "abc", User: "a"}}, "tokens[0].role"},
		{"duplicate", []Token{{Secret: "abc", User: "a", Role: RoleAdmin}, {Secret: "abc", User: "b", Role: RoleReader}}, "tokens[1].secret duplicates"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newAuthenticator(tc.tokens)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestParseRole(t *testing.T) {
	for _, r := range []Role{RoleReader, RoleSubmitter, RoleAdmin} {
		got, err := ParseRole(strings.ToUpper(r.String()))
		if err != nil || got != r {
			t.Errorf("ParseRole(%q) = %v, %v; want %v", r.String(), got, err, r)
		}
		var u Role
		b, _ := r.MarshalText()
		if err := u.UnmarshalText(b); err != nil || u != r {
			t.Errorf("text round trip of %v: %v, %v", r, u, err)
		}
	}
	if _, err := ParseRole("root"); err == nil {
		t.Error("ParseRole(root) succeeded")
	}
}

// TestBodyUserIgnored: a job is its authenticated caller's, whatever
// user its body names, an admin's included (an admin acts for another
// user only through a proxy rule: TestProxyUsers).
func TestBodyUserIgnored(t *testing.T) {
	h := newHarness(t)
	forged := h.submit(submitterTok, jobBody("wordcount", `"user":"ada"`), http.StatusCreated)
	own := h.submit(submitterTok, jobBody("wordcount", `"user":"sam"`), http.StatusCreated)
	implicit := h.submit(submitterTok, jobBody("wordcount"), http.StatusCreated)
	forBob := h.submit(adminTok, jobBody("wordcount", `"user":"bob"`), http.StatusCreated)
	adminOwn := h.submit(adminTok, jobBody("wordcount"), http.StatusCreated)
	got := []string{forged.User, own.User, implicit.User, forBob.User, adminOwn.User}
	if diff := cmp.Diff([]string{"sam", "sam", "sam", "ada", "ada"}, got); diff != "" {
		t.Errorf("users (-want +got):\n%s", diff)
	}
}

func TestOnlyOwnerOrAdminCancels(t *testing.T) {
	h := newHarness(t)
	a := h.submit(submitterTok, jobBody("wordcount"), http.StatusCreated)
	b := h.submit(submitterTok, jobBody("wordcount"), http.StatusCreated)
	c := h.submit(submitterTok, jobBody("wordcount"), http.StatusCreated)

	if r := h.do("DELETE", "/v1/jobs/"+a.ID, submitter2Tok, ""); r.Code != http.StatusForbidden {
		t.Fatalf("sue cancelling sam's job: got %d, want 403: %s", r.Code, r.Body)
	}
	if j, _ := h.store.Get(a.ID); j.State != "pending" {
		t.Fatalf("after a refused cancel the job is %s", j.State)
	}
	for _, tc := range []struct {
		id, token string
	}{{a.ID, submitterTok}, {b.ID, adminTok}} {
		r := h.do("DELETE", "/v1/jobs/"+tc.id, tc.token, "")
		if r.Code != http.StatusOK {
			t.Fatalf("DELETE %s: got %d: %s", tc.id, r.Code, r.Body)
		}
		var v v1.Job
		r.decode(t, &v)
		if v.State != "cancelled" {
			t.Errorf("DELETE %s: state %s, want cancelled", tc.id, v.State)
		}
	}
	// Killing a running job: other submitter refused, admin allowed.
	h.runJobStart(c.ID)
	if r := h.do("DELETE", "/v1/jobs/"+c.ID, submitter2Tok, ""); r.Code != http.StatusForbidden {
		t.Fatalf("sue killing sam's running job: got %d, want 403", r.Code)
	}
	r := h.do("DELETE", "/v1/jobs/"+c.ID, adminTok, "")
	if r.Code != http.StatusOK {
		t.Fatalf("admin kill: got %d: %s", r.Code, r.Body)
	}
	if diff := cmp.Diff([]string{c.ID}, h.ctl.Killed()); diff != "" {
		t.Errorf("Controller.Kill calls (-want +got):\n%s", diff)
	}
	if j, _ := h.store.Get(c.ID); j.State != "killed" {
		t.Errorf("state after kill: %s", j.State)
	}
	// A second DELETE of a finished job is a clear 409.
	r = h.do("DELETE", "/v1/jobs/"+c.ID, adminTok, "")
	if r.Code != http.StatusConflict || !strings.Contains(r.errBody(t).Error, "already killed") {
		t.Errorf("DELETE of a killed job: got %d %s, want 409 already killed", r.Code, r.Body)
	}
	if r := h.do("DELETE", "/v1/jobs/nope", adminTok, ""); r.Code != http.StatusNotFound {
		t.Errorf("DELETE unknown job: got %d, want 404", r.Code)
	}
}

func (h *harness) runJobStart(id string) {
	h.t.Helper()
	if _, err := h.store.Admit(id, "app-"+id, nil, nil, nil); err != nil {
		h.t.Fatal(err)
	}
	if _, err := h.store.Start(id); err != nil {
		h.t.Fatal(err)
	}
}

func TestSubmitSpecOnlyForOwnerAndAdmin(t *testing.T) {
	h := newHarness(t)
	j := h.submit(submitterTok, jobBody("wordcount", `"submit":{"env":{"SECRET":"s3"}}`), http.StatusCreated)
	for _, tc := range []struct {
		name, token string
		visible     bool
	}{{"owner", submitterTok, true}, {"admin", adminTok, true}, {"reader", readerTok, false}, {"other submitter", submitter2Tok, false}} {
		t.Run(tc.name, func(t *testing.T) {
			for _, path := range []string{"/v1/jobs/" + j.ID, "/v1/jobs"} {
				body := string(h.do("GET", path, tc.token, "").Body)
				if got := strings.Contains(body, "SECRET"); got != tc.visible {
					t.Errorf("GET %s: submit spec visible = %v, want %v", path, got, tc.visible)
				}
			}
		})
	}
}

// TestJobDetailsOnlyForOwnerAndAdmin: another user's job, listed or read
// alone, shows a reader and another submitter no submit spec, idempotency
// key, labels or diagnostics, and says it is redacted; its owner and
// admins see all of it.
func TestJobDetailsOnlyForOwnerAndAdmin(t *testing.T) {
	h := newHarness(t)
	const key, label, diag, spec = "sam-retry-0042", "payroll-q4", "container_e07 on host-17: /home/sam/keytab", "SECRET_ENV"
	pending := h.submit(submitterTok, jobBody("wordcount", `"labels":{"team":"`+label+`"}`, `"submit":{"env":{"`+spec+`":"1"}}`),
		http.StatusCreated, "Idempotency-Key", key)
	failed := h.submit(submitterTok, jobBody("wordcount", `"labels":{"team":"`+label+`"}`), http.StatusCreated, "Idempotency-Key", key+"-b")
	h.runJobStart(failed.ID)
	if _, err := h.store.Finish(failed.ID, queue.StateFailed, diag); err != nil {
		t.Fatal(err)
	}
	full := func(j v1.Job) bool {
		return j.IdempotencyKey != "" && j.Labels["team"] == label && (j.ID != pending.ID || len(j.Submit) > 0) &&
			(j.ID != failed.ID || j.Diagnostics == diag) && !j.Redacted
	}
	hidden := func(j v1.Job) bool {
		return j.IdempotencyKey == "" && j.Labels == nil && len(j.Submit) == 0 && j.Diagnostics == "" && j.Redacted &&
			j.Kind == "wordcount" && j.User == "sam" && j.State != ""
	}
	for _, tc := range []struct {
		name, token string
		redacted    bool
	}{
		{"owner", submitterTok, false},
		{"admin", adminTok, false},
		{"reader", readerTok, true},
		{"other submitter", submitter2Tok, true},
	} {
		sees := full
		if tc.redacted {
			sees = hidden
		}
		t.Run(tc.name, func(t *testing.T) {
			for _, id := range []string{pending.ID, failed.ID} {
				r := h.do("GET", "/v1/jobs/"+id, tc.token, "")
				var j v1.Job
				r.decode(t, &j)
				if r.Code != http.StatusOK || !sees(j) {
					t.Errorf("GET /v1/jobs/%s: %d %s", id, r.Code, r.Body)
				}
			}
			for _, path := range []string{"/v1/jobs?state=all", "/v1/jobs?state=all&estimate=1"} {
				r := h.do("GET", path, tc.token, "")
				var l v1.JobList
				r.decode(t, &l)
				if r.Code != http.StatusOK || len(l.Jobs) != 2 {
					t.Fatalf("GET %s: %d %s", path, r.Code, r.Body)
				}
				for _, j := range l.Jobs {
					if !sees(j) {
						t.Errorf("GET %s: job %+v", path, j)
					}
				}
				if !tc.redacted {
					continue
				}
				// No private value anywhere in the body.
				for _, secret := range []string{key, label, diag, spec} {
					if strings.Contains(string(r.Body), secret) {
						t.Errorf("GET %s: %q in the body", path, secret)
					}
				}
			}
		})
	}
}
