// The decoder child's sandbox (issue 54): a seccomp-BPF allow-list of the system calls its
// decoding loop makes, installed after its one-time initialisation and before it reads the
// first untrusted byte.
#ifndef NETRUNNER_NR_SANDBOX_H
#define NETRUNNER_NR_SANDBOX_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What `nr_sandbox_install` did.
enum {
    /// The filter is installed on every thread of the process.
    NR_SANDBOX_INSTALLED = 0,
    /// This platform has no seccomp (not Linux, or not x86_64 or aarch64): nothing was done.
    NR_SANDBOX_UNAVAILABLE = 1,
    /// The kernel refused the filter (too old, or seccomp disabled); the message says why.
    NR_SANDBOX_FAILED = 2,
};

/// Does everything a decoder child needs files, libraries or the network for, once, before its
/// sandbox closes them: libheif's `heif_init` (which loads its decoder plugins with dlopen).
void nr_decoder_prepare(void);

/// Confines this process, all its threads and every thread it starts later, to the system
/// calls of a decoding loop that reads requests from fd 0 and answers on fd 1. Everything else
/// fails with EPERM; execve, execveat, ptrace and the process_vm_* calls kill the process
/// (SIGSYS), and so does a system call of another architecture. Cannot be undone.
///
/// Writes a one-line description of the outcome into `message` (at most `size` bytes).
int nr_sandbox_install(char *message, size_t size);

#ifdef __cplusplus
}
#endif

#endif
