/* parse.c - numbers and durations by one rule (parse.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/parse.h"

/* Copy the n characters into a NUL-terminated buffer; refuse empty or overlong tokens and
 * leading blanks (strtod/strtol would skip them). */
static int token(const char *s, size_t n, char *buf, size_t len)
{
	if (!s || !n || n >= len || s[0] == ' ' || s[0] == '\t' || s[0] == '\n')
		return -1;
	memcpy(buf, s, n);
	buf[n] = 0;
	return 0;
}

int parse_int(const char *s, size_t n, long lo, long hi, long *out)
{
	char buf[32], *end;
	if (token(s, n, buf, sizeof(buf)))
		return -1;
	errno = 0;
	long v = strtol(buf, &end, 10);
	if (*end || errno || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

int parse_bytes(const char *s, size_t n, uint64_t lo, uint64_t hi, uint64_t *out)
{
	if (!s || !n || *s < '0' || *s > '9')
		return -1;
	uint64_t v = 0;
	size_t i = 0;
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
		uint64_t d = (uint64_t)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	if (i < n) {
		static const char units[] = "KMGT";
		int c = s[i] & ~0x20; /* upper case */
		const char *u = c ? strchr(units, c) : NULL;
		int shift = u ? 10 * (int)(u - units + 1) : 0;
		if (!u || i + 1 != n || v > (UINT64_MAX >> shift))
			return -1;
		v <<= shift;
	}
	if (v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

/* strtod, but only decimal literals: no hex, inf or nan spelled out */
static int number(const char *buf, char **end, double *v)
{
	for (const char *c = buf; *c; c++)
		if (*c == 'x' || *c == 'X' || *c == 'n' || *c == 'N' || *c == 'i' || *c == 'I')
			return -1;
	errno = 0;
	*v = strtod(buf, end);
	return *end == buf || errno || !isfinite(*v) ? -1 : 0;
}

int parse_number(const char *s, size_t n, double lo, double hi, double *out)
{
	char buf[64], *end = NULL;
	double v;
	if (token(s, n, buf, sizeof(buf)) || number(buf, &end, &v) || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

/* value in seconds */
static int duration(const char *s, size_t n, double *sec)
{
	static const struct {
		const char *unit;
		double s;
	} units[] = {{"", 1}, {"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1}, {"m", 60},
	             {"h", 3600}};
	char buf[64], *end = NULL;
	double v;
	if (token(s, n, buf, sizeof(buf)))
		return -1;
	/* the unit is the trailing run of letters; the number before it */
	size_t k = n;
	while (k && ((buf[k - 1] >= 'a' && buf[k - 1] <= 'z')))
		k--;
	char unit[4];
	if (n - k >= sizeof(unit) || !k)
		return -1;
	memcpy(unit, buf + k, n - k);
	unit[n - k] = 0;
	buf[k] = 0;
	if (number(buf, &end, &v) || *end)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(unit, units[i].unit)) {
			*sec = v * units[i].s;
			return isfinite(*sec) ? 0 : -1;
		}
	return -1;
}

int parse_duration_ns(const char *s, size_t n, int64_t lo_ns, int64_t hi_ns, int64_t *out)
{
	double sec;
	if (duration(s, n, &sec))
		return -1;
	double ns = sec * 1e9;
	if (!(ns > -9.2e18 && ns < 9.2e18))
		return -1;
	int64_t v = (int64_t)llround(ns);
	if (v < lo_ns || v > hi_ns)
		return -1;
	*out = v;
	return 0;
}

int parse_duration_s(const char *s, size_t n, double lo_s, double hi_s, double *out)
{
	double sec;
	if (duration(s, n, &sec) || sec < lo_s || sec > hi_s)
		return -1;
	*out = sec;
	return 0;
}
