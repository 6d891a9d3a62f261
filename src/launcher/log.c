/* The launcher's own lines, in the wrapper's log format (text or JSON), and the wrapper's lines passed on: all
 * to stderr when it takes them, dropped rather than block. */

#include "launcher.h"

struct log_out log_out;

long long now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Write to the real stderr only when it can take the bytes now: a log reader that stalls must not stall us. */
void flush_log(int wait_ms) {
    long long deadline = now_ms() + wait_ms;
    while (log_out.length > 0) {
        struct pollfd p = {.fd = 2, .events = POLLOUT};
        long long left = deadline - now_ms();
        if (poll(&p, 1, left > 0 ? (int)left : 0) != 1 || !(p.revents & POLLOUT)) return;
        size_t chunk = log_out.length < 256 ? log_out.length : 256; /* a tty promises room for 256 */
        ssize_t n = write(2, log_out.bytes, chunk);
        if (n <= 0) {
            if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
            log_out.length = 0; /* stderr is closed or broken: nothing more to say */
            return;
        }
        memmove(log_out.bytes, log_out.bytes + n, log_out.length - (size_t)n);
        log_out.length -= (size_t)n;
    }
}

void add_log(const char *bytes, size_t length) {
    size_t room = sizeof log_out.bytes - log_out.length;
    if (length > room) length = room; /* dropped: never block, never grow */
    memcpy(log_out.bytes + log_out.length, bytes, length);
    log_out.length += length;
}

/* Seconds since 1970 as 2006-01-02T15:04:05 (UTC): the civil date from the day count, without the C library's
 * time zone and locale code. */
static void utc_time(long long seconds, char *text, size_t size) {
    long long days = seconds / 86400, rest = seconds % 86400;
    long long era_day = days + 719468, era = era_day / 146097, day_of_era = era_day - era * 146097;
    long long year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
    long long day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    long long month_index = (5 * day_of_year + 2) / 153, day = day_of_year - (153 * month_index + 2) / 5 + 1;
    long long month = month_index < 10 ? month_index + 3 : month_index - 9, year = year_of_era + era * 400 + (month <= 2);
    snprintf(text, size, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lld", year, month, day, rest / 3600, rest / 60 % 60, rest % 60);
}

/* One line of ours, in the wrapper's log format: "istio-job-run: ..." or a JSON record. */
__attribute__((format(printf, 2, 3))) void say(const char *level, const char *format, ...) {
    /* Static, not on the stack: a stack limit below the floor is said with this too. Never reentered. */
    static char message[16384], line[2 * sizeof message + 128], escaped[2 * sizeof message];
    va_list args;
    va_start(args, format);
    int length = vsnprintf(message, sizeof message, format, args);
    va_end(args);
    if (length < 0) return;
    int n;
    if (log_out.json) {
        struct timespec t;
        char when[64];
        clock_gettime(CLOCK_REALTIME, &t);
        utc_time(t.tv_sec, when, sizeof when);
        char *e = escaped;
        for (const char *c = message; *c != '\0'; c++) {
            if (*c == '"' || *c == '\\') *e++ = '\\';
            *e++ = (unsigned char)*c < 0x20 ? ' ' : *c;
        }
        *e = '\0';
        n = snprintf(line, sizeof line, "{\"time\":\"%s.%03ldZ\",\"level\":\"%s\",\"msg\":\"%s\"}\n", when, t.tv_nsec / 1000000, level,
                     escaped);
    } else {
        const char *tag = strcmp(level, "warn") == 0 ? "warning: " : "";
        n = snprintf(line, sizeof line, "%s%s%s\n", LOG_PREFIX, tag, message);
    }
    if (n > 0) add_log(line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    flush_log(LOG_FLUSH_MS);
}
