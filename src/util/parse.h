/*
 * parse.h - the one rule for numbers and durations, used by every option, spec and
 * emulation string (no MPI, no error line: callers name the option and what is right).
 *
 *   integer   decimal digits with an optional sign: "20", "-3"
 *   number    a decimal or exponent literal, no unit: "100", "1e-6", "0.25"
 *   duration  a number with an optional unit ns, us, ms, s, m (minutes) or h; a bare number
 *             means seconds everywhere: "500ms", "2s", "2", "10m", "1h", "1e-3"
 *   size      bytes: decimal digits with an optional K, M, G or T (powers of 1024, either
 *             case): "64", "4K", "16M"
 *
 * Every function parses exactly n characters of s (n = strlen(s) for a whole string, or a
 * token's length inside a spec), refuses anything else (empty, trailing characters, NaN,
 * infinity, out of [lo, hi]), and returns 0 or -1. *out is written only on success.
 */
#ifndef HCLOCK_UTIL_PARSE_H
#define HCLOCK_UTIL_PARSE_H

#include <stddef.h>
#include <stdint.h>

int parse_int(const char *s, size_t n, long lo, long hi, long *out);
int parse_number(const char *s, size_t n, double lo, double hi, double *out);
/* Size in bytes, within [lo, hi]. */
int parse_bytes(const char *s, size_t n, uint64_t lo, uint64_t hi, uint64_t *out);
/* Duration in ns (rounded to the nearest ns), within [lo_ns, hi_ns]. */
int parse_duration_ns(const char *s, size_t n, int64_t lo_ns, int64_t hi_ns, int64_t *out);
/* Duration in s (as a double, for spans and periods), within [lo_s, hi_s]. */
int parse_duration_s(const char *s, size_t n, double lo_s, double hi_s, double *out);

/* Whole-string forms. */
static inline int parse_int_str(const char *s, long lo, long hi, long *out);
static inline int parse_number_str(const char *s, double lo, double hi, double *out);
static inline int parse_duration_s_str(const char *s, double lo_s, double hi_s, double *out);

#include <string.h>
static inline int parse_int_str(const char *s, long lo, long hi, long *out)
{
	return s ? parse_int(s, strlen(s), lo, hi, out) : -1;
}
static inline int parse_number_str(const char *s, double lo, double hi, double *out)
{
	return s ? parse_number(s, strlen(s), lo, hi, out) : -1;
}
static inline int parse_duration_s_str(const char *s, double lo_s, double hi_s, double *out)
{
	return s ? parse_duration_s(s, strlen(s), lo_s, hi_s, out) : -1;
}

/* The rules in words, for help texts and error lines. */
#define PARSE_SIZE_RULE "a size: bytes with an optional K, M, G or T (powers of 1024), e.g. 16M"
#define PARSE_DURATION_RULE "a duration: a number with unit ns, us, ms, s, m or h; a bare number is seconds"

#endif
