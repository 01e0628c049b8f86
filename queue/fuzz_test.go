package queue_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/colocd/colocd/queue"
)

// FuzzJobValidate: decoding and validating any JSON never panics, and a
// rejection is always a *FieldError naming a field.
func FuzzJobValidate(f *testing.F) {
	f.Add([]byte(`{"kind":"tpch-q10","user":"alice","resources":{"containers":2,"memory_mb":1024,"vcores":1}}`))
	f.Add([]byte(`{"kind":"x","labels":{"a":"\u0000"},"deadline":"0001-01-01T00:00:00Z"}`))
	f.Add([]byte(`{"kind":"","state":"bogus","idempotency_key":" "}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var j queue.Job
		if json.Unmarshal(b, &j) != nil {
			return
		}
		err := j.Validate()
		var fe *queue.FieldError
		if err != nil && (!errors.As(err, &fe) || fe.Field == "" || !errors.Is(err, queue.ErrInvalid)) {
			t.Fatalf("Validate() = %v: not a FieldError naming a field", err)
		}
	})
}
