#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "hclock_api.h"
#include "util/err.h"

static _Thread_local char last_error[1024];
static _Thread_local int agreed;

int err_set(int code, const char *fmt, ...)
{
	va_list ap;
	char line[sizeof(last_error)]; /* the arguments may be the current line itself */
	agreed = 0;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	memcpy(last_error, line, sizeof(line));
	return code;
}

void err_vline(const char *who, const char *fmt, va_list ap)
{
	char buf[1024];
	int n = snprintf(buf, sizeof(buf) - 1, "%s: ", who);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(buf) - 1) {
		int m = vsnprintf(buf + n, sizeof(buf) - 1 - (size_t)n, fmt, ap);
		n = m < 0 ? n : n + m;
	}
	if ((size_t)n > sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	fflush(stderr);
	for (ssize_t off = 0, w; off < n; off += w)
		if ((w = write(STDERR_FILENO, buf + off, (size_t)(n - off))) <= 0)
			break;
}

void err_line(const char *who, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	err_vline(who, fmt, ap);
	va_end(ap);
}

void err_mark_agreed(void)
{
	agreed = 1;
}

int err_agreed(void)
{
	return agreed;
}

const char *hclock_last_error(void)
{
	return last_error[0] ? last_error : "no error";
}

const char *hclock_strerror(int err)
{
	switch (err) {
	case HCLOCK_OK: return "success";
	case HCLOCK_EINVAL: return "invalid argument";
	case HCLOCK_ENOMEM: return "out of memory";
	case HCLOCK_EUNSUPP: return "not supported on this machine";
	case HCLOCK_EMPI: return "MPI call failed";
	case HCLOCK_ESHARE: return "processes do not share a time source";
	case HCLOCK_EVERSION: return "unknown serialization version";
	case HCLOCK_EIO: return "input/output error";
	case HCLOCK_EMISMATCH: return "processes were given different specs or options";
	case HCLOCK_EINJECTED: return "injected fault (test hook HCLOCK_FAULT)";
	}
	return "unknown error";
}
