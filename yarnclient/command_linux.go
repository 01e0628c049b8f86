package yarnclient

import "syscall"

// parentDeath has the kernel SIGKILL the command when the thread that
// started it ends (prctl PR_SET_PDEATHSIG, kept across the execs of a
// script that ends in exec, as spark-submit, flink and yarn's scripts
// do): SubmitCommand holds that thread until the command has ended, so
// it ends before then only with the daemon.
func parentDeath(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
