package yarntest

import (
	"fmt"
	"net/http"
	"strings"
)

// SetStandby makes the fake act as a standby RM: every call except
// /ws/v1/cluster/info (which reports haState STANDBY) is answered with a
// redirect to the active URL (SetActiveURL), as RMWebAppFilter does.
func (f *FakeRM) SetStandby(standby bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.standby = standby
}

// SetActiveURL sets where a standby fake redirects; "" means no active RM is
// known.
func (f *FakeRM) SetActiveURL(u string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.activeURL = strings.TrimRight(u, "/")
}

// serveStandby answers like RMWebAppFilter on a standby RM.
func (f *FakeRM) serveStandby(w http.ResponseWriter, r *http.Request, active string) {
	w.Header().Set("Content-Type", "text/plain; charset=UTF-8")
	uri := r.URL.RequestURI()
	if f.opts.hadoop2 {
		if active == "" {
			fmt.Fprintln(w, "There is no active RM right now.")
			return
		}
		target := active + r.URL.Path
		w.Header().Set("Refresh", "3; url="+target)
		fmt.Fprintln(w, "This is standby RM. Redirecting to the current active RM: "+target)
		return
	}
	if active == "" {
		w.Header().Set("Refresh", "5;url="+f.URL()+uri)
		w.WriteHeader(http.StatusTemporaryRedirect)
		fmt.Fprintln(w, "Can not find any active RM. Will retry in next 5 seconds.\nHA Zookeeper Connection State: CONNECTED")
		return
	}
	w.Header().Set("Location", active+uri)
	w.WriteHeader(http.StatusTemporaryRedirect)
	fmt.Fprintln(w, "This is standby RM. The redirect url is: "+uri)
}
