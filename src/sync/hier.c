/*
 * hier.c - hierarchical sync H2HCA / H3HCA (Hunold & Carpen-Amarie, Alg. 4 and Sec. IV-D).
 * h2(INTER,INTRA): one process per node synchronizes with INTER; then each node's other
 * processes synchronize to it with INTRA, whose input clock is the node leader's global
 * clock (the models nest). h3(INTER,SOCKET,INTRA) adds a level of one process per socket.
 * The level communicators are created once per run, before the first level, and freed at
 * its end: their cost counts in the sync duration, as in the paper, and nothing of size p
 * stays allocated between runs (at 16,384 simulated ranks a kept communicator costs GiBs).
 * After every level all ranks agree on success (comm_agree), so a failing level (e.g. prop
 * refused) makes every rank return that error and none waits for a leader that gave up.
 */
#include <stdlib.h>
#include <string.h>

#include "sync/sync.h"
#include "transport/comm.h"
#include "transport/topo.h"
#include "transport/yield.h"
#include "util/err.h"

struct hier {
	struct hclock_sync s;
	int nlevels;
	struct hclock_sync *level[3]; /* outermost (inter-node) first */
	MPI_Comm comm[3];             /* per level; MPI_COMM_NULL where this process is absent */
	MPI_Comm node, socket;        /* kept to be freed */
	int has_auto;                 /* a level is (or holds) an auto(...) spec */
	int have_choice;              /* choice holds rank 0's, given to every process */
	struct hclock_sync_auto choice;
};

static void free_comms(struct hier *h)
{
	MPI_Comm *all[] = {&h->comm[0], &h->comm[1], &h->comm[2], &h->node, &h->socket};
	for (size_t i = 0; i < ARRAY_SIZE(all); i++)
		if (*all[i] != MPI_COMM_NULL) {
			int fin;
			PMPI_Finalized(&fin);
			if (!fin)
				PMPI_Comm_free(all[i]);
			*all[i] = MPI_COMM_NULL;
		}
}

/* what make_comms found: how many lead a node and a socket */
static int count_leaders(struct hier *h, MPI_Comm comm, MPI_Comm node, MPI_Comm socket)
{
	int r, lead[2] = {0, 0}, all[2] = {0, 0};
	PMPI_Comm_rank(node, &r);
	lead[0] = r == 0;
	if (socket != MPI_COMM_NULL) {
		PMPI_Comm_rank(socket, &r);
		lead[1] = r == 0;
	}
	int rc = comm_check(PMPI_Allreduce(lead, all, 2, MPI_INT, MPI_SUM, comm),
	                    "MPI_Allreduce (counting the nodes)");
	h->s.topo = (struct hclock_sync_topology){h->nlevels, all[0], h->nlevels == 3 ? all[1] : 0};
	return rc;
}

static int make_comms(struct hier *h, MPI_Comm comm, hclock_clock *clk)
{
	int rc;
	if ((rc = topo_split_node(comm, clk, &h->node)) ||
	    (rc = topo_leaders(comm, h->node, &h->comm[0])))
		return rc;
	if (h->nlevels == 2) { /* the intra level is the node communicator itself */
		h->comm[1] = h->node;
		h->node = MPI_COMM_NULL;
		return count_leaders(h, comm, h->comm[1], MPI_COMM_NULL);
	}
	if ((rc = topo_split_socket(h->node, clk, &h->socket)) ||
	    (rc = topo_leaders(h->node, h->socket, &h->comm[1])))
		return rc;
	h->comm[2] = h->socket;
	h->socket = MPI_COMM_NULL;
	return count_leaders(h, comm, h->node, h->comm[2]);
}

/* the level's parent as a rank of the whole comm */
static void level_parent(struct hclock_sync *s, const struct hclock_sync *lv, MPI_Comm level,
                         MPI_Comm comm)
{
	MPI_Group lg, cg;
	int out = MPI_UNDEFINED;
	PMPI_Comm_group(level, &lg);
	PMPI_Comm_group(comm, &cg);
	PMPI_Group_translate_ranks(lg, 1, &lv->parent, cg, &out);
	PMPI_Group_free(&lg);
	PMPI_Group_free(&cg);
	s->parent = out == MPI_UNDEFINED ? -1 : out;
	s->shares = lv->shares;
}

/* the choice of the first level with an auto(...) that ran on this process */
static int levels_choice(const struct hier *h, struct hclock_sync_auto *out)
{
	for (int i = 0; i < h->nlevels; i++)
		if (!hclock_sync_auto_choice(h->level[i], out))
			return 0;
	return err_set(HCLOCK_EUNSUPP, "%s has no auto(...) level that ran on this process",
	               h->s.spec);
}

static int hier_run(struct hclock_sync *s, MPI_Comm comm, hclock_clock *clk, hclock_clock **out)
{
	struct hier *h = (struct hier *)s;
	hclock_clock *g = hclock_clock_ref(clk);
	int all = comm_agree(comm, make_comms(h, comm, clk));
	for (int i = 0; i < h->nlevels && !all; i++) {
		int size = 0, rc = 0;
		uint64_t rounds = 0, worst = 0;
		if (h->comm[i] != MPI_COMM_NULL)
			PMPI_Comm_size(h->comm[i], &size);
		if (size > 1) {
			hclock_clock *next = NULL;
			rc = sync_run(h->level[i], h->comm[i], g, &next);
			s->pingpongs += h->level[i]->pingpongs;
			sync_take_quality(s, h->level[i]);
			if (h->level[i]->warnings[0])
				sync_warn(s, "%.*s", (int)strlen(h->level[i]->warnings) - 1,
				          h->level[i]->warnings);
			rounds = h->level[i]->rounds;
			if (h->level[i]->parent >= 0) /* the deepest level this process learned at */
				level_parent(s, h->level[i], h->comm[i], comm);
			hclock_clock_free(g);
			g = next;
		}
		/* the level's schedule length (the longest among its groups), then its verdict */
		yield_allreduce(&rounds, &worst, 1, MPI_UINT64_T, MPI_MAX, comm);
		s->rounds += worst;
		all = comm_agree(comm, rc);
	}
	free_comms(h);
	/* every process reports the choice rank 0 reports (the first auto level that ran there:
	 * on a node's other processes the inter-node level did not run) */
	h->have_choice = 0;
	if (!all && h->has_auto) {
		struct {
			struct hclock_sync_auto a;
			int ok;
		} c;
		int rank;
		memset(&c, 0, sizeof(c));
		PMPI_Comm_rank(comm, &rank);
		if (rank == 0)
			c.ok = !levels_choice(h, &c.a);
		MPI_Request req;
		PMPI_Ibcast(&c, (int)sizeof(c), MPI_BYTE, 0, comm, &req);
		if (!yield_wait_on(&req, "MPI_Bcast (the auto choice) from", 0, comm)) {
			h->have_choice = c.ok;
			h->choice = c.a;
		}
	}
	*out = g;
	return all;
}

static void hier_destroy(struct hclock_sync *s)
{
	struct hier *h = (struct hier *)s;
	for (int i = 0; i < h->nlevels; i++)
		hclock_sync_free(h->level[i]);
	free_comms(h);
	free(h);
}

/* the levels' plans, each on its level's processes (sync_plan) */
static int hier_plan(struct hclock_sync *s, MPI_Comm comm, hclock_clock *clk)
{
	struct hier *h = (struct hier *)s;
	int all = comm_agree(comm, make_comms(h, comm, clk));
	for (int i = 0; i < h->nlevels && !all; i++) {
		int size = 0, rc = 0;
		if (h->comm[i] != MPI_COMM_NULL)
			PMPI_Comm_size(h->comm[i], &size);
		if (size > 0)
			rc = sync_plan(h->level[i], h->comm[i], clk);
		all = comm_agree(comm, rc);
	}
	free_comms(h);
	return all;
}

static int hier_auto_choice(const struct hclock_sync *s, struct hclock_sync_auto *out)
{
	const struct hier *h = (const struct hier *)s;
	if (h->have_choice) {
		*out = h->choice;
		return 0;
	}
	return levels_choice(h, out);
}

static void hier_explain(const struct hclock_sync *s, struct sync_explain *e)
{
	static const char *const what[2][3] = {
		{"inter-node level (one process per node, its leader)",
		 "intra-node level (each node's processes, against their leader)", ""},
		{"inter-node level (one process per node)",
		 "socket level (one process per socket of a node, against the node's leader)",
		 "intra-socket level (each socket's processes, against their leader)"}};
	const struct hier *h = (const struct hier *)s;
	for (int i = 0; i < h->nlevels; i++) {
		sync_explain_line(e, "%s:", what[h->nlevels - 2][i]);
		e->depth++;
		sync_explain(h->level[i], e);
		e->depth--;
	}
}

static const struct sync_ops hier_ops = {
	.run = hier_run, .destroy = hier_destroy, .auto_choice = hier_auto_choice,
	.explain = hier_explain, .plan = hier_plan};

static int hier_parse(struct spec_parser *ps, int nlevels, struct hclock_sync **out)
{
	static const char *const what[2][3] = {
		{"inter-node spec", "intra-node spec", ""},
		{"inter-node spec", "socket spec", "intra-socket spec"}};
	const char *form = nlevels == 2 ? "h2(INTER,INTRA)" : "h3(INTER,SOCKET,INTRA)";
	int rc = sync_alloc(sizeof(struct hier), &hier_ops, out);
	if (rc)
		return rc;
	struct hier *h = (struct hier *)*out;
	h->node = h->socket = MPI_COMM_NULL;
	for (int i = 0; i < 3; i++)
		h->comm[i] = MPI_COMM_NULL;
	if ((rc = spec_expect(ps, '(', form)))
		return rc;
	for (int i = 0; i < nlevels; i++) {
		if (i && (rc = spec_expect(ps, ',', what[nlevels - 2][i])))
			return rc;
		ps->depth++;
		rc = spec_parse_one(ps, &h->level[i]);
		ps->depth--;
		h->nlevels = i + 1; /* what to free */
		if (rc)
			return rc;
	}
	if ((rc = spec_expect(ps, ')', nlevels == 2 ? "closing h2(INTER,INTRA)"
	                                            : "closing h3(INTER,SOCKET,INTRA)")))
		return rc;
	if (h->level[0]->type->level_only)
		return err_set(HCLOCK_EINVAL, "sync spec '%s': %s cannot be the inter-node level of "
		               "h%d(...): the node leaders do not share a clock; use e.g. "
		               "hca3/100/skampi/20 there", ps->s, h->level[0]->type->name, nlevels);
	for (int i = 0; i < nlevels; i++) {
		(*out)->bounded |= h->level[i]->bounded;
		h->has_auto |= strstr(h->level[i]->spec, "auto(") != NULL;
	}
	if (nlevels == 2)
		sync_set_spec(*out, "h2(%s,%s)", h->level[0]->spec, h->level[1]->spec);
	else
		sync_set_spec(*out, "h3(%s,%s,%s)", h->level[0]->spec, h->level[1]->spec,
		              h->level[2]->spec);
	return 0;
}

static int h2_parse(struct spec_parser *ps, struct hclock_sync **out)
{
	return hier_parse(ps, 2, out);
}

static int h3_parse(struct spec_parser *ps, struct hclock_sync **out)
{
	return hier_parse(ps, 3, out);
}

const struct sync_type sync_type_h2 = {
	.name = "h2",
	.usage = "h2(INTER,INTRA)",
	.help = "H2HCA (Alg. 4): one process per node synchronizes with INTER, then each node with "
	        "INTRA",
	.parse = h2_parse,
};

const struct sync_type sync_type_h3 = {
	.name = "h3",
	.usage = "h3(INTER,SOCKET,INTRA)",
	.help = "H3HCA: plus a level of one process per socket",
	.parse = h3_parse,
};
