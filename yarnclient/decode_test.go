package yarnclient

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// decoders maps each testdata directory to its endpoint's decoder.
var decoders = map[string]func([]byte) (any, error){
	"cluster-info":       func(b []byte) (any, error) { return decodeClusterInfo(b) },
	"cluster-metrics":    func(b []byte) (any, error) { return decodeClusterMetrics(b) },
	"nodes":              func(b []byte) (any, error) { return decodeNodes(b) },
	"apps":               func(b []byte) (any, error) { return decodeApps(b) },
	"app":                func(b []byte) (any, error) { return decodeApp(b) },
	"app-state":          func(b []byte) (any, error) { return decodeAppState(b) },
	"appattempts":        func(b []byte) (any, error) { return decodeAppAttempts(b) },
	"attempt-containers": func(b []byte) (any, error) { return decodeContainers(b) },
	"nm-containers":      func(b []byte) (any, error) { return decodeNMContainers(b) },
	"new-application":    func(b []byte) (any, error) { return decodeNewApplication(b) },
	"history-app":        func(b []byte) (any, error) { return decodeHistoryApp(b) },
	"delegation-token":   func(b []byte) (any, error) { return decodeDelegationToken(b) },
	"webhdfs-token":      func(b []byte) (any, error) { return decodeWebHDFSToken(b) },
	"submit": func(b []byte) (any, error) {
		var s SubmissionContext
		err := json.Unmarshal(b, &s)
		return s, err
	},
	"remote-exception": func(b []byte) (any, error) {
		exc, cls, msg, ok := decodeRemoteException(b)
		if !ok {
			return nil, os.ErrInvalid
		}
		return [3]string{exc, cls, msg}, nil
	},
	"standby": func(b []byte) (any, error) {
		ok, loc := standbyAnswer(&response{status: http.StatusOK, header: http.Header{}, body: b})
		if !ok {
			return nil, os.ErrInvalid
		}
		return loc, nil
	},
}

// TestDecodeEveryTestdataFile decodes every documented payload; a file in an
// unknown directory fails, so new samples cannot be forgotten.
func TestDecodeEveryTestdataFile(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*", "*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 30 {
		t.Fatalf("found %d testdata files, want at least 30", len(files))
	}
	for _, f := range files {
		dir := filepath.Base(filepath.Dir(f))
		if dir == "fuzz" {
			continue // the fuzz corpus
		}
		t.Run(dir+"/"+filepath.Base(f), func(t *testing.T) {
			dec, ok := decoders[dir]
			if !ok {
				t.Fatalf("no decoder for testdata directory %q", dir)
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := dec(b); err != nil {
				t.Fatalf("decode %s: %v", f, err)
			}
		})
	}
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeClusterInfo(t *testing.T) {
	tests := map[string]ClusterInfo{
		"cluster-info/hadoop-2.7.json": {
			ID: 1324053971963, StartedOn: 1324053971963, State: "STARTED",
			ResourceManagerVersion:        "0.23.1-SNAPSHOT",
			ResourceManagerBuildVersion:   "0.23.1-SNAPSHOT from 1214049 by user1 source checksum 050cd664439d931c8743a6428fd6a693",
			ResourceManagerVersionBuiltOn: "Tue Dec 13 22:12:48 CST 2011",
			HadoopVersion:                 "0.23.1-SNAPSHOT",
			HadoopBuildVersion:            "0.23.1-SNAPSHOT from 1214049 by user1 source checksum 11458df3bb77342dca5f917198fad328",
			HadoopVersionBuiltOn:          "Tue Dec 13 22:12:26 CST 2011",
		},
		"cluster-info/hadoop-3.json": {
			ID: 1324053971963, StartedOn: 1324053971963, State: "STARTED", HAState: "ACTIVE",
			RMStateStoreName:              "org.apache.hadoop.yarn.server.resourcemanager.recovery.NullRMStateStore",
			ResourceManagerVersion:        "3.0.0-SNAPSHOT",
			ResourceManagerBuildVersion:   "3.0.0-SNAPSHOT from unknown by user1 source checksum 11111111111111111111111111111111",
			ResourceManagerVersionBuiltOn: "2016-01-01T01:00Z",
			HadoopVersion:                 "3.0.0-SNAPSHOT",
			HadoopBuildVersion:            "3.0.0-SNAPSHOT from unknown by user1 source checksum 11111111111111111111111111111111",
			HadoopVersionBuiltOn:          "2016-01-01T01:00Z",
			HAZooKeeperConnectionState:    "ResourceManager HA is not enabled.",
		},
	}
	for name, want := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := decodeClusterInfo(readTestdata(t, name))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestDecodeClusterMetrics(t *testing.T) {
	base := ClusterMetrics{
		AvailableMB: 17408, TotalMB: 17408, AvailableVirtualCores: 7, AllocatedVirtualCores: 1,
		TotalVirtualCores: 8, TotalNodes: 1, ActiveNodes: 1,
	}
	ri := func(mem, vc int64) *ResourceInfo {
		return &ResourceInfo{Memory: mem, VCores: vc, ResourceInformations: &resourceInformations{ResourceInformation: []resourceInformation{
			{Name: "memory-mb", ResourceType: "COUNTABLE", Units: "Mi", Value: mem, MaximumAllocation: 9223372036854775807, Attributes: map[string]string{}},
			{Name: "vcores", ResourceType: "COUNTABLE", Value: vc, MaximumAllocation: 9223372036854775807, Attributes: map[string]string{}},
		}}}
	}
	tests := map[string]ClusterMetrics{
		"cluster-metrics/hadoop-2.7.json": base,
		"cluster-metrics/hadoop-3.json":   base,
		"cluster-metrics/hadoop-3-resourceinfo.json": {
			AppsSubmitted: 12, AppsCompleted: 9, AppsPending: 1, AppsRunning: 2,
			AvailableMB: 3145728, AllocatedMB: 98304, PendingMB: 4096, TotalMB: 3244032,
			AvailableVirtualCores: 1500, AllocatedVirtualCores: 36, PendingVirtualCores: 1, TotalVirtualCores: 1536,
			ContainersAllocated: 24, ContainersPending: 1,
			TotalNodes: 48, UnhealthyNodes: 1, ActiveNodes: 47,
			TotalUsedResourcesAcrossPartition:       ri(98304, 36),
			TotalClusterResourcesAcrossPartition:    ri(3244032, 1536),
			TotalReservedResourcesAcrossPartition:   &ResourceInfo{},
			TotalAllocatedContainersAcrossPartition: 24,
			CrossPartitionMetricsAvailable:          true,
		},
	}
	for name, want := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := decodeClusterMetrics(readTestdata(t, name))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestDecodeNodes(t *testing.T) {
	util := &ResourceUtilization{NodePhysicalMemoryMB: 1027, NodeVirtualMemoryMB: 1027, NodeCPUUsage: 0.016661113128066063}
	n3 := Node{Rack: "/default-rack", State: "RUNNING", ID: "host.domain.com:54158", NodeHostName: "host.domain.com",
		NodeHTTPAddress: "host.domain.com:8042", LastHealthUpdate: 1476995346399, Version: "3.0.0-alpha2-SNAPSHOT",
		AvailMemoryMB: 8192, AvailableVirtualCores: 8, ResourceUtilization: util}
	tests := map[string][]Node{
		"nodes/hadoop-2.7.json": {
			{Rack: "/default-rack", State: "NEW", ID: "h2:1235", NodeHostName: "h2", NodeHTTPAddress: "h2:2", HealthStatus: "Healthy",
				LastHealthUpdate: 1324056895432, HealthReport: "Healthy", AvailMemoryMB: 8192, AvailableVirtualCores: 8},
			{Rack: "/default-rack", State: "NEW", ID: "h1:1234", NodeHostName: "h1", NodeHTTPAddress: "h1:2", HealthStatus: "Healthy",
				LastHealthUpdate: 1324056895092, HealthReport: "Healthy", AvailMemoryMB: 8192, AvailableVirtualCores: 8},
		},
		"nodes/hadoop-3.json": {n3, n3},
		"nodes/hadoop-3-total-resource.json": {{Rack: "/default-rack", State: "RUNNING", ID: "host.domain.com:54158",
			NodeHostName: "host.domain.com", NodeHTTPAddress: "host.domain.com:8042", LastHealthUpdate: 1476916746399,
			Version: "3.0.0-SNAPSHOT", AvailMemoryMB: 8192, AvailableVirtualCores: 8,
			ResourceUtilization: &ResourceUtilization{NodePhysicalMemoryMB: 968, NodeVirtualMemoryMB: 968, NodeCPUUsage: 0.01332889124751091},
			TotalResource:       &ResourceInfo{Memory: 2048, VCores: 5}}},
		"nodes/empty-null.json": nil,
	}
	for name, want := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := decodeNodes(readTestdata(t, name))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestDecodeApps(t *testing.T) {
	wordCount27 := App{
		ID: "application_1326815542473_0001", User: "user1", Name: "word count", Queue: "default",
		State: "FINISHED", FinalStatus: "SUCCEEDED", Progress: 100, TrackingUI: "History",
		TrackingURL: "http://host.domain.com:8088/proxy/application_1326815542473_0001/jobhistory/job/job_1326815542473_1_1",
		ClusterID:   1326815542473, StartedTime: 1326815573334, FinishedTime: 1326815598530, ElapsedTime: 25196,
		AMContainerLogs:   "http://host.domain.com:8042/node/containerlogs/container_1326815542473_0001_01_000001",
		AMHostHTTPAddress: "host.domain.com:8042", MemorySeconds: 151730, VCoreSeconds: 103,
	}
	sleep28 := App{
		ID: "application_1326815542473_0002", User: "user1", Name: "Sleep job", Queue: "default",
		State: "FINISHED", FinalStatus: "SUCCEEDED", Progress: 100, TrackingUI: "History",
		TrackingURL: "http://host.domain.com:8088/proxy/application_1326815542473_0002/jobhistory/job/job_1326815542473_2_2",
		ClusterID:   1326815542473, StartedTime: 1326815641380, FinishedTime: 1326815789546, ElapsedTime: 148166,
		AMContainerLogs:   "http://host.domain.com:8042/node/containerlogs/container_1326815542473_0002_01_000001",
		AMHostHTTPAddress: "host.domain.com:8042", RunningContainers: 1, MemorySeconds: 640064, VCoreSeconds: 442,
		ApplicationType: "YARN", ApplicationTags: "tag1",
	}
	tests := map[string]struct {
		n     int
		check func(t *testing.T, apps []App)
	}{
		"apps/hadoop-2.7.json": {2, func(t *testing.T, apps []App) {
			if diff := cmp.Diff(wordCount27, apps[0]); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		}},
		"apps/hadoop-2.8.json": {2, func(t *testing.T, apps []App) {
			if diff := cmp.Diff(sleep28, apps[1]); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
			if apps[0].ApplicationType != "MAPREDUCE" || apps[0].UnmanagedApplication {
				t.Errorf("apps[0] = %+v, want MAPREDUCE and managed", apps[0])
			}
			if !apps[1].HasTag("TAG1") {
				t.Errorf("HasTag(TAG1) = false for tags %q", apps[1].ApplicationTags)
			}
		}},
		"apps/hadoop-3.json": {2, func(t *testing.T, apps []App) {
			a := apps[0]
			want := App{ID: "application_1476912658570_0002", User: "user2", Name: "word count", Queue: "default",
				State: "FINISHED", FinalStatus: "SUCCEEDED", Progress: 100, TrackingUI: "History",
				TrackingURL: "http://host.domain.com:8088/cluster/app/application_1476912658570_0002", Diagnostics: "...",
				ClusterID: 1476912658570, ApplicationType: "MAPREDUCE", Priority: -1, StartedTime: 1476913457320,
				FinishedTime: 1476913761898, ElapsedTime: 304578,
				AMContainerLogs:   "http://host.domain.com:8042/node/containerlogs/container_1476912658570_0002_02_000001/user2",
				AMHostHTTPAddress: "host.domain.com:8042", MemorySeconds: 206464, VCoreSeconds: 201, LogAggregationStatus: "DISABLED"}
			if diff := cmp.Diff(want, a); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		}},
		"apps/empty-null.json": {0, nil},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := decodeApps(readTestdata(t, name))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tt.n {
				t.Fatalf("got %d apps, want %d", len(got), tt.n)
			}
			if tt.check != nil {
				tt.check(t, got)
			}
		})
	}
}

func TestDecodeApp(t *testing.T) {
	want27 := App{ID: "application_1326821518301_0005", User: "user1", Name: "Sleep job", Queue: "a1",
		State: "FINISHED", FinalStatus: "SUCCEEDED", Progress: 100, TrackingUI: "History",
		TrackingURL: "http://host.domain.com:8088/proxy/application_1326821518301_0005/jobhistory/job/job_1326821518301_5_5",
		ClusterID:   1326821518301, ApplicationType: "Yarn", StartedTime: 1326824544552, FinishedTime: 1326824991300, ElapsedTime: 446748,
		AMContainerLogs:   "http://host.domain.com:8042/node/containerlogs/container_1326821518301_0005_01_000001",
		AMHostHTTPAddress: "host.domain.com:8042", MemorySeconds: 151730, VCoreSeconds: 103}
	tests := map[string]App{
		"app/hadoop-2.7.json": want27,
		"app/hadoop-2.8.json": want27,
		"app/hadoop-3.json": {ID: "application_1476912658570_0002", User: "user2", Name: "word count", Queue: "default",
			State: "FINISHED", FinalStatus: "SUCCEEDED", Progress: 100, TrackingUI: "History",
			TrackingURL: "http://host.domain.com:8088/cluster/app/application_1476912658570_0002", Diagnostics: "...",
			ClusterID: 1476912658570, ApplicationType: "YARN", Priority: -1, StartedTime: 1476913457320,
			FinishedTime: 1476913761898, ElapsedTime: 304578,
			AMContainerLogs:   "http://host.domain.com:8042/node/containerlogs/container_1476912658570_0002_02_000001/dr.who",
			AMHostHTTPAddress: "host.domain.com:8042", AllocatedMB: -1, AllocatedVCores: -1, RunningContainers: -1,
			MemorySeconds: 206464, VCoreSeconds: 201, LogAggregationStatus: "DISABLED"},
	}
	for name, want := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := decodeApp(readTestdata(t, name))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestDecodeAppState(t *testing.T) {
	tests := map[string]string{
		"app-state/get-accepted.json": "ACCEPTED",
		"app-state/put-killed.json":   "KILLED",
		"app-state/root-wrapped.json": "RUNNING",
	}
	for name, want := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := decodeAppState(readTestdata(t, name))
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("state = %q, want %q", got, want)
			}
		})
	}
}

func TestDecodeAppAttempts(t *testing.T) {
	a := AppAttempt{ID: 1, NodeID: "host.domain.com:8041", NodeHTTPAddress: "host.domain.com:8042",
		LogsLink:    "http://host.domain.com:8042/node/containerlogs/container_1326821518301_0005_01_000001/user1",
		ContainerID: "container_1326821518301_0005_01_000001", StartTime: 1326381444693}
	a3 := a
	a3.AppAttemptState = "RUNNING"
	tests := map[string][]AppAttempt{
		"appattempts/hadoop-2.7.json": {a},
		"appattempts/hadoop-3.json":   {a3},
	}
	for name, want := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := decodeAppAttempts(readTestdata(t, name))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestDecodeContainers(t *testing.T) {
	tests := map[string][]Container{
		"attempt-containers/hadoop-3.json": {{
			ContainerID: "container_1531404209605_0008_01_000001", AllocatedMB: 1536, AllocatedVCores: 1,
			AssignedNodeID: "host.domain.com:37814", StartedTime: 1531405909444, ElapsedTime: 4112,
			LogURL:         "http://host.domain.com:8042/node/containerlogs/container_1531404209605_0008_01_000001/systest",
			ContainerState: "RUNNING", NodeHTTPAddress: "http://host.domain.com:8042", NodeID: "host.domain.com:37814",
			AllocatedResources: []ResourceEntry{{"memory-mb", 1536}, {"vcores", 1}},
		}},
		"attempt-containers/mapped-single.json": {{
			ContainerID: "container_e17_1531404209605_0008_01_000002", AllocatedMB: 2048, AllocatedVCores: 2,
			AssignedNodeID: "worker7.domain.com:45454", Priority: 20, StartedTime: 1531405911000, ElapsedTime: 2556,
			LogURL:         "http://worker7.domain.com:8042/node/containerlogs/container_e17_1531404209605_0008_01_000002/systest",
			ContainerState: "RUNNING", NodeHTTPAddress: "http://worker7.domain.com:8042", NodeID: "worker7.domain.com:45454",
			AllocatedResources: []ResourceEntry{{"memory-mb", 2048}},
		}},
	}
	for name, want := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := decodeContainers(readTestdata(t, name))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
	t.Run("attempt-containers/root-unwrapped.json", func(t *testing.T) {
		got, err := decodeContainers(readTestdata(t, "attempt-containers/root-unwrapped.json"))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].ContainerExitStatus != -105 || got[1].AllocatedMB != 2048 || got[0].AssignedNodeID != "localhost:9105" {
			t.Errorf("got %+v", got)
		}
	})
}

func TestDecodeNMContainers(t *testing.T) {
	c1 := NMContainer{ID: "container_1326121700862_0006_01_000001", State: "RUNNING", ExitCode: -1000, User: "user1",
		TotalMemoryNeededMB: 2048, TotalVCoresNeeded: 1, NodeID: "host.domain.com:8041",
		ContainerLogsLink: "http://host.domain.com:8042/node/containerlogs/container_1326121700862_0006_01_000001/user1"}
	c3 := NMContainer{ID: "container_1326121700862_0006_01_000003", State: "RUNNING", ExitCode: -1000, User: "user1",
		TotalMemoryNeededMB: 2048, TotalVCoresNeeded: 2, NodeID: "host.domain.com:8041",
		ContainerLogsLink: "http://host.domain.com:8042/node/containerlogs/container_1326121700862_0006_01_000003/user1"}
	x1, x3 := c1, c3
	for _, c := range []*NMContainer{&x1, &x3} {
		c.ExecutionType = "GUARANTEED"
		c.ContainerLogFiles = []string{"stdout", "stderr", "syslog"}
	}
	tests := map[string][]NMContainer{
		"nm-containers/hadoop-2.7.json":        {c1, c3},
		"nm-containers/hadoop-3.json":          {x1, x3},
		"nm-containers/idle-empty-object.json": nil,
		"nm-containers/idle-null.json":         nil,
	}
	for name, want := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := decodeNMContainers(readTestdata(t, name))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
			for _, c := range got {
				if c.AppID() != "application_1326121700862_0006" || !c.Live() {
					t.Errorf("%s: AppID %q Live %v", c.ID, c.AppID(), c.Live())
				}
			}
		})
	}
}

func TestDecodeNewApplication(t *testing.T) {
	got, err := decodeNewApplication(readTestdata(t, "new-application/documented.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := NewApplication{ApplicationID: "application_1404198295326_0003", MaximumResourceCapability: ResourceInfo{Memory: 8192, VCores: 32}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

// TestSubmissionRoundTrip decodes the documented submission bodies and
// re-encodes them: every documented key survives, the am-container-spec
// byte-identically.
func TestSubmissionRoundTrip(t *testing.T) {
	for _, name := range []string{"submit/hadoop-2.7-request.json", "submit/hadoop-3-request.json", "submit/tags-request.json"} {
		t.Run(name, func(t *testing.T) {
			in := readTestdata(t, name)
			var sub SubmissionContext
			if err := json.Unmarshal(in, &sub); err != nil {
				t.Fatal(err)
			}
			out, err := json.Marshal(sub)
			if err != nil {
				t.Fatal(err)
			}
			var want, got map[string]any
			if err := json.Unmarshal(in, &want); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("re-encoded submission differs (-want +got)\n%s", diff)
			}
		})
	}
	var sub SubmissionContext
	if err := json.Unmarshal(readTestdata(t, "submit/tags-request.json"), &sub); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(tags{"tag 2", "tag1"}, sub.ApplicationTags); diff != "" {
		t.Errorf("tags (-want +got)\n%s", diff)
	}
}

func TestDecodeRemoteException(t *testing.T) {
	tests := map[string][3]string{
		"remote-exception/bad-request.json": {"BadRequestException", "org.apache.hadoop.yarn.webapp.BadRequestException",
			"java.lang.Exception: Only 'KILLED' is allowed as a target state."},
		"remote-exception/not-found.json": {"NotFoundException", "org.apache.hadoop.yarn.webapp.NotFoundException",
			"java.lang.Exception: app with id: application_1326821518301_0099 not found"},
	}
	for name, want := range tests {
		t.Run(name, func(t *testing.T) {
			exc, cls, msg, ok := decodeRemoteException(readTestdata(t, name))
			if !ok {
				t.Fatal("not recognised as a RemoteException")
			}
			if diff := cmp.Diff(want, [3]string{exc, cls, msg}); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestStandbyAnswer(t *testing.T) {
	tests := map[string]struct {
		status   int
		location string
		body     string
		standby  bool
		wantLoc  string
	}{
		"hadoop-3 redirect": {307, "http://rm2:8088/ws/v1/cluster/apps", string(readTestdata(t, "standby/hadoop-3.txt")), true, "http://rm2:8088/ws/v1/cluster/apps"},
		"hadoop-2 text":     {200, "", string(readTestdata(t, "standby/hadoop-2.txt")), true, "http://rm2.domain.com:8088/ws/v1/cluster/apps"},
		"no active RM":      {307, "", string(readTestdata(t, "standby/no-active.txt")), true, ""},
		"no active RM 200":  {200, "", "There is no active RM right now.\nHA Zookeeper Connection State: CONNECTED", true, ""},
		"json answer":       {200, "", `{"apps":null}`, false, ""},
		"json mentioning":   {200, "", `{"app":{"diagnostics":"This is standby RM"}}`, false, ""},
		"plain 500":         {500, "", "Internal Server Error", false, ""},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			h := http.Header{}
			if tt.location != "" {
				h.Set("Location", tt.location)
			}
			standby, loc := standbyAnswer(&response{status: tt.status, header: h, body: []byte(tt.body)})
			if standby != tt.standby || loc != tt.wantLoc {
				t.Errorf("standbyAnswer = %v, %q; want %v, %q", standby, loc, tt.standby, tt.wantLoc)
			}
		})
	}
}

func TestDecodeRejects(t *testing.T) {
	tests := map[string]struct {
		dec  func([]byte) (any, error)
		body string
	}{
		"html page":              {decoders["apps"], "<html><body>Login</body></html>"},
		"truncated":              {decoders["apps"], `{"apps":{"app":[{"id":"application_1_0001"`},
		"wrong wrapper":          {decoders["cluster-info"], `{"clusterMetrics":{}}`},
		"app without id":         {decoders["app"], `{"app":{}}`},
		"trailing data":          {decoders["new-application"], `{"application-id":"application_1_0001"} {}`},
		"string for number":      {decoders["cluster-metrics"], `{"clusterMetrics":{"totalMB":"lots"}}`},
		"empty body":             {decoders["nodes"], ``},
		"missing state":          {decoders["app-state"], `{}`},
		"bad container number":   {decoders["attempt-containers"], `{"containers":{"container":[{"allocatedMB":"x"}]}}`},
		"bad attempt id":         {decoders["appattempts"], `{"appAttempts":{"appAttempt":[{"id":{}}]}}`},
		"array top level":        {decoders["nm-containers"], `[]`},
		"standby text as apps":   {decoders["apps"], string(readTestdata(t, "standby/hadoop-2.txt"))},
		"new app without the id": {decoders["new-application"], `{"maximum-resource-capability":{"memory":1}}`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if v, err := tt.dec([]byte(tt.body)); err == nil {
				t.Errorf("decoded %q into %+v, want an error", tt.body, v)
			}
		})
	}
}

// FuzzDecoders feeds arbitrary bodies to every decoder: they may fail, never
// panic, and a failure never comes with a partial value that claims success.
func FuzzDecoders(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*", "*"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{"", "null", "{}", "[]", `{"apps":{"app":{}}}`, `{"containers":{"container":"x"}}`,
		`{"container":[{"allocatedMB":"1e400"}]}`, `{"app":{"id":"a","priority":"NaN","progress":"Infinity"}}`,
		`{"appAttempts":{"appAttempt":[{"id":"9223372036854775808"}]}}`, "\x00\xff", strings.Repeat("[", 10000)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for dir, dec := range decoders {
			if v, err := dec(body); err != nil && v != nil {
				if rv, ok := v.([]App); ok && rv != nil {
					t.Errorf("%s: error %v with a non-nil value", dir, err)
				}
			}
		}
		_ = remoteError(&response{status: 500, header: http.Header{}, body: body}).Error()
		standbyAnswer(&response{status: 200, header: http.Header{}, body: body})
		var tags tags
		_ = json.Unmarshal(body, &tags)
		_, _ = AppIDFromContainerID(string(body))
		if tok, err := ParseToken(string(body)); err == nil {
			if again, err := ParseToken(tok.Encode()); err != nil || !tokensEqual(tok, again) {
				t.Errorf("ParseToken(Encode(%+v)) = %+v, %v", tok, again, err)
			}
		}
		if id, err := ParseTokenIdentifier(body); err == nil {
			if again, err := ParseTokenIdentifier(id.Marshal()); err != nil || again != id {
				t.Errorf("ParseTokenIdentifier(Marshal(%+v)) = %+v, %v", id, again, err)
			}
		}
		sub := SubmissionContext{AMContainerSpec: body}
		if _, err := sub.Credentials(); err == nil {
			_ = sub.AddTokens(map[string]string{"a": "b"})
		}
		_, _, _ = parseAppID(string(body))
	})
}

func TestDecodeHistoryApp(t *testing.T) {
	tests := map[string]HistoryApp{
		"history-app/timelineserver-doc.json": {
			AppID: "application_1430424020775_0001", CurrentAppAttemptID: "appattempt_1430424020775_0001_000001",
			User: "zshen", Name: "QuasiMonteCarlo", Queue: "default", Type: "MAPREDUCE", Host: "localhost", RPCPort: 56264,
			AppState: "FINISHED", Progress: 100,
			OriginalTrackingURL: "http://d-69-91-129-173.dhcp4.washington.edu:19888/jobhistory/job/job_1430424020775_0001",
			TrackingURL:         "http://d-69-91-129-173.dhcp4.washington.edu:8088/proxy/application_1430424020775_0001/",
			FinalAppStatus:      "SUCCEEDED", SubmittedTime: 1430424053809, StartedTime: 1430424053809,
			FinishedTime: 1430424072153, ElapsedTime: 18344,
		},
		"history-app/mapped-notation.json": {
			AppID: "application_1430424020775_0002", User: "zshen", Name: "DistributedShell", Queue: "default",
			Type: "YARN", Host: "N/A", RPCPort: -1, AppState: "KILLED", Progress: 100,
			DiagnosticsInfo: "Application killed by user.", FinalAppStatus: "KILLED", SubmittedTime: 1430424769395,
			StartedTime: 1430424769395, FinishedTime: 1430424776594, ElapsedTime: 7199,
			ApplicationTags: "colocd-job-01abc,colocd-kind-tpch",
		},
	}
	for name, want := range tests {
		got, err := decodeHistoryApp(readTestdata(t, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got)\n%s", name, diff)
		}
	}
	if got := (HistoryApp{ApplicationTags: "a, b,,c"}).Tags(); !cmp.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("Tags() = %q", got)
	}
	for _, bad := range []string{`[]`, `{"appState":"FINISHED"}`, `{"appId":"application_1_0001"}`, `{"appId":"application_1_0001","appState":"RUNNING","startedTime":"soon"}`} {
		if _, err := decodeHistoryApp([]byte(bad)); err == nil {
			t.Errorf("decodeHistoryApp(%s): no error", bad)
		}
	}
	if ts, ok := AppIDClusterTimestamp("application_1430424020775_0002"); !ok || ts != 1430424020775 {
		t.Errorf("AppIDClusterTimestamp = %d, %v", ts, ok)
	}
	if _, ok := AppIDClusterTimestamp("colocd-cmd-abc"); ok {
		t.Error("AppIDClusterTimestamp of a command token: ok")
	}
}

func tokensEqual(a, b Token) bool {
	return string(a.Identifier) == string(b.Identifier) && string(a.Password) == string(b.Password) &&
		a.Kind == b.Kind && a.Service == b.Service
}
