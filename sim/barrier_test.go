package sim

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// A job's phase ends when its slowest container finishes: containers on an
// uncontended node wait, idle, for those slowed down elsewhere.
func TestStageBarrier(t *testing.T) {
	cluster := ClusterSpec{Nodes: 2, Node: NodeSpec{Cores: 4, VCores: 6, MemoryMB: 8192, DiskMBps: 100, NetMBps: 100}}
	kinds := []KindSpec{
		{Name: "job", Containers: 6, Container: ContainerSpec{VCores: 1, MemoryMB: 1024},
			Phases: []Phase{{Seconds: 20, CPU: 0.2, DiskReadMBps: 20}, {Seconds: 10, CPU: 1}}},
		{Name: "hog", Containers: 3, Container: ContainerSpec{VCores: 1, MemoryMB: 1024},
			Phases: []Phase{{Seconds: 100, DiskReadMBps: 30}}},
	}
	s, err := New(cluster, kinds, Options{})
	if err != nil {
		t.Fatal(err)
	}
	hog, job := s.NewApplication(), s.NewApplication()
	s.start1(hog, AppSpec{Kind: "hog"}, s.kinds["hog"], []int{3, 0})
	s.start1(job, AppSpec{Kind: "job"}, s.kinds["job"], []int{3, 3})

	// Node 1's disk: hog 90 + job 60 MB/s on 100: both at 2/3 speed, so the
	// job's first phase takes 30 s there and 20 s on node 2.
	at := func(sec float64) time.Time { return DefaultStart.Add(time.Duration(sec * float64(time.Second))) }
	s.Advance(at(25))
	info, _ := s.App(job)
	if math.Abs(info.Speed-2.0/3) > 1e-12 {
		t.Errorf("speed at 25 s = %v, want 2/3 (the slowest working container)", info.Speed)
	}
	if want := (20 * (25.0 / 30)) / 30; math.Abs(info.Progress-want) > 1e-12 {
		t.Errorf("progress at 25 s = %v, want %v", info.Progress, want)
	}
	var finished time.Time
	for {
		t, ok := s.NextEvent()
		if !ok {
			break
		}
		for _, ev := range s.Advance(t) {
			if ev.AppID == job {
				finished = ev.At
			}
		}
	}
	if want := at(40); !finished.Equal(want) {
		t.Errorf("job finished at %v, want %v (30 s barrier-limited phase + 10 s)", finished.Sub(DefaultStart), want.Sub(DefaultStart))
	}
	var node2 []float64
	for _, sm := range s.Samples() {
		if sm.Node == "node02" && sm.End.Sub(DefaultStart) <= 40*time.Second {
			node2 = append(node2, sm.Usage.CPU)
		}
	}
	// Node 2: phase 1 at 3×0.2 of 4 cores, idle at the barrier, then phase 2.
	if diff := cmp.Diff([]float64{0.15, 0.15, 0, 0.75}, node2, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-12 })); diff != "" {
		t.Errorf("node02 CPU per interval (-want +got):\n%s", diff)
	}
}

// Progressive filling: a group limited elsewhere leaves capacity to others.
func TestShareRedistributes(t *testing.T) {
	cluster := ClusterSpec{Nodes: 1, Node: NodeSpec{Cores: 2, VCores: 8, MemoryMB: 8192, DiskMBps: 100, NetMBps: 100}}
	kinds := []KindSpec{
		{Name: "io", Containers: 2, Container: ContainerSpec{VCores: 1, MemoryMB: 512},
			Phases: []Phase{{Seconds: 10, CPU: 0.5, DiskReadMBps: 100}}},
		{Name: "cpu", Containers: 2, Container: ContainerSpec{VCores: 1, MemoryMB: 512},
			Phases: []Phase{{Seconds: 10, CPU: 1}}},
	}
	s, err := New(cluster, kinds, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.start1(s.NewApplication(), AppSpec{Kind: "io"}, s.kinds["io"], []int{2})
	s.start1(s.NewApplication(), AppSpec{Kind: "cpu"}, s.kinds["cpu"], []int{2})
	s.refresh()
	// io: disk 200 wanted of 100 -> 1/2. CPU: io then uses 2×0.5×1/2 = 0.5,
	// leaving 1.5 cores for cpu's 2 wanted -> 3/4 (not the 2/3 a
	// one-pass proportional split of 3 wanted cores would give).
	var rates []float64
	for _, g := range s.nodes[0].groups {
		rates = append(rates, s.groups[g].rate)
	}
	if diff := cmp.Diff([]float64{0.5, 0.75}, rates); diff != "" {
		t.Errorf("rates io, cpu (-want +got):\n%s", diff)
	}
	u := s.nodes[0].rate
	// io would use 2×0.5 cores at full speed; it gets half: 0.5 cores
	// starved, but no CPU is idle (0.5 + 1.5 = 2), so no iowait.
	if u.cpu != 2 || u.iowait != 0 {
		t.Errorf("cpu %v cores, iowait %v cores; want 2 and 0", u.cpu, u.iowait)
	}
}
