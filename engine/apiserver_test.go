package engine

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/colocd/colocd/daemon/api"
)

// apiOver serves the API over the harness's engine on 127.0.0.1.
func apiOver(t *testing.T, h *harness, d api.Deps) *httptest.Server {
	t.Helper()
	d.Store, d.Learner, d.Controller, d.Writes = h.store, h.learner, h.e, h.e
	d.Tokens = []api.Token{{Secret: "test-admin-token", User: "ana", Role: api.RoleAdmin}}
	handler, err := api.New(d)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return srv
}

// post submits body to POST /v1/jobs as the admin.
func post(t *testing.T, srv *httptest.Server, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", srv.URL+"/v1/jobs", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer test-admin-token")
	req.Header.Set("Content-Type", "application/json")
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}
