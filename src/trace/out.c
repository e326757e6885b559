/* out.c - a buffered output cut back to its last safe point on a failed write (out.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/out.h"
#include "util/fault.h"
#include "util/hold.h"

/* the keep bytes past what was written held ahead (hold.h): a write that finds the disk
 * full has written them */
void out_hold(struct out *o)
{
	if (o->keep && o->fd >= 0)
		(void)hold_ahead(o->fd, o->done, o->keep);
}

void out_flush(struct out *o)
{
	size_t off = 0, n = o->n;
	int full = fault_hit(FAULT_WRITE); /* tests: a disk full halfway */
	if (full)
		n /= 2;
	while (!o->err && off < n) {
		ssize_t w = write(o->fd, o->buf + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			o->err = w < 0 ? errno : ENOSPC;
		else
			off += (size_t)w;
	}
	if (full && !o->err)
		o->err = ENOSPC;
	if (o->err) {
		/* cut back to the last safe point that made it to the file with keep bytes after
		 * it, which the file holds on to (written, or taken ahead: out_hold) */
		uint64_t end = o->done + off, lim = hold_start(end, o->keep);
		uint64_t cut = o->safe <= lim ? o->safe : o->safe_done;
		for (int i = 0; i < o->nmark; i++)
			if (o->mark[i] <= lim && o->mark[i] > cut)
				cut = o->mark[i];
		o->held = o->keep && cut + o->keep <= end ? o->keep : 0;
		if (ftruncate(o->fd, (off_t)(cut + o->held)))
			cut = end, o->held = 0;
		/* a second flush (the close) finds the same point */
		o->bytes = o->done = o->safe = o->safe_done = cut;
	} else {
		o->done += off;
		o->safe_done = o->safe;
		out_hold(o);
	}
	o->nmark = 0;
	o->n = 0;
}

/* here (the bytes put so far) is a safe point */
void out_safe(struct out *o)
{
	o->safe = o->bytes;
	uint64_t last = o->nmark ? o->mark[o->nmark - 1] : o->safe_done;
	if (o->nmark < OUT_MARKS && o->bytes - last >= OUT_CAP / OUT_MARKS)
		o->mark[o->nmark++] = o->bytes;
}

void out_put(struct out *o, const void *p, size_t n)
{
	if (o->err || o->fd < 0)
		return;
	if (o->n + n > OUT_CAP)
		out_flush(o);
	memcpy(o->buf + o->n, p, n);
	o->n += n;
	o->bytes += n;
}

int out_open(struct out *o, const char *path)
{
	o->buf = malloc(OUT_CAP);
	o->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (!o->buf || o->fd < 0)
		return -1;
	return 0;
}

int out_close(struct out *o)
{
	if (o->fd >= 0) {
		out_flush(o);
		/* the bytes held past the end given back */
		if (o->keep && ftruncate(o->fd, (off_t)o->done) && !o->err)
			o->err = errno;
		if (close(o->fd) && !o->err)
			o->err = errno;
		o->fd = -1;
	}
	free(o->buf);
	o->buf = NULL;
	return o->err;
}
