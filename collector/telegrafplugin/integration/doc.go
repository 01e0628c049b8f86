// Package integration holds the end-to-end tests of colocd's metrics path
// with the real programs: Telegraf (the shipped configs/telegraf.conf, with
// the cpu, diskio, net, mem and execd inputs, the latter running the
// colocd-telegraf-yarn binary built from this module against a fake
// NodeManager, and a fake cgroup v2 tree for its cgroup fields) writing
// into a real InfluxDB 1.8, read back by the collector (the cgroup fields
// by InfluxQL), and a learning tick of the engine that reads placement
// (learning.placement influx, a foreign application included) and usage
// from it.
//
// It lives in the plugin's module so that the daemon's module never depends
// on Telegraf. It has no non-test code and must not grow any.
package integration
