package daemon

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/colocd/colocd/collector"
	"github.com/colocd/colocd/goodness"
)

// InfluxMetrics adapts the InfluxDB collector to Metrics.
type InfluxMetrics struct {
	c *collector.Collector
}

var _ Metrics = (*InfluxMetrics)(nil)

// NewInfluxMetrics adapts c.
func NewInfluxMetrics(c *collector.Collector) *InfluxMetrics { return &InfluxMetrics{c: c} }

// Usage is one Flux query for all hosts. Stale and missing hosts are
// reported together; "no data for any host" (collector.ErrEmpty) is not an
// error here: every host is reported missing.
func (m *InfluxMetrics) Usage(ctx context.Context, hosts []string, from, to time.Time) (map[string]goodness.Usage, []string, error) {
	res, err := m.c.Usage(ctx, hosts, from, to)
	if err != nil && !errors.Is(err, collector.ErrEmpty) {
		return nil, nil, err
	}
	stale := append(slices.Clone(res.Stale), res.Missing...)
	slices.Sort(stale)
	return res.Usage, stale, nil
}

// CollectorConfig translates the influx section.
func (in InfluxConfig) CollectorConfig() collector.Config {
	s := in.Schema
	return collector.Config{
		URL: in.URL, Org: in.Org, Bucket: in.Bucket, Token: in.Token,
		Timeout: in.Timeout, StaleAfter: in.StaleAfter,
		Schema: collector.Schema{
			HostTag:        s.HostTag,
			CPUMeasurement: s.CPUMeasurement, CPUTag: s.CPUTag, CPUTotal: s.CPUTotal,
			CPUIdleField: s.CPUIdleField, CPUIOWaitField: s.CPUIOWaitField,
			DiskMeasurement: s.DiskMeasurement, DiskNameTag: s.DiskNameTag,
			DiskReadField: s.DiskReadField, DiskWriteField: s.DiskWriteField, DiskExclude: s.DiskExclude,
			NetMeasurement: s.NetMeasurement, NetInterfaceTag: s.NetInterfaceTag,
			NetRecvField: s.NetRecvField, NetSentField: s.NetSentField, NetInclude: s.NetInclude, NetExclude: s.NetExclude,
			ContainersMeasurement: s.ContainersMeasurement, ContainersKindTag: s.ContainersKindTag, ContainersField: s.ContainersField,
		},
	}
}

func schemaConfig(s collector.Schema) SchemaConfig {
	return SchemaConfig{
		HostTag:        s.HostTag,
		CPUMeasurement: s.CPUMeasurement, CPUTag: s.CPUTag, CPUTotal: s.CPUTotal,
		CPUIdleField: s.CPUIdleField, CPUIOWaitField: s.CPUIOWaitField,
		DiskMeasurement: s.DiskMeasurement, DiskNameTag: s.DiskNameTag,
		DiskReadField: s.DiskReadField, DiskWriteField: s.DiskWriteField, DiskExclude: nonNil(s.DiskExclude),
		NetMeasurement: s.NetMeasurement, NetInterfaceTag: s.NetInterfaceTag,
		NetRecvField: s.NetRecvField, NetSentField: s.NetSentField, NetInclude: nonNil(s.NetInclude), NetExclude: nonNil(s.NetExclude),
		ContainersMeasurement: s.ContainersMeasurement, ContainersKindTag: s.ContainersKindTag, ContainersField: s.ContainersField,
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return slices.Clone(s)
}
