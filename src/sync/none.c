/* none.c - no synchronization: the global clock is the input clock itself. */
#include <stdlib.h>

#include "sync/sync.h"
#include "util/err.h"

static int none_run(struct hclock_sync *s, MPI_Comm comm, hclock_clock *clk, hclock_clock **out)
{
	(void)s;
	(void)comm;
	*out = hclock_clock_ref(clk);
	return 0;
}

static const struct sync_ops none_ops = {.run = none_run};

static int none_parse(struct spec_parser *ps, struct hclock_sync **out)
{
	(void)ps;
	int rc = sync_alloc(sizeof(struct hclock_sync), &none_ops, out);
	if (!rc)
		sync_set_spec(*out, "none");
	return rc;
}

const struct sync_type sync_type_none = {
	.name = "none",
	.usage = "none",
	.help = "the base clock itself",
	.parse = none_parse,
};
