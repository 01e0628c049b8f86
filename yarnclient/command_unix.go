//go:build unix

package yarnclient

import (
	"os/exec"
	"syscall"
)

// setProcessGroup starts the command in its own process group and makes
// cancellation SIGKILL the whole group, so that a submitter's children (a
// JVM started by a shell script) die with it. Where the system has it
// (Linux), the command is also SIGKILLed when the daemon dies
// (parentDeath): see SubmitCommand.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	parentDeath(cmd.SysProcAttr)
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
