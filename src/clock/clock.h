/*
 * clock.h - the clock family: base clocks and the models stacked on them.
 *
 * Every clock embeds struct hclock_clock as its first member and provides a struct
 * clock_ops (linuxptp servo style). Base clocks read a time source; models map the time of
 * their inner clock to the reference's time scale. A global clock is a chain
 * model -> model -> ... -> base. Each model also keeps the whole chain composed into one
 * linear map of the base clock's time (comp), so a read is one base read and one
 * multiply-add, however deep the nesting (reading must cost at most 1.5x the base read).
 */
#ifndef HCLOCK_CLOCK_CLOCK_H
#define HCLOCK_CLOCK_CLOCK_H

#include <stdint.h>

#include "hclock.h"
#include "numerics/linreg.h"
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
	struct hclock_clock *base;  /* the base clock at the bottom of the chain (self for one) */
	struct lm comp;             /* models: the chain composed, base time -> this clock's time */
};

/* Initialise the common part of a new clock (refs = 1); takes a reference to inner. */
void clock_init(struct hclock_clock *c, const struct clock_ops *ops, struct hclock_clock *inner);
/* For models: this layer maps inner time to its own as layer does; compose the chain. */
void clock_set_layer(struct hclock_clock *c, const struct lm *layer);

/* Round a double of ns to the nearest integer ns (inline, no libm call on the read path). */
static inline int64_t round_ns(double v)
{
	return (int64_t)(v < 0 ? v - 0.5 : v + 0.5);
}

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
