package profile

import (
	"math/rand/v2"
	"testing"
)

// TestWhole: over random clusters, the predicted placement of a
// job that fits puts all its containers on nodes with room for them, a
// group on each empty node it uses before any busy node. Replay a failure
// with its seed.
func TestWhole(t *testing.T) {
	for seed := uint64(1); seed <= 300; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		each := Room{VCores: int64(1 + rng.IntN(2)), MemoryMB: 1024 * int64(1+rng.IntN(3))}
		nodes := make([]Node, 1+rng.IntN(12))
		for i := range nodes {
			c := Room{VCores: 12, MemoryMB: 24576}
			used := int64(rng.IntN(13))
			nodes[i] = Node{Capacity: c, Free: Room{VCores: 12 - used, MemoryMB: 24576 - 2048*used}}
			if used > 0 {
				nodes[i].Jobs = []KindCount{{Kind: "busy", Containers: 1}}
			}
		}
		s := Shape{Containers: 1 + rng.IntN(40), Each: each}
		land, ok := Place(nodes, s, DefaultGroup, nil)
		if !ok {
			continue
		}
		got := Whole(nodes, land, each, s.Containers)
		total := 0
		for i, c := range got {
			total += c
			if room := int(slots(nodes[i].Free, each)); c > room || c <= 0 {
				t.Fatalf("seed %d: node %d gets %d containers, room for %d", seed, i, c, room)
			}
		}
		if total != s.Containers {
			t.Fatalf("seed %d: %d containers placed, want %d (%v)", seed, total, s.Containers, got)
		}
		for i := range nodes {
			if nodes[i].empty() && got[i] == 0 && slots(nodes[i].Free, each) > 0 {
				for j, c := range got {
					if !nodes[j].empty() && c > 0 {
						t.Fatalf("seed %d: busy node %d used while empty node %d has room", seed, j, i)
					}
				}
			}
		}
	}
}
