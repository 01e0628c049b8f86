package collector

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"time"
)

// InfluxDB 1.8's storage layer returns points stamped exactly at range()'s
// stop (influxdata/influxdb#19966), so every query also filters
// r._time < stop itself. The storage layer receives only the tag and field
// predicates of a filter; the time comparison stays in Flux.

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
	canon := re.String()
	if _, err := regexp.Compile(canon); err != nil { // cannot happen; keeps the promise checked
		return "", fmt.Errorf("canonical form %q of %q: %w", canon, pattern, err)
	}
	return "/" + strings.ReplaceAll(canon, "/", `\x2f`) + "/", nil
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

// fluxStrings writes a Flux array of string literals.
func fluxStrings(ss ...string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fluxString(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// member writes r["name"], Flux's record access for any column name; the
// storage layer still receives predicates written this way.
func member(name string) string { return "r[" + fluxString(name) + "]" }

// Result names of the usage query.
const (
	resultLast = "last" // newest cpu-total sample per host, from lookback
	resultCPU  = "cpu"  // mean idle and iowait per host in the window
	resultDisk = "disk" // Σ over whole disks of the mean read/write rate
	resultNet  = "net"  // Σ over interfaces of the mean recv/sent rate
)

// usageQuery is the one Flux script Usage runs for all hosts.
//
// Counters are read from lookback = from − StaleAfter so that the first
// sample inside the window has a predecessor. Each (host, device, field)
// series becomes a per-second rate with derivative(nonNegative: true): a
// counter that went backwards (a reboot) yields a null for that step, and
// the next step is taken from the reset value, so a reset never produces a
// negative or a huge rate. Only rates stamped inside [from, to) are averaged
// (a rate is stamped with the end of its interval, like Telegraf's cpu
// percentages), and the per-device means are then summed per host. Summing
// means rather than averaging sums keeps a device that lost a sample (the
// reset step) from pulling the total down.
func (c *Collector) usageQuery(hosts []string, from, to time.Time) (string, error) {
	s := c.cfg.Schema
	hostRe, err := fluxRegex(hostsPattern(hosts))
	if err != nil {
		return "", fmt.Errorf("host pattern: %w", err)
	}
	bucket := fluxString(c.cfg.Bucket)
	host := member(s.HostTag)

	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("// colocd collector: mean usage of %d hosts in [start, stop)\n", len(hosts))
	w("lookback = %s\nstart = %s\nstop = %s\n\n", fluxTime(from.Add(-c.cfg.StaleAfter)), fluxTime(from), fluxTime(to))

	w("cpu = from(bucket: %s)\n", bucket)
	w("\t|> range(start: lookback, stop: stop)\n")
	w("\t|> filter(fn: (r) => r._measurement == %s and %s == %s and (r._field == %s or r._field == %s) and %s =~ %s and r._time < stop)\n",
		fluxString(s.CPUMeasurement), member(s.CPUTag), fluxString(s.CPUTotal),
		fluxString(s.CPUIdleField), fluxString(s.CPUIOWaitField), host, hostRe)
	w("cpu\n\t|> filter(fn: (r) => r._field == %s)\n\t|> last()\n", fluxString(s.CPUIdleField))
	w("\t|> keep(columns: %s)\n\t|> yield(name: %q)\n", fluxStrings("_time", s.HostTag), resultLast)
	w("cpu\n\t|> filter(fn: (r) => r._time >= start)\n\t|> mean()\n")
	w("\t|> keep(columns: %s)\n\t|> yield(name: %q)\n\n", fluxStrings("_field", "_value", s.HostTag), resultCPU)

	counters := func(result, measurement, read, write, tag, include, exclude string, extra ...string) error {
		preds := []string{
			"r._measurement == " + fluxString(measurement),
			fmt.Sprintf("(r._field == %s or r._field == %s)", fluxString(read), fluxString(write)),
			host + " =~ " + hostRe,
		}
		for _, p := range []struct{ op, pat string }{{"=~", include}, {"!~", exclude}} {
			if p.pat == "" {
				continue
			}
			re, err := fluxRegex(p.pat)
			if err != nil {
				return fmt.Errorf("%s pattern: %w", result, err)
			}
			preds = append(preds, member(tag)+" "+p.op+" "+re)
		}
		preds = append(preds, extra...)
		w("from(bucket: %s)\n", bucket)
		w("\t|> range(start: lookback, stop: stop)\n")
		w("\t|> filter(fn: (r) => %s)\n", strings.Join(preds, " and "))
		w("\t|> derivative(unit: 1s, nonNegative: true)\n")
		w("\t|> filter(fn: (r) => r._time >= start and r._time < stop)\n")
		w("\t|> mean()\n")
		w("\t|> group(columns: %s)\n", fluxStrings(s.HostTag, "_field"))
		w("\t|> sum()\n")
		w("\t|> yield(name: %q)\n\n", result)
		return nil
	}
	if err := counters(resultDisk, s.DiskMeasurement, s.DiskReadField, s.DiskWriteField,
		s.DiskNameTag, "", c.cfg.diskExclude); err != nil {
		return "", err
	}
	// interface="all" carries Telegraf's protocol counters, never bytes;
	// excluding it always keeps a site's own exclude list from mattering.
	if err := counters(resultNet, s.NetMeasurement, s.NetRecvField, s.NetSentField,
		s.NetInterfaceTag, c.cfg.netInclude, c.cfg.netExclude,
		member(s.NetInterfaceTag)+` != "all"`); err != nil {
		return "", err
	}
	return b.String(), nil
}

// colocationsQuery lists, per host and kind, the largest container count of
// any yarn_containers point in [from, to).
func (c *Collector) colocationsQuery(from, to time.Time) string {
	s := c.cfg.Schema
	var b strings.Builder
	fmt.Fprintf(&b, "// colocd collector: job kinds per host in [start, stop)\n")
	fmt.Fprintf(&b, "from(bucket: %s)\n", fluxString(c.cfg.Bucket))
	fmt.Fprintf(&b, "\t|> range(start: %s, stop: %s)\n", fluxTime(from), fluxTime(to))
	fmt.Fprintf(&b, "\t|> filter(fn: (r) => r._measurement == %s and r._field == %s and r._time < %s)\n",
		fluxString(s.ContainersMeasurement), fluxString(s.ContainersField), fluxTime(to))
	fmt.Fprintf(&b, "\t|> group(columns: %s)\n", fluxStrings(s.HostTag, s.ContainersKindTag))
	fmt.Fprintf(&b, "\t|> max()\n")
	fmt.Fprintf(&b, "\t|> keep(columns: %s)\n", fluxStrings(s.HostTag, s.ContainersKindTag, "_value"))
	return b.String()
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
