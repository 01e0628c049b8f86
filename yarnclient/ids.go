package yarnclient

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// YARN id formats (ApplicationId, ApplicationAttemptId and ContainerId
// toString in hadoop-yarn-api):
//
//	application_<clusterTimestamp>_<seq %04d>
//	appattempt_<clusterTimestamp>_<seq %04d>_<attempt %06d>
//	container_[e<epoch>_]<clusterTimestamp>_<seq %04d>_<attempt %02d>_<id %06d>
//
// The e<epoch> part appears after an RM restart with work-preserving recovery.

// parseAppID splits application_<ts>_<seq>.
func parseAppID(id string) (ts, seq int64, ok bool) {
	rest, found := strings.CutPrefix(id, "application_")
	if !found {
		return 0, 0, false
	}
	a, b, found := strings.Cut(rest, "_")
	if !found {
		return 0, 0, false
	}
	ts, err1 := strconv.ParseInt(a, 10, 64)
	seq, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || ts < 0 || seq < 0 || !digits(a) || !digits(b) {
		return 0, 0, false
	}
	return ts, seq, true
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// FormatAppID formats an application id the way YARN does.
func FormatAppID(clusterTimestamp int64, seq int) string {
	return fmt.Sprintf("application_%d_%04d", clusterTimestamp, seq)
}

// AttemptID builds the appattempt_... id of attempt number n of appID, for
// RMs whose attempt list carries only the number (2.x).
func AttemptID(appID string, n int) (string, error) {
	ts, seq, ok := parseAppID(appID)
	if !ok {
		return "", fmt.Errorf("%w: appID: %q is not an application id", ErrInvalid, appID)
	}
	if n <= 0 {
		return "", fmt.Errorf("%w: attempt number: %d must be positive", ErrInvalid, n)
	}
	return fmt.Sprintf("appattempt_%d_%04d_%06d", ts, seq, n), nil
}

// AppIDFromContainerID returns the application id a container id belongs to.
func AppIDFromContainerID(containerID string) (string, bool) {
	rest, found := strings.CutPrefix(containerID, "container_")
	if !found {
		return "", false
	}
	parts := strings.Split(rest, "_")
	if len(parts) == 5 && strings.HasPrefix(parts[0], "e") && digits(parts[0][1:]) {
		parts = parts[1:]
	}
	if len(parts) != 4 {
		return "", false
	}
	for _, p := range parts {
		if !digits(p) {
			return "", false
		}
	}
	ts, err1 := strconv.ParseInt(parts[0], 10, 64)
	seq, err2 := strconv.ParseInt(parts[1], 10, 64)
	if err1 != nil || err2 != nil {
		return "", false
	}
	return FormatAppID(ts, int(seq)), true
}

// Tag prefixes colocd puts on every application it starts.
const (
	// ReservedTagPrefix starts every tag colocd puts on an application;
	// a job's own submission may carry none (IsReservedTag).
	ReservedTagPrefix = "colocd-"
	TagJobPrefix      = "colocd-job-"
	TagKindPrefix     = "colocd-kind-"
	// maxTagLength is YARN's limit on one application tag
	// (YarnConfiguration.APPLICATION_MAX_TAG_LENGTH).
	maxTagLength = 100
)

// JobTags returns the tags that mark an application as colocd job jobID of
// kind: "colocd-job-<id>" and "colocd-kind-<kind>". YARN lower-cases tags
// and splits them on commas, so both are lower-cased, characters outside
// printable ASCII and commas become '_', and each is cut to YARN's 100
// characters.
func JobTags(jobID, kind string) []string {
	return []string{tagOf(TagJobPrefix, jobID), tagOf(TagKindPrefix, kind)}
}

// ParseJobTags is JobTags's inverse: the job id and kind an application's
// tags name ("" where a tag is absent). The job id is upper-cased again
// (job ids are upper-case ULIDs; YARN lower-cases tags).
func ParseJobTags(tags []string) (jobID, kind string) {
	for _, t := range tags {
		switch {
		case strings.HasPrefix(t, TagJobPrefix):
			jobID = strings.ToUpper(strings.TrimPrefix(t, TagJobPrefix))
		case strings.HasPrefix(t, TagKindPrefix):
			kind = strings.TrimPrefix(t, TagKindPrefix)
		}
	}
	return jobID, kind
}

// IsReservedTag reports whether tag, or a part of it between commas (YARN
// reports an application's tags comma-separated, so a comma inside one
// makes two), starts with ReservedTagPrefix, ignoring case and the spaces
// YARN trims.
func IsReservedTag(tag string) bool {
	for part := range strings.SplitSeq(tag, ",") {
		if strings.HasPrefix(strings.ToLower(strings.TrimSpace(part)), ReservedTagPrefix) {
			return true
		}
	}
	return false
}

func tagOf(prefix, v string) string {
	var b strings.Builder
	b.WriteString(prefix)
	for _, r := range strings.ToLower(strings.TrimSpace(v)) {
		if r < 0x21 || r > 0x7e || r == ',' {
			r = '_'
		}
		b.WriteRune(r)
	}
	s := b.String()
	if len(s) > maxTagLength {
		s = s[:maxTagLength]
	}
	return s
}

// NodeHost is colocd's one name for a YARN node: the host of its node id
// ("host:port", as in "node01.example.com:45454"; a scheme, as in a web
// address, is dropped). The RM's node list, application attempts'
// containers and the NodeManagers all report the node id, so every part of
// colocd names a node the same way. The metrics source's name for the same
// machine is derived from it by metrics.hosts (internal/metricsource).
func NodeHost(nodeID string) string {
	s := nodeID
	if i := strings.Index(s, "://"); i >= 0 {
		s = s[i+3:]
	}
	if h, _, err := net.SplitHostPort(s); err == nil {
		return h
	}
	return s
}
