/*
 * hca2.c - HCA2 (Hunold & Carpen-Amarie, CLUSTER 2016; Fig. 1a of the 2018 paper): learn
 * models towards the root over an inverted binomial tree in ceil(log2 p) rounds, each client
 * against its partner's raw clock. A client hands the models of its whole subtree (composed
 * to itself) to its partner, who composes them once more; at the end rank 0 holds every
 * rank's model to its own clock and scatters them.
 * Failures: every process takes part in every round whatever failed; a partner that cannot
 * store a subtree's models still receives (and drops) them; all ranks agree on success
 * before the scatter, which is skipped when any rank failed.
 */
#include <stdlib.h>
#include <string.h>

#include "clock/clock.h"
#include "sync/learn.h"
#include "sync/sync.h"
#include "transport/comm.h"
#include "transport/yield.h"
#include "util/err.h"
#include "util/fault.h"

#define TAG_MODELS (HCLOCK_TAG + 1)
/* Entries travel in messages of at most CHUNK, so that a partner without memory for them
 * can still receive (and drop) them through a buffer on its stack. */
#define CHUNK 64

struct entry {
	int32_t rank;
	int32_t pad;
	struct lm lm;       /* maps rank's clk to the holder's clk */
	struct bound bound; /* of lm (unknown unless the learner is hull) */
};

/* what a client sends its partner first: its own model and how many entries follow */
struct header {
	int32_t n;
	int32_t pad;
	struct lm to_partner; /* the client's clk -> the partner's clk */
	struct bound bound;   /* of to_partner */
};

/* what rank 0 scatters: a rank's model to rank 0's clk and its bound */
struct result {
	struct lm lm;
	struct bound bound;
};

/* The models a process collected (its subtree's, composed to its own clock). */
struct subtree {
	struct entry *e;
	int n, cap;
};

/* Send my model and my subtree's to the partner (entries as bytes: processes of one job
 * share one data representation). */
static int send_models(MPI_Comm comm, int dest, const struct lm *lm, const struct bound *bd,
                       const struct subtree *t)
{
	struct header h = {t->n, 0, *lm, *bd};
	int rc = comm_check(PMPI_Send(&h, (int)sizeof(h), MPI_BYTE, dest, TAG_MODELS, comm),
	                    "MPI_Send (HCA2 models)");
	for (int i = 0; i < t->n; i += CHUNK) {
		int k = t->n - i < CHUNK ? t->n - i : CHUNK;
		rc = first_err(rc, comm_check(PMPI_Send(t->e + i, k * (int)sizeof(*t->e), MPI_BYTE, dest,
		                                       TAG_MODELS, comm), "MPI_Send (HCA2 models)"));
	}
	return rc;
}

static int grow(struct subtree *t, int need)
{
	if (need <= t->cap)
		return 0;
	int c = 2 * need;
	struct entry *ne = fault_realloc(t->e, (size_t)c * sizeof(*ne));
	if (!ne)
		return err_set(HCLOCK_ENOMEM, "out of memory");
	t->e = ne;
	t->cap = c;
	return 0;
}

/* Receive a client's model and its subtree's, composed to my clock. Without memory for
 * them the messages are still received (and dropped) so the client is not left waiting. */
static int recv_models(MPI_Comm comm, int src, struct subtree *t)
{
	struct header h = {0, 0, {0, 0, 0}, {0, 0, 0, 0}};
	int rc = comm_check(yield_recv(&h, (int)sizeof(h), MPI_BYTE, src, TAG_MODELS, comm),
	                    "MPI_Recv (HCA2 models)");
	if (rc)
		return rc;
	if (h.n < 0)
		return err_set(HCLOCK_EMPI, "HCA2: bad model count %d from rank %d", h.n, src);
	int g = grow(t, t->n + h.n + 1);
	struct entry scratch[CHUNK];
	for (int i = 0; i < h.n; i += CHUNK) {
		int k = h.n - i < CHUNK ? h.n - i : CHUNK;
		rc = first_err(rc, comm_check(yield_recv(g ? scratch : t->e + t->n + i,
		                                         k * (int)sizeof(*t->e), MPI_BYTE, src,
		                                         TAG_MODELS, comm), "MPI_Recv (HCA2 models)"));
	}
	if ((rc = first_err(rc, g)))
		return rc;
	for (int i = t->n; i < t->n + h.n; i++) {
		t->e[i].bound = bound_compose(&t->e[i].bound, &h.to_partner, &h.bound);
		t->e[i].lm = lm_compose(&h.to_partner, &t->e[i].lm);
	}
	t->n += h.n;
	t->e[t->n++] = (struct entry){src, 0, h.to_partner, h.bound};
	return 0;
}

/* One exchange of the tree: client learns against partner's raw clock and hands it the
 * subtree's models. */
static int tree_step(struct hclock_sync *s, struct learner *L, MPI_Comm comm, int partner,
                     int client, int me, hclock_clock *clk, struct subtree *t)
{
	struct lm lm = {0, 0, 0};
	struct bound bd = bound_unknown();
	/* against the partner's raw clk: the bounds compose through the entries, not the clocks */
	int rc = learn_model(s, L, comm, partner, client, clk, 0, &lm, &bd);
	if (me == client) {
		s->parent = partner;
		return first_err(rc, send_models(comm, partner, &lm, &bd, t));
	}
	return first_err(rc, recv_models(comm, client, t));
}

int hca2_tree(struct hclock_sync *s, struct learner *L, MPI_Comm comm, hclock_clock *clk,
              struct lm *mine_lm, struct bound *mine_bd)
{
	int p, r, rc = 0;
	PMPI_Comm_size(comm, &p);
	PMPI_Comm_rank(comm, &r);
	int nrounds = ilog2(p), max_power = 1 << nrounds;
	struct subtree t = {NULL, 0, 0};
	struct result mine = {{0, 0, 0}, bound_unknown()};
	s->rounds = (uint64_t)nrounds + (p > max_power);

	/* ranks beyond the largest power of two first hand their model to r - max_power */
	if (r >= max_power)
		rc = tree_step(s, L, comm, r - max_power, r, r, clk, &t);
	else if (r < p - max_power)
		rc = tree_step(s, L, comm, r, r + max_power, r, clk, &t);
	for (int i = 1; i <= nrounds && r < max_power; i++) {
		int running = 1 << i, next = 1 << (i - 1);
		if (r % running == 0) {
			rc = first_err(rc, tree_step(s, L, comm, r, r + next, r, clk, &t));
		} else if (r % running == next) {
			rc = first_err(rc, tree_step(s, L, comm, r - next, r, r, clk, &t));
			break;
		}
	}
	/* rank 0 scatters every rank's model to rank 0's clock, if every rank got this far; the
	 * bounds composed with rank 0's clk's own (exact at the top, a leader's global clock in
	 * a hierarchy) */
	struct result *all = NULL;
	if (r == 0 && !rc && !(all = fault_calloc((size_t)p, sizeof(*all))))
		rc = err_set(HCLOCK_ENOMEM, "out of memory");
	for (int i = 0; all && i < t.n; i++)
		all[t.e[i].rank] = (struct result){t.e[i].lm,
		                                   bound_compose(&t.e[i].bound, NULL, &clk->bound)};
	if (!(rc = comm_agree(comm, rc)))
		rc = comm_check(yield_scatter(all, (int)sizeof(*all), MPI_BYTE, &mine, (int)sizeof(mine),
		                              MPI_BYTE, 0, comm), "MPI_Scatter (HCA2 models)");
	free(all);
	free(t.e);
	*mine_lm = mine.lm;
	*mine_bd = mine.bound;
	return rc;
}

static int hca2_run(struct hclock_sync *s, MPI_Comm comm, hclock_clock *clk, hclock_clock **out)
{
	struct learner *L = LEARNER(s);
	struct lm lm;
	struct bound bd;
	offset_reset(L->oa);
	int rc = hca2_tree(s, L, comm, clk, &lm, &bd);
	return finish_lm(comm, clk, &lm, &bd, rc, out);
}

static const struct sync_ops hca2_ops = {
	.run = hca2_run, .destroy = learning_sync_destroy, .explain = learning_sync_explain};

static int hca2_parse(struct spec_parser *ps, struct hclock_sync **out)
{
	return learning_sync_parse(ps, "hca2", &hca2_ops, out);
}

const struct sync_type sync_type_hca2 = {
	.name = "hca2",
	.usage = "hca2" LEARNER_ARGS,
	.help = "HCA2: models learned towards the root over an inverted binomial tree, merged, "
	        "scattered",
	.parse = hca2_parse,
};
