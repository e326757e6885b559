/*
 * patterns.h - the wait-state patterns behind one table (waits.h): each pattern is one file
 * with one struct waits_pattern, listed once in patterns.def. A pattern looks at every message
 * as soon as both its ends are known (on_message) and at every collective once every member
 * has entered it (on_collective), and reports what it finds with waits_emit. Its state per
 * process, if any, is a slot the core keeps (waits_slot).
 *
 * Adding a pattern: its file (struct waits_pattern NAME_pattern), one line
 * WAITS_PATTERN(NAME) in patterns.def, its definition in docs/waits.md.
 */
#ifndef HCLOCK_WAITS_PATTERNS_H
#define HCLOCK_WAITS_PATTERNS_H

#include "waits/waits.h"

struct waits_pattern {
	const char *name;        /* the key in outputs: "late_sender" */
	const char *title;       /* for people: "Late Sender" */
	const char *what;        /* one line: who waits for whom */
	int also_counted;        /* 1: its waiting time is another pattern's too (a total over
	                            the patterns leaves it out) */
	/* a message, both ends known (may be NULL) */
	int (*on_message)(waits *w, int self, const struct waits_send *s,
	                  const struct waits_recv *r);
	/* a collective every member entered: m[0..n-1], in communicator order of arrival
	   (may be NULL) */
	int (*on_collective)(waits *w, int self, const struct waits_coll *m, size_t n);
	/* the feed is over: report what is held back (may be NULL) */
	int (*finish)(waits *w, int self);
};

#define WAITS_PATTERN(name) extern const struct waits_pattern name##_pattern;
#include "waits/patterns.def"
#undef WAITS_PATTERN

/* the table, in patterns.def's order */
extern const struct waits_pattern *const waits_patterns[];
extern const int waits_npatterns;

/* Report an instance of the pattern self (its index): summed, kept among the worst, handed
 * to the caller's callback. Returns 0, HCLOCK_ENOMEM or the callback's non-zero value. */
int waits_emit(waits *w, const struct waits_instance *in);

/* The pattern self's slot of size bytes (the same size at every call) for process proc,
 * zeroed when first given, from an array the core keeps per pattern and frees with the
 * analysis; NULL without memory. Valid until the next call for a larger proc. */
void *waits_slot(waits *w, int self, int32_t proc, size_t size);
/* The same when process proc has one already, else NULL (nothing made). */
void *waits_slot_if(waits *w, int self, int32_t proc, size_t size);

/* The strict interval of w = clip(T - B, 0, D), D the call's duration (waits.h): into
 * in->est_ns, lo_ns, hi_ns, with at_ns the call's enter. Whether it may be an instance (its
 * estimate or its upper end above 0). */
int waits_interval(const struct waits_stamp *t, const struct waits_call *c,
                   struct waits_instance *in);

/* a stamp's bounds, ns (saturated: WAITS_NO_BOUND stays unbounded) */
int64_t waits_lo(const struct waits_stamp *s);
int64_t waits_hi(const struct waits_stamp *s);

/* A stamp whose bounds are s's truth (s->has_truth): for a pattern that computes an interval
 * from stamps itself, to compute the true one the same way. */
struct waits_stamp waits_truth_stamp(const struct waits_stamp *s);

#endif
