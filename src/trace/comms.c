/*
 * comms.c - the tracer's communicator registry (comms.h, and tracer.h's trace_comm_peer,
 * trace_comm_created): each communicator the program uses gets an id that every member
 * agrees on and its ranks' world ranks, kept in an attribute of its own and listed in the
 * raw file's trailer.
 *
 * A communicator made by a wrapped call (calls.c) is numbered from its parent: every member
 * counts its parent's children alike (the calls are collective), and the id is a hash of the
 * parent's id and that count (the top bit clear). One made by a call not wrapped by hand is
 * registered on first sight and named after its members (the top bit set). MPI_COMM_WORLD is
 * 0, MPI_COMM_SELF 1. The registry is locked for programs calling MPI from several threads.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "trace/comms.h"
#include "trace/tracer.h"
#include "util/rng.h"

struct tcomm {
	uint64_t id;
	int size, inter;
	int32_t *world;       /* world rank of each rank (NULL: world itself) */
	uint32_t nchildren;   /* communicators created from it so far */
};

static struct {
	int keyval;
	struct tcomm **list;
	size_t n, cap;
	struct tcomm *world;
	pthread_mutex_t mu;          /* the registry (programs calling MPI from several threads) */
	int (*recording)(void);      /* whether the tracer records (comms_init) */
} C = {.keyval = -1, .mu = PTHREAD_MUTEX_INITIALIZER};

static int del_attr(MPI_Comm comm, int keyval, void *val, void *extra)
{
	(void)comm, (void)keyval, (void)val, (void)extra;
	return MPI_SUCCESS; /* kept: the trailer lists every communicator ever seen */
}

static struct tcomm *reg(MPI_Comm comm, uint64_t id)
{
	struct tcomm *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->id = id;
	int inter = 0;
	PMPI_Comm_test_inter(comm, &inter);
	t->inter = inter;
	PMPI_Comm_size(comm, &t->size);
	if (!inter && comm != MPI_COMM_WORLD) {
		MPI_Group g, w;
		int32_t *ranks = malloc((size_t)t->size * sizeof(*ranks));
		int *in = malloc((size_t)t->size * sizeof(int)), *out = malloc((size_t)t->size * sizeof(int));
		if (ranks && in && out && PMPI_Comm_group(comm, &g) == MPI_SUCCESS) {
			PMPI_Comm_group(MPI_COMM_WORLD, &w);
			for (int i = 0; i < t->size; i++)
				in[i] = i;
			PMPI_Group_translate_ranks(g, t->size, in, w, out);
			for (int i = 0; i < t->size; i++)
				ranks[i] = out[i] == MPI_UNDEFINED ? -2 : out[i];
			PMPI_Group_free(&g);
			PMPI_Group_free(&w);
			t->world = ranks;
			ranks = NULL;
		}
		free(ranks);
		free(in);
		free(out);
	}
	pthread_mutex_lock(&C.mu);
	if (C.n == C.cap) {
		size_t nc = C.cap ? 2 * C.cap : 16;
		struct tcomm **p = realloc(C.list, nc * sizeof(*p));
		if (!p) {
			pthread_mutex_unlock(&C.mu);
			free(t->world);
			free(t);
			return NULL;
		}
		C.list = p;
		C.cap = nc;
	}
	C.list[C.n++] = t;
	pthread_mutex_unlock(&C.mu);
	PMPI_Comm_set_attr(comm, C.keyval, t);
	return t;
}

static struct tcomm *lookup(MPI_Comm comm)
{
	if (comm == MPI_COMM_WORLD)
		return C.world;
	void *v = NULL;
	int flag = 0;
	if (C.keyval >= 0 && comm != MPI_COMM_NULL)
		PMPI_Comm_get_attr(comm, C.keyval, &v, &flag);
	if (flag)
		return v;
	if (comm == MPI_COMM_NULL)
		return NULL;
	/* a communicator made by a call not wrapped by hand: named after its members (two such
	 * with the same members share an id: their messages are told apart by tag only) */
	struct tcomm *t = reg(comm, 0);
	if (!t)
		return NULL;
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ (uint64_t)t->size;
	for (int i = 0; t->world && i < t->size; i++)
		h = rng_mix64(h ^ (uint64_t)(uint32_t)t->world[i]);
	t->id = h | 1ULL << 63;
	return t;
}

void trace_comm_created(MPI_Comm parent, MPI_Comm newcomm)
{
	if (!C.recording || !C.recording())
		return;
	struct tcomm *p = lookup(parent);
	pthread_mutex_lock(&C.mu);
	uint64_t id = rng_mix64((p ? p->id : 0) * 0x100000001b3ULL + (p ? ++p->nchildren : 0)) &
	              ~(1ULL << 63);
	pthread_mutex_unlock(&C.mu);
	if (newcomm != MPI_COMM_NULL)
		reg(newcomm, id);
}

void trace_comm_peer(MPI_Comm comm, int r, uint64_t *id, int32_t *world)
{
	struct tcomm *t = lookup(comm);
	*id = t ? t->id : 0;
	if (r < 0)
		*world = -1;
	else if (!t || t->inter || r >= t->size)
		*world = -2;
	else
		*world = t->world ? t->world[r] : r;
}

int comms_init(int size, int (*recording)(void))
{
	C.recording = recording;
	if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del_attr, &C.keyval, NULL))
		return -1;
	if (!(C.world = calloc(1, sizeof(*C.world))))
		return -1;
	C.world->id = 0;
	C.world->size = size;
	C.list = calloc(16, sizeof(*C.list));
	C.cap = C.list ? 16 : 0;
	if (C.list)
		C.list[C.n++] = C.world;
	reg(MPI_COMM_SELF, 1);
	return 0;
}

size_t comms_count(void)
{
	return C.n;
}

int32_t *comms_entry(size_t i, struct rec_comm *tc)
{
	struct tcomm *c = C.list[i];
	*tc = (struct rec_comm){c->id, c->size, c->inter};
	size_t n = (size_t)c->size;
	int32_t *w = calloc(n + 1, sizeof(int32_t));
	for (size_t k = 0; w && k < n; k++)
		w[k] = c->world ? c->world[k] : (c == C.world ? (int32_t)k : -2);
	return w;
}

void comms_free(void)
{
	for (size_t i = 0; i < C.n; i++) {
		free(C.list[i]->world);
		free(C.list[i]);
	}
	free(C.list);
	C.list = NULL;
	C.n = 0;
	if (C.keyval >= 0)
		PMPI_Comm_free_keyval(&C.keyval);
}
