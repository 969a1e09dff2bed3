#ifndef OFFSTAGE_CLINUXPROCESS_SHIM_H
#define OFFSTAGE_CLINUXPROCESS_SHIM_H

// Linux process calls Swift cannot import from Glibc: pidfd_open is reached
// only through the variadic syscall().
#include <errno.h>
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

#endif
