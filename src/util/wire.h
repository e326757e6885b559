/*
 * wire.h - little-endian byte buffers for serialized clocks (endian-safe on any host).
 * Writers grow the buffer; readers fail (return -1) instead of reading past the end.
 */
#ifndef HCLOCK_UTIL_WIRE_H
#define HCLOCK_UTIL_WIRE_H

#include <stddef.h>
#include <stdint.h>

struct wbuf {
	unsigned char *p;
	size_t len, cap;
	int oom; /* set once an allocation failed; later puts are ignored */
};

struct rbuf {
	const unsigned char *p;
	size_t len, pos;
};

void wbuf_put_u8(struct wbuf *w, uint8_t v);
void wbuf_put_u16(struct wbuf *w, uint16_t v);
void wbuf_put_u32(struct wbuf *w, uint32_t v);
void wbuf_put_u64(struct wbuf *w, uint64_t v);
void wbuf_put_i64(struct wbuf *w, int64_t v);
void wbuf_put_f64(struct wbuf *w, double v); /* IEEE 754 bits, little endian */
void wbuf_put_bytes(struct wbuf *w, const void *b, size_t n);

int rbuf_u8(struct rbuf *r, uint8_t *v);
int rbuf_u16(struct rbuf *r, uint16_t *v);
int rbuf_u32(struct rbuf *r, uint32_t *v);
int rbuf_u64(struct rbuf *r, uint64_t *v);
int rbuf_i64(struct rbuf *r, int64_t *v);
int rbuf_f64(struct rbuf *r, double *v);
int rbuf_bytes(struct rbuf *r, void *b, size_t n);

#endif
