/* hier.c - placeholder for the hierarchical schemes h2/h3 and prop (issue 4). */
#include "sync/sync.h"
#include "util/err.h"

int sync_prop_create(const struct sync_spec *sp, struct hclock_sync **out)
{
	(void)sp;
	(void)out;
	return err_set(HCLOCK_EUNSUPP, "sync 'prop' is not implemented yet");
}

int sync_hier_create(const struct sync_spec *sp, struct hclock_sync **out)
{
	(void)sp;
	(void)out;
	return err_set(HCLOCK_EUNSUPP, "hierarchical sync h2/h3 is not implemented yet");
}
