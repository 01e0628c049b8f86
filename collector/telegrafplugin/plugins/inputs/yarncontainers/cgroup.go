package yarncontainers

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/influxdata/telegraf"
)

// The fields a point carries with cgroup_dir set.
const (
	fieldCPUUsageUS   = "cpu_usage_us"
	fieldIOReadBytes  = "io_read_bytes"
	fieldIOWriteBytes = "io_write_bytes"
	fieldHostCPUs     = "host_cpus"
)

// defaultCPUOnline lists this host's online CPUs ("0-3,8-11").
const defaultCPUOnline = "/sys/devices/system/cpu/online"

// maxCgroupFile bounds what is read from one cgroup or sysfs file.
const maxCgroupFile = 64 << 10

// counters are a container's cgroup v2 counters, or sums of them. io
// reports that a container's I/O counters were read: its io.stat exists,
// the io controller being enabled for its cgroup.
type counters struct {
	cpuUS, readBytes, writeBytes int64
	io                           bool
}

// plus adds o's counters, saturating at math.MaxInt64 (io is c's).
func (c counters) plus(o counters) counters {
	add := func(a, b int64) int64 {
		if a > math.MaxInt64-b {
			return math.MaxInt64
		}
		return a + b
	}
	return counters{add(c.cpuUS, o.cpuUS), add(c.readBytes, o.readBytes), add(c.writeBytes, o.writeBytes), c.io}
}

// atLeast is c with each counter raised to o's, and io if either read it:
// a container's counters never go down while it is seen, even if a read
// races its removal (an io.stat already gone keeps the I/O last read).
func (c counters) atLeast(o counters) counters {
	return counters{max(c.cpuUS, o.cpuUS), max(c.readBytes, o.readBytes), max(c.writeBytes, o.writeBytes), c.io || o.io}
}

// appCgroups is what the plugin keeps of one application's containers
// while it has live containers here.
type appCgroups struct {
	// done sums the last counters read of its containers that are gone:
	// left the NodeManager's live list, or their cgroup directory.
	done counters
	// last holds each live container's counters as last read.
	last map[string]counters
	// retired are live containers whose directory vanished after they
	// were read: their counters are in done, and they are not read again.
	retired map[string]bool
	// noIO is set once a container of the application was read without
	// an io.stat it never had (the io controller is not enabled for YARN's
	// cgroups): from then on the application's I/O is not known, and its
	// points carry no I/O fields. A zero would read as "no disk use".
	noIO bool
}

// errGone marks a container whose cgroup directory or cpu.stat does not
// exist: not created yet, or already cleaned up.
var errGone = errors.New("cgroup gone")

// cgroupUsage reads the cgroups of an application's live containers (ids)
// and returns the application's counters: those of its live containers
// plus the last ones read of its containers that have gone, with io set
// unless some container's I/O is not known (appCgroups.noIO). ok is
// false when none of ids could be read this time. A malformed file is
// reported to acc and its container skipped (its last reading, if any,
// kept).
func (y *YarnContainers) cgroupUsage(acc telegraf.Accumulator, app string, ids []string) (sum counters, ok bool) {
	st := y.cgroups[app]
	if st == nil {
		st = &appCgroups{}
		y.cgroups[app] = st
	}
	live := make(map[string]counters, len(ids))
	retired := map[string]bool{}
	for _, id := range ids {
		if st.retired[id] {
			retired[id] = true
			continue
		}
		prev, seen := st.last[id]
		c, err := readContainer(filepath.Join(y.CgroupDir, id))
		switch {
		case errors.Is(err, errGone):
			if seen {
				retired[id] = true // its last counters go to done below
			}
			continue
		case err != nil:
			acc.AddError(err)
			if seen {
				live[id] = prev
			}
			continue
		}
		ok = true
		live[id] = c.atLeast(prev)
		if !live[id].io && !st.noIO {
			st.noIO = true
			y.warnNoIO(id)
		}
	}
	for id, c := range st.last {
		if _, still := live[id]; !still {
			st.done = st.done.plus(c)
		}
	}
	st.last, st.retired = live, retired
	if !ok {
		return counters{}, false
	}
	sum = st.done
	for _, c := range live {
		sum = sum.plus(c)
	}
	sum.io = !st.noIO
	return sum, true
}

// warnNoIO logs, once while the plugin runs, that container id's cgroup
// has no io.stat.
func (y *YarnContainers) warnNoIO(id string) {
	if y.warnedNoIO || y.Log == nil {
		return
	}
	y.warnedNoIO = true
	y.Log.Warnf("cgroup_dir: %s has cpu.stat but no io.stat: the io controller is not enabled for YARN's cgroups "+
		"(add \"+io\" to cgroup.subtree_control above them); applications with such containers get no %s and %s fields",
		filepath.Join(y.CgroupDir, id), fieldIOReadBytes, fieldIOWriteBytes)
}

// readContainer reads one container's cgroup v2 directory: usage_usec
// from cpu.stat (errGone when missing), and rbytes and wbytes summed over
// io.stat's devices, with io set. An io.stat missing where cpu.stat still
// is leaves io unset: no io controller, or (for a container whose I/O was
// read before) a removal under way; a cpu.stat gone by then is errGone.
func readContainer(dir string) (counters, error) {
	var c counters
	path := filepath.Join(dir, "cpu.stat")
	b, err := readCapped(path)
	if err != nil {
		return c, err
	}
	if c.cpuUS, err = parseCPUStat(b); err != nil {
		return c, fmt.Errorf("cgroup: %s: %w", path, err)
	}
	path = filepath.Join(dir, "io.stat")
	b, err = readCapped(path)
	switch {
	case errors.Is(err, errGone):
		if _, err := os.Stat(filepath.Join(dir, "cpu.stat")); errors.Is(err, fs.ErrNotExist) {
			return c, fmt.Errorf("%s: %w", dir, errGone)
		}
		return c, nil
	case err != nil:
		return c, err
	}
	if c.readBytes, c.writeBytes, err = parseIOStat(b); err != nil {
		return c, fmt.Errorf("cgroup: %s: %w", path, err)
	}
	c.io = true
	return c, nil
}

// readCapped reads a file of at most maxCgroupFile bytes; a file that does
// not exist (or whose cgroup was removed while it was read) is errGone.
func readCapped(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err == nil {
		defer f.Close()
		var b []byte
		b, err = io.ReadAll(io.LimitReader(f, maxCgroupFile+1))
		if err == nil {
			if len(b) > maxCgroupFile {
				return nil, fmt.Errorf("cgroup: %s: larger than %d bytes", path, maxCgroupFile)
			}
			return b, nil
		}
	}
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENODEV) {
		return nil, fmt.Errorf("%s: %w", path, errGone)
	}
	return nil, fmt.Errorf("cgroup: %w", err)
}

// parseCPUStat returns cpu.stat's usage_usec.
func parseCPUStat(b []byte) (int64, error) {
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "usage_usec" {
			continue
		}
		if len(f) != 2 {
			return 0, fmt.Errorf("usage_usec line %q: want one number", strings.TrimSpace(line))
		}
		return parseCounter("usage_usec", f[1])
	}
	return 0, errors.New("no usage_usec line")
}

// parseIOStat sums io.stat's rbytes and wbytes over its devices, one a
// line: "8:0 rbytes=1459200 wbytes=314773504 rios=192 …". Other keys are
// not read.
func parseIOStat(b []byte) (read, write int64, err error) {
	var sum counters
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		for _, kv := range f[1:] {
			k, v, _ := strings.Cut(kv, "=")
			if k != "rbytes" && k != "wbytes" {
				continue
			}
			n, err := parseCounter(k, v)
			if err != nil {
				return 0, 0, fmt.Errorf("device %s: %w", f[0], err)
			}
			if k == "rbytes" {
				sum = sum.plus(counters{readBytes: n})
			} else {
				sum = sum.plus(counters{writeBytes: n})
			}
		}
	}
	return sum.readBytes, sum.writeBytes, nil
}

// parseCounter parses a non-negative decimal counter.
func parseCounter(key, v string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s %q: not a non-negative integer", key, v)
	}
	return n, nil
}

// hostCPUs is the number of online CPUs from y.cpuOnline, or
// runtime.NumCPU() when it cannot be read or parsed.
func (y *YarnContainers) hostCPUs() int64 {
	b, err := readCapped(y.cpuOnline)
	if err == nil {
		var n int
		if n, err = parseCPUList(string(b)); err == nil {
			return int64(n)
		}
	}
	return int64(runtime.NumCPU())
}

// maxCPUs bounds parseCPUList's count, and each CPU number.
const maxCPUs = 1 << 20

// parseCPUList counts the CPUs in a kernel CPU list: "0-3,8-11" is 8.
func parseCPUList(s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("empty CPU list")
	}
	n := 0
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a < 0 || b < a || b >= maxCPUs {
			return 0, fmt.Errorf("CPU list %q: bad element %q", s, part)
		}
		n += b - a + 1
		if n > maxCPUs {
			return 0, fmt.Errorf("CPU list %q: more than %d CPUs", s, maxCPUs)
		}
	}
	return n, nil
}
