/*
 * writer_ctf.c - the CTF trace format's write: the hosts read by reader_ctf.c with their
 * times corrected.
 *
 * OUTDIR/HOST.csv: hclock's native CSV of the packets read (send/recv with their message ids,
 * other TCP segments as "tcp") with corrected times. OUTDIR/HOST.ctf: the host's traces with
 * their stream files copied and the metadata's clock replaced so that babeltrace2 reads
 * corrected times, where the host's conversion is one line (ctf_clock.h; see
 * docs/align-formats.md).
 */
#define _XOPEN_SOURCE 700 /* mkdtemp */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "align/ctf_clock.h"
#include "align/ctf_set.h"
#include "align/format.h"
#include "align/outbuf.h"
#include "align/outset.h"
#include "align/trace.h"

/* mkdir -p of rel's folders below base (each with mkdir's mode under the umask) */
static int make_dirs(const char *base, const char *rel, char *out, size_t outlen)
{
	size_t n = (size_t)snprintf(out, outlen, "%s/%s", base, rel);

	if (n >= outlen)
		return err_set(HCLOCK_EIO, "%s/%s: path too long", base, rel);
	for (char *p = out + strlen(base) + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			if (mkdir(out, 0777) && errno != EEXIST)
				return err_set(HCLOCK_EIO, "%s: cannot create: %s", out, strerror(errno));
			*p = '/';
		}
	if (*rel && mkdir(out, 0777) && errno != EEXIST)
		return err_set(HCLOCK_EIO, "%s: cannot create: %s", out, strerror(errno));
	return 0;
}

/* one trace directory of a host into dst, its clock replaced by the one for line l; 1 when
 * the trace cannot be corrected that way (why in *why), else 0 or an error */
static int copy_corrected(const char *dir, const char *dst, const struct trace_line *l,
                          int64_t tmin, int64_t tmax, struct ctf_clock *nw, double *err,
                          char *why, size_t whylen)
{
	char p[4096], *text = NULL, *out = NULL, *full = NULL;
	size_t len;
	struct ctf_clock old;
	int r;

	snprintf(p, sizeof(p), "%s/metadata", dir);
	if ((r = ctf_metadata_read(p, &text, &len)))
		return r == HCLOCK_EINVAL ? (snprintf(why, whylen, "%s", hclock_last_error()), 1) : r;
	r = ctf_metadata_clock(text, &old, NULL, NULL);
	if (!r)
		r = ctf_clock_correct(&old, l, tmin, tmax, nw, err);
	if (!r)
		r = ctf_metadata_clock(text, &old, nw, &out);
	if (r == HCLOCK_EINVAL) {
		snprintf(why, whylen, "%.280s: %.300s", p, hclock_last_error());
		free(text);
		return 1;
	}
	if (!r && strncmp(out, "/* CTF", 6)) {
		/* plain text metadata starts with its version */
		if (!(full = malloc(strlen(out) + 16)))
			r = err_set(HCLOCK_ENOMEM, "out of memory");
		else
			sprintf(full, "/* CTF 1.8 */\n%s", out);
	}
	if (!r)
		r = ctf_copy_trace(dir, dst, full ? full : out, strlen(full ? full : out));
	free(text);
	free(out);
	free(full);
	return r;
}

/* outdir/host.ctf is free, or an earlier copy (a directory holding a CTF trace: the format's
 * probe accepts it) that may be replaced: 0, else HCLOCK_EIO with the line */
static int ctf_place_free(const char *outdir, const char *host)
{
	char dst[4096];
	struct stat st;

	if ((size_t)snprintf(dst, sizeof(dst), "%s/%s.ctf", outdir, host) >= sizeof(dst))
		return err_set(HCLOCK_EIO, "%s/%s.ctf: path too long", outdir, host);
	if (!lstat(dst, &st) && (!S_ISDIR(st.st_mode) || !trace_format_ctf.probe(dst)))
		return err_set(HCLOCK_EIO, "%s: exists and is no CTF trace; remove it or choose "
		               "another --out", dst);
	return 0;
}

/*
 * outdir/HOST.ctf: the host's trace directories (as found below its input), the stream files
 * copied byte for byte and the metadata's clock replaced so that babeltrace2 reads corrected
 * times (ctf_clock.h). Only where the host's conversion is one line; a note says what was
 * written or why not. Written under a temporary name, renamed into place.
 */
static int write_corrected_ctf(const struct trace_set *set, const struct ctf_node *c, size_t v,
                               const char *outdir)
{
	const char *host = set->nodes[v].name, *in = set->nodes[v].path;
	char tmp[4096], dst[4096], old[4096], why[600] = "";
	struct trace_line l;
	struct ctf_clock nw = {0, 0, 0};
	double err = 0, e;
	size_t inlen = strlen(in);
	int r = 0, skip = 0;
	struct stat st;

	if (c->tmin_ns > c->tmax_ns || !c->dirs_len)
		return 0;
	if (!set->line || set->line(set->line_ctx, v, c->tmin_ns, c->tmax_ns, &l)) {
		trace_note(set, "%s: no corrected CTF trace: its conversion is not one line (segments, "
		           "no fit, or events moved by --repair-order); %s.csv has its packets "
		           "corrected", host, host);
		return 0;
	}
	if ((size_t)snprintf(dst, sizeof(dst), "%s/%s.ctf", outdir, host) >= sizeof(dst) ||
	    (size_t)snprintf(tmp, sizeof(tmp), "%s/.%s.ctf.XXXXXX", outdir, host) >= sizeof(tmp))
		return err_set(HCLOCK_EIO, "%s/%s.ctf: path too long", outdir, host);
	if (!mkdtemp(tmp))
		return err_set(HCLOCK_EIO, "%s: cannot create a directory there: %s", outdir,
		               strerror(errno));
	r = outset_mode(-1, tmp, 1);
	for (size_t at = 0; !r && !skip && at < c->dirs_len; at += strlen(c->dirs + at) + 1) {
		const char *d = c->dirs + at, *rel;
		char target[4096];
		struct ctf_clock k;
		/* the trace's place below the input (the input itself: the top) */
		if (!strncmp(d, in, inlen) && (d[inlen] == '/' || !d[inlen]))
			rel = d[inlen] ? d + inlen + 1 : "";
		else
			rel = strrchr(d, '/') ? strrchr(d, '/') + 1 : d;
		if (!(r = make_dirs(tmp, rel, target, sizeof(target)))) {
			r = copy_corrected(d, target, &l, c->tmin_ns, c->tmax_ns, &k, &e, why, sizeof(why));
			skip = r == 1;
			if (!r) {
				nw = k;
				err = e > err ? e : err;
			}
		}
	}
	if (skip) {
		outset_rm_tree(tmp);
		trace_note(set, "%s: no corrected CTF trace: %s; %s.csv has its packets corrected",
		           host, why, host);
		return 0;
	}
	/* an earlier output of the same name is replaced, if it is one (and kept on a failure) */
	snprintf(old, sizeof(old), "%s/.%s.ctf.old.XXXXXX", outdir, host);
	if (!r && !lstat(dst, &st))
		r = ctf_place_free(outdir, host);
	if (!r)
		r = outset_replace_dir(tmp, dst, old);
	if (r) {
		outset_rm_tree(tmp);
		return r;
	}
	trace_note(set, "%s: corrected CTF trace %s (clock freq %" PRIu64 " Hz, offset_s %" PRId64
	           ", offset %" PRIu64 "): its event times within %.1f ns of the corrected times",
	           host, dst, nw.freq_hz, nw.offset_s, nw.offset_cycles, err);
	return 0;
}

int ctf_write(const struct trace_set *set, trace_convert_fn conv, void *ctx,
              const char *outdir)
{
	static const char *const kinds[] = {"send", "recv", "bcast", "tcp"};
	struct outset os;
	struct outbuf *ob = malloc(sizeof(*ob));
	int r = ob ? outset_init(&os, set->nnodes) : err_set(HCLOCK_ENOMEM, "out of memory");

	for (size_t v = 0; !r && v < set->nnodes; v++) {
		const struct trace_node *n = &set->nodes[v];
		char name[512];
		FILE *f;
		snprintf(name, sizeof(name), "%s.csv", n->name);
		if ((r = outset_create(&os, v, outdir, name, &f)))
			break;
		outbuf_init(ob, f);
		outbuf_put(ob, "event,id,peer,time_ns\n", 22);
		for (size_t k = 0; k < n->nev; k++) {
			const struct trace_event *e = &n->ev[k];
			const char *peer = e->peer >= 0 ? set->nodes[e->peer].name : "";
			outbuf_put(ob, kinds[e->kind], strlen(kinds[e->kind]));
			outbuf_put(ob, ",", 1);
			outbuf_i64(ob, e->kind == TRACE_OTHER ? (int64_t)k : (int64_t)(e->msg &
			           INT64_MAX));
			outbuf_put(ob, ",", 1);
			outbuf_put(ob, peer, strlen(peer));
			outbuf_put(ob, ",", 1);
			outbuf_i64(ob, conv(ctx, v, e->time_ns));
			outbuf_put(ob, "\n", 1);
		}
		r = outbuf_flush(ob);
		if (fclose(f) && !r)
			r = HCLOCK_EIO;
		if (r)
			r = err_set(HCLOCK_EIO, "%s/%s: write error", outdir, name);
	}
	/* a CTF copy's place taken by something else: refused before anything is renamed in */
	for (size_t v = 0; !r && v < set->nnodes; v++)
		r = ctf_place_free(outdir, set->nodes[v].name);
	if (!r)
		r = outset_commit(&os);
	if (ob)
		outset_free(&os);
	free(ob);
	for (size_t v = 0; !r && v < set->nnodes; v++)
		r = write_corrected_ctf(set, &((const struct ctf_set *)set->priv)->cn[v], v, outdir);
	return r;
}
