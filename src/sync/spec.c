/* spec.c - the recursive-descent parser of sync specs; each algorithm parses its own
 * arguments with these helpers (spec.h). */
#include <stdio.h>
#include <string.h>

#include "hclock.h"
#include "sync/spec.h"
#include "sync/sync.h"
#include "util/err.h"
#include "util/parse.h"

#define MAX_DEPTH 8

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

int spec_parse(const char *s, struct hclock_sync **out)
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
