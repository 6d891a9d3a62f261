/*
 * The bench's timer (scripts/bench/run.ts builds it with the machine's cc):
 *
 *   rusage [--cgroup PROCS_FILE] [--evict FILE]... -- PROGRAM ARGS...
 *
 * Drops FILEs from the page cache (posix_fadvise DONTNEED: a first run in a fresh pod reads them from disk, and
 * its memory cgroup is charged for them), forks, puts the child into the cgroup (its PID written to PROCS_FILE)
 * before it execs PROGRAM with stdin and stdout on /dev/null, and waits for it with wait4. Node has no wait4:
 * its rusage is the only way to get the CPU time of a whole process tree (the launcher waits for its own
 * children, so their times are in its rusage). Prints one line to stdout:
 *
 *   WALL_US USER_US SYS_US MAXRSS_KIB STATUS
 *
 * WALL_US runs from just before fork to just after wait4; STATUS is the raw wait status.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long micros(const struct timespec *t) { return (long long)t->tv_sec * 1000000 + t->tv_nsec / 1000; }
static long long tv_micros(const struct timeval *t) { return (long long)t->tv_sec * 1000000 + t->tv_usec; }

static void evict(const char *file) {
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        perror(file);
        exit(2);
    }
    fdatasync(fd);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
}

int main(int argc, char **argv) {
    const char *cgroup = NULL;
    int i = 1;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "--cgroup") == 0 && i + 1 < argc) cgroup = argv[++i];
        else if (strcmp(argv[i], "--evict") == 0 && i + 1 < argc) evict(argv[++i]);
        else {
            fprintf(stderr, "rusage: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    if (i + 1 >= argc) {
        fprintf(stderr, "usage: rusage [--cgroup PROCS_FILE] [--evict FILE]... -- PROGRAM ARGS...\n");
        return 2;
    }
    char **command = argv + i + 1;
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 2;
    }
    if (pid == 0) {
        if (cgroup != NULL) {
            FILE *procs = fopen(cgroup, "w");
            if (procs == NULL || fprintf(procs, "%d\n", (int)getpid()) < 0 || fclose(procs) != 0) {
                perror(cgroup);
                _exit(126);
            }
        }
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(null, 1);
        execvp(command[0], command);
        perror(command[0]);
        _exit(127);
    }
    int status;
    struct rusage usage;
    if (wait4(pid, &status, 0, &usage) != pid) {
        perror("wait4");
        return 2;
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    printf("%lld %lld %lld %ld %d\n", micros(&end) - micros(&start), tv_micros(&usage.ru_utime), tv_micros(&usage.ru_stime),
           usage.ru_maxrss, status);
    return 0;
}
