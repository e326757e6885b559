/*
 * clock.h - the clock family: base clocks and the models stacked on them.
 *
 * Every clock embeds struct hclock_clock as its first member and provides a struct
 * clock_ops (linuxptp servo style). Base clocks read a time source; models map the time of
 * their inner clock to the reference's time scale. A global clock is a chain
 * model -> model -> ... -> base, walked inside out on every read.
 */
#ifndef HCLOCK_CLOCK_CLOCK_H
#define HCLOCK_CLOCK_CLOCK_H

#include <stdint.h>

#include "hclock.h"
#include "util/wire.h"

/* Type tags of the serialized form; never renumber. */
enum clock_type {
	CLOCK_T_MONOTONIC = 1,
	CLOCK_T_REALTIME = 2,
	CLOCK_T_WTIME = 3,
	CLOCK_T_TSC = 4,
	CLOCK_T_EMULATED = 5,
	CLOCK_T_LINEAR = 16,
	CLOCK_T_OFFSET = 17,
};

struct clock_ops {
	const char *name;
	uint8_t type;
	/* base clocks: read the source, ns */
	int64_t (*now)(struct hclock_clock *c);
	/* models: map an inner-clock time (ns) to this clock's time (ns); NULL for base */
	int64_t (*apply)(const struct hclock_clock *c, int64_t inner_ns);
	/* free the implementation's memory (not the inner clock); may be NULL */
	void (*destroy)(struct hclock_clock *c);
	/* append this layer's parameters (not the inner clock's) */
	void (*flatten)(const struct hclock_clock *c, struct wbuf *w);
	/* describe this layer only; returns chars written as snprintf */
	int (*describe)(const struct hclock_clock *c, char *buf, size_t len);
};

struct hclock_clock {
	const struct clock_ops *ops;
	int refs;                   /* reference count (not thread safe) */
	struct hclock_clock *inner; /* the clock a model is stacked on; NULL for a base clock */
	uint64_t source;            /* base clocks: identity of the time source; processes that
	                               read the same source (same machine and boot, or the same
	                               emulated node) have equal values */
};

/* Initialise the common part of a new clock (refs = 1); takes a reference to inner. */
void clock_init(struct hclock_clock *c, const struct clock_ops *ops, struct hclock_clock *inner);

/* The base clock at the bottom of a chain. */
const struct hclock_clock *clock_base(const struct hclock_clock *c);

/* Apply every model of the chain to a reading of the base clock (ns). */
int64_t clock_apply_chain(const struct hclock_clock *c, int64_t base_ns);

/* Identity of this machine and boot, for system-wide clocks. */
uint64_t clock_machine_id(void);

/* Base clock constructors, one per file. rbuf != NULL: rebuild from a serialized form. */
int clock_posix_create(uint8_t type, struct rbuf *r, struct hclock_clock **out);
int clock_wtime_create(struct rbuf *r, struct hclock_clock **out);
int clock_tsc_create(struct rbuf *r, struct hclock_clock **out);
int clock_emulated_create(hclock_emu *emu, struct rbuf *r, struct hclock_clock **out);
/* Model constructors from a serialized form. */
int model_linear_unflatten(struct rbuf *r, struct hclock_clock *inner, struct hclock_clock **out);
int model_offset_unflatten(struct rbuf *r, struct hclock_clock *inner, struct hclock_clock **out);

#endif
