/* offset.c - the offset estimator family's table and factory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numerics/stall.h"
#include "offset/offset.h"
#include "util/err.h"
#include "util/fault.h"
#include "util/timeutil.h"
#include "util/names.h"

#define OFFSET_TYPE(n) extern const struct offset_type offset_type_##n;
#include "offset/types.def"
#undef OFFSET_TYPE

const struct offset_type *const offset_types[] = {
#define OFFSET_TYPE(n) &offset_type_##n,
#include "offset/types.def"
#undef OFFSET_TYPE
	NULL,
};

const struct offset_type *offset_type_find(const char *name, size_t n)
{
	for (size_t i = 0; offset_types[i]; i++)
		if (strlen(offset_types[i]->name) == n && !strncmp(offset_types[i]->name, name, n))
			return offset_types[i];
	return NULL;
}

const char *offset_type_names(void)
{
	static _Thread_local char buf[256];
	const char *names[ARRAY_SIZE(offset_types)];
	size_t n = 0;
	for (; offset_types[n]; n++)
		names[n] = offset_types[n]->name;
	return names_join(buf, sizeof(buf), names, n);
}

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
