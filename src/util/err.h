/* err.h - the last-error line behind hclock_last_error(), and small helpers. */
#ifndef HCLOCK_UTIL_ERR_H
#define HCLOCK_UTIL_ERR_H

#include <stdarg.h>
#include <stddef.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

/* Record one line for hclock_last_error() and return code (a negative HCLOCK_E*). */
int err_set(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Print "WHO: MESSAGE\n" on stderr in one write(2), so that a launcher forwarding the
 * output of several processes (mpirun) cannot split the line; long lines are cut at 1 KiB. */
void err_line(const char *who, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void err_vline(const char *who, const char *fmt, va_list ap);

/* keep the first error: rc if set, else r */
static inline int first_err(int rc, int r)
{
	return rc ? rc : r;
}
/* The line was agreed on by the ranks of a communicator (transport/comm.c): an outer
 * agreement passes it on as it is. err_set clears the mark. */
void err_mark_agreed(void);
int err_agreed(void);

#endif
