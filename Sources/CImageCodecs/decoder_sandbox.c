// The decoder child's seccomp-BPF filter (see nr_sandbox.h).
//
// The allow-list is what the child's loop was seen to call under `strace -f` while it decoded
// every HEIC and AVIF fixture (tools/trial/decoder_sandbox_trace.sh): reads and writes on the
// descriptors it has (its socket, /dev/null, Dispatch's eventfds), memory, futexes, threads,
// clocks, signals to itself, and the epoll/eventfd/timerfd calls of the Swift runtime's
// Dispatch threads. No call that names a path (open, openat, stat, unlink, mkdir...), no socket,
// connect, bind, fork, ioctl or mount is on it: those answer EPERM. Conditions on arguments:
//
//   clone       only with CLONE_THREAD (threads of this process, never a new process)
//   clone3      ENOSYS, so that glibc falls back to clone (clone3's flags are behind a pointer)
//   mmap, mprotect  never PROT_EXEC (no new code once the libraries are loaded)
//   prctl       only PR_SET_NAME / PR_GET_NAME (thread names of Dispatch and dav1d)
//   tgkill      only this process (raise, abort)
//   newfstatat  only AT_EMPTY_PATH (glibc's fstat), never a path
//   prlimit64   only reading this process's limits
//
// execve, execveat, ptrace and process_vm_readv/writev kill the process (SIGSYS), as does a
// system call of another architecture (the x32 ABI on x86_64 included).
#define _GNU_SOURCE  // CLONE_THREAD, AT_EMPTY_PATH

#include "nr_sandbox.h"
#include "heif_shim.h"

#include <stdio.h>

#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define NR_SANDBOX_ARCH AUDIT_ARCH_X86_64
#else
#define NR_SANDBOX_ARCH AUDIT_ARCH_AARCH64
#endif

/// The calls allowed whatever their arguments.
static const int nr_sandbox_allowed[] = {
    __NR_read, __NR_readv, __NR_write, __NR_writev, __NR_recvfrom, __NR_recvmsg, __NR_sendto, __NR_sendmsg,
    __NR_close, __NR_fstat, __NR_fcntl, __NR_ppoll, __NR_epoll_create1, __NR_epoll_ctl, __NR_epoll_pwait,
    __NR_eventfd2, __NR_timerfd_create, __NR_timerfd_settime, __NR_timerfd_gettime, __NR_munmap, __NR_mremap,
    __NR_brk, __NR_madvise, __NR_futex, __NR_set_robust_list, __NR_rseq, __NR_membarrier, __NR_sched_yield,
    __NR_sched_getaffinity, __NR_getrandom, __NR_clock_gettime, __NR_clock_getres, __NR_clock_nanosleep,
    __NR_nanosleep, __NR_gettimeofday, __NR_exit, __NR_exit_group, __NR_rt_sigreturn, __NR_rt_sigprocmask,
    __NR_rt_sigaction, __NR_sigaltstack, __NR_gettid, __NR_getpid, __NR_restart_syscall,
#ifdef __NR_poll
    __NR_poll,
#endif
#ifdef __NR_epoll_wait
    __NR_epoll_wait,
#endif
#ifdef __NR_epoll_pwait2
    __NR_epoll_pwait2,
#endif
#ifdef __NR_futex_waitv
    __NR_futex_waitv,
#endif
};

/// The calls that kill the process: no decoder has a reason to make them.
static const int nr_sandbox_fatal[] = {
    __NR_execve, __NR_execveat, __NR_ptrace, __NR_process_vm_readv, __NR_process_vm_writev,
};

#define NR_SANDBOX_MAX_PROGRAM 256
#define NR_ARG_LOW(n) (offsetof(struct seccomp_data, args) + 8 * (n))
#define NR_ARG_HIGH(n) (NR_ARG_LOW(n) + 4)

struct nr_program {
    struct sock_filter code[NR_SANDBOX_MAX_PROGRAM];
    unsigned short length;
    int overflow;
};

static void nr_emit(struct nr_program *program, struct sock_filter instruction) {
    if (program->length >= NR_SANDBOX_MAX_PROGRAM) {
        program->overflow = 1;
        return;
    }
    program->code[program->length++] = instruction;
}

static void nr_return(struct nr_program *program, unsigned int action) {
    nr_emit(program, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, action));
}

/// `if nr == call { block }`: the block (`count` instructions, which all end in a return)
/// follows; the caller emits it next.
static void nr_when_call(struct nr_program *program, int call, unsigned char count) {
    nr_emit(program, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)call, 0, count));
}

static void nr_load(struct nr_program *program, unsigned int offset) {
    nr_emit(program, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offset));
}

/// `if nr == call: return (arg & bits) ? allowed : otherwise else ...` in 4 instructions.
static void nr_when_bits(struct nr_program *program, int call, int argument, unsigned int bits, unsigned int when_set,
    unsigned int when_clear) {
    nr_when_call(program, call, 4);
    nr_load(program, NR_ARG_LOW(argument));
    nr_emit(program, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, bits, 0, 1));
    nr_return(program, when_set);
    nr_return(program, when_clear);
}

/// `if nr == call: return arg == value (its low 32 bits) ? ALLOW : EPERM` in 4 instructions.
static void nr_when_equal(struct nr_program *program, int call, int argument, unsigned int value) {
    nr_when_call(program, call, 4);
    nr_load(program, NR_ARG_LOW(argument));
    nr_emit(program, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, value, 0, 1));
    nr_return(program, SECCOMP_RET_ALLOW);
    nr_return(program, SECCOMP_RET_ERRNO | EPERM);
}

static void nr_build(struct nr_program *program, pid_t self) {
    const unsigned int eperm = SECCOMP_RET_ERRNO | EPERM;
    nr_load(program, offsetof(struct seccomp_data, arch));
    nr_emit(program, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR_SANDBOX_ARCH, 1, 0));
    nr_return(program, SECCOMP_RET_KILL_PROCESS);
    nr_load(program, offsetof(struct seccomp_data, nr));
#if defined(__x86_64__)
    // The x32 ABI's numbers (bit 30) reach the same kernel with another table.
    nr_emit(program, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1));
    nr_return(program, SECCOMP_RET_KILL_PROCESS);
#endif
    for (size_t i = 0; i < sizeof nr_sandbox_fatal / sizeof nr_sandbox_fatal[0]; i++) {
        nr_when_call(program, nr_sandbox_fatal[i], 1);
        nr_return(program, SECCOMP_RET_KILL_PROCESS);
    }
    for (size_t i = 0; i < sizeof nr_sandbox_allowed / sizeof nr_sandbox_allowed[0]; i++) {
        nr_when_call(program, nr_sandbox_allowed[i], 1);
        nr_return(program, SECCOMP_RET_ALLOW);
    }
    nr_when_call(program, __NR_clone3, 1);
    nr_return(program, SECCOMP_RET_ERRNO | ENOSYS);
    // clone's flags are its first argument on both architectures.
    nr_when_bits(program, __NR_clone, 0, CLONE_THREAD, SECCOMP_RET_ALLOW, eperm);
    nr_when_bits(program, __NR_mmap, 2, PROT_EXEC, eperm, SECCOMP_RET_ALLOW);
    nr_when_bits(program, __NR_mprotect, 2, PROT_EXEC, eperm, SECCOMP_RET_ALLOW);
    nr_when_bits(program, __NR_newfstatat, 3, AT_EMPTY_PATH, SECCOMP_RET_ALLOW, eperm);
    nr_when_equal(program, __NR_tgkill, 0, (unsigned int)self);
    // prctl: PR_SET_NAME or PR_GET_NAME.
    nr_when_call(program, __NR_prctl, 5);
    nr_load(program, NR_ARG_LOW(0));
    nr_emit(program, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PR_SET_NAME, 2, 0));
    nr_emit(program, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PR_GET_NAME, 1, 0));
    nr_return(program, eperm);
    nr_return(program, SECCOMP_RET_ALLOW);
    // prlimit64(0, resource, NULL, old): reading this process's limits only.
    nr_when_call(program, __NR_prlimit64, 8);
    nr_load(program, NR_ARG_LOW(0));
    nr_emit(program, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 5));
    nr_load(program, NR_ARG_LOW(2));
    nr_emit(program, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 3));
    nr_load(program, NR_ARG_HIGH(2));
    nr_emit(program, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1));
    nr_return(program, SECCOMP_RET_ALLOW);
    nr_return(program, eperm);
    // setpriority(PRIO_PROCESS, 0, n): Dispatch's threads setting their own priority.
    nr_when_equal(program, __NR_setpriority, 1, 0);
    nr_return(program, eperm);
}

int nr_sandbox_install(char *message, size_t size) {
    static struct nr_program program;
    memset(&program, 0, sizeof program);
    nr_build(&program, getpid());
    if (program.overflow) {
        snprintf(message, size, "the seccomp filter is longer than %d instructions", NR_SANDBOX_MAX_PROGRAM);
        return NR_SANDBOX_FAILED;
    }
    struct sock_fprog filter = {.len = program.length, .filter = program.code};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        snprintf(message, size, "prctl(PR_SET_NO_NEW_PRIVS) failed: %s", strerror(errno));
        return NR_SANDBOX_FAILED;
    }
    // TSYNC: the runtime's threads, started before this call, get the filter too.
    long result = syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &filter);
    if (result != 0) {
        int error = errno;
        snprintf(message, size, "seccomp(SECCOMP_SET_MODE_FILTER) failed: %s",
            result > 0 ? "a thread of the process has another filter" : strerror(error));
        return NR_SANDBOX_FAILED;
    }
    snprintf(message, size, "seccomp filter of %u instructions", (unsigned int)program.length);
    return NR_SANDBOX_INSTALLED;
}

#else

int nr_sandbox_install(char *message, size_t size) {
    snprintf(message, size, "no seccomp on this platform: the decoder process is not sandboxed");
    return NR_SANDBOX_UNAVAILABLE;
}

#endif

void nr_decoder_prepare(void) {
    nr_heif_prepare();
}
