// Package yarncontainers is the yarn_containers Telegraf input: which YARN
// applications hold containers on this NodeManager, with their colocd job
// kind, so that colocd can answer "which kinds, and which other tenants'
// applications, shared node X during [t0, t1]" from InfluxDB alone.
//
// It owns reading the NodeManager's /ws/v1/node/containers and each
// application from the ResourceManager's /ws/v1/cluster/apps/<id> (cached
// while the application stays on the node), and the points it emits:
// measurement yarn_containers, tags application_id, kind (when the
// application carries a colocd-kind-<kind> tag), application_type and
// queue (for every application the ResourceManager knows, colocd's and
// other tenants'; Telegraf adds host), fields containers, memory_mb and
// vcores, and, with application_name = "field", the string field
// application_name. The name is never a tag: names are unbounded, and a
// tag value is a series. The type and queue tags were added after the
// others, which are unchanged: readers grouping by host and kind see the
// same series as before.
//
// With cgroup_dir set it also reads each live container's cgroup v2
// directory (cpu.stat, io.stat; cgroup v1 is not read) and adds the
// integer fields cpu_usage_us, io_read_bytes and io_write_bytes, sums over
// the application's containers kept monotone while the plugin runs (the
// last counters of its containers that have gone stay in the sum), and
// host_cpus, from /sys/devices/system/cpu/online. A container with a
// cpu.stat but no io.stat (the io controller not enabled for YARN's
// cgroups) makes its application's I/O unknown: its points then carry no
// I/O fields rather than a zero, which would read as no disk use.
//
// It does not own YARN's shapes: the NodeManager's container type
// (yarnclient.NMContainer) and the decoding of its answer
// (yarnclient.DecodeNMContainers), the container-id parsing
// (yarnclient.AppIDFromContainerID), the REST paths and the kind tag prefix
// come from colocd's yarnclient, so that the plugin and the daemon read
// YARN the same way. Its own policy is which containers count: those
// yarnclient calls live, and KILLING ones too.
//
// It follows Telegraf's plugin rules: no package-level state besides the
// embedded sample config and the registration Telegraf's registry needs,
// and Init validates without connecting. It must not write anywhere but
// the accumulator (and Telegraf's logger). Of colocd's packages it imports yarnclient alone
// (standard library only); the HTTP calls stay its own, with Telegraf's TLS
// options, and it never imports the daemon.
package yarncontainers
