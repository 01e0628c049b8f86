package yarntest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/colocd/colocd/yarnclient"
)

// FakeNM is a NodeManager on httptest (127.0.0.1) serving GET
// /ws/v1/node/containers, {"containers":{"container":[...]}} as documented
// in NodeManagerRest.md ({"containers":{}} when idle). Other paths answer
// 404. Safe for concurrent use; closed by t.Cleanup.
type FakeNM struct {
	srv        *httptest.Server
	mu         sync.Mutex
	containers []yarnclient.NMContainer
}

// NewFakeNM starts an idle fake NodeManager.
func NewFakeNM(t testing.TB) *FakeNM {
	t.Helper()
	n := &FakeNM{}
	n.srv = httptest.NewServer(http.HandlerFunc(n.serve))
	t.Cleanup(n.srv.Close)
	return n
}

// SetContainers replaces the containers the node reports.
func (n *FakeNM) SetContainers(cs []yarnclient.NMContainer) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.containers = append([]yarnclient.NMContainer(nil), cs...)
}

// URL is the node's base URL, e.g. http://127.0.0.1:41235; without the
// scheme it is the node's nodeHTTPAddress.
func (n *FakeNM) URL() string { return n.srv.URL }

func (n *FakeNM) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if r.Method != http.MethodGet || r.URL.Path != yarnclient.PathNMContainers {
		w.WriteHeader(http.StatusNotFound)
		json.NewEncoder(w).Encode(map[string]any{"RemoteException": map[string]string{
			"exception": "NotFoundException", "javaClassName": "com.sun.jersey.api.NotFoundException",
			"message": "null for uri: " + n.srv.URL + r.URL.RequestURI(),
		}})
		return
	}
	n.mu.Lock()
	cs := n.containers
	n.mu.Unlock()
	body := map[string]any{"containers": map[string]any{}}
	if len(cs) > 0 {
		body["containers"] = map[string]any{"container": cs}
	}
	json.NewEncoder(w).Encode(body)
}
