// Package zktest runs real ZooKeeper servers for tests: Debian's
// zookeeper 3.8 (a JVM), a standalone server or a quorum of three on
// loopback ports, each in its own process group with its data in a
// temporary directory, so that a test can kill, pause and restart them.
//
// It needs java and zookeeper.jar (COLOCD_ZOOKEEPER_JAR, default
// /usr/share/java/zookeeper.jar, from Debian's zookeeper package, which
// make test installs). Without them the test is skipped, or failed with
// COLOCD_REQUIRE_TOOLS=1.
package zktest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/colocd/colocd/internal/testing/childproc"
	"github.com/colocd/colocd/internal/testing/testlogs"
)

// Bounds. A cold JVM starts ZooKeeper in 1–2 s here; a quorum elects its
// leader within a few ticks of the last server's start. The margins cover
// a loaded 2-core CI machine.
const (
	readyTimeout = 60 * time.Second
	stopTimeout  = 10 * time.Second
	pollEvery    = 50 * time.Millisecond
	startTries   = 3
)

// defaultTick is the servers' tickTime unless Options.Tick says
// otherwise. A server grants session timeouts between 2 and 20 ticks:
// 0.5–5 s at this tick.
const defaultTick = 250 * time.Millisecond

// Options configure Start.
type Options struct {
	Servers int           // 1 (standalone) or 3; 0 means 3
	Tick    time.Duration // tickTime; 0 means defaultTick
}

// Ensemble is a running ZooKeeper: one server or a quorum.
type Ensemble struct {
	t       testing.TB
	java    string
	jar     string
	dir     string
	tick    time.Duration
	servers []*Server
}

// Server is one ZooKeeper server of an ensemble.
type Server struct {
	ID         int
	ClientAddr string // 127.0.0.1:port
	quorum     string // 127.0.0.1:peer:election
	dir        string
	e          *Ensemble

	mu   sync.Mutex
	proc *childproc.Proc
}

// tools returns java and zookeeper.jar, or skips (or fails) tb.
func tools(tb testing.TB) (java, jar string) {
	tb.Helper()
	jar = os.Getenv("COLOCD_ZOOKEEPER_JAR")
	if jar == "" {
		jar = "/usr/share/java/zookeeper.jar"
	}
	java, err := exec.LookPath("java")
	if err == nil {
		_, err = os.Stat(jar)
	}
	if err != nil {
		msg := fmt.Sprintf("zktest: ZooKeeper not available (java and %s, Debian package zookeeper; make test installs it): %v", jar, err)
		if os.Getenv("COLOCD_REQUIRE_TOOLS") == "1" {
			tb.Fatal(msg)
		}
		tb.Skip(msg)
	}
	return java, jar
}

// Start starts an ensemble and waits until it serves (a quorum: until one
// server leads). It is stopped in tb.Cleanup; a failed test's server logs
// are kept (testlogs).
func Start(tb testing.TB, o Options) *Ensemble {
	tb.Helper()
	java, jar := tools(tb)
	if o.Servers == 0 {
		o.Servers = 3
	}
	if o.Servers != 1 && o.Servers != 3 {
		tb.Fatalf("zktest: %d servers, want 1 or 3", o.Servers)
	}
	if o.Tick == 0 {
		o.Tick = defaultTick
	}
	var last error
	for range startTries {
		e := &Ensemble{t: tb, java: java, jar: jar, dir: tb.TempDir(), tick: o.Tick}
		tb.Cleanup(e.stopAll)
		if last = e.start(o.Servers); last == nil {
			return e
		}
		e.keepLogs()
		e.stopAll() // a port taken between the probe and the bind: try new ones
	}
	tb.Fatalf("zktest: start %d servers: %v", o.Servers, last)
	return nil
}

func (e *Ensemble) start(n int) error {
	for i := 1; i <= n; i++ {
		ports, err := freePorts(3)
		if err != nil {
			return err
		}
		s := &Server{ID: i, e: e, dir: filepath.Join(e.dir, fmt.Sprintf("zk%d", i)),
			ClientAddr: fmt.Sprintf("127.0.0.1:%d", ports[0]),
			quorum:     fmt.Sprintf("127.0.0.1:%d:%d", ports[1], ports[2])}
		e.servers = append(e.servers, s)
	}
	for _, s := range e.servers {
		if err := s.writeConfig(); err != nil {
			return err
		}
		if err := s.Start(); err != nil {
			return err
		}
	}
	e.t.Cleanup(func() {
		if e.t.Failed() {
			e.keepLogs()
		}
	})
	return e.WaitServing()
}

// freePorts asks the kernel for n free loopback ports. They are free when
// asked, not promised: Start retries with new ones when a server fails.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var out []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

func (s *Server) writeConfig() error {
	data := filepath.Join(s.dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "tickTime=%d\ninitLimit=20\nsyncLimit=10\ndataDir=%s\n", s.e.tick.Milliseconds(), data)
	fmt.Fprintf(&b, "clientPort=%s\nclientPortAddress=127.0.0.1\n", s.ClientAddr[strings.LastIndex(s.ClientAddr, ":")+1:])
	b.WriteString("admin.enableServer=false\n4lw.commands.whitelist=ruok,srvr,mntr\npreAllocSize=4096\n")
	if len(s.e.servers) > 1 {
		for _, o := range s.e.servers {
			fmt.Fprintf(&b, "server.%d=%s\n", o.ID, o.quorum)
		}
		if err := os.WriteFile(filepath.Join(data, "myid"), []byte(fmt.Sprintln(s.ID)), 0o644); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(s.dir, "log4j.properties"), []byte(log4j), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(s.dir, "zoo.cfg"), []byte(b.String()), 0o644)
}

const log4j = `log4j.rootLogger=INFO, CONSOLE
log4j.appender.CONSOLE=org.apache.log4j.ConsoleAppender
log4j.appender.CONSOLE.layout=org.apache.log4j.PatternLayout
log4j.appender.CONSOLE.layout.ConversionPattern=%d{ISO8601} [myid:%X{myid}] %-5p [%t:%C{1}@%L] %m%n
`

// Start starts the server (again, after Kill or Stop).
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil && !s.proc.Done() {
		return fmt.Errorf("zktest: server %d is running", s.ID)
	}
	cp := strings.Join([]string{s.dir, s.e.jar, "/usr/share/java/slf4j-log4j12.jar", "/usr/share/java/log4j-1.2.jar"}, ":")
	args := []string{"-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto",
		"-Dzookeeper.admin.enableServer=false", "-cp", cp,
		"org.apache.zookeeper.server.quorum.QuorumPeerMain", filepath.Join(s.dir, "zoo.cfg")}
	p, err := childproc.Start(fmt.Sprintf("zookeeper-%d", s.ID), s.e.java, args,
		childproc.Options{Dir: s.dir, LogPath: filepath.Join(s.dir, "server.log"), AppendLog: true})
	if err != nil {
		return err
	}
	s.proc = p
	return nil
}

// Kill sends SIGKILL and waits until the process is gone.
func (s *Server) Kill() { s.signal(syscall.SIGKILL, true) }

// Stop sends SIGTERM (SIGKILL after a while) and waits.
func (s *Server) Stop() {
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	if p != nil {
		_ = p.Stop(stopTimeout)
	}
}

// Pause stops the process (SIGSTOP) until Resume.
func (s *Server) Pause() { s.signal(syscall.SIGSTOP, false) }

// Resume continues a paused process (SIGCONT).
func (s *Server) Resume() { s.signal(syscall.SIGCONT, false) }

func (s *Server) signal(sig syscall.Signal, wait bool) {
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	if p == nil {
		return
	}
	_ = p.Signal(sig)
	if wait {
		<-p.Exited()
	}
}

// Pid is the server's process id (its JVM), 0 when it was never started.
func (s *Server) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return 0
	}
	return s.proc.Pid()
}

// Log returns what the server has logged so far (log4j's ISO8601 lines,
// across its restarts).
func (s *Server) Log() ([]byte, error) {
	return os.ReadFile(filepath.Join(s.dir, "server.log"))
}

// Mode is the server's answer to srvr ("leader", "follower",
// "standalone"), or "" when it does not answer.
func (s *Server) Mode() string {
	out, err := FourLetter(s.ClientAddr, "srvr")
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(out, "\n") {
		if m, ok := strings.CutPrefix(l, "Mode: "); ok {
			return strings.TrimSpace(m)
		}
	}
	return ""
}

// FourLetter sends a four-letter command and returns the answer.
func FourLetter(addr, cmd string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte(cmd)); err != nil {
		return "", err
	}
	var b strings.Builder
	sc := bufio.NewScanner(c)
	for sc.Scan() {
		b.WriteString(sc.Text())
		b.WriteByte('\n')
	}
	return b.String(), nil
}

// Servers are the ensemble's servers, by id from 1.
func (e *Ensemble) Servers() []*Server { return e.servers }

// Server returns server id (from 1).
func (e *Ensemble) Server(id int) *Server { return e.servers[id-1] }

// Tick is the servers' tickTime.
func (e *Ensemble) Tick() time.Duration { return e.tick }

// Connect is the client connect string: every server's address.
func (e *Ensemble) Connect() string {
	var as []string
	for _, s := range e.servers {
		as = append(as, s.ClientAddr)
	}
	return strings.Join(as, ",")
}

// Addrs are the servers' client addresses.
func (e *Ensemble) Addrs() []string { return strings.Split(e.Connect(), ",") }

// WaitServing waits until a standalone server answers, or one server of
// a quorum leads and a majority answers.
func (e *Ensemble) WaitServing() error {
	deadline := time.Now().Add(readyTimeout)
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		leaders, up := 0, 0
		for _, s := range e.servers {
			switch s.Mode() {
			case "leader", "standalone":
				leaders++
				up++
			case "follower":
				up++
			}
		}
		if leaders == 1 && up > len(e.servers)/2 {
			return nil
		}
		for _, s := range e.servers {
			s.mu.Lock()
			p := s.proc
			s.mu.Unlock()
			if p != nil && p.Done() && !p.Killed() {
				return fmt.Errorf("zktest: server %d exited: %v", s.ID, p.Err())
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("zktest: no serving ensemble after %v (%d leaders, %d up)", readyTimeout, leaders, up)
		}
		<-tick.C
	}
}

func (e *Ensemble) stopAll() {
	var wg sync.WaitGroup
	for _, s := range e.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.Resume()
			s.Stop()
		}()
	}
	wg.Wait()
}

func (e *Ensemble) keepLogs() {
	for _, s := range e.servers {
		out, err := os.ReadFile(filepath.Join(s.dir, "server.log"))
		if err == nil {
			testlogs.Log(e.t, fmt.Sprintf("zookeeper-%d", s.ID), out)
		}
	}
}
