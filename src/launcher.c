/*
 * The launcher of the portable bundle. The bundle is this file and, beside it, istio-job-run.lib/: the
 * single executable with the C libraries it needs and their dynamic loader. An ELF's loader path is fixed
 * (absolute, or relative to the working directory), so it cannot follow the path a volume is mounted at;
 * this static program finds its own directory and starts the executable through the bundled loader:
 *
 *   istio-job-run.lib/<loader> --argv0 <this file> --library-path istio-job-run.lib istio-job-run.lib/istio-job-run ARGS
 *
 * It execs in place (same PID, so signals and the exit code are the executable's own) and needs nothing
 * from the image: no libc, no shell. If it cannot start the executable it says why and exits 125.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef LOADER
#error "LOADER must name the dynamic loader, e.g. -DLOADER=\"ld-linux-x86-64.so.2\""
#endif

#define LIB_DIR "istio-job-run.lib"
#define PROGRAM "istio-job-run"
#define EXIT_FAILED 125

static void fail(const char *what, const char *path) {
    dprintf(2, "istio-job-run: %s %s: %s\n", what, path, strerror(errno));
    _exit(EXIT_FAILED);
}

/* This file's absolute path: /proc/self/exe, or argv[0] where /proc is not mounted (a bare chroot). */
static void find_self(const char *argv0, char self[PATH_MAX]) {
    ssize_t n = readlink("/proc/self/exe", self, PATH_MAX - 1);
    if (n > 0) {
        self[n] = '\0';
        return;
    }
    if (argv0 == NULL || strchr(argv0, '/') == NULL || realpath(argv0, self) == NULL) {
        fail("cannot find its own path (mount /proc, or start it by path):", argv0 == NULL ? "" : argv0);
    }
}

int main(int argc, char **argv) {
    static char self[PATH_MAX], lib[PATH_MAX], loader[PATH_MAX], program[PATH_MAX];
    find_self(argc > 0 ? argv[0] : NULL, self);

    size_t dir_length = (size_t)(strrchr(self, '/') - self);
    if (snprintf(lib, sizeof lib, "%.*s/%s", (int)dir_length, self, LIB_DIR) >= (int)sizeof lib ||
        snprintf(loader, sizeof loader, "%s/%s", lib, LOADER) >= (int)sizeof loader ||
        snprintf(program, sizeof program, "%s/%s", lib, PROGRAM) >= (int)sizeof program) {
        errno = ENAMETOOLONG;
        fail("path too long:", self);
    }

    char **args = calloc((size_t)argc + 7, sizeof *args);
    if (args == NULL) fail("out of memory starting", loader);
    int n = 0;
    args[n++] = loader;
    args[n++] = "--argv0";
    args[n++] = self;
    args[n++] = "--library-path";
    args[n++] = lib;
    args[n++] = program;
    for (int i = 1; i < argc; i++) args[n++] = argv[i];
    args[n] = NULL;

    execv(loader, args);
    fail("cannot start", loader);
    return EXIT_FAILED;
}
