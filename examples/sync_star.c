/*
 * sync_star.c - the worked example of docs/architecture.md ("Families: adding a member is
 * one file and two lines"): a sync algorithm "star" where the root measures every client's
 * offset once (an offset-only JK). To add it to hclock, copy this file to src/sync/star.c
 * and add the line SYNC_TYPE(star) to src/sync/types.def. The build compiles it here against
 * the internal headers so that the text in the docs stays code that compiles
 * (tests/tool/doc_blocks.py checks the docs' copy).
 */
#include <stdlib.h>
#include "sync/sync.h"
struct star { struct hclock_sync s; struct offset_alg *oa; };
static int star_run(struct hclock_sync *s, MPI_Comm comm, hclock_clock *clk, hclock_clock **out)
{
        struct offset_sample smp = {0, 0, 0};
        int p, r;
        MPI_Comm_size(comm, &p);
        MPI_Comm_rank(comm, &r);
        s->rounds = (uint64_t)(p - 1);    /* the schedule's sequential steps */
        s->parent = r ? 0 : -1;           /* the tree a continuous clock keeps learning in */
        int rc = measure_all(s, ((struct star *)s)->oa, comm, clk, &smp);
        struct lm lm = {smp.local_ns, smp.offset_ns, 0};
        return finish_lm(comm, clk, &lm, NULL, rc, out); /* no bound; completes on error */
}
static void star_destroy(struct hclock_sync *s)
{
        offset_destroy(((struct star *)s)->oa);
        free(s);
}
static const struct sync_ops star_ops = {.run = star_run, .destroy = star_destroy};
static int star_parse(struct spec_parser *ps, struct hclock_sync **out)
{
        int rc = sync_alloc(sizeof(struct star), &star_ops, out);
        struct star *k = (struct star *)*out;
        if (rc || (rc = spec_expect(ps, '/', "star/OFF/N")) ||
            (rc = offset_spec_parse(ps, "star/OFF/N", &k->oa)))
                return rc;
        sync_set_spec(*out, "star/%s/%d", k->oa->type->name, k->oa->nexchanges);
        return 0;
}
const struct sync_type sync_type_star = {.name = "star", .usage = "star/OFF/N",
        .help = "the root measures every client's offset once", .parse = star_parse};
