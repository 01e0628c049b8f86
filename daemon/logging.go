package daemon

import "log/slog"

// replaceLogAttr is the ReplaceAttr of the daemon's log handlers: a
// time.Duration is written in its String form ("1.5s", "250ms"), which the
// text handler does already and the JSON handler does not (it writes
// nanoseconds, 1500000000). journalctl -o json and log shippers then show
// what a person reads.
func replaceLogAttr(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		return slog.String(a.Key, a.Value.Duration().String())
	}
	return a
}
