/*
 * outbuf.c - buffered text output with a hand-written integer formatter (see outbuf.h).
 */
#include <math.h>
#include <string.h>

#include "hclock_api.h"
#include "align/outbuf.h"

#define NUM_MAX 32 /* longest number written: 20 characters for INT64_MIN */

void outbuf_init(struct outbuf *o, FILE *f)
{
	o->f = f;
	o->n = 0;
}

static void drain(struct outbuf *o)
{
	if (o->n)
		fwrite(o->buf, 1, o->n, o->f);
	o->n = 0;
}

void outbuf_put_slow(struct outbuf *o, const char *s, size_t n)
{
	drain(o);
	if (n > OUTBUF_SIZE) {
		fwrite(s, 1, n, o->f);
		return;
	}
	memcpy(o->buf, s, n);
	o->n = n;
}

/* the decimal digits of v, written backwards ending before end; returns the first digit.
 * Two digits per division, from a table of the pairs 00..99. */
static char *digits(char *end, uint64_t v)
{
	static const char pairs[] =
		"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
		"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
		"8081828384858687888990919293949596979899";
	char *p = end;

	while (v >= 100) {
		const char *d = pairs + 2 * (v % 100);
		v /= 100;
		*--p = d[1];
		*--p = d[0];
	}
	if (v >= 10) {
		*--p = pairs[2 * v + 1];
		*--p = pairs[2 * v];
	} else {
		*--p = (char)('0' + v);
	}
	return p;
}

void outbuf_i64(struct outbuf *o, int64_t v)
{
	char tmp[NUM_MAX], *end = tmp + sizeof(tmp), *p;

	/* the magnitude in unsigned arithmetic: -INT64_MIN does not fit an int64 */
	p = digits(end, v < 0 ? -(uint64_t)v : (uint64_t)v);
	if (v < 0)
		*--p = '-';
	outbuf_put(o, p, (size_t)(end - p));
}

void outbuf_ceil(struct outbuf *o, double v)
{
	char tmp[NUM_MAX + 320];
	double c = ceil(v);
	int n;

	/* whole values that fit an int64 the fast way; printf writes -0 for a negative zero */
	if (c > -9e18 && c < 9e18 && !(c == 0 && signbit(c))) {
		outbuf_i64(o, (int64_t)c);
		return;
	}
	n = snprintf(tmp, sizeof(tmp), "%.0f", c);
	if (n > 0)
		outbuf_put(o, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

int outbuf_flush(struct outbuf *o)
{
	drain(o);
	return ferror(o->f) ? HCLOCK_EIO : 0;
}
