#include <stdlib.h>
#include <string.h>

#include "util/wire.h"

void wbuf_put_bytes(struct wbuf *w, const void *b, size_t n)
{
	if (w->oom)
		return;
	if (w->len + n > w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 64;
		while (cap < w->len + n)
			cap *= 2;
		unsigned char *p = realloc(w->p, cap);
		if (!p) {
			w->oom = 1;
			return;
		}
		w->p = p;
		w->cap = cap;
	}
	memcpy(w->p + w->len, b, n);
	w->len += n;
}

static void put_le(struct wbuf *w, uint64_t v, int n)
{
	unsigned char b[8];
	for (int i = 0; i < n; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	wbuf_put_bytes(w, b, (size_t)n);
}

void wbuf_put_u8(struct wbuf *w, uint8_t v) { put_le(w, v, 1); }
void wbuf_put_u16(struct wbuf *w, uint16_t v) { put_le(w, v, 2); }
void wbuf_put_u32(struct wbuf *w, uint32_t v) { put_le(w, v, 4); }
void wbuf_put_u64(struct wbuf *w, uint64_t v) { put_le(w, v, 8); }
void wbuf_put_i64(struct wbuf *w, int64_t v) { put_le(w, (uint64_t)v, 8); }

void wbuf_put_f64(struct wbuf *w, double v)
{
	uint64_t u;
	memcpy(&u, &v, sizeof(u));
	put_le(w, u, 8);
}

static int get_le(struct rbuf *r, uint64_t *v, int n)
{
	if (r->len - r->pos < (size_t)n)
		return -1;
	uint64_t x = 0;
	for (int i = 0; i < n; i++)
		x |= (uint64_t)r->p[r->pos + (size_t)i] << (8 * i);
	r->pos += (size_t)n;
	*v = x;
	return 0;
}

int rbuf_u8(struct rbuf *r, uint8_t *v)
{
	uint64_t x;
	if (get_le(r, &x, 1))
		return -1;
	*v = (uint8_t)x;
	return 0;
}

int rbuf_u16(struct rbuf *r, uint16_t *v)
{
	uint64_t x;
	if (get_le(r, &x, 2))
		return -1;
	*v = (uint16_t)x;
	return 0;
}

int rbuf_u32(struct rbuf *r, uint32_t *v)
{
	uint64_t x;
	if (get_le(r, &x, 4))
		return -1;
	*v = (uint32_t)x;
	return 0;
}

int rbuf_u64(struct rbuf *r, uint64_t *v) { return get_le(r, v, 8); }

int rbuf_i64(struct rbuf *r, int64_t *v)
{
	uint64_t x;
	if (get_le(r, &x, 8))
		return -1;
	*v = (int64_t)x;
	return 0;
}

int rbuf_f64(struct rbuf *r, double *v)
{
	uint64_t x;
	if (get_le(r, &x, 8))
		return -1;
	memcpy(v, &x, sizeof(*v));
	return 0;
}

int rbuf_bytes(struct rbuf *r, void *b, size_t n)
{
	if (r->len - r->pos < n)
		return -1;
	memcpy(b, r->p + r->pos, n);
	r->pos += n;
	return 0;
}
