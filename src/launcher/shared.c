/* What more than one of the launcher's files reads: what this program was given, the wrapper and the command, and
 * the failure before the command runs. It needs only log.c, so the files depend on each other in one direction. */

#include "launcher.h"

struct given given;
struct wrapper wrapper = {.channel = -1, .log = -1, .declared = -1};
struct command command;

/* Before the command runs: one line, exit 125. Never called once it runs. */
__attribute__((format(printf, 1, 2), noreturn)) void fail(const char *format, ...) {
    char message[PATH_MAX + 256];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    say("error", "%s", message);
    if (wrapper.pid > 0 && !wrapper.ended) kill(wrapper.pid, SIGKILL);
    _exit(EXIT_FAILED);
}
