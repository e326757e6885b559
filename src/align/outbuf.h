/*
 * outbuf.h - buffered text output for the large per-event files (corrected CSV traces, the
 * --bounds CSV): bytes and numbers are formatted into a 64 KiB buffer that goes to the FILE in
 * whole blocks, instead of one fprintf per field. Numbers come out exactly as printf prints
 * them, so the files are byte for byte what fprintf wrote.
 */
#ifndef HCLOCK_ALIGN_OUTBUF_H
#define HCLOCK_ALIGN_OUTBUF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define OUTBUF_SIZE 65536

struct outbuf {
	FILE *f;
	size_t n;               /* bytes waiting in buf */
	char buf[OUTBUF_SIZE];
};

/* start writing to f (the caller keeps owning f) */
void outbuf_init(struct outbuf *o, FILE *f);

/* bytes that do not fit the buffer: written out through the FILE */
void outbuf_put_slow(struct outbuf *o, const char *s, size_t n);

/* n bytes of s (inline: most calls are a few bytes, often a constant count) */
static inline void outbuf_put(struct outbuf *o, const char *s, size_t n)
{
	if (n <= OUTBUF_SIZE - o->n) {
		memcpy(o->buf + o->n, s, n);
		o->n += n;
	} else {
		outbuf_put_slow(o, s, n);
	}
}

/* v in decimal, as printf("%" PRId64) */
void outbuf_i64(struct outbuf *o, int64_t v);

/* ceil(v) (ns), as printf("%.0f", ceil(v)): whole, rounded up, so a bound stays strict */
void outbuf_ceil(struct outbuf *o, double v);

/* everything buffered to the FILE; returns 0, or -EIO if the FILE reports an error */
int outbuf_flush(struct outbuf *o);

#endif
