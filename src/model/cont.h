/*
 * cont.h - the continuous clock: a global clock whose model is replaced while it is read.
 * Its reading is one published read function of the base clock, kept in a seqlock
 * (struct cont_state) that one writer updates and any number of readers, in any thread and
 * even in other processes (shared memory), read without a lock.
 *
 * The read function. The writer keeps a target model T (base time -> the reference's time,
 * a linear map with its strict bound, numerics/bound.h). When a new T' arrives at base time
 * xu, the clock does not jump to it: with vu the old function's reading at xu and
 * corr = T'(xu) - vu, the reading from xu on is
 *     v(x) = vu + d + round(slope d + corr min(d, D) / D),   d = x - xu, D = |corr| / slew
 * so it is continuous at xu, reaches T' after D and runs at the base rate times
 * (1 + slope +- slew) meanwhile: never backwards (slew <= 500 ppm), never a jump. A step
 * (vu := T'(xu)) happens only when the writer is asked for one.
 *
 * Monotonic across threads: a reader reads the base clock inside its seqlock window, the
 * writer its xu inside the write section, so every reading with the old function has
 * x <= xu and every reading with the new one x >= xu (for a base clock that is monotonic
 * itself; an emulated clock with read noise is not).
 *
 * Bounds: the target's bound, shifted by the correction still to be slewed in (known
 * exactly), plus half a ns of rounding. The status says how far to trust it.
 */
#ifndef HCLOCK_MODEL_CONT_H
#define HCLOCK_MODEL_CONT_H

#include <stdint.h>

#include "clock/clock.h"
#include "numerics/bound.h"
#include "numerics/linreg.h"

/* The published read function (opaque; size from cont_state_size, 8-byte aligned; may live
 * in shared memory: it holds no pointer). */
struct cont_state;
size_t cont_state_size(void);

/* Initialise st to follow target (base -> reference, bound bd, may be unknown) exactly
 * from now on (no slew), status `status` (enum hclock_bounds_status). Not concurrent with
 * readers. */
void cont_state_init(struct cont_state *st, const struct lm *target, const struct bound *bd,
                     int status);

/*
 * Writer (one at a time): replace the target by target (bound bd) from now on; base: the
 * clock's base clock, read inside the write section (its reading in *x_ns if not NULL). slew: the largest rate of correction (dimensionless, > 0); step:
 * jump to the target at once instead (may run backwards). last_ns: base time of the
 * exchange the target comes from (for the staleness); stale_ns: after last_ns + stale_ns
 * without an update the status becomes HCLOCK_BOUNDS_STALE (0: never).
 * Returns the correction, target minus the reading at x_ns, ns.
 */
double cont_state_update(struct cont_state *st, hclock_clock *base, const struct lm *target,
                         const struct bound *bd, double slew, int step, int64_t last_ns,
                         int64_t stale_ns, int64_t *x_ns);
/* Writer: set the status (HCLOCK_BOUNDS_FROZEN at stop). */
void cont_state_set_status(struct cont_state *st, int status);
/* The current target and its bound (lock-free, any thread or process). */
void cont_state_target(const struct cont_state *st, struct lm *target, struct bound *bd);

/* Read the function at base time x_ns: the reading (and, if r is not NULL, its bounds and
 * status at x_ns). Lock-free; x_ns must be read inside the window for the monotonic
 * guarantee, which is what cont_state_read does. */
int64_t cont_state_read(const struct cont_state *st, hclock_clock *base, hclock_reading *r);
int64_t cont_state_map(const struct cont_state *st, int64_t x_ns);

/*
 * A clock reading st over base (a new reference in *out). st: the state to read, which
 * the caller keeps alive longer than the clock (NULL: the clock owns one, initialised to
 * the identity with no bounds; cont_clock_state returns it).
 */
int cont_clock_create(hclock_clock *base, struct cont_state *st, hclock_clock **out);
/* The state a continuous clock reads; NULL for any other clock. */
struct cont_state *cont_clock_state(hclock_clock *c);
/* Make c read st from now on (readers switch atomically). */
void cont_clock_set_state(hclock_clock *c, struct cont_state *st);
/* Make c read a copy of what it reads now, in its own memory (before a shared state is
 * freed). */
void cont_clock_own_copy(hclock_clock *c);
/* Who drives c (clock_drive): fn(arg, &sleep_ns) does the work that is due, says how
 * long its caller may wait (ns) and returns 0 (non-zero: it did nothing); fn NULL: nothing (after the exchanges stopped). Set and
 * cleared by the continuous sync (sync/cont.c); atomic against clock_drive. */
void cont_clock_set_driver(hclock_clock *c, int (*fn)(void *arg, int64_t *sleep_ns), void *arg);

#endif
