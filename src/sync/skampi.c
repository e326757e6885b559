/*
 * skampi.c - SKaMPI's synchronization (Worsch et al.): rank 0 measures the offset of every
 * process in turn; each process keeps an offset-only model (no drift), so the global clock
 * degrades as the clocks' rates differ. O(p) rounds.
 */
#include <stdlib.h>

#include "sync/sync.h"
#include "util/err.h"

struct skampi_sync {
	struct hclock_sync s;
	struct offset_alg *oa;
};

static int skampi_run(struct hclock_sync *s, MPI_Comm comm, hclock_clock *clk, hclock_clock **out)
{
	struct skampi_sync *k = (struct skampi_sync *)s;
	struct offset_sample smp = {0, 0, 0};
	int p, r, rc;
	PMPI_Comm_size(comm, &p);
	PMPI_Comm_rank(comm, &r);
	offset_reset(k->oa);
	s->rounds = (uint64_t)(p - 1);
	s->parent = r ? 0 : -1;
	rc = measure_all(s, k->oa, comm, clk, &smp);
	if (r != 0)
		sync_note_rtt(s, smp.rtt_ns);
	if (r == 0 || rc) {
		*out = hclock_clock_ref(clk);
		return rc;
	}
	return hclock_model_offset(clk, smp.offset_ns, out);
}

static void skampi_destroy(struct hclock_sync *s)
{
	struct skampi_sync *k = (struct skampi_sync *)s;
	offset_destroy(k->oa);
	free(k);
}

static void skampi_explain(const struct hclock_sync *s, struct sync_explain *e)
{
	const struct offset_alg *oa = ((const struct skampi_sync *)s)->oa;
	sync_explain_line(e, "rank 0 measures each process in turn: %d ping-pong%s, offset "
	                  "estimator %s (%s); an offset only, no drift model", oa->nexchanges,
	                  oa->nexchanges > 1 ? "s" : "", oa->type->name, oa->type->help);
	offset_explain_stalls(e, oa, "");
}

static const struct sync_ops skampi_ops = {
	.run = skampi_run, .destroy = skampi_destroy, .explain = skampi_explain};

static int skampi_parse(struct spec_parser *ps, struct hclock_sync **out)
{
	int rc = sync_alloc(sizeof(struct skampi_sync), &skampi_ops, out);
	struct skampi_sync *k = (struct skampi_sync *)*out;
	if (rc || (rc = spec_expect(ps, '/', "skampi/OFF/N[/paper]")) ||
	    (rc = offset_spec_parse(ps, "skampi/OFF/N[/paper]", &k->oa)))
		return rc;
	offset_spec_paper(ps, k->oa);
	sync_set_spec(*out, "skampi/%s/%d%s", k->oa->type->name, k->oa->nexchanges,
	              k->oa->paper ? "/paper" : "");
	return 0;
}

const struct sync_type sync_type_skampi = {
	.name = "skampi",
	.usage = "skampi/OFF/N[/paper]",
	.help = "SKaMPI: offsets only, no drift model, O(p)",
	.parse = skampi_parse,
};
