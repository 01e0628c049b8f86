package daemon

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/pipeline"
)

// TestConfigServiceQueues: pipeline.fairness.queues decodes item by item
// with the same rules as every other key, and its errors name the item's
// key.
func TestConfigServiceQueues(t *testing.T) {
	const head = `
pipeline:
  fairness:
    enabled: true
    group_by: queue
    mode: curves
    queues:
`
	file := writeFile(t, "c.yaml", head+`
      - name: interactive
        level: 1
        alpha: {vcores: 0.4, memory: 0.3}
        beta: {vcores: 0.1, memory: 0.1}
        burst: 10m
      - {name: etl, Members: [etl-nightly, etl-hourly], level: 2, alpha: {vcores: 0.2, memory: 0.2}}
`)
	got, err := Load(LoadOptions{File: file})
	if err != nil {
		t.Fatal(err)
	}
	want := []pipeline.ServiceQueue{
		{Name: "interactive", Level: 1, Alpha: pipeline.Rate{VCores: 0.4, Memory: 0.3}, Beta: pipeline.Rate{VCores: 0.1, Memory: 0.1}, Burst: 10 * time.Minute},
		{Name: "etl", Members: []string{"etl-nightly", "etl-hourly"}, Level: 2, Alpha: pipeline.Rate{VCores: 0.2, Memory: 0.2}},
	}
	if diff := cmp.Diff(want, got.Pipeline.Fairness.Queues); diff != "" {
		t.Errorf("queues (-want +got):\n%s", diff)
	}
	for _, tc := range []struct{ name, items, key, mention string }{
		{"unknown key", "      - {name: a, level: 1, alfa: {vcores: 0.1}}\n", "pipeline.fairness.queues[0].alfa", "unknown key"},
		{"unknown nested key", "      - {name: a, level: 1, alpha: {cpu: 0.1}}\n", "pipeline.fairness.queues[0].alpha.cpu", "unknown key"},
		{"wrong type", "      - {name: a, level: one}\n", "pipeline.fairness.queues[0].level", "one"},
		{"bad duration", "      - {name: a, level: 1, alpha: {vcores: 0.2}, beta: {vcores: 0.1}, burst: 10}\n", "pipeline.fairness.queues[0].burst", "duration"},
		{"not a mapping", "      - interactive\n", "pipeline.fairness.queues[0]", "mapping"},
		{"queue rule", "      - {name: a, level: 1, alpha: {vcores: 0.2}, beta: {vcores: 0.3}}\n", "pipeline.fairness.queues[0].beta", "α ≥ β"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(LoadOptions{File: writeFile(t, "c.yaml", head+tc.items)})
			var ce *configError
			if !errors.As(err, &ce) || ce.Key != tc.key || !strings.Contains(err.Error(), tc.mention) {
				t.Errorf("Load: %v; want a config error on %s mentioning %q", err, tc.key, tc.mention)
			}
		})
	}
	t.Run("not from the environment", func(t *testing.T) {
		_, err := Load(LoadOptions{Environ: environ(map[string]string{"COLOCD_PIPELINE_FAIRNESS_QUEUES": "a"})})
		if err == nil || !strings.Contains(err.Error(), "config file only") {
			t.Errorf("Load with the queues in the environment: %v", err)
		}
	})
}
