/*
 * writer_otf2.c - the OTF2 trace format's write: the archive read by reader_otf2.c copied
 * with every timestamp converted to the reference timeline.
 *
 * Output: OUTDIR/D/NAME.otf2 where D is the name of the directory of the input anchor; all
 * definitions, local and global, copied through the OTF2 API (otf2_copy.c) except that
 * ClockOffset definitions are dropped (their correction is already in the times) and
 * ClockProperties get the new global offset and trace length; every event time, and every
 * time argument of an event, through the conversion; each location kept monotonic by
 * clamping to its previous time (counted, see trace_otf2_clamps). Written into a temporary
 * directory in OUTDIR, then renamed into place.
 */
#define _XOPEN_SOURCE 700 /* mkdtemp, realpath */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <otf2/otf2.h>

#include "align/otf2_copy.h"
#include "align/otf2_reader.h"
#include "align/otf2_set.h"
#include "align/format.h"
#include "align/outset.h"
#include "align/trace.h"

/* writing state */
struct wr {
	const struct trace_set *set;
	struct otf2_set *o;
	trace_convert_fn conv;
	void *ctx;
	size_t cur;
	uint64_t tmin, tmax; /* earliest and latest event time written, ticks */
	int failed;         /* the HCLOCK_E* code of the first failure in a callback, or 0 */
	struct otf2_copy copy;
};

static int stamp_convert(struct otf2_copy *c, OTF2_LocationRef ref, OTF2_TimeStamp *t,
                         int is_event)
{
	struct wr *w = c->user;
	struct loc *l = &w->o->locs[w->cur];
	int64_t ns, u;
	uint64_t out;

	(void)ref;
	if (otf2_ticks_to_ns(w->o, *t, &ns))
		goto range;
	u = w->conv(w->ctx, l->node, ns);
	if (otf2_ns_to_ticks(w->o, u, &out))
		goto range;
	if (is_event) {
		if (l->started && out < l->last) {
			out = l->last;
			w->o->clamps++;
		}
		l->last = out;
		l->started = 1;
		l->written++;
		if (out < w->tmin)
			w->tmin = out;
		if (out > w->tmax)
			w->tmax = out;
	}
	*t = out;
	return 0;
range:
	if (!w->failed)
		w->failed = err_set(HCLOCK_EINVAL, "%s: location %" PRIu64
		                    ", event %" PRIu64 ": time %" PRIu64 " ticks cannot be converted "
		                    "into the archive's range; choose another reference",
		                    w->o->anchor, l->ref, c->position, *t);
	return -1;
}

static OTF2_CallbackCode wdef_clock(void *u, uint64_t res, uint64_t goff, uint64_t len,
                                    uint64_t realtime)
{
	(void)u, (void)res, (void)goff, (void)len, (void)realtime;
	return OTF2_CALLBACK_SUCCESS; /* written before the copy, with the new range */
}

static OTF2_CallbackCode wdef_location(void *u, OTF2_LocationRef self, OTF2_StringRef name,
                                       OTF2_LocationType type, uint64_t nev,
                                       OTF2_LocationGroupRef group)
{
	struct otf2_copy *c = u;
	struct wr *w = c->user;
	long i = otf2_find_loc(w->o, self);
	OTF2_ErrorCode e;

	if (i >= 0)
		nev = w->o->locs[i].written;
	e = OTF2_GlobalDefWriter_WriteLocation(c->gdef, self, name, type, nev, group);
	if (e != OTF2_SUCCESS && c->status == OTF2_SUCCESS)
		c->status = e;
	return e == OTF2_SUCCESS ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_INTERRUPT;
}

static OTF2_FlushType pre_flush(void *u, OTF2_FileType ft, OTF2_LocationRef l, void *cd, bool fin)
{
	(void)u, (void)ft, (void)l, (void)cd, (void)fin;
	return OTF2_FLUSH;
}

static OTF2_FlushCallbacks flush_cb = { .otf2_pre_flush = pre_flush, .otf2_post_flush = NULL };

/* the error line of a failed copy step ("open", "create", "write", ...) */
static int copy_error(const struct wr *w, const char *tmp, const char *what, OTF2_ErrorCode e)
{
	if (e == OTF2_SUCCESS)
		e = w->copy.status;
	if (w->copy.unknown)
		return err_set(HCLOCK_EINVAL, "%s: a record of a type this OTF2 "
		               "library cannot write; convert the archive with the OTF2 version "
		               "that wrote it", w->o->anchor);
	return err_set(HCLOCK_EIO, "%s: cannot %s the archive %s/%s (OTF2: %s)",
	               w->o->anchor, what, tmp, w->o->name, otf2_why(e));
}

/* creator ("ORIGINAL, aligned by hclock"), description and machine name of the copy */
static void copy_meta(OTF2_Reader *rdr, OTF2_Archive *ar)
{
	char *creator = NULL, *desc = NULL, *machine = NULL;

	if (OTF2_Reader_GetCreator(rdr, &creator) == OTF2_SUCCESS && creator) {
		char *c2 = malloc(strlen(creator) + 32);

		if (c2) {
			sprintf(c2, "%s, aligned by hclock", creator);
			OTF2_Archive_SetCreator(ar, c2);
			free(c2);
		}
	} else {
		OTF2_Archive_SetCreator(ar, "hclock align");
	}
	if (OTF2_Reader_GetDescription(rdr, &desc) == OTF2_SUCCESS && desc)
		OTF2_Archive_SetDescription(ar, desc);
	if (OTF2_Reader_GetMachineName(rdr, &machine) == OTF2_SUCCESS && machine)
		OTF2_Archive_SetMachineName(ar, machine);
	free(creator);
	free(desc);
	free(machine);
}

/* the reader of the input archive and the writer of the copy in tmp */
static int open_copy(const struct wr *w, const char *tmp, OTF2_Reader **rdr, OTF2_Archive **ar)
{
	OTF2_ErrorCode e;

	*rdr = OTF2_Reader_Open(w->o->anchor);
	if (!*rdr)
		return copy_error(w, tmp, "open", OTF2_SUCCESS);
	if ((e = OTF2_Reader_SetSerialCollectiveCallbacks(*rdr)) != OTF2_SUCCESS)
		return copy_error(w, tmp, "open", e);
	*ar = OTF2_Archive_Open(tmp, w->o->name, OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
	                        OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
	if (!*ar)
		return copy_error(w, tmp, "create", OTF2_SUCCESS);
	if ((e = OTF2_Archive_SetFlushCallbacks(*ar, &flush_cb, NULL)) != OTF2_SUCCESS ||
	    (e = OTF2_Archive_SetSerialCollectiveCallbacks(*ar)) != OTF2_SUCCESS)
		return copy_error(w, tmp, "create", e);
	copy_meta(*rdr, *ar);
	return 0;
}

/* location i: its local definitions, then its events through the conversion */
static int copy_location(struct wr *w, const char *tmp, OTF2_Reader *rdr, OTF2_Archive *ar,
                         OTF2_EvtReaderCallbacks *ecb, OTF2_DefReaderCallbacks *dcb, int defs,
                         size_t i)
{
	struct loc *l = &w->o->locs[i];
	OTF2_ErrorCode e = OTF2_SUCCESS;
	OTF2_EvtReader *er;
	uint64_t nread;

	l->started = 0;
	l->written = 0;
	w->cur = i;
	w->copy.def = OTF2_Archive_GetDefWriter(ar, l->ref);
	if (!w->copy.def)
		return copy_error(w, tmp, "write", OTF2_SUCCESS);
	if (defs) {
		OTF2_DefReader *dr = OTF2_Reader_GetDefReader(rdr, l->ref);

		if (dr) {
			OTF2_Reader_RegisterDefCallbacks(rdr, dr, dcb, &w->copy);
			e = OTF2_Reader_ReadAllLocalDefinitions(rdr, dr, &nread);
			OTF2_Reader_CloseDefReader(rdr, dr);
			if (e != OTF2_SUCCESS || w->copy.status != OTF2_SUCCESS || w->copy.unknown)
				return copy_error(w, tmp, "copy the local definitions of", e);
		}
	}
	OTF2_Archive_CloseDefWriter(ar, w->copy.def);
	w->copy.def = NULL;
	er = OTF2_Reader_GetEvtReader(rdr, l->ref);
	w->copy.evt = OTF2_Archive_GetEvtWriter(ar, l->ref);
	if (!er || !w->copy.evt)
		return copy_error(w, tmp, "copy the events of", e);
	/* copied mapping tables keep their meaning only for unmapped (local) ids */
	OTF2_EvtReader_ApplyMappingTables(er, false);
	OTF2_Reader_RegisterEvtCallbacks(rdr, er, ecb, &w->copy);
	e = OTF2_Reader_ReadAllLocalEvents(rdr, er, &nread);
	OTF2_Reader_CloseEvtReader(rdr, er);
	OTF2_Archive_CloseEvtWriter(ar, w->copy.evt);
	w->copy.evt = NULL;
	if (w->failed)
		return w->failed;
	if (e != OTF2_SUCCESS || w->copy.status != OTF2_SUCCESS || w->copy.unknown)
		return copy_error(w, tmp, "copy the events of", e);
	return 0;
}

/* every location's definitions and events */
static int copy_locations(struct wr *w, const char *tmp, OTF2_Reader *rdr, OTF2_Archive *ar)
{
	struct otf2_set *o = w->o;
	OTF2_EvtReaderCallbacks *ecb;
	OTF2_DefReaderCallbacks *dcb;
	OTF2_ErrorCode e;
	int defs, ret = 0;

	if ((e = otf2_open_locations(rdr, o, &defs)) != OTF2_SUCCESS)
		return copy_error(w, tmp, "read", e);
	if ((e = OTF2_Archive_OpenEvtFiles(ar)) != OTF2_SUCCESS ||
	    (e = OTF2_Archive_OpenDefFiles(ar)) != OTF2_SUCCESS)
		return copy_error(w, tmp, "write", e);
	ecb = OTF2_EvtReaderCallbacks_New();
	dcb = OTF2_DefReaderCallbacks_New();
	if (!ecb || !dcb) {
		ret = copy_error(w, tmp, "write", OTF2_SUCCESS);
	} else {
		otf2_copy_evt_callbacks(ecb);
		otf2_copy_def_callbacks(dcb);
		w->copy.stamp = stamp_convert;
		w->copy.user = w;
		w->tmin = UINT64_MAX;
		w->tmax = 0;
		o->clamps = 0;
	}
	for (size_t i = 0; !ret && i < o->nlocs; i++)
		ret = copy_location(w, tmp, rdr, ar, ecb, dcb, defs, i);
	if (ecb)
		OTF2_EvtReaderCallbacks_Delete(ecb);
	if (dcb)
		OTF2_DefReaderCallbacks_Delete(dcb);
	if (ret)
		return ret;
	o->clock_offsets = w->copy.clock_offsets;
	if (defs)
		OTF2_Reader_CloseDefFiles(rdr);
	OTF2_Reader_CloseEvtFiles(rdr);
	OTF2_Archive_CloseEvtFiles(ar);
	OTF2_Archive_CloseDefFiles(ar);
	return 0;
}

/* ClockProperties of the copy: the timer resolution, the earliest converted time as global
 * offset, the new trace length, and the realtime of the new global offset */
static OTF2_ErrorCode write_clock(const struct wr *w)
{
	const struct otf2_set *o = w->o;
	uint64_t goff = w->tmin <= w->tmax ? w->tmin : o->goff;
	uint64_t len = w->tmin <= w->tmax ? w->tmax - w->tmin : 0;
	uint64_t rt = o->realtime;

	if (rt != OTF2_UNDEFINED_TIMESTAMP) {
		__int128 d = ((__int128)goff - (__int128)o->goff) * NS_PER_S / (__int128)o->res;

		rt = (uint64_t)((__int128)rt + d);
	}
	return OTF2_GlobalDefWriter_WriteClockProperties(w->copy.gdef, o->res, goff, len, rt);
}

/* the global definitions, written after the events: Location needs their counts */
static int copy_global_defs(struct wr *w, const char *tmp, OTF2_Reader *rdr, OTF2_Archive *ar)
{
	static const char what[] = "copy the global definitions of";
	OTF2_GlobalDefReaderCallbacks *gcb = OTF2_GlobalDefReaderCallbacks_New();
	OTF2_GlobalDefReader *gdr;
	OTF2_ErrorCode e;
	uint64_t nread;
	int ret = 0;

	if (!gcb)
		return copy_error(w, tmp, "write", OTF2_SUCCESS);
	otf2_copy_global_def_callbacks(gcb);
	OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(gcb, wdef_clock);
	OTF2_GlobalDefReaderCallbacks_SetLocationCallback(gcb, wdef_location);
	w->copy.gdef = OTF2_Archive_GetGlobalDefWriter(ar);
	gdr = OTF2_Reader_GetGlobalDefReader(rdr);
	if (!w->copy.gdef || !gdr) {
		ret = copy_error(w, tmp, what, OTF2_SUCCESS);
	} else if ((e = write_clock(w)) != OTF2_SUCCESS) {
		ret = copy_error(w, tmp, what, e);
	} else {
		OTF2_Reader_RegisterGlobalDefCallbacks(rdr, gdr, gcb, &w->copy);
		e = OTF2_Reader_ReadAllGlobalDefinitions(rdr, gdr, &nread);
		if (e != OTF2_SUCCESS || w->copy.status != OTF2_SUCCESS || w->copy.unknown)
			ret = copy_error(w, tmp, what, e);
	}
	OTF2_GlobalDefReaderCallbacks_Delete(gcb);
	return ret;
}

/* Copy the archive through the conversion into tmp/NAME.otf2. */
static int copy_archive(struct wr *w, const char *tmp)
{
	OTF2_Reader *rdr = NULL;
	OTF2_Archive *ar = NULL;
	OTF2_ErrorCode e;
	int ret = open_copy(w, tmp, &rdr, &ar);

	if (!ret)
		ret = copy_locations(w, tmp, rdr, ar);
	if (!ret)
		ret = copy_global_defs(w, tmp, rdr, ar);
	if (!ret) {
		e = OTF2_Archive_Close(ar);
		ar = NULL;
		if (e != OTF2_SUCCESS)
			ret = copy_error(w, tmp, "close", e);
	}
	if (ar)
		OTF2_Archive_Close(ar);
	if (rdr)
		OTF2_Reader_Close(rdr);
	return ret;
}

/* 1 if dst is the directory that holds the input archive's anchor */
static int is_input_dir(const struct otf2_set *o, const char *dst)
{
	char *a = realpath(o->anchor, NULL), *d = realpath(dst, NULL);
	char *slash = a ? strrchr(a, '/') : NULL;
	int same = 0;

	if (slash && d) {
		*slash = 0;
		same = !strcmp(a, d);
	}
	free(a);
	free(d);
	return same;
}

int otf2_write(const struct trace_set *set, trace_convert_fn conv, void *ctx,
               const char *outdir)
{
	struct otf2_set *o = set->priv;
	struct wr w = {.set = set, .o = o, .conv = conv, .ctx = ctx};
	OTF2_ErrorCallback prev;
	size_t n = strlen(outdir) + strlen(o->dirname) + 64;
	char *tmp = malloc(n), *dst = malloc(n), *old = malloc(n);
	int ret;

	if (!tmp || !dst || !old) {
		ret = err_set(HCLOCK_ENOMEM, "%s: out of memory", outdir);
		goto free;
	}
	snprintf(tmp, n, "%s/.%s.XXXXXX", outdir, o->dirname);
	snprintf(dst, n, "%s/%s", outdir, o->dirname);
	snprintf(old, n, "%s/.%s.old.XXXXXX", outdir, o->dirname);
	if (is_input_dir(o, dst)) {
		ret = err_set(HCLOCK_EINVAL, "%s: is the input archive's directory; "
		              "choose an output directory other than %s", dst, outdir);
		goto free;
	}
	if (!mkdtemp(tmp)) {
		ret = err_set(HCLOCK_EIO, "%s: cannot create a directory in it: %s; "
		              "give a writable directory", outdir, strerror(errno));
		goto free;
	}
	if ((ret = outset_mode(-1, tmp, 1))) {
		outset_rm_tree(tmp);
		goto free;
	}
	prev = otf2_quiet();
	ret = copy_archive(&w, tmp);
	OTF2_Error_RegisterCallback(prev, NULL);
	if (!ret)
		ret = outset_replace_dir(tmp, dst, old);
	if (ret)
		outset_rm_tree(tmp);
	else if (o->clamps)
		trace_warn(set, "%s: %" PRIu64 " event times clamped to keep locations monotonic", dst,
		           o->clamps);
free:
	free(tmp);
	free(dst);
	free(old);
	return ret;
}

uint64_t trace_otf2_clamps(const struct trace_set *set)
{
	const struct otf2_set *o = set->priv;

	return set->fmt == &trace_format_otf2 && o ? o->clamps : 0;
}

uint64_t trace_otf2_clock_offsets_dropped(const struct trace_set *set)
{
	const struct otf2_set *o = set->priv;

	return set->fmt == &trace_format_otf2 && o ? o->clock_offsets : 0;
}

const char *trace_otf2_output_dir(const struct trace_set *set)
{
	const struct otf2_set *o = set->priv;

	return set->fmt == &trace_format_otf2 && o ? o->dirname : NULL;
}
