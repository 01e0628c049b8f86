package yarnclient_test

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/internal/testing/deadaddr"
	"github.com/colocd/colocd/yarnclient"
)

// The error of a call no RM could answer names the call, the URL and each
// cause once, however many tries and RMs it went through (issue 14: it
// used to repeat "yarnclient:" and the URL at every wrapping).
func TestUnavailableMessageNamesTheCallOnce(t *testing.T) {
	down := deadaddr.Addr(t)
	refused := "dial tcp " + down + ": connect: connection refused"
	standby := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("This is standby RM. There is no active RM right now."))
	}))
	t.Cleanup(standby.Close)
	tests := map[string]struct {
		rms     []string
		retries int
		want    string
	}{
		"one RM, retried": {
			rms: []string{"http://" + down}, retries: 2,
			want: "yarnclient: GET http://" + down + "/ws/v1/cluster/metrics: resource manager unavailable after 3 tries: " + refused,
		},
		"one RM, no retry": {
			rms: []string{"http://" + down}, retries: -1,
			want: "yarnclient: GET http://" + down + "/ws/v1/cluster/metrics: resource manager unavailable: " + refused,
		},
		"two RMs, retried": {
			rms: []string{"http://" + down, standby.URL}, retries: 1,
			want: "yarnclient: GET /ws/v1/cluster/metrics: resource manager unavailable after 2 tries: " +
				"http://" + down + ": " + refused + "; " +
				standby.URL + ": standby (HTTP 200: This is standby RM. There is no active RM right now.)",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			c, err := yarnclient.New(yarnclient.Config{RMURLs: tt.rms, User: "colocd", Retries: tt.retries, Sleep: func(time.Duration) {}})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.ClusterMetrics(ctxT(t))
			if !errors.Is(err, yarnclient.ErrUnavailable) {
				t.Fatalf("err = %v, want ErrUnavailable", err)
			}
			var op *net.OpError
			if !errors.As(err, &op) {
				t.Errorf("err = %v: the dial error is not in its chain", err)
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("message (-want,+got):\n%s", diff)
			}
		})
	}
}
