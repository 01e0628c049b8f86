package sim_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/sim"
)

// hetero is a cluster of two node groups (a big node, then a small one)
// and a CPU-bound kind whose triplet fits the big node's cores but not the
// small one's.
const hetero = `
cluster:
  groups:
    - {name: big, nodes: 1, node: {cores: 4, vcores: 4, memory_mb: 8192, disk_mbps: 200, net_mbps: 100}}
    - {name: small, nodes: 1, node: {cores: 2, vcores: 4, memory_mb: 4096, disk_mbps: 100, net_mbps: 50}}
kinds:
  - name: cpu
    containers: 6
    container: {vcores: 1, memory_mb: 1024}
    phases:
      - {seconds: 60, cpu: 1, disk_read_mbps: 20}
queue:
  - {kind: cpu, count: 1}
  - {kind: cpu, count: 1, containers: 2, scale: 2.5}
`

func TestParseGroupsAndSizes(t *testing.T) {
	w, err := sim.ParseWorkload([]byte(hetero))
	if err != nil {
		t.Fatal(err)
	}
	big := sim.NodeSpec{Cores: 4, VCores: 4, MemoryMB: 8192, DiskMBps: 200, NetMBps: 100}
	small := sim.NodeSpec{Cores: 2, VCores: 4, MemoryMB: 4096, DiskMBps: 100, NetMBps: 50}
	want := []sim.NodeGroup{{Name: "big", Nodes: 1, Node: big}, {Name: "small", Nodes: 1, Node: small}}
	if diff := cmp.Diff(want, w.Cluster.NodeGroups()); diff != "" {
		t.Errorf("groups (-want,+got):\n%s", diff)
	}
	if w.Cluster.Nodes != 2 || w.Cluster.Node != big {
		t.Errorf("Nodes, Node = %d, %+v; want the total 2 and the first group's node", w.Cluster.Nodes, w.Cluster.Node)
	}
	jobs := w.Jobs(nil)
	if jobs[0].Containers != 0 || jobs[0].Scale != 0 || jobs[1].Containers != 2 || jobs[1].Scale != 2.5 {
		t.Errorf("job sizes %+v, %+v; want the kind's, then 2 containers at scale 2.5", jobs[0], jobs[1])
	}
	// The single-type form is one unnamed group.
	hw, err := sim.ParseWorkload([]byte(base))
	if err != nil {
		t.Fatal(err)
	}
	if g := hw.Cluster.NodeGroups(); len(g) != 1 || g[0].Name != "" || g[0].Nodes != 2 || g[0].Node != hw.Cluster.Node {
		t.Errorf("NodeGroups of a single-type cluster = %+v", g)
	}
}

func TestParseGroupAndSizeErrors(t *testing.T) {
	groups := "  groups:\n    - {name: big, nodes: 1, node: {cores: 4, vcores: 4, memory_mb: 8192, disk_mbps: 200, net_mbps: 100}}\n"
	for _, tc := range []struct {
		name, doc, old, new, path string
	}{
		{"groups beside nodes", base, "  nodes: 2\n", "  nodes: 2\n" + groups, "cluster.groups"},
		{"empty groups", base, "  nodes: 2\n  node: {cores: 4, vcores: 6, memory_mb: 8192, disk_mbps: 100, net_mbps: 100}\n", "  groups: []\n", "cluster.groups"},
		{"missing group name", hetero, "{name: small, ", "{", "cluster.groups[1].name"},
		{"bad group name", hetero, "name: small", "name: 'a b'", "cluster.groups[1].name"},
		{"duplicate group", hetero, "name: small", "name: big", "cluster.groups[1].name"},
		{"missing group nodes", hetero, "small, nodes: 1, ", "small, ", "cluster.groups[1].nodes"},
		{"zero group nodes", hetero, "small, nodes: 1", "small, nodes: 0", "cluster.groups[1].nodes"},
		{"too many nodes", hetero, "small, nodes: 1", "small, nodes: 10000", "cluster.groups[1].nodes"},
		{"missing group node", hetero, ", node: {cores: 2, vcores: 4, memory_mb: 4096, disk_mbps: 100, net_mbps: 50}", "", "cluster.groups[1].node"},
		{"group node key", hetero, "disk_mbps: 100, net_mbps: 50}", "disk_mbps: 100, net_mbps: 50, gpus: 1}", "cluster.groups[1].node.gpus"},
		{"group node cores", hetero, "{cores: 2,", "{cores: 0,", "cluster.groups[1].node.cores"},
		{"phase above a group's node", hetero, "disk_read_mbps: 20}", "disk_read_mbps: 150}", "kinds[0].phases[0].disk_read_mbps"},
		{"container fits no group", hetero, "{vcores: 1, memory_mb: 1024}", "{vcores: 5, memory_mb: 1024}", "kinds[0].container"},
		{"kind never fits the groups", hetero, "containers: 6\n", "containers: 9\n", "kinds[0].containers"},
		{"zero entry containers", hetero, "containers: 2, ", "containers: 0, ", "queue[1].containers"},
		{"entry never fits", hetero, "containers: 2, ", "containers: 9, ", "queue[1].containers"},
		{"zero scale", hetero, "scale: 2.5", "scale: 0", "queue[1].scale"},
		{"negative scale", hetero, "scale: 2.5", "scale: -1", "queue[1].scale"},
		{"scale above bound", hetero, "scale: 2.5", "scale: 101", "queue[1].scale"},
		{"NaN scale", hetero, "scale: 2.5", "scale: .nan", "queue[1].scale"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantFieldError(t, edit(t, tc.doc, tc.old, tc.new), tc.path)
		})
	}
}

// Each node has its group's capacity: the same containers use a smaller
// fraction of the big node's CPU and disk, and saturate the small node's
// cores (six 1-core containers, a triplet per node: 3 of 4 cores on the big
// node, 3 of 2 on the small one, so the job's barrier waits for the small
// node's triplet at 2/3 speed).
func TestHeteroNodes(t *testing.T) {
	w, err := sim.ParseWorkload([]byte(hetero))
	if err != nil {
		t.Fatal(err)
	}
	s := newSim(t, w, sim.Options{Seed: 1})
	nodes := s.Nodes()
	if nodes[0].Group != "big" || nodes[0].Cores != 4 || nodes[0].DiskMBps != 200 ||
		nodes[1].Group != "small" || nodes[1].Cores != 2 || nodes[1].MemoryMB != 4096 || nodes[1].NetMBps != 50 {
		t.Fatalf("nodes = %+v", nodes)
	}
	id := s.NewApplication()
	if err := s.Submit(id, sim.AppSpec{Kind: "cpu"}); err != nil {
		t.Fatal(err)
	}
	s.RunUntilIdle()
	a, _ := s.App(id)
	if a.Placement[nodes[0].Name] != 3 || a.Placement[nodes[1].Name] != 3 {
		t.Fatalf("placement %v, want a triplet on each node", a.Placement)
	}
	if got, want := a.Finished.Sub(a.Started), 90*time.Second; got != want {
		t.Errorf("runtime %v, want %v (60 s at the small node's 2/3 speed)", got, want)
	}
	start := sim.DefaultStart
	for _, tc := range []struct {
		node      string
		cpu, disk float64 // CPU share, disk reads in bytes/s
	}{
		{nodes[0].Name, 0.75, 60e6}, // 3 of 4 cores, 3×20 MB/s
		{nodes[1].Name, 1, 40e6},    // 2 of 2 cores, 3×20 MB/s at 2/3 speed
	} {
		u, ok := s.Usage(tc.node, start, start.Add(60*time.Second))
		if !ok || !near(u.CPU, tc.cpu) || !near(u.DiskRead, tc.disk) {
			t.Errorf("%s usage %+v, want cpu %v, disk share %v", tc.node, u, tc.cpu, tc.disk)
		}
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }

// A job's size: Containers places that many containers and reserves them;
// Scale multiplies its work, so alone it takes Scale × the solo duration,
// and its progress still runs from 0 to 1.
func TestJobSize(t *testing.T) {
	w, err := sim.ParseWorkload([]byte(hetero))
	if err != nil {
		t.Fatal(err)
	}
	s := newSim(t, w, sim.Options{Seed: 1})
	spec := sim.AppSpec{Kind: "cpu", Containers: 2, Scale: 2.5}
	if !s.FitsApp(spec) || s.FitsApp(sim.AppSpec{Kind: "cpu", Containers: 9}) {
		t.Fatal("FitsApp: want 2 containers to fit the idle cluster and 9 not")
	}
	id := s.NewApplication()
	if err := s.Submit(id, spec); err != nil {
		t.Fatal(err)
	}
	a, _ := s.App(id)
	if a.Containers != 2 || a.Alloc != (sim.Resources{MemoryMB: 2048, VCores: 2}) {
		t.Errorf("containers %d, alloc %+v; want 2 containers of 1 vcore, 1024 MB", a.Containers, a.Alloc)
	}
	s.Advance(s.Now().Add(75 * time.Second))
	if a, _ = s.App(id); !near(a.Progress, 0.5) {
		t.Errorf("progress after 75 s = %v, want 0.5 (150 s of work)", a.Progress)
	}
	s.RunUntilIdle()
	if a, _ = s.App(id); a.Finished.Sub(a.Started) != 150*time.Second {
		t.Errorf("runtime %v, want 150s (2.5 × 60 s)", a.Finished.Sub(a.Started))
	}
	for _, bad := range []sim.AppSpec{{Kind: "cpu", Containers: -1}, {Kind: "cpu", Scale: -2}, {Kind: "cpu", Scale: sim.MaxScale + 1}} {
		if err := s.CheckSubmit(s.NewApplication(), bad); !errors.Is(err, sim.ErrInvalid) {
			t.Errorf("CheckSubmit(%+v) = %v, want ErrInvalid", bad, err)
		}
	}
}

// A grouped cluster is not scaled (which groups grow is the study's choice).
func TestScaledRefusesGroups(t *testing.T) {
	w, err := sim.ParseWorkload([]byte(hetero))
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.Scaled(4, 2)
	var fe *sim.FieldError
	if !errors.As(err, &fe) || fe.Path != "cluster.groups" {
		t.Errorf("Scaled = %v, want a *FieldError at cluster.groups", err)
	}
}
