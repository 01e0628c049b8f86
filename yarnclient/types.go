package yarnclient

import (
	"encoding/json"
	"strings"
)

// The types below mirror the JSON objects of ResourceManagerRest.md and
// NodeManagerRest.md (apache/hadoop, hadoop-yarn-site). Field names are the
// documented ones; the Go names only add Go casing. They are the union of the
// Hadoop 2.7 and 3.x shapes: a field a version does not send stays zero (or nil
// for the 3.x objects), so one type decodes both. Times are milliseconds since
// the epoch and memory is in MB, as documented; both are int64 because cluster
// timestamps and cluster-wide memory overflow 32 bits.

// ClusterInfo is GET /ws/v1/cluster/info: {"clusterInfo":{...}}.
type ClusterInfo struct {
	ID                            int64  `json:"id"`
	StartedOn                     int64  `json:"startedOn"`
	State                         string `json:"state"`   // NOTINITED, INITED, STARTED, STOPPED
	HAState                       string `json:"haState"` // INITIALIZING, ACTIVE, STANDBY, STOPPED
	RMStateStoreName              string `json:"rmStateStoreName,omitempty"`
	ResourceManagerVersion        string `json:"resourceManagerVersion"`
	ResourceManagerBuildVersion   string `json:"resourceManagerBuildVersion"`
	ResourceManagerVersionBuiltOn string `json:"resourceManagerVersionBuiltOn"`
	HadoopVersion                 string `json:"hadoopVersion"`
	HadoopBuildVersion            string `json:"hadoopBuildVersion"`
	HadoopVersionBuiltOn          string `json:"hadoopVersionBuiltOn"`
	HAZooKeeperConnectionState    string `json:"haZooKeeperConnectionState,omitempty"`
}

// ClusterMetrics is GET /ws/v1/cluster/metrics: {"clusterMetrics":{...}}.
// The *AcrossPartition fields are the 3.x ResourceInfo objects
// (ClusterMetricsInfo.java); they are nil on 2.x and on schedulers that do not
// fill them.
type ClusterMetrics struct {
	AppsSubmitted int `json:"appsSubmitted"`
	AppsCompleted int `json:"appsCompleted"`
	AppsPending   int `json:"appsPending"`
	AppsRunning   int `json:"appsRunning"`
	AppsFailed    int `json:"appsFailed"`
	AppsKilled    int `json:"appsKilled"`

	ReservedMB  int64 `json:"reservedMB"`
	AvailableMB int64 `json:"availableMB"`
	AllocatedMB int64 `json:"allocatedMB"`
	PendingMB   int64 `json:"pendingMB"`
	TotalMB     int64 `json:"totalMB"`

	ReservedVirtualCores  int64 `json:"reservedVirtualCores"`
	AvailableVirtualCores int64 `json:"availableVirtualCores"`
	AllocatedVirtualCores int64 `json:"allocatedVirtualCores"`
	PendingVirtualCores   int64 `json:"pendingVirtualCores"`
	TotalVirtualCores     int64 `json:"totalVirtualCores"`

	ContainersAllocated int `json:"containersAllocated"`
	ContainersReserved  int `json:"containersReserved"`
	ContainersPending   int `json:"containersPending"`

	TotalNodes           int `json:"totalNodes"`
	ActiveNodes          int `json:"activeNodes"`
	LostNodes            int `json:"lostNodes"`
	UnhealthyNodes       int `json:"unhealthyNodes"`
	DecommissioningNodes int `json:"decommissioningNodes"`
	DecommissionedNodes  int `json:"decommissionedNodes"`
	RebootedNodes        int `json:"rebootedNodes"`
	ShutdownNodes        int `json:"shutdownNodes"`

	TotalUsedResourcesAcrossPartition       *ResourceInfo `json:"totalUsedResourcesAcrossPartition,omitempty"`
	TotalClusterResourcesAcrossPartition    *ResourceInfo `json:"totalClusterResourcesAcrossPartition,omitempty"`
	TotalReservedResourcesAcrossPartition   *ResourceInfo `json:"totalReservedResourcesAcrossPartition,omitempty"`
	TotalAllocatedContainersAcrossPartition int           `json:"totalAllocatedContainersAcrossPartition,omitempty"`
	CrossPartitionMetricsAvailable          bool          `json:"crossPartitionMetricsAvailable,omitempty"`
}

// ResourceInfo is the documented resource object {"memory":MB,"vCores":n}; 3.x
// adds resourceInformations for resource types beyond memory and vcores. It is
// also the resource object of a submission and of new-application's
// maximum-resource-capability.
type ResourceInfo struct {
	Memory               int64                 `json:"memory"`
	VCores               int64                 `json:"vCores"`
	ResourceInformations *resourceInformations `json:"resourceInformations,omitempty"`
}

// resourceInformations is 3.x's {"resourceInformation":[...]} wrapper.
type resourceInformations struct {
	ResourceInformation []resourceInformation `json:"resourceInformation"`
}

// resourceInformation is one resource type of a 3.x ResourceInfo.
type resourceInformation struct {
	Name              string            `json:"name"`
	ResourceType      string            `json:"resourceType"` // COUNTABLE
	Units             string            `json:"units"`
	Value             int64             `json:"value"`
	MinimumAllocation int64             `json:"minimumAllocation"`
	MaximumAllocation int64             `json:"maximumAllocation"`
	Attributes        map[string]string `json:"attributes,omitempty"`
}

// Node is one element of GET /ws/v1/cluster/nodes: {"nodes":{"node":[...]}}.
// State is one of NEW, RUNNING, UNHEALTHY, DECOMMISSIONING, DECOMMISSIONED,
// LOST, REBOOTED, SHUTDOWN.
type Node struct {
	Rack                  string               `json:"rack"`
	State                 string               `json:"state"`
	ID                    string               `json:"id"` // host:port of the NodeManager RPC
	NodeHostName          string               `json:"nodeHostName"`
	NodeHTTPAddress       string               `json:"nodeHTTPAddress"` // host:port, no scheme
	HealthStatus          string               `json:"healthStatus,omitempty"`
	LastHealthUpdate      int64                `json:"lastHealthUpdate"`
	Version               string               `json:"version,omitempty"`
	HealthReport          string               `json:"healthReport"`
	NumContainers         int                  `json:"numContainers"`
	UsedMemoryMB          int64                `json:"usedMemoryMB"`
	AvailMemoryMB         int64                `json:"availMemoryMB"`
	UsedVirtualCores      int64                `json:"usedVirtualCores"`
	AvailableVirtualCores int64                `json:"availableVirtualCores"`
	ResourceUtilization   *ResourceUtilization `json:"resourceUtilization,omitempty"`
	TotalResource         *ResourceInfo        `json:"totalResource,omitempty"`
}

// ResourceUtilization is a 3.x node's measured use.
type ResourceUtilization struct {
	NodePhysicalMemoryMB                 int64   `json:"nodePhysicalMemoryMB"`
	NodeVirtualMemoryMB                  int64   `json:"nodeVirtualMemoryMB"`
	NodeCPUUsage                         float64 `json:"nodeCPUUsage"`
	AggregatedContainersPhysicalMemoryMB int64   `json:"aggregatedContainersPhysicalMemoryMB"`
	AggregatedContainersVirtualMemoryMB  int64   `json:"aggregatedContainersVirtualMemoryMB"`
	ContainersCPUUsage                   float64 `json:"containersCPUUsage"`
}

// App is GET /ws/v1/cluster/apps/{appid} ({"app":{...}}) and one element of
// GET /ws/v1/cluster/apps ({"apps":{"app":[...]}}). State is the
// YarnApplicationState (NEW, NEW_SAVING, SUBMITTED, ACCEPTED, RUNNING,
// FINISHED, FAILED, KILLED); FinalStatus is UNDEFINED, SUCCEEDED, FAILED or
// KILLED. ApplicationTags is the documented comma-separated string; Tags
// splits it.
type App struct {
	ID                         string  `json:"id"`
	User                       string  `json:"user"`
	Name                       string  `json:"name"`
	Queue                      string  `json:"queue"`
	State                      string  `json:"state"`
	FinalStatus                string  `json:"finalStatus"`
	Progress                   float64 `json:"progress"`
	TrackingUI                 string  `json:"trackingUI"`
	TrackingURL                string  `json:"trackingUrl"`
	Diagnostics                string  `json:"diagnostics"`
	ClusterID                  int64   `json:"clusterId"`
	ApplicationType            string  `json:"applicationType"`
	ApplicationTags            string  `json:"applicationTags"`
	Priority                   int     `json:"priority"`
	StartedTime                int64   `json:"startedTime"`
	LaunchTime                 int64   `json:"launchTime,omitempty"`
	FinishedTime               int64   `json:"finishedTime"`
	ElapsedTime                int64   `json:"elapsedTime"`
	AMContainerLogs            string  `json:"amContainerLogs"`
	AMHostHTTPAddress          string  `json:"amHostHttpAddress"`
	AMRPCAddress               string  `json:"amRPCAddress,omitempty"`
	AllocatedMB                int64   `json:"allocatedMB"`
	AllocatedVCores            int64   `json:"allocatedVCores"`
	ReservedMB                 int64   `json:"reservedMB,omitempty"`
	ReservedVCores             int64   `json:"reservedVCores,omitempty"`
	RunningContainers          int     `json:"runningContainers"`
	MemorySeconds              int64   `json:"memorySeconds"`
	VCoreSeconds               int64   `json:"vcoreSeconds"`
	QueueUsagePercentage       float64 `json:"queueUsagePercentage"`
	ClusterUsagePercentage     float64 `json:"clusterUsagePercentage"`
	PreemptedResourceMB        int64   `json:"preemptedResourceMB"`
	PreemptedResourceVCores    int64   `json:"preemptedResourceVCores"`
	NumNonAMContainerPreempted int     `json:"numNonAMContainerPreempted"`
	NumAMContainerPreempted    int     `json:"numAMContainerPreempted"`
	LogAggregationStatus       string  `json:"logAggregationStatus,omitempty"`
	UnmanagedApplication       bool    `json:"unmanagedApplication"`
	ApplicationPriority        int     `json:"applicationPriority,omitempty"` // 2.8's name for priority
	AppNodeLabelExpression     string  `json:"appNodeLabelExpression"`
	AMNodeLabelExpression      string  `json:"amNodeLabelExpression"`
}

// Tags splits ApplicationTags ("a,b") into its tags; nil when there are none.
func (a App) Tags() []string { return splitTags(a.ApplicationTags) }

// HasTag reports whether the app carries tag (compared case-insensitively,
// as YARN lower-cases tags on submission).
func (a App) HasTag(tag string) bool {
	for _, t := range a.Tags() {
		if strings.EqualFold(t, strings.TrimSpace(tag)) {
			return true
		}
	}
	return false
}

// Terminal reports whether the app reached FINISHED, FAILED or KILLED.
func (a App) Terminal() bool { return TerminalState(a.State) }

// TerminalState reports whether a YarnApplicationState is final.
func TerminalState(state string) bool {
	switch strings.ToUpper(state) {
	case "FINISHED", "FAILED", "KILLED":
		return true
	}
	return false
}

// AppAttempt is one element of GET /ws/v1/cluster/apps/{appid}/appattempts
// ({"appAttempts":{"appAttempt":[...]}}). ID is the attempt number (the docs
// call it a string but every example, 2.7 and 3.x, sends a number);
// AppAttemptID is the full "appattempt_..." id that newer RMs add.
// AppAttemptState is 3.x only.
type AppAttempt struct {
	ID              int    `json:"id"`
	AppAttemptID    string `json:"appAttemptId,omitempty"`
	NodeID          string `json:"nodeId"`
	NodeHTTPAddress string `json:"nodeHttpAddress"`
	LogsLink        string `json:"logsLink"`
	ContainerID     string `json:"containerId"`
	StartTime       int64  `json:"startTime"`
	FinishedTime    int64  `json:"finishedTime,omitempty"`
	AppAttemptState string `json:"appAttemptState,omitempty"`
}

// Container is one element of the 3.x attempt-containers endpoint
// GET /ws/v1/cluster/apps/{appid}/appattempts/{appattemptid}/containers.
// The documented example quotes every number ("allocatedMB": "1536"): the RM
// serialises this DAO with Jersey's default (mapped) JSON, not the natural
// notation of the other RM objects, so numbers may arrive as strings and a
// one-element list as a bare object. The decoder accepts both.
type Container struct {
	ContainerID         string          `json:"containerId"`
	AllocatedMB         int64           `json:"allocatedMB"`
	AllocatedVCores     int64           `json:"allocatedVCores"`
	AssignedNodeID      string          `json:"assignedNodeId"`
	Priority            int             `json:"priority"`
	StartedTime         int64           `json:"startedTime"`
	FinishedTime        int64           `json:"finishedTime"`
	ElapsedTime         int64           `json:"elapsedTime"`
	LogURL              string          `json:"logUrl"`
	ContainerExitStatus int             `json:"containerExitStatus"`
	ContainerState      string          `json:"containerState"` // NEW, RUNNING, COMPLETE
	NodeHTTPAddress     string          `json:"nodeHttpAddress"`
	NodeID              string          `json:"nodeId"`
	DiagnosticsInfo     string          `json:"diagnosticsInfo,omitempty"`
	AllocatedResources  []ResourceEntry `json:"allocatedResources,omitempty"`
}

// ResourceEntry is one {"key":..., "value":...} of a container's
// allocatedResources.
type ResourceEntry struct {
	Key   string `json:"key"`
	Value int64  `json:"value"`
}

// NMContainer is one element of a NodeManager's GET /ws/v1/node/containers
// ({"containers":{"container":[...]}}). ExecutionType and ContainerLogFiles
// are 3.x only. State is the NodeManager's container state (NEW, LOCALIZING,
// LOCALIZATION_FAILED, LOCALIZED, RUNNING, EXITED_WITH_SUCCESS,
// EXITED_WITH_FAILURE, KILLING, CONTAINER_CLEANEDUP_AFTER_KILL,
// CONTAINER_RESOURCES_CLEANINGUP, DONE).
type NMContainer struct {
	ID                  string   `json:"id"`
	State               string   `json:"state"`
	ExitCode            int      `json:"exitCode"`
	Diagnostics         string   `json:"diagnostics"`
	User                string   `json:"user"`
	TotalMemoryNeededMB int64    `json:"totalMemoryNeededMB"`
	TotalVCoresNeeded   int64    `json:"totalVCoresNeeded"`
	ContainerLogsLink   string   `json:"containerLogsLink"`
	NodeID              string   `json:"nodeId"`
	ExecutionType       string   `json:"executionType,omitempty"`
	ContainerLogFiles   []string `json:"containerLogFiles,omitempty"`
}

// AppID is the id of the application the container belongs to, parsed from
// the container id; "" when the id is malformed.
func (c NMContainer) AppID() string {
	id, _ := AppIDFromContainerID(c.ID)
	return id
}

// Live reports whether the NodeManager still runs (or is starting) the
// container, i.e. it holds resources on the node.
func (c NMContainer) Live() bool {
	switch strings.ToUpper(c.State) {
	case "DONE", "EXITED_WITH_SUCCESS", "EXITED_WITH_FAILURE", "KILLING",
		"CONTAINER_CLEANEDUP_AFTER_KILL", "CONTAINER_RESOURCES_CLEANINGUP",
		"LOCALIZATION_FAILED":
		return false
	}
	return true
}

// NewApplication is the answer of POST /ws/v1/cluster/apps/new-application.
// The docs' table calls the object "maximum-resource-capabilities" but every
// example (and the JAXB name) is "maximum-resource-capability".
type NewApplication struct {
	ApplicationID             string       `json:"application-id"`
	MaximumResourceCapability ResourceInfo `json:"maximum-resource-capability"`
}

// SubmissionContext is the body of POST /ws/v1/cluster/apps (the
// application-submission-context). AMContainerSpec and the other objects colocd
// does not interpret are passed through verbatim as raw JSON, so whatever the
// submitter wrote reaches the RM unchanged. Zero values are omitted and take
// the RM's defaults, except the documented booleans.
// CancelTokensWhenComplete is not in the docs' table but in the RM's
// ApplicationSubmissionContextInfo ("cancel-tokens-when-complete"): when
// true the RM cancels the credentials' delegation tokens once the
// application ends; absent, the RM's REST API takes false and leaves them
// to expire.
type SubmissionContext struct {
	ApplicationID                           string          `json:"application-id"`
	ApplicationName                         string          `json:"application-name,omitempty"`
	Queue                                   string          `json:"queue,omitempty"`
	Priority                                int             `json:"priority,omitempty"`
	AMContainerSpec                         json.RawMessage `json:"am-container-spec,omitempty"`
	UnmanagedAM                             bool            `json:"unmanaged-AM"`
	CancelTokensWhenComplete                *bool           `json:"cancel-tokens-when-complete,omitempty"`
	MaxAppAttempts                          int             `json:"max-app-attempts,omitempty"`
	Resource                                *ResourceInfo   `json:"resource,omitempty"`
	ApplicationType                         string          `json:"application-type,omitempty"`
	KeepContainersAcrossApplicationAttempts bool            `json:"keep-containers-across-application-attempts"`
	ApplicationTags                         tags            `json:"application-tags,omitempty"`
	AppNodeLabelExpression                  string          `json:"app-node-label-expression,omitempty"`
	AMContainerNodeLabelExpression          string          `json:"am-container-node-label-expression,omitempty"`
	LogAggregationContext                   json.RawMessage `json:"log-aggregation-context,omitempty"`
	AttemptFailuresValidityInterval         int64           `json:"attempt-failures-validity-interval,omitempty"`
	ReservationID                           string          `json:"reservation-id,omitempty"`
	AMBlackListingRequests                  json.RawMessage `json:"am-black-listing-requests,omitempty"`
}

// AddTags adds tags (lower-cased, as YARN stores them) that are not already
// present.
func (s *SubmissionContext) AddTags(tags ...string) {
	seen := make(map[string]bool, len(s.ApplicationTags)+len(tags))
	for _, t := range s.ApplicationTags {
		seen[t] = true
	}
	for _, t := range tags {
		t = strings.ToLower(strings.TrimSpace(t))
		if t == "" || seen[t] {
			continue
		}
		seen[t] = true
		s.ApplicationTags = append(s.ApplicationTags, t)
	}
}

// Clone returns a deep copy.
func (s SubmissionContext) Clone() SubmissionContext {
	c := s
	c.AMContainerSpec = cloneRaw(s.AMContainerSpec)
	c.LogAggregationContext = cloneRaw(s.LogAggregationContext)
	c.AMBlackListingRequests = cloneRaw(s.AMBlackListingRequests)
	if s.Resource != nil {
		r := *s.Resource
		c.Resource = &r
	}
	if s.CancelTokensWhenComplete != nil {
		b := *s.CancelTokensWhenComplete
		c.CancelTokensWhenComplete = &b
	}
	if s.ApplicationTags != nil {
		c.ApplicationTags = append(tags(nil), s.ApplicationTags...)
	}
	return c
}

func cloneRaw(b json.RawMessage) json.RawMessage {
	if b == nil {
		return nil
	}
	return append(json.RawMessage(nil), b...)
}

// tags is a submission's application-tags, which the RM's JAXB mapping writes
// as {"tag":["a","b"]} (an element wrapper around repeated <tag>; see the XML
// submission example).
type tags []string

// MarshalJSON writes {"tag":[...]}.
func (t tags) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Tag []string `json:"tag"`
	}{Tag: []string(t)})
}

// UnmarshalJSON accepts {"tag":[...]}, {"tag":"one"}, a bare array, a
// comma-separated string and null.
func (t *tags) UnmarshalJSON(b []byte) error {
	b = trimSpace(b)
	switch {
	case len(b) == 0 || string(b) == "null":
		*t = nil
		return nil
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = splitTags(s)
		return nil
	case b[0] == '[':
		var l []string
		if err := json.Unmarshal(b, &l); err != nil {
			return err
		}
		*t = l
		return nil
	}
	var w struct {
		Tag oneOrMany[string] `json:"tag"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*t = tags(w.Tag)
	return nil
}

func splitTags(s string) []string {
	var out []string
	for _, t := range strings.Split(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}
