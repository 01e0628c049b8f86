package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/influxdata/telegraf/plugins/common/shim"

	_ "github.com/colocd/colocd/collector/telegrafplugin/plugins/inputs/yarncontainers"
)

func main() {
	fs := flag.NewFlagSet(os.Args[0], flag.ExitOnError)
	configFile := fs.String("config", "", "path to the plugin's config file ([[inputs.yarn_containers]])")
	pollInterval := fs.Duration("poll_interval", 0,
		"gather on this interval as well as on each line on stdin; 0 gathers only when Telegraf signals on stdin")
	_ = fs.Parse(os.Args[1:])
	if err := run(*configFile, *pollInterval); err != nil {
		fmt.Fprintf(os.Stderr, "colocd-telegraf-yarn: %v\n", err)
		os.Exit(1)
	}
}

func run(configFile string, pollInterval time.Duration) error {
	if pollInterval < 0 {
		return fmt.Errorf("-poll_interval must not be negative, got %v", pollInterval)
	}
	s := shim.New()
	if err := s.LoadConfig(&configFile); err != nil {
		return fmt.Errorf("load config %q: %w", configFile, err)
	}
	if s.Input == nil {
		return fmt.Errorf("config %q has no [[inputs.yarn_containers]]", configFile)
	}
	return s.Run(pollInterval)
}
