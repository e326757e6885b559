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

static const struct clock_ops monotonic_ops = {
	.name = "monotonic", .type = CLOCK_T_MONOTONIC, .now = posix_now, .describe = posix_describe,
};
static const struct clock_ops realtime_ops = {
	.name = "realtime", .type = CLOCK_T_REALTIME, .now = posix_now, .describe = posix_describe,
};

int clock_posix_create(uint8_t type, struct rbuf *r, struct hclock_clock **out)
{
	(void)r; /* no parameters beyond the source identity */
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
	/* system-wide clocks: one source per machine and boot */
	p->c.source = clock_machine_id() ^ type;
	*out = &p->c;
	return 0;
}
