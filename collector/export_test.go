package collector

// SetMaxHostPattern lets tests take the read-every-host path with few hosts.
func SetMaxHostPattern(c *Collector, n int) { c.maxHostPattern = n }
