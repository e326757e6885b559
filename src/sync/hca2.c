/*
 * hca2.c - HCA2 (Hunold & Carpen-Amarie, CLUSTER 2016; Fig. 1a of the 2018 paper): learn
 * models towards the root over an inverted binomial tree in ceil(log2 p) rounds, each client
 * against its partner's raw clock. A client hands the models of its whole subtree (composed
 * to itself) to its partner, who composes them once more; at the end rank 0 holds every
 * rank's model to its own clock and scatters them.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/yield.h"
#include "sync/sync.h"
#include "util/err.h"

#define TAG_MODELS (HCLOCK_TAG + 1)

struct entry {
	int32_t rank;
	int32_t pad;
	struct lm lm; /* maps rank's clk to the holder's clk */
};

/* Send the subtree's models to the partner (count first, then the entries as bytes:
 * processes of one job share one data representation). */
static void send_entries(MPI_Comm comm, int dest, const struct entry *e, int n)
{
	MPI_Send(&n, 1, MPI_INT, dest, TAG_MODELS, comm);
	if (n)
		MPI_Send(e, n * (int)sizeof(*e), MPI_BYTE, dest, TAG_MODELS, comm);
}

static int recv_entries(MPI_Comm comm, int src, const struct lm *to_me, struct entry **e, int *n,
                        int *cap)
{
	int k;
	yield_recv(&k, 1, MPI_INT, src, TAG_MODELS, comm);
	if (*n + k + 1 > *cap) {
		int c = 2 * (*n + k + 1);
		struct entry *ne = realloc(*e, (size_t)c * sizeof(*ne));
		if (!ne)
			return err_set(HCLOCK_ENOMEM, "out of memory");
		*e = ne;
		*cap = c;
	}
	if (k)
		MPI_Recv(*e + *n, k * (int)sizeof(**e), MPI_BYTE, src, TAG_MODELS, comm,
		         MPI_STATUS_IGNORE);
	for (int i = *n; i < *n + k; i++)
		(*e)[i].lm = lm_compose(to_me, &(*e)[i].lm);
	*n += k;
	(*e)[*n].rank = src;
	(*e)[*n].lm = *to_me;
	(*n)++;
	return 0;
}

int hca2_tree(struct hclock_sync *s, struct learner *L, MPI_Comm comm, hclock_clock *clk,
              struct lm *mine)
{
	int p, r, rc = 0, n = 0, cap = 0;
	MPI_Comm_size(comm, &p);
	MPI_Comm_rank(comm, &r);
	int nrounds = ilog2(p), max_power = 1 << nrounds;
	struct entry *e = NULL;
	struct lm lm = {0, 0, 0};
	*mine = lm;
	s->rounds = (uint64_t)nrounds + (p > max_power);

	/* ranks beyond the largest power of two first hand their model to r - max_power */
	if (r >= max_power) {
		rc = learn_model(s, L, comm, r - max_power, r, clk, &lm);
		send_entries(comm, r - max_power, NULL, 0);
		MPI_Send(&lm, (int)sizeof(lm), MPI_BYTE, r - max_power, TAG_MODELS, comm);
	} else if (r < p - max_power) {
		int c = r + max_power;
		rc = learn_model(s, L, comm, r, c, clk, NULL);
		int k;
		yield_recv(&k, 1, MPI_INT, c, TAG_MODELS, comm);
		yield_recv(&lm, (int)sizeof(lm), MPI_BYTE, c, TAG_MODELS, comm);
		if (!(e = malloc(4 * sizeof(*e))))
			return err_set(HCLOCK_ENOMEM, "out of memory");
		cap = 4;
		e[0].rank = c;
		e[0].lm = lm;
		n = 1;
	}
	for (int i = 1; i <= nrounds && r < max_power && !rc; i++) {
		int running = 1 << i, next = 1 << (i - 1);
		if (r % running == 0) {
			struct lm to_me;
			rc = learn_model(s, L, comm, r, r + next, clk, NULL);
			/* the client sends its model to me first, then its subtree's */
			yield_recv(&to_me, (int)sizeof(to_me), MPI_BYTE, r + next, TAG_MODELS, comm);
			if (!rc)
				rc = recv_entries(comm, r + next, &to_me, &e, &n, &cap);
		} else if (r % running == next) {
			rc = learn_model(s, L, comm, r - next, r, clk, &lm);
			MPI_Send(&lm, (int)sizeof(lm), MPI_BYTE, r - next, TAG_MODELS, comm);
			send_entries(comm, r - next, e, n);
			break;
		}
	}
	/* rank 0 scatters every rank's model to rank 0's clock */
	struct lm *all = NULL;
	if (r == 0) {
		all = calloc((size_t)p, sizeof(*all));
		if (!all)
			rc = err_set(HCLOCK_ENOMEM, "out of memory");
		for (int i = 0; all && i < n; i++)
			all[e[i].rank] = e[i].lm;
	}
	yield_scatter(all, (int)sizeof(*all), MPI_BYTE, mine, (int)sizeof(*mine), MPI_BYTE, 0, comm);
	free(all);
	free(e);
	return rc;
}

static int hca2_run(struct hclock_sync *s, MPI_Comm comm, hclock_clock *clk, hclock_clock **out)
{
	struct learner *L = LEARNER(s);
	struct lm lm;
	offset_reset(L->oa);
	int rc = hca2_tree(s, L, comm, clk, &lm);
	return rc ? rc : finish_lm(comm, clk, &lm, out);
}

static const struct sync_ops hca2_ops = {.name = "hca2", .run = hca2_run, .destroy = learning_sync_destroy};

int sync_hca2_create(const struct sync_spec *sp, struct hclock_sync **out)
{
	return learning_sync_create(sp, &hca2_ops, out);
}
