/*
 * outbuf.c - buffered text output with a hand-written integer formatter (see outbuf.h).
 */
#include <errno.h>
#include <math.h>
#include <string.h>

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

void outbuf_put(struct outbuf *o, const char *s, size_t n)
{
	if (o->n + n > OUTBUF_SIZE) {
		drain(o);
		if (n > OUTBUF_SIZE) {
			fwrite(s, 1, n, o->f);
			return;
		}
	}
	memcpy(o->buf + o->n, s, n);
	o->n += n;
}

static const char pairs[] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* the n digits of v < 10^n, written backwards ending before end, two at a time from the
 * table of the pairs 00..99 */
static void digits32(char *end, uint32_t v, int n)
{
	for (; n >= 2; n -= 2) {
		const char *d = pairs + 2 * (v % 100);
		v /= 100;
		*--end = d[1];
		*--end = d[0];
	}
	if (n)
		*--end = (char)('0' + v);
}

/* number of decimal digits of v */
static int ndigits(uint64_t v)
{
	int n = 1;

	while (v >= 10000) {
		v /= 10000;
		n += 4;
	}
	return n + (v >= 10) + (v >= 100) + (v >= 1000);
}

void outbuf_i64(struct outbuf *o, int64_t v)
{
	/* the magnitude in unsigned arithmetic: -INT64_MIN does not fit an int64 */
	uint64_t m = v < 0 ? -(uint64_t)v : (uint64_t)v;
	int n = ndigits(m);
	char *end;

	if (o->n + NUM_MAX > OUTBUF_SIZE)
		drain(o);
	if (v < 0)
		o->buf[o->n++] = '-';
	end = o->buf + o->n + n;
	o->n += (size_t)n;
	/* eight digits at a time in 32-bit arithmetic, the rest in one go */
	for (; n > 8; n -= 8) {
		digits32(end, (uint32_t)(m % 100000000), 8);
		m /= 100000000;
		end -= 8;
	}
	digits32(end, (uint32_t)m, n);
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
	return ferror(o->f) ? -EIO : 0;
}
