/*
 * recbuf.c - two record buffers filled without a lock (recbuf.h).
 *
 * Everything that decides who owns which slot lives in one 64-bit word, state: bit 63 the
 * current buffer, bit 62 (W) the other buffer is the writer's, bit 61 (F) a flush owns the
 * other buffer, bits 0-60 the slots reserved in the current buffer so far (the count runs
 * past cap while it is full: those reservations hold no slot). A producer's fetch_add on it
 * gives its slot; a slot below cap is its own to fill.
 *
 * A producer whose slot is past cap switches buffers with one compare-and-swap, from (b, no
 * W, no F, any count >= cap) to (the other buffer, W, the slots it takes itself): the full
 * buffer is the writer's from that instant, and whoever loses the race finds either the new
 * buffer (and reserves again) or W set (and drops its record). The semaphore only wakes the
 * writer: it takes the buffer W says, waits until each slot of it is published, writes, zeroes
 * the kinds and clears W. recbuf_flush closes the current buffer the same way with F instead
 * of W and writes it itself: no step of a switch or a flush needs another one to finish, so a
 * signal handler that interrupted a switch (after its compare-and-swap: W is set, the writer
 * woken here if the interrupted thread had not yet) only waits for the writer.
 *
 * A slot is published by storing its kind (release) after the rest of it; readers load the
 * kind (acquire) before the rest, so a reservation still being filled is waited for, and one
 * that is never filled (its thread ended by a signal in the middle of an append) is seen as
 * such by recbuf_flush. The kinds of a written buffer are zeroed before W (F) is cleared, which
 * orders them before the buffer's next use (the clear releases, the next switch's
 * compare-and-swap acquires, the producers' fetch_add acquire that).
 *
 * Waiting (recbuf_wait_for_writer): a producer that finds the buffer full and W set polls
 * the state until W is cleared, then reserves again like any producer (the count still past
 * cap: it switches, or finds the buffer another waiter switched to). Nothing else changes:
 * the writer is not told, a flush (F) is never waited for, and a wait that reaches its
 * deadline turns waiting off for every thread.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "trace/recbuf.h"

#define CUR_BIT ((uint64_t)1 << 63)
#define W_BIT ((uint64_t)1 << 62)
#define F_BIT ((uint64_t)1 << 61)
#define COUNT(s) ((s) & (F_BIT - 1))
#define BUF(s) ((unsigned)((s) >> 63))
#define SWITCH_TRIES 64    /* compare-and-swaps a producer tries while others reserve */
#define FLUSH_STEP_NS 100000
#define FLUSH_SLOTS_NS 10000000 /* recbuf_flush's waits for another flush and for slots, ns */

struct recbuf {
	/* what an append reads, in one cache line (the producers write it anyway) */
	_Atomic uint64_t state;
	struct rec *buf[2];
	size_t cap;
	char pad0[32];
	int stop;               /* recbuf_stop called (read after the semaphore) */
	unsigned pend;          /* the buffer recbuf_take returned */
	_Atomic uint64_t dropped, unsaid; /* unsaid: dropped since the last REC_DROP put */
	_Atomic uint64_t sw_said; /* a switch putting a REC_DROP first: the drops it says, until
	                             that slot is filled (a flush that skips it says them) */
	sem_t wake;
	/* recbuf_wait_for_writer */
	_Atomic int64_t wait_max_ns; /* a wait's deadline, ns; 0: no waiting (drop) */
	_Atomic uint64_t waits;
	_Atomic int64_t waited_ns;   /* summed over the threads, ns */
	atomic_int gave_up;
};

static struct rec *buf_alloc(size_t n)
{
	void *p = mmap(NULL, n * sizeof(struct rec), PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

recbuf *recbuf_create(size_t cap)
{
	if (cap < 2 || cap >= (size_t)1 << 40)
		return NULL;
	recbuf *rb = calloc(1, sizeof(*rb));
	if (!rb)
		return NULL;
	rb->cap = cap;
	rb->buf[0] = buf_alloc(cap);
	rb->buf[1] = buf_alloc(cap);
	if (!rb->buf[0] || !rb->buf[1] || sem_init(&rb->wake, 0, 0)) {
		for (int i = 0; i < 2; i++)
			if (rb->buf[i])
				munmap(rb->buf[i], cap * sizeof(struct rec));
		free(rb);
		return NULL;
	}
	return rb;
}

void recbuf_free(recbuf *rb)
{
	if (!rb)
		return;
	for (int i = 0; i < 2; i++)
		munmap(rb->buf[i], rb->cap * sizeof(struct rec));
	sem_destroy(&rb->wake);
	free(rb);
}

static inline uint8_t kind_of(const struct rec *d)
{
	return __atomic_load_n(&d->kind, __ATOMIC_ACQUIRE);
}

/* fill slot d with r, kind last */
static inline void fill(struct rec *d, const struct rec *r, uint32_t tid)
{
	d->flags = r->flags;
	d->func = r->func;
	d->peer = r->peer;
	memcpy((char *)d + offsetof(struct rec, tag), (const char *)r + offsetof(struct rec, tag),
	       sizeof(*r) - offsetof(struct rec, tag));
	d->tid = tid;
	__atomic_store_n(&d->kind, r->kind, __ATOMIC_RELEASE);
}

static void drop(recbuf *rb)
{
	atomic_fetch_add_explicit(&rb->dropped, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&rb->unsaid, 1, memory_order_relaxed);
}

/* Reservation s found the current buffer full: switch to the other one, r (after the REC_DROP
 * of the drops unsaid) in its first slots, the full one handed to the writer. Returns 1 when
 * r is in, 0 when it was dropped, -1 when another thread switched first (reserve again). */
static int switch_buffers(recbuf *rb, uint64_t s, const struct rec *r, uint32_t tid)
{
	unsigned ob = BUF(s);
	uint64_t u = atomic_exchange_explicit(&rb->unsaid, 0, memory_order_relaxed);
	int got = 0;
	if (u)
		atomic_store_explicit(&rb->sw_said, u, memory_order_relaxed); /* before the switch */
	s = atomic_load_explicit(&rb->state, memory_order_relaxed);
	for (int tries = 0; tries < SWITCH_TRIES; tries++) {
		if (BUF(s) != ob || COUNT(s) < rb->cap) {
			got = -1; /* switched (and maybe back) since: a buffer with room */
			break;
		}
		if (s & (W_BIT | F_BIT))
			break; /* the other buffer is not free */
		if (atomic_compare_exchange_weak_explicit(
		            &rb->state, &s, ((uint64_t)(ob ^ 1) << 63) | W_BIT | (u ? 2 : 1),
		            memory_order_acq_rel, memory_order_relaxed)) {
			got = 1;
			break;
		}
	}
	if (got < 1) {
		if (u) {
			atomic_store_explicit(&rb->sw_said, 0, memory_order_relaxed);
			atomic_fetch_add_explicit(&rb->unsaid, u, memory_order_relaxed);
		}
		return got;
	}
	struct rec *d = rb->buf[ob ^ 1];
	if (u) {
		struct rec m = {.kind = REC_DROP, .peer = -1, .t_g = r->t_g, .t_l = r->t_l, .bytes = u};
		fill(d++, &m, tid);
		atomic_store_explicit(&rb->sw_said, 0, memory_order_relaxed);
	}
	fill(d, r, tid);
	sem_post(&rb->wake);
	return 1;
}

static void sleep_ns(long ns) /* async-signal-safe */
{
	struct timespec ts = {0, ns};
	nanosleep(&ts, NULL);
}

static int64_t mono_ns(void) /* async-signal-safe */
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Both buffers full, the other one the writer's: wait until the writer gives it back (1),
 * or give up (0: waiting off, or a flush holds the other buffer, or the deadline passed or
 * recbuf_stop was called: then waiting is off for good). */
static int wait_writer(recbuf *rb)
{
	int64_t max = atomic_load_explicit(&rb->wait_max_ns, memory_order_relaxed);
	uint64_t s = atomic_load_explicit(&rb->state, memory_order_relaxed);
	if (max <= 0 || (s & F_BIT))
		return 0;
	if (!(s & W_BIT))
		return 1; /* given back meanwhile */
	int64_t t0 = mono_ns(), d = 0;
	int ok = 0;
	for (int k = 0;; k++) {
		s = atomic_load_explicit(&rb->state, memory_order_relaxed);
		if (!(s & W_BIT)) {
			ok = !(s & F_BIT);
			break;
		}
		if (__atomic_load_n(&rb->stop, __ATOMIC_ACQUIRE))
			break; /* the writer ends: nobody would give the buffer back */
		d = mono_ns() - t0;
		if (d >= max) {
			/* a writer stuck (a disk that hangs) or gone: drop from now on */
			atomic_store_explicit(&rb->wait_max_ns, 0, memory_order_relaxed);
			atomic_store_explicit(&rb->gave_up, 1, memory_order_relaxed);
			break;
		}
		if (k < 8)
			sched_yield(); /* the writer may need this core */
		else
			sleep_ns(k < 64 ? 20000 : 200000);
	}
	atomic_fetch_add_explicit(&rb->waits, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&rb->waited_ns, mono_ns() - t0, memory_order_relaxed);
	return ok;
}

/* recbuf_append past the buffer's end (reservation s) */
static __attribute__((noinline)) int append_full(recbuf *rb, const struct rec *r, uint32_t tid,
                                                 int sample, uint64_t s)
{
	for (int tries = 0;; tries++) {
		if (COUNT(s) < rb->cap) {
			fill(&rb->buf[BUF(s)][COUNT(s)], r, tid);
			return 1;
		}
		if (sample)
			return 0;
		int got = (s & (W_BIT | F_BIT)) ? 0 : switch_buffers(rb, s, r, tid);
		if (!got && wait_writer(rb)) {
			tries = -1; /* the writer's buffer is free: switch to it (or find room) */
		} else if (got >= 0 || tries >= SWITCH_TRIES) {
			if (got <= 0)
				drop(rb);
			return got > 0;
		}
		s = atomic_fetch_add_explicit(&rb->state, 1, memory_order_acquire);
	}
}

int recbuf_append(recbuf *rb, const struct rec *r, uint32_t tid, int sample)
{
	uint64_t s = atomic_fetch_add_explicit(&rb->state, 1, memory_order_acquire);
	if (__builtin_expect(COUNT(s) >= rb->cap, 0))
		return append_full(rb, r, tid, sample, s);
	fill(&rb->buf[BUF(s)][COUNT(s)], r, tid);
	return 1;
}

const struct rec *recbuf_take(recbuf *rb, size_t *n, int wait)
{
	for (;;) {
		int stop = __atomic_load_n(&rb->stop, __ATOMIC_ACQUIRE);
		uint64_t s = atomic_load_explicit(&rb->state, memory_order_acquire);
		if (s & W_BIT) {
			rb->pend = BUF(s) ^ 1; /* the current buffer stays while W is set */
			const struct rec *b = rb->buf[rb->pend];
			*n = rb->cap;
			/* the slots reserved before the switch: filled by now but by a thread that
			 * was preempted */
			for (size_t i = 0; i < *n; i++)
				for (int k = 0; !kind_of(&b[i]); k++)
					if (k < 100)
						sched_yield();
					else
						sleep_ns(10000);
			return b;
		}
		if (stop || !wait)
			return NULL;
		while (sem_wait(&rb->wake) && errno == EINTR)
			;
	}
}

static void unpublish(struct rec *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		__atomic_store_n(&b[i].kind, 0, __ATOMIC_RELAXED);
}

void recbuf_written(recbuf *rb)
{
	unpublish(rb->buf[rb->pend], rb->cap);
	atomic_fetch_and_explicit(&rb->state, ~W_BIT, memory_order_release);
}

void recbuf_stop(recbuf *rb)
{
	__atomic_store_n(&rb->stop, 1, __ATOMIC_RELEASE);
	sem_post(&rb->wake);
}

long recbuf_flush(recbuf *rb, const struct rec *last, int64_t wait_ns, recbuf_put_fn *put,
                  void *ctx)
{
	/* the other buffer free (the writer finished it), no other flush: close the current one */
	uint64_t s = atomic_load_explicit(&rb->state, memory_order_relaxed);
	for (int64_t waited = 0;;) {
		if (!(s & (W_BIT | F_BIT))) {
			if (atomic_compare_exchange_weak_explicit(&rb->state, &s,
			                                          ((uint64_t)(BUF(s) ^ 1) << 63) | F_BIT,
			                                          memory_order_acq_rel,
			                                          memory_order_relaxed))
				break;
			continue;
		}
		/* the writer woken (again): the thread that handed it its buffer may be the one
		 * this signal interrupted, before its sem_post */
		if (!waited && (s & W_BIT))
			sem_post(&rb->wake);
		if (waited >= ((s & F_BIT) && wait_ns > FLUSH_SLOTS_NS ? FLUSH_SLOTS_NS : wait_ns))
			return -1;
		sleep_ns(FLUSH_STEP_NS);
		waited += FLUSH_STEP_NS;
		s = atomic_load_explicit(&rb->state, memory_order_relaxed);
	}
	struct rec *b = rb->buf[BUF(s)];
	size_t n = COUNT(s) < rb->cap ? (size_t)COUNT(s) : rb->cap;
	/* the slots reserved before the exchange, not all filled yet */
	for (int64_t waited = 0; waited < FLUSH_SLOTS_NS; waited += FLUSH_STEP_NS) {
		size_t i = 0;
		while (i < n && kind_of(&b[i]))
			i++;
		if (i == n)
			break;
		sleep_ns(FLUSH_STEP_NS);
	}
	long skipped = 0;
	const struct rec *end = NULL; /* the last record put */
	/* a switch interrupted before it filled its REC_DROP (slot 0): those drops are said by
	 * this flush's REC_DROP, and the slot is no record lost */
	uint64_t sw = n && !kind_of(&b[0]) ? atomic_exchange_explicit(&rb->sw_said, 0,
	                                                              memory_order_relaxed) : 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && kind_of(&b[j]))
			j++;
		if (j > i) {
			put(b + i, j - i, ctx);
			end = &b[j - 1];
		}
		if (j < n) {
			skipped++;
			if (j || !sw)
				drop(rb);
		}
		i = j + 1;
	}
	if (sw) {
		atomic_fetch_add_explicit(&rb->unsaid, sw, memory_order_relaxed);
		if (skipped > 1)
			skipped--; /* the records skipped (at least 1: the buffers stay closed) */
	}
	if (last) {
		put(last, 1, ctx);
		end = last;
	}
	uint64_t u = atomic_exchange_explicit(&rb->unsaid, 0, memory_order_relaxed);
	if (u) {
		struct rec m = {.kind = REC_DROP, .peer = -1, .bytes = u};
		if (end) {
			m.t_g = end->t2_g > end->t_g ? end->t2_g : end->t_g;
			m.t_l = end->t2_l > end->t_l ? end->t2_l : end->t_l;
			m.tid = end->tid;
		}
		put(&m, 1, ctx);
	}
	if (skipped)
		return skipped; /* a slot filled late would spoil the buffer's next use: none (F stays) */
	unpublish(b, n);
	atomic_fetch_and_explicit(&rb->state, ~F_BIT, memory_order_release);
	return 0;
}

uint64_t recbuf_dropped(const recbuf *rb)
{
	return atomic_load_explicit(&((recbuf *)rb)->dropped, memory_order_relaxed);
}

void recbuf_wait_for_writer(recbuf *rb, int64_t max_ns)
{
	atomic_store_explicit(&rb->wait_max_ns, max_ns > 0 ? max_ns : 0, memory_order_relaxed);
}

void recbuf_waits(const recbuf *rb, struct recbuf_waits *w)
{
	recbuf *m = (recbuf *)rb;
	w->waits = atomic_load_explicit(&m->waits, memory_order_relaxed);
	w->waited_ns = atomic_load_explicit(&m->waited_ns, memory_order_relaxed);
	w->gave_up = atomic_load_explicit(&m->gave_up, memory_order_relaxed);
}
