/*
 * out.h - one buffered output file of the trace's parts (stream.h) that a failed write (a full
 * disk) cuts back to its last safe point, so that what is on disk stays a valid file: a byte
 * offset its writer marked (out_safe) where nothing is open. MPI-free.
 *
 * Safe points are kept per buffer, OUT_CAP / OUT_MARKS apart, so that a cut loses at most
 * OUT_CAP / OUT_MARKS bytes beyond the last one. An output may hold keep bytes of the disk
 * past what it wrote (held ahead after each write, beyond the file's end: util/hold.h), so
 * that after a cut it can still write its tail over them (stream.c's stop_tail) whoever else
 * filled the disk. The test hook FAULT_WRITE (util/fault.h) makes a flush find the disk full
 * halfway.
 */
#ifndef HCLOCK_TRACE_OUT_H
#define HCLOCK_TRACE_OUT_H

#include <stddef.h>
#include <stdint.h>

#define OUT_CAP (1 << 20)  /* bytes buffered per output before a write */
#define OUT_MARKS 64       /* safe points kept per buffer: a cut loses at most OUT_CAP / 64 */

struct out {
	int fd;
	char *buf;
	size_t n;
	uint64_t bytes;  /* written and buffered */
	uint64_t done;   /* bytes written */
	uint64_t safe;   /* the last safe point (a byte offset, see above) */
	uint64_t safe_done; /* the last safe point at or before done */
	uint64_t mark[OUT_MARKS]; /* safe points in the buffer, OUT_CAP / OUT_MARKS apart */
	int nmark;
	int err;         /* errno of the first failure; the output stops there */
	uint64_t keep;   /* bytes held past the last safe point (0: none): after a failure the
	                    file keeps them, so that its tail can be written over them */
	uint64_t held;   /* bytes the file holds past done for the tail (after a failure) */
};

/* Open path (truncated) with its buffer. Returns 0 or -1 (errno set); out_close either way. */
int out_open(struct out *o, const char *path);
/* Put n bytes (nothing after a failure). */
void out_put(struct out *o, const void *p, size_t n);
/* Here (the bytes put so far) is a safe point. */
void out_safe(struct out *o);
/* Write the buffer; a failure cuts the file back to the last safe point that reached it. */
void out_flush(struct out *o);
/* Hold keep bytes of the disk past what was written (a no-op without keep). */
void out_hold(struct out *o);
/* Flush, give back the bytes held, close, free the buffer. Returns 0 or the first failure's
 * errno. */
int out_close(struct out *o);

#endif
