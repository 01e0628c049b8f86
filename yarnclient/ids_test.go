package yarnclient_test

import (
	"testing"

	"github.com/colocd/colocd/yarnclient"
)

// TestAppIDFromContainerIDEdges holds the cases of the Telegraf plugin's
// former copy of this parser that TestIDs does not.
func TestAppIDFromContainerIDEdges(t *testing.T) {
	for name, tt := range map[string]struct {
		container string
		want      string
	}{
		// YARN's ContainerId.fromString reads numbers (a timestamp must fit
		// a long); the application id is then written as
		// ApplicationId.toString does, seq as %04d.
		"short numbers":      {"container_1_2_3_4", "application_1_0002"},
		"missing part":       {"container_1326121700862_0006_01", ""},
		"epoch not a number": {"container_ex_1_2_3_4", ""},
		"epoch alone":        {"container_e_1_2_3_4", ""},
		"letter in seq":      {"container_1326121700862_00a6_01_000001", ""},
		"too many parts":     {"container_e1_e2_1_2_3_4", ""},
		"timestamp overflow": {"container_99999999999999999999_0001_01_000001", ""},
		"empty":              {"", ""},
	} {
		t.Run(name, func(t *testing.T) {
			got, ok := yarnclient.AppIDFromContainerID(tt.container)
			if got != tt.want || ok != (tt.want != "") {
				t.Errorf("AppIDFromContainerID(%q) = %q, %v; want %q", tt.container, got, ok, tt.want)
			}
		})
	}
}

// TestParseJobTags: the job id and kind come back from the tags JobTags
// makes (YARN lower-cases them; the job id is upper-cased again), other
// tags are ignored, and an application without colocd's tags names none.
func TestParseJobTags(t *testing.T) {
	tags := append([]string{"team-a"}, yarnclient.JobTags("01JD3X7Q8Z", "tpch-q10")...)
	if id, kind := yarnclient.ParseJobTags(tags); id != "01JD3X7Q8Z" || kind != "tpch-q10" {
		t.Errorf("ParseJobTags(%q) = %q, %q; want 01JD3X7Q8Z, tpch-q10", tags, id, kind)
	}
	if id, kind := yarnclient.ParseJobTags([]string{"team-a", "colocd-app-cmd-1-ab"}); id != "" || kind != "" {
		t.Errorf("foreign tags: %q, %q; want none", id, kind)
	}
}

func TestNodeHost(t *testing.T) {
	for in, want := range map[string]string{
		"node01.example.com:45454":       "node01.example.com",
		"http://node01.example.com:8042": "node01.example.com",
		"node01":                         "node01",
		"[2001:db8::1]:45454":            "2001:db8::1",
	} {
		if got := yarnclient.NodeHost(in); got != want {
			t.Errorf("NodeHost(%q) = %q, want %q", in, got, want)
		}
	}
}
