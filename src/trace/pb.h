/*
 * pb.h - a protobuf encoder, just what the Perfetto writer (perfetto.c) needs: varints,
 * length-delimited fields and nested messages, into a fixed buffer. Header only: a packet's
 * fields are a few bytes each, and these calls are inlined where they are made. MPI-free.
 */
#ifndef HCLOCK_TRACE_PB_H
#define HCLOCK_TRACE_PB_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* a message under construction (packets are small: 1 KiB covers the largest, a first packet
 * with its interned names; longer names are cut) */
struct pb {
	uint8_t b[1024];
	size_t n;
};

static inline void pb_varint(struct pb *p, uint64_t v)
{
	while (v >= 0x80 && p->n < sizeof(p->b)) {
		p->b[p->n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	if (p->n < sizeof(p->b))
		p->b[p->n++] = (uint8_t)v;
}

static inline void pb_uint(struct pb *p, int field, uint64_t v)
{
	pb_varint(p, (uint64_t)field << 3);
	pb_varint(p, v);
}

static inline void pb_bytes(struct pb *p, int field, const void *d, size_t n)
{
	pb_varint(p, (uint64_t)field << 3 | 2);
	pb_varint(p, n);
	if (p->n + n <= sizeof(p->b)) {
		memcpy(p->b + p->n, d, n);
		p->n += n;
	}
}

static inline void pb_msg(struct pb *p, int field, const struct pb *m)
{
	pb_bytes(p, field, m->b, m->n);
}

static inline void pb_str(struct pb *p, int field, const char *s)
{
	size_t n = strlen(s);
	pb_bytes(p, field, s, n > 200 ? 200 : n);
}

#endif
