/*
 * ktab.h - a hash table from a key of four 64-bit words to a 64-bit value, open addressing
 * with linear probing and backward-shift deletion (no tombstones: a table that keeps
 * growing and shrinking, as the messages in flight do, never slows down). For the wait-state
 * analysis's pending messages and collectives and its sums; nothing of MPI.
 */
#ifndef HCLOCK_WAITS_KTAB_H
#define HCLOCK_WAITS_KTAB_H

#include <stddef.h>
#include <stdint.h>

struct ktab_slot {
	uint64_t k[4];
	uint64_t v;
	int used;
};

struct ktab {
	struct ktab_slot *s;   /* cap slots, a power of two, at most half used */
	size_t n, cap;
};

/* The value of key k, or NULL. The pointer is valid until the next ktab_put or ktab_del. */
uint64_t *ktab_find(const struct ktab *t, const uint64_t k[4]);
/* Set key k to v (added or replaced). Returns 0 or -1 without memory (t unchanged). */
int ktab_put(struct ktab *t, const uint64_t k[4], uint64_t v);
/* Remove key k; whether it was there. */
int ktab_del(struct ktab *t, const uint64_t k[4]);
void ktab_free(struct ktab *t);

#endif
