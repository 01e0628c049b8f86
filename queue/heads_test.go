package queue_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/queue"
)

func TestStorePendingHeads(t *testing.T) {
	s, _ := openStore(t, queue.Options{})
	for i, u := range []string{"ana", "ana", "ana", "bob", "ana", "bob", "cy"} {
		j := queue.Job{Kind: "k", User: u, Queue: []string{"etl", "adhoc"}[i%2], Resources: queue.Resources{Containers: 1, MemoryMB: 1, VCores: 1}}
		if _, _, err := s.Submit(context.Background(), j); err != nil {
			t.Fatal(err)
		}
	}
	users := func(js []queue.Job) []string {
		var out []string
		for _, j := range js {
			out = append(out, j.User+"/"+j.Queue)
		}
		return out
	}
	for _, tc := range []struct {
		n, scan int
		byQueue bool
		want    []string
	}{
		{2, 0, false, []string{"ana/etl", "ana/adhoc", "bob/adhoc", "bob/adhoc", "cy/etl"}},
		{1, 0, true, []string{"ana/etl", "ana/adhoc"}},
		{2, 4, false, []string{"ana/etl", "ana/adhoc", "bob/adhoc"}},
	} {
		got, err := s.PendingHeads(tc.n, tc.byQueue, tc.scan)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, users(got)); diff != "" {
			t.Errorf("PendingHeads(%d, %t, %d) (-want +got):\n%s", tc.n, tc.byQueue, tc.scan, diff)
		}
	}
}
