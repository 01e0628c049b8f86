package nmtest

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/colocd/colocd/yarnclient"
)

// container is a NodeManager container: yarnclient's type, which encodes
// to the documented JSON shape.
type container = yarnclient.NMContainer

// Server is the fake. Its methods are safe for concurrent use.
type Server struct {
	srv *httptest.Server

	mu         sync.Mutex
	containers []container
	apps       map[string]App // application id → what the RM says of it
	rmStatus   int            // 0: answer normally
	nmStatus   int
	rmRequests map[string]int
}

// Option changes how New starts the fake.
type Option func(*options)

type options struct {
	wrap func(http.Handler) http.Handler
}

// Wrap puts wrap in front of the fake's handler, as a kerberized
// NodeManager puts SPNEGO in front of its web services (a test's
// yarntest.NewSPNEGOGate).
func Wrap(wrap func(http.Handler) http.Handler) Option {
	return func(o *options) { o.wrap = wrap }
}

// New starts the fake and closes it when the test ends.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	var o options
	for _, f := range opts {
		f(&o)
	}
	s := &Server{apps: map[string]App{}, rmRequests: map[string]int{}}
	var h http.Handler = http.HandlerFunc(s.serve)
	if o.wrap != nil {
		h = o.wrap(h)
	}
	s.srv = httptest.NewUnstartedServer(h)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("nmtest: listen: %v", err)
	}
	s.srv.Listener = ln
	s.srv.Start()
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the base URL of both the NodeManager and the ResourceManager.
func (s *Server) URL() string { return s.srv.URL }

// SetContainers replaces the NodeManager's container list.
func (s *Server) SetContainers(cs ...container) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.containers = append([]container(nil), cs...)
}

// App is what the ResourceManager says of an application.
type App struct {
	Name, Queue, Type string // YARN's name, queue and applicationType
	Tags              []string
}

// SetApp registers an application with the ResourceManager: a MAPREDUCE
// application named "job" in queue "default" with the given tags.
func (s *Server) SetApp(id string, tags ...string) {
	s.SetAppInfo(id, App{Name: "job", Queue: "default", Type: "MAPREDUCE", Tags: tags})
}

// SetAppInfo registers an application with the ResourceManager.
func (s *Server) SetAppInfo(id string, a App) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a.Tags = append([]string(nil), a.Tags...)
	s.apps[id] = a
}

// FailRM makes the ResourceManager answer with status (0 restores it).
func (s *Server) FailRM(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rmStatus = status
}

// FailNM makes the NodeManager answer with status (0 restores it).
func (s *Server) FailNM(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nmStatus = status
}

// RMRequests is how often each application was looked up.
func (s *Server) RMRequests() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.rmRequests))
	for k, v := range s.rmRequests {
		out[k] = v
	}
	return out
}

// Running is a RUNNING container with the documented defaults filled in.
func Running(id string, memoryMB, vcores int64) container {
	return container{
		ID: id, State: "RUNNING", ExitCode: -1000, User: "user1",
		TotalMemoryNeededMB: memoryMB, TotalVCoresNeeded: vcores,
		ContainerLogsLink: "http://host.domain.com:8042/node/containerlogs/" + id + "/user1",
		NodeID:            "host.domain.com:8041", ExecutionType: "GUARANTEED",
	}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.URL.Path == yarnclient.PathNMContainers:
		if s.nmStatus != 0 {
			http.Error(w, `{"RemoteException":{"message":"injected"}}`, s.nmStatus)
			return
		}
		body := map[string]any{"containers": nil}
		if len(s.containers) > 0 {
			body["containers"] = map[string]any{"container": s.containers}
		}
		_ = json.NewEncoder(w).Encode(body)
	case strings.HasPrefix(r.URL.Path, "/ws/v1/cluster/apps/"):
		id := strings.TrimPrefix(r.URL.Path, "/ws/v1/cluster/apps/")
		s.rmRequests[id]++
		if s.rmStatus != 0 {
			http.Error(w, `{"RemoteException":{"message":"injected"}}`, s.rmStatus)
			return
		}
		a, ok := s.apps[id]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			_ = json.NewEncoder(w).Encode(map[string]any{"RemoteException": map[string]string{
				"exception": "NotFoundException", "javaClassName": "org.apache.hadoop.yarn.webapp.NotFoundException",
				"message": "java.lang.Exception: app with id: " + id + " not found",
			}})
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"app": map[string]any{
			"id": id, "user": "user1", "name": a.Name, "queue": a.Queue, "state": "RUNNING",
			"finalStatus": "UNDEFINED", "applicationType": a.Type,
			"applicationTags": strings.Join(a.Tags, ","),
		}})
	default:
		http.NotFound(w, r)
	}
}
