package queue_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/colocd/colocd/queue"
)

// TestFieldErrorRefused: every *FieldError is ErrInvalid; only one with
// Refused set (a well-formed value the configuration does not allow) is
// ErrRefused, also when wrapped.
func TestFieldErrorRefused(t *testing.T) {
	for name, tt := range map[string]struct {
		err           error
		invalid, refd bool
	}{
		"malformed":         {&queue.FieldError{Field: "kind", Reason: "x"}, true, false},
		"refused":           {&queue.FieldError{Field: "submit.env", Reason: "x", Refused: true}, true, true},
		"refused, wrapped":  {fmt.Errorf("prepare: %w", &queue.FieldError{Field: "queue", Reason: "x", Refused: true}), true, true},
		"not a field error": {errors.New("x"), false, false},
	} {
		t.Run(name, func(t *testing.T) {
			if got := errors.Is(tt.err, queue.ErrInvalid); got != tt.invalid {
				t.Errorf("errors.Is(ErrInvalid) = %v, want %v", got, tt.invalid)
			}
			if got := errors.Is(tt.err, queue.ErrRefused); got != tt.refd {
				t.Errorf("errors.Is(ErrRefused) = %v, want %v", got, tt.refd)
			}
		})
	}
}
