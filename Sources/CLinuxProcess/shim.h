#ifndef OFFSTAGE_CLINUXPROCESS_SHIM_H
#define OFFSTAGE_CLINUXPROCESS_SHIM_H

// Linux process calls Swift cannot import from Glibc: pidfd_open,
// pidfd_send_signal and
// sched_setaffinity (a GNU extension Swift's Glibc module leaves out) are
// reached through the variadic syscall(), and Swift's Glibc module does not
// show posix_spawn_file_actions_addclosefrom_np.
#include <errno.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

/// A descriptor that becomes readable when process `pid` exits (Linux 5.3),
/// or -1 (errno set).
static inline int offstage_pidfd_open(pid_t pid) {
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    errno = ENOSYS;
    return -1;
#endif
}

/// Sends `signal` to the process `pidfd` names (Linux 5.1): never to
/// another process given its pid since; 0 or -1 (errno set).
static inline int offstage_pidfd_send_signal(int pidfd, int signal) {
#ifdef SYS_pidfd_send_signal
    return (int)syscall(SYS_pidfd_send_signal, pidfd, signal, NULL, 0);
#else
    errno = ENOSYS;
    return -1;
#endif
}

/// Sets the CPUs thread `tid` (0: the caller) may run on, from a mask of
/// `size` bytes; 0 or -1 (errno set). The benchmarks pin their own
/// processes with it; the daemon never changes an app's affinity.
static inline int offstage_set_affinity(pid_t tid, size_t size, const void *mask) {
    return (int)syscall(SYS_sched_setaffinity, tid, size, mask);
}

/// Makes a spawned child close every descriptor from `from` up, so it does
/// not inherit ones opened without close-on-exec (by C libraries, or by
/// other threads at the same moment). Returns 0, or an error number
/// (ENOSYS before glibc 2.34).
static inline int offstage_spawn_close_from(posix_spawn_file_actions_t *actions, int from) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
#else
    (void)actions;
    (void)from;
    return ENOSYS;
#endif
}

#endif
