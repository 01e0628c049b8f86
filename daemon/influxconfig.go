package daemon

import (
	"slices"

	"github.com/colocd/colocd/collector"
)

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
