/* spec.c - recursive-descent parser of sync spec strings (grammar in spec.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hclock.h"
#include "sync/spec.h"
#include "util/err.h"

#define ALGS "hca3, hca2, hca, jk, skampi, dunigan, none, h2(...), h3(...)"
#define OFFALGS "skampi, rtt or min"

struct parser {
	const char *s;   /* whole input */
	const char *p;   /* position */
	int depth;
};

/* next token: a run of characters up to / , ( ) or the end */
static size_t toklen(const char *p)
{
	return strcspn(p, "/,()");
}

static int bad(struct parser *ps, const char *tok, size_t n, const char *want)
{
	if (!n)
		return err_set(HCLOCK_EINVAL, "sync spec '%s': missing token at position %d; expected %s",
		               ps->s, (int)(tok - ps->s) + 1, want);
	return err_set(HCLOCK_EINVAL, "sync spec '%s': bad token '%.*s'; expected %s", ps->s, (int)n,
	               tok, want);
}

static int expect_char(struct parser *ps, char c, const char *want)
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

static int parse_int(struct parser *ps, long lo, long hi, const char *what, int *out)
{
	const char *t = ps->p;
	size_t n = toklen(t);
	char buf[32], *end;
	char want[128];
	snprintf(want, sizeof(want), "%s (an integer from %ld to %ld)", what, lo, hi);
	if (!n || n >= sizeof(buf))
		return bad(ps, t, n, want);
	memcpy(buf, t, n);
	buf[n] = 0;
	errno = 0;
	long v = strtol(buf, &end, 10);
	if (*end || errno || v < lo || v > hi)
		return bad(ps, t, n, want);
	*out = (int)v;
	ps->p += n;
	return 0;
}

static int parse_double(struct parser *ps, double lo, double hi, const char *what, double *out)
{
	const char *t = ps->p;
	size_t n = toklen(t);
	char buf[32], *end;
	char want[128];
	snprintf(want, sizeof(want), "%s (a number from %g to %g)", what, lo, hi);
	if (!n || n >= sizeof(buf))
		return bad(ps, t, n, want);
	memcpy(buf, t, n);
	buf[n] = 0;
	errno = 0;
	double v = strtod(buf, &end);
	if (*end || errno || !isfinite(v) || v < lo || v > hi)
		return bad(ps, t, n, want);
	*out = v;
	ps->p += n;
	return 0;
}

static int parse_offalg(struct parser *ps, struct sync_spec *sp)
{
	const char *t = ps->p;
	size_t n = toklen(t);
	if ((n == 6 && !strncmp(t, "skampi", 6)) || (n == 3 && !strncmp(t, "rtt", 3)) ||
	    (n == 3 && !strncmp(t, "min", 3))) {
		memcpy(sp->offalg, t, n);
		sp->offalg[n] = 0;
		ps->p += n;
		return 0;
	}
	return bad(ps, t, n, "an offset algorithm: " OFFALGS);
}

static int parse_spec(struct parser *ps, struct sync_spec **out);

static int parse_levels(struct parser *ps, struct sync_spec *sp, int nlevels)
{
	static const char *names[2][3] = {{"inter-node spec", "intra-node spec", ""},
	                                  {"inter-node spec", "socket spec", "intra-socket spec"}};
	if (ps->depth > 8)
		return err_set(HCLOCK_EINVAL, "sync spec '%s': nested deeper than 8 levels", ps->s);
	int rc = expect_char(ps, '(', nlevels == 2 ? "h2(INTER,INTRA)" : "h3(INTER,SOCKET,INTRA)");
	if (rc)
		return rc;
	sp->nlevels = nlevels;
	for (int i = 0; i < nlevels; i++) {
		if (i && (rc = expect_char(ps, ',', names[nlevels - 2][i])))
			return rc;
		ps->depth++;
		rc = parse_spec(ps, &sp->level[i]);
		ps->depth--;
		if (rc)
			return rc;
	}
	return expect_char(ps, ')', nlevels == 2 ? "closing h2(INTER,INTRA)"
	                                         : "closing h3(INTER,SOCKET,INTRA)");
}

static int parse_spec(struct parser *ps, struct sync_spec **out)
{
	struct sync_spec *sp = calloc(1, sizeof(*sp));
	int rc = 0;
	if (!sp)
		return err_set(HCLOCK_ENOMEM, "out of memory");
	*out = sp;
	const char *t = ps->p;
	size_t n = toklen(t);
#define IS(w) (n == strlen(w) && !strncmp(t, w, n))
	if (IS("hca3") || IS("hca2") || IS("hca") || IS("jk")) {
		sp->kind = IS("hca3") ? SYNC_HCA3 : IS("hca2") ? SYNC_HCA2 : IS("hca") ? SYNC_HCA : SYNC_JK;
		ps->p += n;
		if ((rc = expect_char(ps, '/', "ALG/NFITPOINTS/OFFSETALG/NPINGPONGS")) ||
		    (rc = parse_int(ps, 2, 1000000, "NFITPOINTS", &sp->nfit)) ||
		    (rc = expect_char(ps, '/', "ALG/NFITPOINTS/OFFSETALG/NPINGPONGS")) ||
		    (rc = parse_offalg(ps, sp)) ||
		    (rc = expect_char(ps, '/', "ALG/NFITPOINTS/OFFSETALG/NPINGPONGS")) ||
		    (rc = parse_int(ps, 1, 1000000, "NPINGPONGS", &sp->npingpongs)))
			return rc;
		while (*ps->p == '/') {
			ps->p++;
			const char *r = ps->p;
			size_t rn = toklen(r);
			if (rn == 2 && !strncmp(r, "ri", 2) && !sp->ri) {
				sp->ri = 1;
				ps->p += 2;
			} else if (rn > 5 && !strncmp(r, "span=", 5) && !sp->span_s) {
				ps->p += 5;
				if ((rc = parse_double(ps, 1e-6, 3600, "span=SECONDS, the time over which the "
				                       "fit points are spread", &sp->span_s)))
					return rc;
			} else {
				return bad(ps, r, rn, "'ri' (recompute intercept) or 'span=SECONDS' (spread the "
				                      "fit points), each at most once");
			}
		}
	} else if (IS("skampi")) {
		sp->kind = SYNC_SKAMPI;
		ps->p += n;
		if ((rc = expect_char(ps, '/', "skampi/OFFSETALG/NPINGPONGS")) ||
		    (rc = parse_offalg(ps, sp)) ||
		    (rc = expect_char(ps, '/', "skampi/OFFSETALG/NPINGPONGS")) ||
		    (rc = parse_int(ps, 1, 1000000, "NPINGPONGS", &sp->npingpongs)))
			return rc;
	} else if (IS("dunigan")) {
		sp->kind = SYNC_DUNIGAN;
		ps->p += n;
		if ((rc = expect_char(ps, '/', "dunigan/S/K")) ||
		    (rc = parse_double(ps, 0.001, 86400, "S, seconds between the offsets", &sp->interval_s)) ||
		    (rc = expect_char(ps, '/', "dunigan/S/K")) ||
		    (rc = parse_int(ps, 1, 1000000, "K, exchanges per offset", &sp->tries)))
			return rc;
		strcpy(sp->offalg, "min");
		sp->npingpongs = sp->tries;
	} else if (IS("none")) {
		sp->kind = SYNC_NONE;
		ps->p += n;
	} else if (IS("prop")) {
		if (!ps->depth)
			return err_set(HCLOCK_EINVAL, "sync spec '%s': 'prop' copies the clock of an upper level "
			                              "and works only inside h2(...) or h3(...), e.g. "
			                              "h2(hca3/500/skampi/20,prop)", ps->s);
		sp->kind = SYNC_PROP;
		ps->p += n;
	} else if (IS("h2") || IS("h3")) {
		sp->kind = IS("h2") ? SYNC_H2 : SYNC_H3;
		ps->p += n;
		rc = parse_levels(ps, sp, sp->kind == SYNC_H2 ? 2 : 3);
	} else {
		rc = bad(ps, t, n, "a sync algorithm: " ALGS);
	}
#undef IS
	return rc;
}

int sync_spec_parse(const char *s, struct sync_spec **out)
{
	*out = NULL;
	if (!s)
		return err_set(HCLOCK_EINVAL, "sync spec missing; expected e.g. hca3/500/skampi/20");
	struct parser ps = {s, s, 0};
	struct sync_spec *sp = NULL;
	int rc = parse_spec(&ps, &sp);
	if (!rc && *ps.p)
		rc = err_set(HCLOCK_EINVAL, "sync spec '%s': unexpected '%s' after the end of the spec", s,
		             ps.p);
	if (rc) {
		sync_spec_free(sp);
		return rc;
	}
	*out = sp;
	return 0;
}

void sync_spec_free(struct sync_spec *sp)
{
	if (!sp)
		return;
	for (int i = 0; i < 3; i++)
		sync_spec_free(sp->level[i]);
	free(sp);
}

static int fmt(const struct sync_spec *sp, char *b, size_t len)
{
	static const char *names[] = {"none", "hca3", "hca2", "hca", "jk", "skampi", "dunigan",
	                              "prop", "h2", "h3"};
	int n = 0;
	switch (sp->kind) {
	case SYNC_HCA3:
	case SYNC_HCA2:
	case SYNC_HCA:
	case SYNC_JK:
	{
		char span[48] = "";
		if (sp->span_s > 0)
			snprintf(span, sizeof(span), "/span=%g", sp->span_s);
		return snprintf(b, len, "%s/%d/%s/%d%s%s", names[sp->kind], sp->nfit, sp->offalg,
		                sp->npingpongs, sp->ri ? "/ri" : "", span);
	}
	case SYNC_SKAMPI: return snprintf(b, len, "skampi/%s/%d", sp->offalg, sp->npingpongs);
	case SYNC_DUNIGAN: return snprintf(b, len, "dunigan/%g/%d", sp->interval_s, sp->tries);
	case SYNC_NONE:
	case SYNC_PROP: return snprintf(b, len, "%s", names[sp->kind]);
	case SYNC_H2:
	case SYNC_H3:
		n = snprintf(b, len, "%s(", names[sp->kind]);
		for (int i = 0; i < sp->nlevels; i++) {
			if ((size_t)n < len && i)
				n += snprintf(b + n, len - (size_t)n, ",");
			if ((size_t)n < len)
				n += fmt(sp->level[i], b + n, len - (size_t)n);
		}
		if ((size_t)n < len)
			n += snprintf(b + n, len - (size_t)n, ")");
		return n;
	}
	return 0;
}

void sync_spec_format(const struct sync_spec *sp, char *buf, unsigned len)
{
	if (len)
		buf[0] = 0;
	fmt(sp, buf, len);
}
