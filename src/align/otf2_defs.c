/*
 * otf2_defs.c - the global definitions of an OTF2 archive that name its processes and resolve
 * its ranks (otf2_defs.h).
 */
#define _XOPEN_SOURCE 700 /* strdup */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hclock_api.h"
#include "align/otf2_defs.h"
#include "util/err.h"
#include "util/grow.h"
#include "util/names.h"

static char otf2_msg[256];

/* libotf2 reports errors on stderr by default; keep the first message for ours instead */
static OTF2_ErrorCode quiet(void *u, const char *file, uint64_t line, const char *fn,
                            OTF2_ErrorCode code, const char *fmt, va_list va)
{
	(void)u, (void)file, (void)line, (void)fn;
	if (!otf2_msg[0]) {
		if (fmt)
			vsnprintf(otf2_msg, sizeof(otf2_msg), fmt, va);
		else
			snprintf(otf2_msg, sizeof(otf2_msg), "%s", OTF2_Error_GetDescription(code));
	}
	return code;
}

const char *otf2_why(OTF2_ErrorCode e)
{
	if (otf2_msg[0])
		return otf2_msg;
	return e == OTF2_SUCCESS ? "record rejected" : OTF2_Error_GetDescription(e);
}

OTF2_ErrorCallback otf2_quiet(void)
{
	otf2_msg[0] = 0;
	return OTF2_Error_RegisterCallback(quiet, NULL);
}

int otf2_defs_ns(uint64_t res, __int128 ticks, int64_t *ns)
{
	__int128 d = ticks * 1000000000, q = d / (__int128)res;
	if (q * (__int128)res > d) /* floor for negative values */
		q--;
	if (q > INT64_MAX || q < INT64_MIN)
		return -1;
	*ns = (int64_t)q;
	return 0;
}

int otf2_defs_nomem(struct otf2_defs *d)
{
	if (!d->failed)
		d->failed = err_set(HCLOCK_ENOMEM, "%s: out of memory", d->anchor);
	return OTF2_CALLBACK_INTERRUPT;
}

int otf2_defs_bad(struct otf2_defs *d, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!d->failed)
		d->failed = err_set(HCLOCK_EINVAL, "%s: %s", d->anchor, msg);
	return OTF2_CALLBACK_INTERRUPT;
}

/* ---- the callbacks: user data is the caller's state, struct otf2_defs its first member ---- */

static OTF2_CallbackCode def_clock(void *u, uint64_t res, uint64_t goff, uint64_t len,
                                   uint64_t realtime)
{
	struct otf2_defs *d = u;
	if (res == 0)
		return otf2_defs_bad(d, "ClockProperties with a timer resolution of 0 ticks per "
		                     "second; expected a positive resolution");
	d->res = res;
	d->goff = goff;
	d->tlen = len;
	d->realtime = realtime;
	d->have_clock = 1;
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_string(void *u, OTF2_StringRef self, const char *s)
{
	struct otf2_defs *d = u;
	if (GROW(d->strs, d->nstrs, d->capstrs))
		return otf2_defs_nomem(d);
	d->strs[d->nstrs] = (struct otf2_str){self, strdup(s ? s : "")};
	if (!d->strs[d->nstrs].s)
		return otf2_defs_nomem(d);
	d->nstrs++;
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_group(void *u, OTF2_GroupRef self, OTF2_StringRef name,
                                   OTF2_GroupType type, OTF2_Paradigm paradigm,
                                   OTF2_GroupFlag flags, uint32_t n, const uint64_t *m)
{
	struct otf2_defs *d = u;
	(void)name;
	if (GROW(d->grps, d->ngrps, d->capgrps))
		return otf2_defs_nomem(d);
	struct otf2_grp *g = &d->grps[d->ngrps];
	*g = (struct otf2_grp){self, type, paradigm, flags, n, malloc((n ? n : 1) * sizeof(*m))};
	if (!g->m)
		return otf2_defs_nomem(d);
	if (n)
		memcpy(g->m, m, n * sizeof(*m));
	d->ngrps++;
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_comm(void *u, OTF2_CommRef self, OTF2_StringRef name,
                                  OTF2_GroupRef group, OTF2_CommRef parent, OTF2_CommFlag flags)
{
	struct otf2_defs *d = u;
	(void)name, (void)parent, (void)flags;
	if (GROW(d->comms, d->ncomms, d->capcomms))
		return otf2_defs_nomem(d);
	d->comms[d->ncomms++] = (struct otf2_comm){self, group};
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_lgroup(void *u, OTF2_LocationGroupRef self, OTF2_StringRef name,
                                    OTF2_LocationGroupType type, OTF2_SystemTreeNodeRef parent,
                                    OTF2_LocationGroupRef creator)
{
	struct otf2_defs *d = u;
	(void)type, (void)parent, (void)creator;
	if (GROW(d->lgs, d->nlgs, d->caplgs))
		return otf2_defs_nomem(d);
	d->lgs[d->nlgs++] = (struct otf2_lgroup){self, name, SIZE_MAX};
	return OTF2_CALLBACK_SUCCESS;
}

/* the definitions are kept sorted by ref (their first member) and found by bisection */
static int cmp_ref(const void *a, const void *b)
{
	uint32_t x, y;
	memcpy(&x, a, sizeof(x));
	memcpy(&y, b, sizeof(y));
	return x < y ? -1 : x > y;
}

static const void *find(const void *base, size_t n, size_t size, uint32_t ref)
{
	return n ? bsearch(&ref, base, n, size, cmp_ref) : NULL;
}

int otf2_defs_read(OTF2_Reader *rdr, struct otf2_defs *d,
                   void (*more)(OTF2_GlobalDefReaderCallbacks *cb), void *user)
{
	OTF2_GlobalDefReader *gdr = OTF2_Reader_GetGlobalDefReader(rdr);
	OTF2_GlobalDefReaderCallbacks *cb = OTF2_GlobalDefReaderCallbacks_New();
	int rc = 0;
	if (!gdr || !cb) {
		rc = err_set(HCLOCK_EINVAL, "%s: cannot read the global definitions (OTF2: %s); give "
		             "a complete OTF2 archive", d->anchor, otf2_why(OTF2_SUCCESS));
	} else {
		OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(cb, def_clock);
		OTF2_GlobalDefReaderCallbacks_SetStringCallback(cb, def_string);
		OTF2_GlobalDefReaderCallbacks_SetGroupCallback(cb, def_group);
		OTF2_GlobalDefReaderCallbacks_SetCommCallback(cb, def_comm);
		OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(cb, def_lgroup);
		if (more)
			more(cb);
		OTF2_Reader_RegisterGlobalDefCallbacks(rdr, gdr, cb, user);
		uint64_t n;
		OTF2_ErrorCode e = OTF2_Reader_ReadAllGlobalDefinitions(rdr, gdr, &n);
		if (d->failed)
			rc = d->failed;
		else if (e != OTF2_SUCCESS)
			rc = err_set(HCLOCK_EINVAL, "%s: cannot read the global definitions (OTF2: %s); "
			             "give a complete OTF2 archive", d->anchor, otf2_why(e));
		else if (!d->have_clock)
			rc = err_set(HCLOCK_EINVAL, "%s: no ClockProperties definition; expected the "
			             "timer resolution and global offset of the archive", d->anchor);
	}
	if (cb)
		OTF2_GlobalDefReaderCallbacks_Delete(cb);
	qsort(d->strs, d->nstrs, sizeof(*d->strs), cmp_ref);
	qsort(d->grps, d->ngrps, sizeof(*d->grps), cmp_ref);
	qsort(d->comms, d->ncomms, sizeof(*d->comms), cmp_ref);
	return rc;
}

const char *otf2_defs_str(const struct otf2_defs *d, uint32_t ref)
{
	const struct otf2_str *s = find(d->strs, d->nstrs, sizeof(*s), ref);
	return s ? s->s : NULL;
}

const struct otf2_grp *otf2_defs_grp(const struct otf2_defs *d, uint32_t ref)
{
	return find(d->grps, d->ngrps, sizeof(*d->grps), ref);
}

const struct otf2_grp *otf2_defs_comm_group(const struct otf2_defs *d, uint32_t comm)
{
	const struct otf2_comm *c = find(d->comms, d->ncomms, sizeof(*c), comm);
	return c ? otf2_defs_grp(d, c->group) : NULL;
}

const struct otf2_grp *otf2_defs_comm_locations(const struct otf2_defs *d, uint32_t paradigm)
{
	for (size_t i = 0; i < d->ngrps; i++)
		if (d->grps[i].type == OTF2_GROUP_TYPE_COMM_LOCATIONS && d->grps[i].paradigm == paradigm)
			return &d->grps[i];
	return NULL;
}

char *otf2_defs_node_name(const struct otf2_defs *d, size_t g,
                          int (*taken)(const void *ctx, const char *name), const void *ctx)
{
	const char *s = otf2_defs_str(d, d->lgs[g].name);
	char *name = malloc((s ? strlen(s) : 0) + 24);
	if (!name)
		return NULL;
	if (s && *s)
		names_sanitize(strcpy(name, s));
	else
		sprintf(name, "group%" PRIu32, d->lgs[g].ref);
	if (taken(ctx, name))
		sprintf(name + strlen(name), "_%" PRIu32, d->lgs[g].ref);
	return name;
}

void otf2_defs_free(struct otf2_defs *d)
{
	for (size_t i = 0; i < d->nstrs; i++)
		free(d->strs[i].s);
	for (size_t i = 0; i < d->ngrps; i++)
		free(d->grps[i].m);
	free(d->strs);
	free(d->grps);
	free(d->comms);
	free(d->lgs);
	d->strs = NULL;
	d->grps = NULL;
	d->comms = NULL;
	d->lgs = NULL;
	d->nstrs = d->ngrps = d->ncomms = d->nlgs = 0;
}
