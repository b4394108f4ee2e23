package serverlab

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A process the lab started that left the server's process group, as
// epmd -daemon does with setsid, is gone when the test ends: no server
// of one run holds a port of the next. It needs only sh, setsid and
// sleep, so it runs without the lab's switch.
func TestCleanupKillsDaemons(t *testing.T) {
	for _, p := range []string{"sh", "setsid", "sleep"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("%s is not installed: %v", p, err)
		}
	}
	var pidFile string
	t.Run("lab", func(t *testing.T) {
		l := labIn(t, 1)
		pidFile = l.path("daemon.pid")
		l.serve("server.log", "sh", "-c", "setsid sleep 300 & echo $! > daemon.pid; exec sleep 300")
		for i := 0; i < 50; i++ {
			if b, _ := os.ReadFile(pidFile); len(b) > 0 && strings.HasSuffix(string(b), "\n") {
				pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
				pidFile = strconv.Itoa(pid)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatal("the daemon did not start")
	})
	pid, err := strconv.Atoi(pidFile)
	if err != nil {
		t.Fatalf("no daemon pid: %q", pidFile)
	}
	if alive(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("the daemon %d, outside the server's process group, outlived the test", pid)
	}
}

// A client library's log line before the command's own words is passed
// over: etcdctl's gRPC client logs a line with a time stamp and a
// connection id, which would make every sample a phase of its own.
func TestFirstLineSkipsClientLogs(t *testing.T) {
	out := `{"level":"warn","ts":"2026-12-05T13:06:54.218Z","msg":"retrying of unary invoker failed","error":"rpc error: code = DeadlineExceeded desc = context deadline exceeded"}
http://127.0.0.1:2379 is unhealthy: failed to commit proposal: context deadline exceeded
Error: unhealthy cluster
`
	if got, want := firstLine(out), "http://127.0.0.1:2379 is unhealthy: failed to commit proposal: context deadline exceeded"; got != want {
		t.Errorf("firstLine = %q, want %q", got, want)
	}
	if got := firstLine("\n  took = 5.5ms\n"); got != "took = ..." {
		t.Errorf("firstLine elides timings: got %q", got)
	}
}
