// The seccomp filter's cost per system call and its installation (issue 54), outside Swift:
// two million calls each of gettid and futex (allowed) and getppid (refused, after the whole
// list) before and after nr_sandbox_install. tools/trial/decoder_sandbox_bench.sh builds and
// runs it.
#include "nr_sandbox.h"

#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

// decoder_sandbox.c's nr_decoder_prepare calls it; libheif is not needed here.
void nr_heif_prepare(void) {}

static double now(void) {
    struct timespec time;
    clock_gettime(CLOCK_MONOTONIC, &time);
    return time.tv_sec + time.tv_nsec / 1e9;
}

static double nanoseconds_per_call(long number) {
    const int count = 2000000;
    double start = now();
    for (int i = 0; i < count; i++) {
        syscall(number, (void *)0, 1, 0, 0, 0, 0);
    }
    return (now() - start) / count * 1e9;
}

static void measure(const char *label) {
    printf("%s: gettid %.0f ns, futex %.0f ns, getppid %.0f ns\n", label, nanoseconds_per_call(SYS_gettid),
        nanoseconds_per_call(SYS_futex), nanoseconds_per_call(SYS_getppid));
}

int main(void) {
    measure("without the filter");
    char message[200];
    double start = now();
    int status = nr_sandbox_install(message, sizeof message);
    printf("install: status %d (%s) in %.0f us\n", status, message, (now() - start) * 1e6);
    measure("with the filter");
    return status;
}
