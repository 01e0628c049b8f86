package collector

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"time"
)

// Every value that reaches a Flux script goes through one of the functions
// below; nothing is pasted in raw.

// fluxString quotes s as a Flux string literal. Flux strings interpolate
// "${...}", so '$' is written as the byte escape \x24; quotes, backslashes
// and line breaks are escaped. s must be valid UTF-8 (config validation and
// Usage's host check guarantee it).
func fluxString(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '$':
			b.WriteString(`\x24`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// fluxRegex writes a Go regular expression as a Flux regex literal /.../.
//
// A regex literal ends at the first unescaped '/', and Flux only unescapes
// "\/" before compiling, which misreads a user's own "\\/" or "\/". So the
// pattern is first re-printed in canonical form by regexp/syntax, where '/'
// is never escaped and control characters are written as escapes, and every
// '/' then becomes the regex escape \x2f, which Flux passes through to Go's
// regexp untouched.
func fluxRegex(pattern string) (string, error) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", err
	}
	return "/" + strings.ReplaceAll(re.String(), "/", `\x2f`) + "/", nil
}

// hostsPattern matches exactly the given host names.
func hostsPattern(hosts []string) string {
	q := make([]string, len(hosts))
	for i, h := range hosts {
		q[i] = regexp.QuoteMeta(h)
	}
	return "^(?:" + strings.Join(q, "|") + ")$"
}

// fluxTime writes t as a Flux date-time literal in UTC, to the nanosecond.
func fluxTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// member writes r["name"], Flux's record access for any column name; the
// storage layer still receives predicates written this way.
func member(name string) string { return "r[" + fluxString(name) + "]" }

// usageQuery is the one Flux script Usage runs for all hosts: for each of
// cpu, diskio and net, a filtered read of the window whose predicates are
// all on tags and fields, so InfluxDB's storage layer evaluates them, then
// group() to one table, which InfluxDB 1.8 also does in storage. Rates,
// means and sums are computed by the decoder as the rows stream in.
//
// Why no derivative()/mean()/sum() in Flux: InfluxDB 1.8 runs Flux 0.65,
// whose cost is per table per transformation, and a read gives one table
// per series, about eight per host. For 1,000 hosts the all-Flux version
// (derivative, filter, mean, group, sum) cost seconds of server CPU where
// these reads cost about 0.2 s; see BenchmarkUsage.
//
// The host filter is a regex of the quoted names while there are at most
// Config.HostPatternMax hosts. Past that, in a bucket that holds little
// besides the cluster, the storage layer spends more on compiling and
// matching the alternation than on reading the few series it saves, so the
// read takes every host and the decoder keeps the requested ones.
//
// The reads stop 1 ns before the window's end: InfluxDB 1.8 returns points
// stamped exactly at range()'s stop (influxdata/influxdb#19966), which on
// Telegraf's aligned timestamps is one extra sample per series. The decoder
// still drops anything outside [from, to), so InfluxDB 2.x, whose stop is
// exclusive, gives the same answer.
//
// With all, no host is named and every host is read.
func (c *Collector) usageQuery(hosts []string, all bool, from, to time.Time) (string, error) {
	s := c.cfg.Schema
	var hostPred string
	if !all && len(hosts) <= c.cfg.HostPatternMax {
		re, err := fluxRegex(hostsPattern(hosts))
		if err != nil {
			return "", fmt.Errorf("host pattern: %w", err)
		}
		hostPred = member(s.HostTag) + " =~ " + re
	}
	fields := func(a, b string) string {
		return fmt.Sprintf("(r._field == %s or r._field == %s)", fluxString(a), fluxString(b))
	}
	cpu := []string{
		"r._measurement == " + fluxString(s.CPUMeasurement),
		member(s.CPUTag) + " == " + fluxString(s.CPUTotal),
		fields(s.CPUIdleField, s.CPUIOWaitField),
	}
	disk := []string{
		"r._measurement == " + fluxString(s.DiskMeasurement),
		fields(s.DiskReadField, s.DiskWriteField),
	}
	if c.cfg.diskExclude != "" {
		disk = append(disk, member(s.DiskNameTag)+" !~ "+c.cfg.diskExclude)
	}
	net := []string{
		"r._measurement == " + fluxString(s.NetMeasurement),
		fields(s.NetRecvField, s.NetSentField),
	}
	if c.cfg.netInclude != "" {
		net = append(net, member(s.NetInterfaceTag)+" =~ "+c.cfg.netInclude)
	}
	if c.cfg.netExclude != "" {
		net = append(net, member(s.NetInterfaceTag)+" !~ "+c.cfg.netExclude)
	}
	// interface="all" carries Telegraf's protocol counters, never bytes;
	// excluding it always keeps a site's own exclude list from mattering.
	net = append(net, member(s.NetInterfaceTag)+" != "+fluxString("all"))

	reads := []struct {
		name  string
		preds []string
	}{{resultCPU, cpu}, {resultDisk, disk}, {resultNet, net}}
	if c.cfg.Pressure {
		reads = append(reads, struct {
			name  string
			preds []string
		}{resultPressure, []string{
			"r._measurement == " + fluxString(s.PressureMeasurement),
			"(" + member(s.PressureResourceTag) + " == " + fluxString("io") + " or " +
				member(s.PressureResourceTag) + " == " + fluxString("cpu") + ")",
			member(s.PressureTypeTag) + " == " + fluxString("some"),
			"r._field == " + fluxString(s.PressureTotalField),
		}})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "// colocd collector: usage of %d hosts in [%s, %s)\n", len(hosts), fluxTime(from), fluxTime(to))
	for _, read := range reads {
		preds := read.preds
		if hostPred != "" {
			preds = append([]string{hostPred}, preds...)
		}
		fmt.Fprintf(&b, "from(bucket: %s)\n", fluxString(c.cfg.Bucket))
		fmt.Fprintf(&b, "\t|> range(start: %s, stop: %s)\n", fluxTime(from), fluxTime(readStop(from, to)))
		fmt.Fprintf(&b, "\t|> filter(fn: (r) => %s)\n", strings.Join(preds, " and "))
		fmt.Fprintf(&b, "\t|> group()\n")
		fmt.Fprintf(&b, "\t|> yield(name: %s)\n", fluxString(read.name))
	}
	return b.String(), nil
}

// Result names of the usage query.
const (
	resultCPU      = "cpu"
	resultDisk     = "disk"
	resultNet      = "net"
	resultPressure = "pressure"
)

// defaultHostPatternMax is Config.HostPatternMax's default; see usageQuery.
const defaultHostPatternMax = 200

// readStop is the stop passed to range(): 1 ns before to, see usageQuery.
func readStop(from, to time.Time) time.Time {
	if stop := to.Add(-time.Nanosecond); stop.After(from) {
		return stop
	}
	return to
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
