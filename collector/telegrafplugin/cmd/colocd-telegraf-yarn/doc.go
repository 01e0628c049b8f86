// Command colocd-telegraf-yarn runs the yarn_containers input under
// Telegraf's execd input, speaking line protocol on stdout.
//
//	[[inputs.execd]]
//	  command = ["colocd-telegraf-yarn", "-config", "/etc/telegraf/colocd-telegraf-yarn.conf"]
//	  signal = "STDIN"
//
// With signal = "STDIN" Telegraf asks for a gather each interval; the
// default -poll_interval 0 then leaves the timing to Telegraf. The config
// file holds one [[inputs.yarn_containers]] table (see
// plugins/inputs/yarncontainers/sample.conf); without -config the plugin
// runs with its defaults.
package main
