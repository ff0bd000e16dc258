// Package clockfault skews the clocks of running processes, without root:
// an offset (a jump, either way), a rate (faster or slower, from the
// moment the fault begins), or both, on the realtime clocks, the
// monotonic ones, or both; and puts them right again.
//
// How: Go's runtime, glibc, musl and the JVM read their clocks through
// the vDSO, the kernel's code mapped into every process, without a system
// call. coup writes a small hook (testdata/hook.s) into the unused tail of
// the vDSO's last page, and turns the first instructions of
// __vdso_clock_gettime, __vdso_gettimeofday and __vdso_time into jumps to
// it. The hook calls the real clock_gettime (its first instructions,
// moved, then a jump back) and skews what it read by the parameters coup
// keeps beside it. Every thread of the process shares the vDSO, so every
// thread sees the skew at once; a child the process forks inherits it, a
// program it executes does not (it gets a fresh vDSO).
//
// Everything goes through /proc/PID/mem: no ptrace, so nothing is ever
// left traced, and no ptrace stop can be reported to coup's own waits on
// its children. Writing there needs what ptrace's attach needs: a process
// of coup's own user that is not setuid, and, where Yama's ptrace_scope
// is 1 (Ubuntu's default), one that coup started or that its processes
// started; scope 2 needs root, scope 3 forbids it. The kernel must also
// let the write through the vDSO's read-only mapping, as it does unless
// proc_mem.force_override is "never" or "ptrace". Check says whether all
// this holds here.
//
// The jumps go in while the process is stopped (SIGSTOP, then SIGCONT),
// and only when no thread is caught within the instructions they cover:
// about a millisecond. A process already stopped (paused by a fault) is
// patched as it is and left stopped. Changing a skew already in place
// writes its parameters alone, with no stop: the hook keeps two slots and
// a generation, and a reader that sees the generation move reads again.
//
// Read reads back what the process's clocks saw: the hook counts the
// reads of each class and keeps the skew of the last, in the unused end of
// the page that holds the end of the program's data (when there is room).
//
// What it cannot reach: a program that makes the clock_gettime system
// call itself (Reachable refuses a static program that never looks the
// vDSO up); a process coup may not write (Apply says why); a process that
// executes a new program after the patch (its new image is not patched:
// apply again). Only x86-64 Linux.
package clockfault
