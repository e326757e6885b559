/* posix.c - base clocks read with clock_gettime: "monotonic" and "realtime". */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "clock/clock.h"
#include "util/err.h"

struct posix_clock {
	struct hclock_clock c;
	clockid_t id;
};

static int64_t posix_now(struct hclock_clock *c)
{
	struct posix_clock *p = (struct posix_clock *)c;
	struct timespec ts;
	clock_gettime(p->id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int posix_describe(const struct hclock_clock *c, char *buf, size_t len)
{
	return snprintf(buf, len, "%s", c->ops->name);
}

/* One machine's system-wide clock: every rank that reads it reads the same source, so the
 * truth (--truth) is the reading itself, the same for the reference. */
static int posix_truth(struct hclock_clock *c, int64_t *mine, int64_t *ref)
{
	*mine = *ref = posix_now(c);
	return 0;
}

static const struct clock_ops monotonic_ops = {
	.name = "monotonic", .type = CLOCK_T_MONOTONIC, .now = posix_now, .describe = posix_describe,
	.truth = posix_truth,
};
static const struct clock_ops realtime_ops = {
	.name = "realtime", .type = CLOCK_T_REALTIME, .now = posix_now, .describe = posix_describe,
	.truth = posix_truth,
};

static int posix_create(uint8_t type, struct hclock_clock **out)
{
	struct posix_clock *p = calloc(1, sizeof(*p));
	if (!p)
		return err_set(HCLOCK_ENOMEM, "out of memory creating a clock");
	if (type == CLOCK_T_MONOTONIC) {
		clock_init(&p->c, &monotonic_ops, NULL);
		p->id = CLOCK_MONOTONIC;
	} else {
		clock_init(&p->c, &realtime_ops, NULL);
		p->id = CLOCK_REALTIME;
	}
	/* system-wide clocks: one source per machine and boot (and, for CLOCK_MONOTONIC, time
	 * namespace: each has its own offset) */
	p->c.source = clock_machine_id() ^ type;
	if (type == CLOCK_T_MONOTONIC)
		p->c.source ^= clock_timens_id();
	*out = &p->c;
	return 0;
}

static int monotonic_create(const struct clock_ctx *ctx, struct hclock_clock **out)
{
	(void)ctx;
	return posix_create(CLOCK_T_MONOTONIC, out);
}

static int realtime_create(const struct clock_ctx *ctx, struct hclock_clock **out)
{
	(void)ctx;
	return posix_create(CLOCK_T_REALTIME, out);
}

/* no parameters beyond the source identity */
static int monotonic_unflatten(struct rbuf *r, const struct clock_ctx *ctx,
                               struct hclock_clock *inner, struct hclock_clock **out)
{
	(void)r;
	(void)inner;
	return monotonic_create(ctx, out);
}

static int realtime_unflatten(struct rbuf *r, const struct clock_ctx *ctx,
                              struct hclock_clock *inner, struct hclock_clock **out)
{
	(void)r;
	(void)inner;
	return realtime_create(ctx, out);
}

const struct clock_type clock_type_monotonic = {
	.name = "monotonic", .tag = CLOCK_T_MONOTONIC,
	.help = "CLOCK_MONOTONIC (the default): one source per machine and boot",
	.create = monotonic_create, .unflatten = monotonic_unflatten,
};

const struct clock_type clock_type_realtime = {
	.name = "realtime", .tag = CLOCK_T_REALTIME,
	.help = "CLOCK_REALTIME: steps when NTP or an administrator sets the time",
	.create = realtime_create, .unflatten = realtime_unflatten,
};
