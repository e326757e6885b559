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
#include "numerics/bound.h"
#include "numerics/linreg.h"
#include "util/wire.h"

/* Type tags of the serialized form; never renumber. */
enum clock_tag {
	CLOCK_T_MONOTONIC = 1,
	CLOCK_T_REALTIME = 2,
	CLOCK_T_WTIME = 3,
	CLOCK_T_TSC = 4,
	CLOCK_T_EMULATED = 5,
	CLOCK_T_LINEAR = 16,
	CLOCK_T_OFFSET = 17,
};

/* What a base clock may need to be built or rebuilt in this process. */
struct clock_ctx {
	hclock_emu *emu; /* the emulation, or NULL */
};

struct clock_ops {
	const char *name;
	uint8_t type; /* enum clock_tag */
	/* base clocks: read the source, ns; a model whose map changes while it is read (the
	 * continuous clock, model/cont.h) provides it too, with map, read and bounds */
	int64_t (*now)(struct hclock_clock *c);
	/* dynamic models: this clock's time at a reading x_ns of the base clock */
	int64_t (*map)(const struct hclock_clock *c, int64_t x_ns);
	/* dynamic models: a reading with its bounds and status (hclock_read) */
	void (*read)(struct hclock_clock *c, hclock_reading *r);
	/* dynamic models: the bound at an earlier reading t_ns (hclock_clock_bounds) */
	void (*bounds)(const struct hclock_clock *c, int64_t t_ns, double *lo_ns, double *hi_ns);
	/* free the implementation's memory (not the inner clock); may be NULL */
	void (*destroy)(struct hclock_clock *c);
	/* append this layer's parameters (not the inner clock's) */
	void (*flatten)(const struct hclock_clock *c, struct wbuf *w);
	/* describe this layer only; returns chars written as snprintf */
	int (*describe)(const struct hclock_clock *c, char *buf, size_t len);
	/* dynamic models that their caller drives (a continuous clock with drive=progress): do
	 * the work that is due, *sleep_ns how long the caller may wait before calling again,
	 * ns; returns 1 when driven, 0 when nothing drives this clock now. May be NULL */
	int (*drive)(struct hclock_clock *c, int64_t *sleep_ns);

	/* Hooks of base clocks, each optional (NULL: the default in the wrapper). They let a
	 * time source that is not the machine's (the emulation) shape what happens around it
	 * without any layer above naming it. */
	/* before a sync message leaves, after its timestamp was taken (default: nothing) */
	void (*before_send)(struct hclock_clock *c);
	/* the node and socket this source belongs to, for the hierarchy; -1 (default): the
	 * real ones (MPI_COMM_TYPE_SHARED, hwloc). *socket = -1: the real socket. */
	int (*topology)(const struct hclock_clock *c, int *node, int *socket);
	/* ground truth: this source's noise-free reading and the reference's (rank 0's source)
	 * at one true instant, ns; HCLOCK_EUNSUPP (default) where there is none */
	int (*truth)(struct hclock_clock *c, int64_t *mine_ns, int64_t *ref_ns);
	/* what rebuilding a clock on this source needs (default: nothing) */
	void (*context)(const struct hclock_clock *c, struct clock_ctx *ctx);
	/* the most one reading can be off from the source's value at some instant within the
	 * read call, ns, a model's rounding above it included (default 1). Real clocks read
	 * causally; the emulation's read noise is not causal and says how large it can be. The
	 * hull learner allows for it so its bounds stay strict. */
	double (*read_error_ns)(const struct hclock_clock *c);
};

/* One line of the clock family's table (clock/types.def). */
struct clock_type {
	const char *name; /* "monotonic" */
	uint8_t tag;      /* enum clock_tag of its serialized layers */
	const char *help; /* one line for --help; NULL: not selectable by name (models) */
	int emulation;    /* replaces the named base clock when an emulation is given */
	/* base clocks: create one in this process */
	int (*create)(const struct clock_ctx *ctx, struct hclock_clock **out);
	/* rebuild a layer from its serialized parameters r: a base clock (inner NULL) or a
	 * model over inner */
	int (*unflatten)(struct rbuf *r, const struct clock_ctx *ctx, struct hclock_clock *inner,
	                 struct hclock_clock **out);
};

/* The table, in clock/types.def order, NULL-terminated (clock/types.c). */
extern const struct clock_type *const clock_types[];
/* "monotonic, realtime, wtime or tsc": the names selectable by name. */
const char *clock_type_names(void);

struct hclock_clock {
	const struct clock_ops *ops;
	int refs;                   /* reference count (not thread safe) */
	struct hclock_clock *inner; /* the clock a model is stacked on; NULL for a base clock */
	uint64_t source;            /* base clocks: identity of the time source; processes that
	                               read the same source (same machine and boot, or the same
	                               emulated node) have equal values */
	struct hclock_clock *base;  /* the base clock at the bottom of the chain (self for one) */
	struct lm comp;             /* static models: the chain composed, base time -> this
	                               clock's time (unused by a dynamic one: ops->map) */
	int64_t truth_shift_ns;     /* base clocks: added to the reference's truth (clock_truth):
	                               the reference's kernel clock minus this process's, where
	                               the two differ by a known offset (--truth realtime) */
	struct bound bound;         /* strict bound of the reference's time at a reading of this
	                               clock (numerics/bound.h), as the sync that made it learned
	                               it; unknown (the default) for base clocks and models
	                               learned without bounds */
};

/* Initialise the common part of a new clock (refs = 1); takes a reference to inner. */
void clock_init(struct hclock_clock *c, const struct clock_ops *ops, struct hclock_clock *inner);
/* Limits of one model layer and of a whole composed chain (a read rounds intercept +
 * slope * (x - x0) to int64 ns: with |x - x0| < 2^63 ns and these limits it cannot
 * overflow). */
#define COMP_MAX_INTERCEPT_NS 4e18
#define COMP_MAX_SLOPE 0.5
/* For models: this layer maps inner time to its own as layer does; compose the chain.
 * HCLOCK_EINVAL when the composed chain leaves the limits (three or more layers can, each
 * within them). */
int clock_set_layer(struct hclock_clock *c, const struct lm *layer);
/* Number of layers of a chain (1 for a base clock). */
int clock_depth(const struct hclock_clock *c);

/* Round a double of ns to the nearest integer ns (inline, no libm call on the read path). */
static inline int64_t round_ns(double v)
{
	return (int64_t)(v < 0 ? v - 0.5 : v + 0.5);
}

/* Drive the first layer of c's chain that its caller drives (clock_ops.drive): 1 and
 * *sleep_ns (how long the caller may wait before calling again, ns), or 0 when none is. */
int clock_drive(struct hclock_clock *c, int64_t *sleep_ns);

/* The base clock at the bottom of a chain. */
const struct hclock_clock *clock_base(const struct hclock_clock *c);

/* Apply every model of the chain to a reading of the base clock (ns). */
int64_t clock_apply_chain(const struct hclock_clock *c, int64_t base_ns);

/* Identity of this machine and boot, for system-wide clocks. */
uint64_t clock_machine_id(void);
/* Identity of this process's time namespace's CLOCK_MONOTONIC offset (0 without one or at
 * offset 0): processes of one machine and boot read the same CLOCK_MONOTONIC only when these
 * agree (Linux time namespaces, a host of a cluster on one machine). */
uint64_t clock_timens_id(void);

/* The truth of a base clock (clock_ops.truth) with its truth_shift_ns applied: this
 * source's reading and the reference's at one instant, ns; HCLOCK_EUNSUPP where none. */
int clock_truth(struct hclock_clock *base, int64_t *mine_ns, int64_t *ref_ns);
/* This base clock minus CLOCK_REALTIME, ns, read in one step: the best of some reads of the
 * base clock between two of CLOCK_REALTIME, *width_ns the time between those two (the
 * offset is within +- width / 2). */
void clock_realtime_offset(struct hclock_clock *base, int64_t *offset_ns, int64_t *width_ns);

/* The hooks, with their defaults (see struct clock_ops). */
void clock_before_send(hclock_clock *c);
int clock_topology(const hclock_clock *c, int *node, int *socket);
/* The read error of c's base clock (clock_ops.read_error_ns), ns. */
double clock_read_error_ns(const hclock_clock *c);
/* Attach a bound to the top layer of c (a model this process just made). */
void clock_set_bound(hclock_clock *c, const struct bound *b);
/* Rebuild a serialized clock in the context of like's base clock (prop, Alg. 3). */
int clock_unflatten_like(const void *buf, size_t len, const hclock_clock *like,
                         hclock_clock **out);

#endif
