//go:build !colocd_faketime

package engine

import "time"

// Now is time.Now.
func (WallClock) Now() time.Time { return time.Now() }
