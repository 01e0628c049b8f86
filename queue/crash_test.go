package queue_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/queue/queuetest"
)

// crashChildEnv, when set to a file path, turns the test binary into the
// crash test's child: it submits and moves jobs in a loop and prints every
// acknowledged step, until the parent kills it.
const (
	crashChildEnv  = "COLOCD_QUEUE_CRASH_CHILD"
	crashPrefixEnv = "COLOCD_QUEUE_CRASH_PREFIX"
)

func TestMain(m *testing.M) {
	if path := os.Getenv(crashChildEnv); path != "" {
		crashChild(path, os.Getenv(crashPrefixEnv))
		return // not reached: the parent kills the child
	}
	goleak.VerifyTestMain(m)
}

// crashChild prints, after each step is durable:
//
//	S <id> <idempotency key>   submitted
//	A <id>                     admitted
//	F <id>                     finished (succeeded)
func crashChild(path, prefix string) {
	s, err := queue.Open(path, queue.Options{Timeout: 10 * time.Second})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child open:", err)
		os.Exit(2)
	}
	var mu sync.Mutex
	say := func(format string, args ...any) {
		line := fmt.Sprintf(format+"\n", args...)
		mu.Lock()
		os.Stdout.WriteString(line) // one write per line: atomic on a pipe
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				j := queuetest.Job(fmt.Sprintf("k%d", i%4))
				j.IdempotencyKey = fmt.Sprintf("%s-g%d-%d", prefix, g, i)
				got, _, err := s.Submit(context.Background(), j)
				if err != nil {
					fmt.Fprintln(os.Stderr, "child submit:", err)
					os.Exit(3)
				}
				say("S %s %s", got.ID, j.IdempotencyKey)
				if i%3 != 0 {
					continue
				}
				if _, err := s.Admit(got.ID, "app", nil, nil, nil); err != nil {
					fmt.Fprintln(os.Stderr, "child admit:", err)
					os.Exit(4)
				}
				say("A %s", got.ID)
				s.Start(got.ID)
				if _, err := s.Finish(got.ID, queue.StateSucceeded, ""); err != nil {
					fmt.Fprintln(os.Stderr, "child finish:", err)
					os.Exit(5)
				}
				say("F %s", got.ID)
			}
		}()
	}
	wg.Wait()
}

// TestCrashSafety kills a submitting child with SIGKILL at random points,
// several times, and checks after each kill that every acknowledged job is
// in the file exactly once, in a state at least as far as acknowledged, with
// consistent indexes.
func TestCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("COLOCD_QUEUE_CRASH_SEED"); v != "" {
		fmt.Sscan(v, &seed)
	}
	t.Logf("seed %d (set COLOCD_QUEUE_CRASH_SEED to replay)", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	path := filepath.Join(t.TempDir(), "crash.db")

	type acked struct {
		key              string
		admitted, finish bool
	}
	all := map[string]*acked{}
	const rounds = 5
	for round := 0; round < rounds; round++ {
		killAfter := 5 + rng.IntN(150) // acknowledged lines before the kill
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+path, fmt.Sprintf("%s=r%d", crashPrefixEnv, round))
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		lines, killed := 0, false
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			switch {
			case len(f) == 3 && f[0] == "S":
				all[f[1]] = &acked{key: f[2]}
			case len(f) == 2 && f[0] == "A" && all[f[1]] != nil:
				all[f[1]].admitted = true
			case len(f) == 2 && f[0] == "F" && all[f[1]] != nil:
				all[f[1]].finish = true
			default:
				t.Fatalf("round %d: bad child line %q", round, sc.Text())
			}
			lines++
			if lines == killAfter && !killed {
				// Lines already in the pipe were acknowledged too; keep
				// reading them after the kill.
				cmd.Process.Signal(syscall.SIGKILL)
				killed = true
			}
		}
		err = cmd.Wait()
		if !killed {
			t.Fatalf("round %d: child exited on its own after %d lines: %v\n%s", round, lines, err, stderr.String())
		}
		t.Logf("round %d: killed after %d acknowledged lines (%d jobs so far)", round, lines, len(all))

		s, err := queue.Open(path, queue.Options{})
		if err != nil {
			t.Fatalf("round %d: reopen after SIGKILL: %v", round, err)
		}
		if err := s.CheckInvariants(); err != nil {
			t.Fatalf("round %d: invariants: %v", round, err)
		}
		jobs, err := s.List("", 0)
		if err != nil {
			t.Fatal(err)
		}
		byKey := map[string]int{}
		byID := map[string]queue.Job{}
		for _, j := range jobs {
			byKey[j.IdempotencyKey]++
			byID[j.ID] = j
			if !j.State.Valid() {
				t.Errorf("job %s has state %q", j.ID, j.State)
			}
		}
		for id, a := range all {
			j, ok := byID[id]
			switch {
			case !ok:
				t.Errorf("acknowledged job %s (%s) lost", id, a.key)
			case j.IdempotencyKey != a.key || byKey[a.key] != 1:
				t.Errorf("job %s: key %q stored %d times", id, a.key, byKey[a.key])
			case a.finish && j.State != queue.StateSucceeded:
				t.Errorf("job %s acknowledged finished, stored %s", id, j.State)
			case a.admitted && j.State == queue.StatePending:
				t.Errorf("job %s acknowledged admitted, stored pending", id)
			}
		}
		for k, n := range byKey {
			if n != 1 {
				t.Errorf("idempotency key %s stored %d times", k, n)
			}
		}
		// A retry of an acknowledged submission must not make a new job.
		for id, a := range all {
			j := queuetest.Job("retry")
			j.IdempotencyKey = a.key
			got, created, err := s.Submit(context.Background(), j)
			if err != nil || created || got.ID != id {
				t.Errorf("retry of %s: created=%v id=%s err=%v", a.key, created, got.ID, err)
			}
			break
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if t.Failed() {
			return
		}
	}
}
