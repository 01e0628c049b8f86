package profile

import "container/heap"

// Whole turns Place's landings (expected containers) into
// whole containers per node index, total in all, following the placement
// rule Place predicts in expectation: a group on each empty node first
// (Place gives the empty nodes one landing: they are interchangeable, so
// the groups go onto the empty nodes from its first one on), then whole
// groups, then single containers, each onto the node with the most of its
// expectation left and room for it (ties: the lower index). Groups matter
// to whoever plays the placement forward (the engine's admission pass):
// the jobs beside which a job's containers land are what the scorer
// weighs, and a job spread thin over every node would seem to sit beside
// everything.
func Whole(nodes []Node, land []Landing, each Room, total int) map[int]int {
	out := map[int]int{}
	room := func(i int) int { return int(slots(nodes[i].Free, each)) - out[i] }
	var h landingHeap // the nodes with expected containers not yet placed
	left := total
	for _, l := range land {
		if !nodes[l.Node].empty() {
			h = append(h, expected{node: l.Node, exp: l.Containers})
			continue
		}
		e, lg := l.Containers, max(l.Group, 1)
		var used []int
		for i := l.Node; i < len(nodes) && e >= 1-1e-9 && left > 0; i++ {
			if !nodes[i].empty() {
				continue
			}
			if put := min(lg, room(i), left, int(e+1e-9)); put > 0 {
				out[i] += put
				e -= float64(put)
				left -= put
				used = append(used, i)
			}
		}
		var spare float64 // what the expectation puts beside the groups
		for _, i := range used {
			spare += float64(room(i))
		}
		for _, i := range used {
			if spare > 0 && e > 0 {
				h = append(h, expected{node: i, exp: e * float64(room(i)) / spare})
			}
		}
	}
	heap.Init(&h)
	var full []expected // nodes without room for a whole group
	for g := DefaultGroup; left > 0; {
		if h.Len() == 0 {
			if g == 1 || len(full) == 0 {
				break // no room left: the expectation did not add up
			}
			g = 1 // no node has room for a whole group: single containers
			h = append(h, full...)
			heap.Init(&h)
			full = full[:0]
			continue
		}
		want := min(g, left)
		x := heap.Pop(&h).(expected)
		if room(x.node) < want {
			if room(x.node) > 0 {
				full = append(full, x)
			}
			continue
		}
		out[x.node] += want
		left -= want
		x.exp -= float64(want)
		heap.Push(&h, x)
	}
	return out
}

// expected is a node's expected containers not yet placed.
type expected struct {
	node int
	exp  float64
}

// landingHeap orders nodes by expected containers left, most first, then
// by index.
type landingHeap []expected

func (h landingHeap) Len() int { return len(h) }
func (h landingHeap) Less(a, b int) bool {
	if h[a].exp != h[b].exp {
		return h[a].exp > h[b].exp
	}
	return h[a].node < h[b].node
}
func (h landingHeap) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *landingHeap) Push(x any)   { *h = append(*h, x.(expected)) }
func (h *landingHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
