package collector

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/colocd/colocd/goodness"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const csvHeader = ",result,table,_start,_stop,_time,_value,_field,_measurement,host,name\n"

func diskRow(table, at, value, field, host, name string) string {
	return ",disk," + table + ",2024-03-01T12:00:00Z,2024-03-01T12:00:30Z,2024-03-01T12:00:" + at + "Z," +
		value + "," + field + ",diskio," + host + "," + name + "\n"
}

func TestDecodeUsage(t *testing.T) {
	from := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	to := from.Add(30 * time.Second)
	cpu := ",result,table,_start,_stop,_time,_value,_field,_measurement,cpu,host\n" +
		",cpu,0,x,x,2024-03-01T12:00:00Z,50,usage_idle,cpu,cpu-total,a\n" +
		",cpu,0,x,x,2024-03-01T12:00:10Z,70,usage_idle,cpu,cpu-total,a\n" +
		",cpu,0,x,x,2024-03-01T12:00:30Z,0,usage_idle,cpu,cpu-total,a\n" // at `to`: out
	for name, tc := range map[string]struct {
		body    string
		want    goodness.Usage
		wantErr error
	}{
		"interleaved series": {
			body: cpu + "\n" + csvHeader +
				diskRow("0", "00", "100", "read_bytes", "a", "sda") +
				diskRow("0", "00", "0", "read_bytes", "a", "sdb") +
				diskRow("0", "10", "1100", "read_bytes", "a", "sda") + // 100/s
				diskRow("0", "10", "500", "read_bytes", "a", "sdb") + // 50/s
				diskRow("0", "20", "1500", "read_bytes", "a", "sdb"), // 100/s → sdb 75
			want: goodness.Usage{CPU: 0.4, DiskRead: 175},
		},
		"out of order and duplicate rows are ignored": {
			body: cpu + "\n" + csvHeader +
				diskRow("0", "10", "1000", "write_bytes", "a", "sda") +
				diskRow("0", "00", "0", "write_bytes", "a", "sda") + // earlier: ignored
				diskRow("0", "10", "9", "write_bytes", "a", "sda") + // same time: ignored
				diskRow("0", "20", "2000", "write_bytes", "a", "sda"), // 100/s
			want: goodness.Usage{CPU: 0.4, DiskWrite: 100},
		},
		"unsigned beyond int64 and floats": {
			body: cpu + "\n" + csvHeader +
				diskRow("0", "00", "18446744073709540000", "read_bytes", "a", "sda") +
				diskRow("0", "10", "18446744073709550000", "read_bytes", "a", "sda") + // exact: 1000/s
				diskRow("0", "00", "1.5", "write_bytes", "a", "sda") +
				diskRow("0", "10", "21.5", "write_bytes", "a", "sda"), // 2/s
			want: goodness.Usage{CPU: 0.4, DiskRead: 1000, DiskWrite: 2},
		},
		"reset": {
			body: cpu + "\n" + csvHeader +
				diskRow("0", "00", "900000000000", "read_bytes", "a", "sda") +
				diskRow("0", "10", "10", "read_bytes", "a", "sda") + // reset: no rate
				diskRow("0", "20", "1010", "read_bytes", "a", "sda"), // 100/s
			want: goodness.Usage{CPU: 0.4, DiskRead: 100},
		},
		"error table": {
			body:    cpu + "\n,error,reference\n,panic: out of memory,42\n",
			wantErr: errQueryTable,
		},
		"bad value": {
			body:    cpu + "\n" + csvHeader + diskRow("0", "00", "x", "read_bytes", "a", "sda"),
			wantErr: errStrconv,
		},
		"bad time": {
			body:    strings.Replace(cpu, "2024-03-01T12:00:10Z", "yesterday", 1),
			wantErr: errTime,
		},
		"row before header": {
			body:    ",cpu,0,x\n",
			wantErr: errAny,
		},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := New(DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			acc := map[string]*hostAcc{"a": {}}
			err = decodeUsage(strings.NewReader(tc.body), newUsageDecoder(c.cfg.Schema, acc, false, from, to))
			if tc.wantErr != nil {
				if err == nil || (tc.wantErr != errAny && !matches(err, tc.wantErr)) {
					t.Fatalf("decodeUsage error = %v, want %v", err, tc.wantErr)
				}
				if !errors.Is(classify("op", err), errBadQuery) {
					t.Errorf("classify(%v) is not errBadQuery", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("decodeUsage: %v", err)
			}
			got, ok := acc["a"].usage()
			if !ok {
				t.Fatal("no usage")
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(1e-9, 1e-6)); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
		})
	}
}

// Sentinels for error kinds the standard library does not export.
var (
	errAny     = errors.New("any error")
	errStrconv = errors.New("strconv")
	errTime    = errors.New("time")
)

func matches(err, want error) bool {
	switch want {
	case errStrconv:
		return strings.Contains(err.Error(), "_value")
	case errTime:
		return strings.Contains(err.Error(), "_time")
	}
	return errors.Is(err, want)
}

// FuzzDecodeUsage: any body decodes or fails, never panics, and every
// usage it yields is valid.
func FuzzDecodeUsage(f *testing.F) {
	f.Add(csvHeader + diskRow("0", "00", "1", "read_bytes", "a", "sda") + diskRow("0", "10", "5", "read_bytes", "a", "sda"))
	f.Add(",result,table,_time,_value,_field,_measurement,cpu,host\n,cpu,0,2024-03-01T12:00:05Z,-5,usage_idle,cpu,cpu-total,a\n")
	f.Add(",error,reference\n,boom,\n")
	f.Add("\"unterminated")
	from := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	c, err := New(DefaultConfig())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body string) {
		acc := map[string]*hostAcc{"a": {}}
		if err := decodeUsage(strings.NewReader(body), newUsageDecoder(c.cfg.Schema, acc, false, from, from.Add(time.Minute))); err != nil {
			return
		}
		if u, ok := acc["a"].usage(); ok {
			if err := u.Validate(); err != nil {
				t.Fatalf("invalid usage %+v from %q: %v", u, body, err)
			}
		}
	})
}
