package yarnclient

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDecodeNMContainersExported(t *testing.T) {
	epoch := NMContainer{ID: "container_e17_1410901177871_0001_01_000005", State: "RUNNING",
		TotalMemoryNeededMB: 1024, TotalVCoresNeeded: 1, NodeID: "host:8041", User: "u"}
	tests := map[string]struct {
		body string
		want []NMContainer
	}{
		// Jersey's mapped notation writes a one-element list as a bare object.
		"one element as an object": {
			`{"containers":{"container":{"id":"container_e17_1410901177871_0001_01_000005","state":"RUNNING",` +
				`"totalMemoryNeededMB":1024,"totalVCoresNeeded":1,"nodeId":"host:8041","user":"u"}}}`,
			[]NMContainer{epoch},
		},
		"numbers as strings": {
			`{"containers":{"container":[{"id":"container_e17_1410901177871_0001_01_000005","state":"RUNNING",` +
				`"totalMemoryNeededMB":"1024","totalVCoresNeeded":"1","nodeId":"host:8041","user":"u","exitCode":"0"}]}}`,
			[]NMContainer{epoch},
		},
		"idle, empty object": {`{"containers":{}}`, nil},
		"idle, null":         {`{"containers":null}`, nil},
		"idle, empty string": {`{"containers":{"container":""}}`, nil},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := DecodeNMContainers([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
	t.Run("documented", func(t *testing.T) {
		got, err := DecodeNMContainers(readTestdata(t, "nm-containers/hadoop-3.json"))
		if err != nil {
			t.Fatal(err)
		}
		want, err := decodeNMContainers(readTestdata(t, "nm-containers/hadoop-3.json"))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 {
			t.Errorf("decoded %d containers, want the documented 2", len(got))
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("exported and internal decoders differ (-want +got)\n%s", diff)
		}
	})
}

func TestDecodeNMContainersRejects(t *testing.T) {
	for name, body := range map[string]string{
		"empty body":          ``,
		"no containers key":   `{}`,
		"array top level":     `[]`,
		"html page":           `<html><body>Login</body></html>`,
		"container a string":  `{"containers":{"container":"x"}}`,
		"memory not a number": `{"containers":{"container":[{"id":"c","totalMemoryNeededMB":"lots"}]}}`,
		"truncated":           `{"containers":{"container":[{"id":"c"`,
	} {
		t.Run(name, func(t *testing.T) {
			got, err := DecodeNMContainers([]byte(body))
			if !errors.Is(err, errDecode) {
				t.Errorf("DecodeNMContainers(%q) = %+v, %v; want an error matching errDecode", body, got, err)
			}
			if got != nil {
				t.Errorf("DecodeNMContainers(%q) returned %+v with its error", body, got)
			}
		})
	}
}

// TestOneOrMany came from the Telegraf plugin, which had its own copy.
func TestOneOrMany(t *testing.T) {
	for in, want := range map[string][]int{`[1,2]`: {1, 2}, `3`: {3}, `null`: nil, `""`: nil, `[]`: {}} {
		var got oneOrMany[int]
		if err := got.UnmarshalJSON([]byte(in)); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if diff := cmp.Diff(want, []int(got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", in, diff)
		}
	}
	var bad oneOrMany[int]
	if err := bad.UnmarshalJSON([]byte(`"x"`)); err == nil {
		t.Error("decoded a string as an int")
	}
}
