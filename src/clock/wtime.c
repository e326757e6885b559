/*
 * wtime.c - base clock "wtime": MPI_Wtime in ns. Unless the MPI library declares
 * MPI_WTIME_IS_GLOBAL, every process has its own origin (Open MPI 4 does), so its time source
 * identity is per process and a model copied between processes is refused.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/pmpi.h"

#include "clock/clock.h"
#include "util/err.h"

static int64_t wtime_now(struct hclock_clock *c)
{
	(void)c;
	return (int64_t)llround(PMPI_Wtime() * 1e9);
}

static int wtime_describe(const struct hclock_clock *c, char *buf, size_t len)
{
	(void)c;
	return snprintf(buf, len, "wtime");
}

static const struct clock_ops wtime_ops = {
	.name = "wtime", .type = CLOCK_T_WTIME, .now = wtime_now, .describe = wtime_describe,
};

static int wtime_create(const struct clock_ctx *ctx, struct hclock_clock **out)
{
	(void)ctx;
	int init = 0, flag = 0, *global = NULL;
	PMPI_Initialized(&init);
	if (!init)
		return err_set(HCLOCK_EINVAL, "clock 'wtime' needs MPI to be initialised; use monotonic");
	struct hclock_clock *c = calloc(1, sizeof(*c));
	if (!c)
		return err_set(HCLOCK_ENOMEM, "out of memory creating a clock");
	clock_init(c, &wtime_ops, NULL);
	PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &global, &flag);
	c->source = clock_machine_id() ^ CLOCK_T_WTIME;
	if (!(flag && global && *global))
		c->source ^= (uint64_t)getpid() * 0x9e3779b97f4a7c15ull;
	*out = c;
	return 0;
}

static int wtime_unflatten(struct rbuf *r, const struct clock_ctx *ctx, struct hclock_clock *inner,
                           struct hclock_clock **out)
{
	(void)r;
	(void)inner;
	return wtime_create(ctx, out);
}

const struct clock_type clock_type_wtime = {
	.name = "wtime", .tag = CLOCK_T_WTIME,
	.help = "MPI_Wtime: per process in Open MPI 4 (prop refuses to copy it)",
	.create = wtime_create, .unflatten = wtime_unflatten,
};
