package collector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"syscall"
	"testing"

	ihttp "github.com/influxdata/influxdb-client-go/v2/api/http"
)

func TestClassify(t *testing.T) {
	status := func(code int, cause error) error {
		e := ihttp.NewError(cause)
		e.StatusCode = code
		return e
	}
	refused := &url.Error{Op: "Post", URL: "http://x", Err: syscall.ECONNREFUSED}
	for name, tc := range map[string]struct {
		err  error
		want error // nil: no sentinel
	}{
		"401":                 {status(401, nil), errAuth},
		"401 with empty body": {status(401, io.EOF), errAuth},
		"403":                 {status(403, nil), errAuth},
		"429":                 {status(429, nil), ErrUnreachable},
		"502":                 {status(502, nil), ErrUnreachable},
		"503":                 {status(503, nil), ErrUnreachable},
		"504":                 {status(504, nil), ErrUnreachable},
		"400":                 {status(400, nil), errBadQuery},
		"404 bucket":          {status(404, nil), errBadQuery},
		"500 flux error":      {status(500, nil), errBadQuery},
		"refused":             {ihttp.NewError(refused), ErrUnreachable},
		"reset mid-stream":    {fmt.Errorf("read: %w", syscall.ECONNRESET), ErrUnreachable},
		"truncated":           {io.ErrUnexpectedEOF, ErrUnreachable},
		"deadline":            {ihttp.NewError(&url.Error{Op: "Post", URL: "http://x", Err: context.DeadlineExceeded}), ErrUnreachable},
		"other transport":     {ihttp.NewError(errors.New("tls: bad certificate")), ErrUnreachable},
		"error table":         {fmt.Errorf("%w: boom", errQueryTable), errBadQuery},
		"undecodable":         {errors.New(`_value "x": invalid syntax`), errBadQuery},
		"cancelled":           {ihttp.NewError(&url.Error{Op: "Post", URL: "http://x", Err: context.Canceled}), nil},
	} {
		t.Run(name, func(t *testing.T) {
			got := classify("op", tc.err)
			if !errors.Is(got, tc.err) {
				t.Errorf("classify(%v) = %v does not wrap the cause", tc.err, got)
			}
			for _, s := range []error{errAuth, ErrUnreachable, errBadQuery, ErrEmpty, errInvalid} {
				if errors.Is(got, s) != (s == tc.want) {
					t.Errorf("classify(%v) = %v: errors.Is(%v) = %v", tc.err, got, s, errors.Is(got, s))
				}
			}
		})
	}
}
