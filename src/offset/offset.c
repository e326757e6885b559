/* offset.c - the offset estimator family's table (offset/types.def), its factory, and
 * offset_measure with its retakes of a measurement made through a stall. */
#include <stdlib.h>

#include "numerics/stall.h"
#include "offset/offset.h"
#include "util/err.h"
#include "util/fault.h"
#include "util/timeutil.h"

#define OFFSET_TYPE(n) REGISTRY_MEMBER(offset_type_##n)
#define REGISTRY_DEF "offset/types.def"
#define REGISTRY_TYPE struct offset_type
#define REGISTRY_TABLE offset_types
#define REGISTRY_FIND offset_type_find
#define REGISTRY_NAMES offset_type_names
#include "util/registry.h"

int offset_create(const struct offset_type *t, int nexchanges, struct offset_alg **out)
{
	*out = NULL;
	if (nexchanges < 1)
		return err_set(HCLOCK_EINVAL, "offset estimator needs at least 1 ping-pong, got %d",
		               nexchanges);
	struct offset_alg *a = fault_calloc(1, t->size ? t->size : sizeof(*a));
	if (!a)
		return err_set(HCLOCK_ENOMEM, "out of memory");
	a->ops = t->ops;
	a->type = t;
	a->nexchanges = nexchanges;
	*out = a;
	return 0;
}

/* the client's pair changed: its floor starts anew */
static void floor_pair(struct offset_alg *a, const struct pp_link *l)
{
	if (a->floor_comm != l->comm || a->floor_ref != l->ref || a->floor_client != l->client) {
		a->floor_comm = l->comm;
		a->floor_ref = l->ref;
		a->floor_client = l->client;
		a->floor_ns = 0;
		a->futile = 0;
	}
}

int offset_measure(struct offset_alg *a, struct pp_link *l, struct offset_sample *out)
{
	struct offset_sample one = {0, 0, 0};
	int rc = 0, client = l->me == l->client;
	if (client)
		floor_pair(a, l);
	for (int tries = 0;; tries++) {
		l->stall_ns = fault_stall_draw();
		rc = first_err(rc, a->ops->measure(a, l, client ? &one : NULL));
		l->stall_ns = 0;
		if (client && (tries == 0 || one.rtt_ns < out->rtt_ns))
			*out = one;
		if (a->paper || (!client && l->me != l->ref))
			break;
		int again, stalled = 0;
		if (client) {
			int known = a->floor_ns > 0; /* else this one calibrates: one more */
			stalled = known && stall_judge(one.rtt_ns, a->floor_ns);
			if (tries > 0 && stalled)
				a->futile++;
			else if (!stalled)
				a->futile = 0;
			/* the floor so far a stall against this one: confirm the new floor */
			int fell = known && stall_judge(a->floor_ns, one.rtt_ns);
			again = !l->rc && tries < OFFSET_RETAKES &&
			        (!known || (stalled && a->futile < OFFSET_FUTILE) || fell);
			if (!known || one.rtt_ns < a->floor_ns)
				a->floor_ns = one.rtt_ns;
			pp_send(l, again, l->ref);
		} else {
			again = pp_recv(l, l->client) != 0;
		}
		if (!again)
			break;
		if (a->ops->retake)
			a->ops->retake(a, l);
		if (stalled && l->retakes)
			++*l->retakes;
	}
	return first_err(rc, l->rc); /* the flags' messages too */
}

void offset_reset(struct offset_alg *a)
{
	if (a && a->ops->reset)
		a->ops->reset(a);
}

void offset_destroy(struct offset_alg *a)
{
	if (!a)
		return;
	if (a->ops->destroy)
		a->ops->destroy(a);
	else
		free(a);
}
