package collector

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// checkAppUsages fails t unless the readings are sorted, one per host and
// application, named, finite and non-negative.
func checkAppUsages(t *testing.T, us []AppUsage, input string) {
	t.Helper()
	for i, u := range us {
		ok := u.Host != "" && u.AppID != ""
		for _, v := range []float64{u.CPU, u.DiskRead, u.DiskWrite} {
			ok = ok && v >= 0 && !math.IsInf(v, 0)
		}
		if i > 0 {
			p := us[i-1]
			ok = ok && (p.Host < u.Host || p.Host == u.Host && p.AppID < u.AppID)
		}
		if !ok {
			t.Fatalf("reading %d %+v of %+v from %q: not a sorted, finite, non-negative reading", i, u, us, input)
		}
	}
}

// FuzzDecodeContainerUsage: any Flux answer decodes or fails, never
// panics, and every reading it yields is well formed.
func FuzzDecodeContainerUsage(f *testing.F) {
	const header = ",result,table,_start,_stop,_time,_value,_field,_measurement,application_id,host,kind\n"
	var b strings.Builder
	b.WriteString(header)
	for i, ts := range []string{"00", "10", "20"} {
		for _, fld := range containerFields {
			b.WriteString(",counters,0,x,x,2024-03-01T12:00:" + ts + "Z," + string(rune('1'+i)) + "," + fld + ",yarn_containers,application_1_0001,a,sort\n")
		}
	}
	f.Add(b.String())
	f.Add(header + ",counters,0,x,x,2024-03-01T12:00:05Z,NaN,cpu_usage_us,yarn_containers,application_1_0002,a,\n" +
		",counters,0,x,x,2024-03-01T12:00:06Z,+Inf,cpu_usage_us,yarn_containers,application_1_0002,a,\n" +
		",counters,0,x,x,2024-03-01T12:00:07Z,-3,cpu_usage_us,yarn_containers,application_1_0002,a,\n" +
		",counters,0,x,x,2024-03-01T12:00:08Z,1e308,io_read_bytes,yarn_containers,application_1_0002,a,\n")
	f.Add(",error,reference\n,boom,\n")
	f.Add("\"unterminated")
	f.Add(",result,table,_time,_value,\n,,") // a row shorter than its header
	from := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	to := from.Add(time.Minute)
	s := DefaultSchema()
	f.Fuzz(func(t *testing.T, body string) {
		acc := newContainerUsageAcc(from, to)
		if err := decodeContainerUsage(strings.NewReader(body), s, acc); err != nil {
			return
		}
		checkAppUsages(t, acc.result(), body)
	})
}

// FuzzDecodeInfluxQLContainerUsage: the same for InfluxQL's JSON answers.
func FuzzDecodeInfluxQLContainerUsage(f *testing.F) {
	f.Add(`{"results":[{"statement_id":0,"series":[{"name":"yarn_containers","tags":{"host":"a","application_id":"application_1_0001"},` +
		`"columns":["time","cpu_usage_us","io_read_bytes","io_write_bytes","host_cpus"],` +
		`"values":[[1709294400000000000,1,2,3,4],[1709294410000000000,5,1,7,4],[1709294420000000000,9,null,8,null]]}]}]}`)
	f.Add(`{"results":[{"series":[{"name":"m","tags":{"host":"a","application_id":"x"},"columns":["time","cpu_usage_us","host_cpus"],` +
		`"values":[["2024-03-01T12:00:01Z",1e308,1],["2024-03-01T12:00:02Z",-1e308,1e-300]]}]}]}`)
	f.Add(`{"results":[{"error":"database not found"}]}`)
	f.Add(`{"results":[{"series":[{"columns":["time"],"values":[[1]]}]}]}`)
	from := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	to := from.Add(time.Minute)
	s := DefaultSchema()
	f.Fuzz(func(t *testing.T, body string) {
		acc := newContainerUsageAcc(from, to)
		err := decodeInfluxQL(strings.NewReader(body), maxValueBytes, func(st influxQLSeries) error {
			return decodeInfluxQLContainerUsage(st, s, acc)
		})
		if err != nil {
			return
		}
		checkAppUsages(t, acc.result(), body)
	})
}

// TestDecodeContainerUsage: samples out of order and across series merge
// in time order; of equal times the largest counts; a reset adds the
// post-reset value; integers differ exactly past 2^53; floats, negative
// and non-finite values; the newest host_cpus; the window's bounds.
func TestDecodeContainerUsage(t *testing.T) {
	from := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	row := func(ts, field, value, app string) string {
		return ",counters,0,2024-03-01T12:" + ts + "Z," + value + "," + field + ",a," + app + "\n"
	}
	body := ",result,table,_time,_value,_field,host,application_id\n" +
		// cpu: 10 → 30 → (reset) 5 → 25, given out of order, with a
		// duplicate time (20 at :20 loses to 30) and a NaN: 20 + 5 + 20.
		row("00:40", "cpu_usage_us", "25", "app_1") +
		row("00:10", "cpu_usage_us", "10", "app_1") +
		row("00:20", "cpu_usage_us", "20", "app_1") +
		row("00:20", "cpu_usage_us", "30", "app_1") +
		row("00:30", "cpu_usage_us", "5", "app_1") +
		row("00:35", "cpu_usage_us", "NaN", "app_1") +
		row("01:00", "cpu_usage_us", "1000", "app_1") + // at to
		row("00:00", "cpu_usage_us", "-1", "app_1") + // negative
		// read: exact integers past 2^53: 2^60 + 1 → 2^60 + 3 = 2.
		row("00:10", "io_read_bytes", "1152921504606846977", "app_1") +
		row("00:50", "io_read_bytes", "1152921504606846979", "app_1") +
		// written: floats, 1.5 → 4 → (reset) 0.5: 2.5 + 0.5.
		row("00:10", "io_write_bytes", "1.5", "app_1") +
		row("00:20", "io_write_bytes", "4", "app_1") +
		row("00:30", "io_write_bytes", "0.5", "app_1") +
		row("00:10", "host_cpus", "2", "app_1") +
		row("00:50", "host_cpus", "4", "app_1") +
		row("00:20", "host_cpus", "8", "app_1") +
		row("00:20", "other_field", "7", "app_1") +
		// app_2: one read sample: no reading.
		row("00:10", "cpu_usage_us", "1", "app_2") +
		row("00:20", "cpu_usage_us", "2", "app_2") +
		row("00:10", "io_read_bytes", "1", "app_2") +
		row("00:10", "io_write_bytes", "1", "app_2") +
		row("00:20", "io_write_bytes", "2", "app_2") +
		row("00:10", "host_cpus", "1", "app_2")
	acc := newContainerUsageAcc(from, from.Add(time.Minute))
	if err := decodeContainerUsage(strings.NewReader(body), DefaultSchema(), acc); err != nil {
		t.Fatal(err)
	}
	// Each increase scaled from its samples' span to the span plus their
	// mean spacing (at most the minute): CPU 45 µs over :10–:40, × 40/30
	// = 60 µs / 1e6 / 60 s / 4; read 2 over :10–:50, × 60/40 = 3 → 3/60;
	// written 3 over :10–:30, × 30/20 = 4.5 → 4.5/60.
	want := []AppUsage{{Host: "a", AppID: "app_1", CPU: 60 / 1e6 / 60 / 4, DiskRead: 3.0 / 60, DiskWrite: 4.5 / 60}}
	if diff := cmp.Diff(want, acc.result(), cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("readings (-want +got):\n%s", diff)
	}
}

// TestContainerUsageQueries: the reads are the documented ones.
func TestContainerUsageQueries(t *testing.T) {
	c, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	from := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	to := from.Add(time.Minute)
	wantQL := `SELECT "cpu_usage_us"::field, "io_read_bytes"::field, "io_write_bytes"::field, "host_cpus"::field ` +
		`FROM "yarn_containers" WHERE time >= '2024-03-01T12:00:00Z' AND time < '2024-03-01T12:01:00Z' GROUP BY "host", "application_id"`
	if got := c.containerUsageInfluxQL(from, to); got != wantQL {
		t.Errorf("InfluxQL\n got %s\nwant %s", got, wantQL)
	}
	wantFlux := "// colocd collector: container usage in [2024-03-01T12:00:00Z, 2024-03-01T12:01:00Z)\n" +
		"from(bucket: \"telegraf/autogen\")\n" +
		"\t|> range(start: 2024-03-01T12:00:00Z, stop: 2024-03-01T12:00:59.999999999Z)\n" +
		"\t|> filter(fn: (r) => r._measurement == \"yarn_containers\" and (r._field == \"cpu_usage_us\" or " +
		"r._field == \"io_read_bytes\" or r._field == \"io_write_bytes\" or r._field == \"host_cpus\"))\n" +
		"\t|> group()\n" +
		"\t|> yield(name: \"counters\")\n"
	if got := c.containerUsageQuery(from, to); got != wantFlux {
		t.Errorf("Flux\n got %s\nwant %s", got, wantFlux)
	}
}
