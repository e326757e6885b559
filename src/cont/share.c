/* share.c - followers read their leader's continuous clock (cont/share.h). */
#include "cont/share.h"
#include "hclock_api.h"
#include "util/err.h"

/* the process whose clock r's follows (itself unless it shares) */
static int source_of(const int *tree, int r)
{
	int hops = 0;
	while (tree[2 * r + 1] && tree[2 * r] >= 0 && hops++ < 64)
		r = tree[2 * r];
	return r;
}

int share_create(struct nblink *l, const int *tree, struct share *sh)
{
	int rank = l->rank, n = 0, members, on_node;
	void *mem;
	*sh = (struct share){l, 0, 0, NULL};
	if (!tree)
		return nblink_group(l, -1, 0, 0, &mem, &members, &on_node);
	int src = source_of(tree, rank);
	for (int r = 0; r < l->size; r++)
		n += source_of(tree, r) == src;
	int rc = nblink_group(l, n > 1 ? src : -1, rank == src ? 0 : 1 + rank,
	                      rank == src ? cont_state_size() : 0, &mem, &members, &on_node);
	if (rc == HCLOCK_EUNSUPP)
		return err_set(HCLOCK_EUNSUPP, "cont(...): the processes that copy a clock with prop "
		               "must share memory with the process they copy it from (their clock "
		               "reads its model there); %d of %d do: use a sync algorithm instead of "
		               "prop for the lower level", on_node, members);
	sh->member = n > 1;
	sh->leader = n > 1 && rank == src;
	sh->state = mem;
	return rc;
}

void share_freeze(struct share *sh, hclock_clock *clk)
{
	if (!sh->member)
		return;
	if (sh->leader)
		cont_state_set_status(sh->state, HCLOCK_BOUNDS_FROZEN);
	nblink_group_barrier(sh->link); /* before the followers copy it */
	cont_clock_own_copy(clk);
	nblink_group_barrier(sh->link); /* after they copied it */
}
