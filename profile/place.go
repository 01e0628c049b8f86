package profile

import "math"

// Room is an amount of placement resources (what the resource manager
// reserves): vcores and memory.
type Room struct {
	VCores   int64
	MemoryMB int64
}

// Shape is a job's containers: how many, and the room each reserves.
type Shape struct {
	Containers int
	Each       Room
}

// Node is one node as the scorer sees it: its placement room, the
// containers running on it, by kind (a kind appears once), and its size
// (Observation.Size: zero is the reference node).
type Node struct {
	Capacity, Free Room
	Jobs           []KindCount
	Size           Vector
}

func (n *Node) empty() bool { return len(n.Jobs) == 0 && n.Free == n.Capacity }

// slots is how many containers of room each fit in free.
func slots(free, each Room) int64 {
	s := int64(math.MaxInt64)
	if each.VCores > 0 {
		s = max(free.VCores, 0) / each.VCores
	}
	if each.MemoryMB > 0 {
		s = min(s, max(free.MemoryMB, 0)/each.MemoryMB)
	}
	if s == math.MaxInt64 { // a zero-sized container: count vcores
		s = max(free.VCores, 0)
	}
	return s
}

// DefaultGroup is how many containers of a job the cluster puts on each
// empty node before it fills nodes that already run something (the
// paper's §6.1 triplets, and the simulator's default).
const DefaultGroup = 3

// Landing is where a job is expected to put its containers: Containers
// (an expectation) on node Node, in groups of Group.
type Landing struct {
	Node       int
	Containers float64
	Group      int
}

// Place predicts where a job of shape s lands among nodes, following the
// cluster's placement rule: a group of up to group containers on each empty
// node first, then the rest over the nodes with room, in proportion to the
// room each has (in containers of s), as a random choice among them would
// in expectation. It returns false when the job does not fit. The empty
// nodes are interchangeable, so their landings are one entry (the first
// empty node's index) with the containers they take together.
func Place(nodes []Node, s Shape, group int, out []Landing) ([]Landing, bool) {
	out = out[:0]
	if group < 1 {
		group = DefaultGroup
	}
	left := int64(s.Containers)
	emptyAt, onEmpty := -1, int64(0)
	var room, busyRoom int64 // room over all nodes, and on the busy ones
	for i := range nodes {
		n := &nodes[i]
		k := slots(n.Free, s.Each)
		if !n.empty() {
			busyRoom += k
		}
		if n.empty() && left > 0 {
			put := min(k, int64(group), left)
			if put > 0 {
				if emptyAt < 0 {
					emptyAt = i
				}
				onEmpty += put
				left -= put
			}
			k -= put
			if k <= 0 {
				continue
			}
		}
		room += k
	}
	if onEmpty > 0 {
		out = append(out, Landing{Node: emptyAt, Containers: float64(onEmpty), Group: int(min(int64(group), onEmpty))})
	}
	if left == 0 {
		return out, true
	}
	if room < left {
		return out, false
	}
	for i := range nodes {
		n := &nodes[i]
		if n.empty() {
			continue // what is left on an empty node lands beside the job itself; counted below
		}
		k := slots(n.Free, s.Each)
		if k <= 0 {
			continue
		}
		e := float64(left) * float64(k) / float64(room)
		out = append(out, Landing{Node: i, Containers: e, Group: int(min(k, int64(group)))})
	}
	if emptyRoom := room - busyRoom; emptyRoom > 0 && emptyAt >= 0 {
		// Containers that go to an empty node beyond its first group land
		// beside the job's own group there.
		e := float64(left) * float64(emptyRoom) / float64(room)
		out[0].Containers += e
	}
	return out, true
}
