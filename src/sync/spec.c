/* spec.c - the sync family's table (sync/types.def) and the recursive-descent parser of
 * sync specs, hclock_sync_create; each algorithm parses its own arguments with these
 * helpers (spec.h), an offset estimator's "OFF/N" included. */
#include <stdio.h>
#include <string.h>

#include "hclock.h"
#include "numerics/stall.h"
#include "sync/spec.h"
#include "sync/sync.h"
#include "util/err.h"
#include "util/names.h"
#include "util/parse.h"

#define MAX_DEPTH 8

#define SYNC_TYPE(n) REGISTRY_MEMBER(sync_type_##n)
#define REGISTRY_DEF "sync/types.def"
#define REGISTRY_TYPE struct sync_type
#define REGISTRY_TABLE sync_types
#define REGISTRY_FIND sync_type_find
#include "util/registry.h"

const char *sync_type_names(void)
{
	static _Thread_local char buf[256];
	/* h2(...): an algorithm whose arguments are specs */
	static _Thread_local char deco[ARRAY_SIZE(sync_types)][24];
	const char *names[ARRAY_SIZE(sync_types)];
	size_t n = 0;
	for (; sync_types[n]; n++) {
		const struct sync_type *t = sync_types[n];
		snprintf(deco[n], sizeof(deco[n]), "%s%s", t->name,
		         t->usage[strlen(t->name)] == '(' ? "(...)" : "");
		names[n] = deco[n];
	}
	return names_join(buf, sizeof(buf), names, n);
}

size_t spec_toklen(const char *p)
{
	return strcspn(p, "/,()");
}

int spec_bad(struct spec_parser *ps, const char *tok, size_t n, const char *want)
{
	if (!n)
		return err_set(HCLOCK_EINVAL, "sync spec '%s': missing token at position %d; expected %s",
		               ps->s, (int)(tok - ps->s) + 1, want);
	return err_set(HCLOCK_EINVAL, "sync spec '%s': bad token '%.*s'; expected %s", ps->s, (int)n,
	               tok, want);
}

int spec_expect(struct spec_parser *ps, char c, const char *want)
{
	if (*ps->p != c) {
		if (!*ps->p)
			return err_set(HCLOCK_EINVAL, "sync spec '%s': ends early; expected '%c' (%s)", ps->s, c,
			               want);
		return err_set(HCLOCK_EINVAL, "sync spec '%s': unexpected '%c' at position %d; expected "
		                              "'%c' (%s)", ps->s, *ps->p, (int)(ps->p - ps->s) + 1, c, want);
	}
	ps->p++;
	return 0;
}

int spec_int(struct spec_parser *ps, long lo, long hi, const char *what, int *out)
{
	size_t n = spec_toklen(ps->p);
	long v;
	if (parse_int(ps->p, n, lo, hi, &v)) {
		char want[160];
		snprintf(want, sizeof(want), "%s (an integer from %ld to %ld)", what, lo, hi);
		return spec_bad(ps, ps->p, n, want);
	}
	*out = (int)v;
	ps->p += n;
	return 0;
}

int spec_duration(struct spec_parser *ps, double lo_s, double hi_s, const char *what,
                  double *out)
{
	size_t n = spec_toklen(ps->p);
	if (parse_duration_s(ps->p, n, lo_s, hi_s, out)) {
		char want[200];
		snprintf(want, sizeof(want), "%s (%s, from %gs to %gs)", what, PARSE_DURATION_RULE, lo_s,
		         hi_s);
		return spec_bad(ps, ps->p, n, want);
	}
	ps->p += n;
	return 0;
}

int spec_word(struct spec_parser *ps, const char *word)
{
	size_t n = spec_toklen(ps->p);
	if (n != strlen(word) || strncmp(ps->p, word, n))
		return 0;
	ps->p += n;
	return 1;
}

int offset_spec_parse(struct spec_parser *ps, const char *form, struct offset_alg **out)
{
	const char *t = ps->p;
	size_t n = spec_toklen(t);
	const struct offset_type *ot = offset_type_find(t, n);
	int np, rc;
	*out = NULL;
	if (!ot) {
		char want[200];
		snprintf(want, sizeof(want), "an offset estimator: %s", offset_type_names());
		return spec_bad(ps, t, n, want);
	}
	ps->p += n;
	if ((rc = spec_expect(ps, '/', form)) ||
	    (rc = spec_int(ps, 1, 1000000, "NPINGPONGS", &np)))
		return rc;
	return offset_create(ot, np, out);
}

void offset_explain_stalls(struct sync_explain *e, const struct offset_alg *oa, const char *more)
{
	if (oa->paper)
		sync_explain_line(e, "paper: the paper's algorithm exactly (no retakes of measurements "
		                  "made through a stall%s)", *more ? "; ordinary least squares through "
		                  "every fit point" : "");
	else
		sync_explain_line(e, "stalls: a measurement whose round trip is over %gx+%.0f us of the "
		                  "pair's fastest is retaken (at most %d times)%s%s (add /paper for the "
		                  "paper's algorithm exactly)", STALL_FACTOR, STALL_MARGIN_NS * 1e-3,
		                  OFFSET_RETAKES, *more ? ", " : "", more);
}

void offset_spec_paper(struct spec_parser *ps, struct offset_alg *oa)
{
	if (*ps->p != '/')
		return;
	ps->p++;
	if (spec_word(ps, "paper"))
		oa->paper = 1;
	else
		ps->p--;
}

int spec_parse_one(struct spec_parser *ps, struct hclock_sync **out)
{
	*out = NULL;
	if (ps->depth > MAX_DEPTH)
		return err_set(HCLOCK_EINVAL, "sync spec '%s': nested deeper than %d levels", ps->s,
		               MAX_DEPTH);
	const char *t = ps->p;
	size_t n = spec_toklen(t);
	const struct sync_type *type = sync_type_find(t, n);
	if (!type) {
		char want[400];
		snprintf(want, sizeof(want), "a sync algorithm: %s", sync_type_names());
		return spec_bad(ps, t, n, want);
	}
	if (type->level_only && !ps->depth)
		return err_set(HCLOCK_EINVAL, "sync spec '%s': '%s' works only as a lower level inside "
		               "h2(...) or h3(...), e.g. h2(hca3/500/skampi/20,%s)", ps->s, type->name,
		               type->name);
	ps->p += n;
	int rc = type->parse(ps, out);
	if (!rc)
		(*out)->type = type;
	return rc;
}

int hclock_sync_create(const char *s, hclock_sync **out)
{
	*out = NULL;
	if (!s)
		return err_set(HCLOCK_EINVAL, "sync spec missing; expected e.g. hca3/500/skampi/20");
	struct spec_parser ps = {s, s, 0};
	int rc = spec_parse_one(&ps, out);
	if (!rc && *ps.p)
		rc = err_set(HCLOCK_EINVAL, "sync spec '%s': unexpected '%s' after the end of the spec", s,
		             ps.p);
	if (rc) {
		hclock_sync_free(*out);
		*out = NULL;
	}
	return rc;
}
