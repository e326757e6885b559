/* learn_spec.c - the model-learning algorithms' spec arguments
 * "/NFIT/OFF/N[/ri][/span=S][/paper]", their destroy hook and their explain lines (learn.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sync/learn.h"
#include "sync/spec.h"
#include "util/err.h"

int learning_sync_parse(struct spec_parser *ps, const char *name, const struct sync_ops *ops,
                        struct hclock_sync **out)
{
	struct hclock_sync *s;
	int rc = sync_alloc(sizeof(struct learning_sync), ops, out);
	if (rc)
		return rc;
	s = *out;
	struct learner *L = LEARNER(s);
	char form[64];
	snprintf(form, sizeof(form), "%s" LEARNER_ARGS, name);
	double span_s = 0;
	if ((rc = spec_expect(ps, '/', form)) ||
	    (rc = spec_int(ps, 2, 1000000, "NFIT, the fit points per model", &L->nfit)) ||
	    (rc = spec_expect(ps, '/', form)) || (rc = offset_spec_parse(ps, form, &L->oa)))
		return rc;
	while (*ps->p == '/') {
		ps->p++;
		const char *r = ps->p;
		size_t rn = spec_toklen(r);
		if (!L->ri && spec_word(ps, "ri")) {
			L->ri = 1;
		} else if (!L->oa->paper && spec_word(ps, "paper")) {
			L->oa->paper = 1;
		} else if (rn > 5 && !strncmp(r, "span=", 5) && !span_s) {
			ps->p += 5;
			if ((rc = spec_duration(ps, 1e-6, 3600, "span=S, the time the fit points are spread "
			                        "over", &span_s)))
				return rc;
		} else {
			return spec_bad(ps, r, rn, "'ri' (recompute intercept), 'span=S' (spread the fit "
			                           "points over S) or 'paper' (the paper's algorithm "
			                           "exactly), each at most once");
		}
	}
	L->span_ns = span_s * 1e9;
	s->bounded = L->oa->type->hull;
	char span[48] = "";
	if (span_s > 0)
		snprintf(span, sizeof(span), "/span=%g", span_s);
	sync_set_spec(s, "%s/%d/%s/%d%s%s%s", name, L->nfit, L->oa->type->name, L->oa->nexchanges,
	              L->ri ? "/ri" : "", span, L->oa->paper ? "/paper" : "");
	return 0;
}

void learning_sync_destroy(struct hclock_sync *s)
{
	struct learning_sync *ls = container_of(s, struct learning_sync, s);
	offset_destroy(ls->L.oa);
	free(ls);
}

void learning_sync_explain(const struct hclock_sync *s, struct sync_explain *e)
{
	const struct learner *L = &container_of(s, struct learning_sync, s)->L;
	sync_explain_line(e, "each model: %d fit points of %d ping-pong%s each, offset estimator %s "
	                  "(%s)", L->nfit, L->oa->nexchanges, L->oa->nexchanges > 1 ? "s" : "",
	                  L->oa->type->name, L->oa->type->help);
	if (L->span_ns > 0)
		sync_explain_line(e, "span: the fit points spread evenly over %g s (the slope's error "
		                  "falls like 1/span)", L->span_ns * 1e-9);
	else
		sync_explain_line(e, "span: none, the fit points back to back (add /span=S to spread "
		                  "them: the slope's error falls like 1/S)");
	if (L->ri)
		sync_explain_line(e, "ri: the intercept re-measured after the fit");
	offset_explain_stalls(e, L->oa, "such fit points are left out of the fit");
	sync_explain_line(e, "bounds: %s", L->oa->type->hull ? "strict (hulls), on every clock"
	                                                    : "none (use hull as the estimator)");
}
