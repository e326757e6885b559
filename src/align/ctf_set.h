/*
 * ctf_set.h - the CTF trace format's state of a trace set (struct ctf_set, the set's priv),
 * shared by its reader (reader_ctf.c) and its writer (writer_ctf.c). Private to these two
 * files.
 *
 * Who owns what: the reader allocates the struct ctf_set, its packets and its per-node
 * struct ctf_node (their strings too) in read, and frees them all in release (ctf_release);
 * the writer only reads the nodes' trace directories and time ranges.
 */
#ifndef HCLOCK_ALIGN_CTF_SET_H
#define HCLOCK_ALIGN_CTF_SET_H

#include <stddef.h>
#include <stdint.h>

#include "align/trace.h"

extern const struct trace_format trace_format_ctf; /* reader_ctf.c */

/* what the reader found of one host (node) */
struct ctf_node {
	char *clock_name;
	char clock_uuid[40];
	uint64_t events, streams;
	int64_t tmin_ns, tmax_ns; /* first and last event's local time (tmin > tmax: none) */
	char *dirs;               /* the host's trace directories, each followed by a NUL */
	size_t dirs_len;          /* bytes of dirs */
};

struct pkt; /* one network event as read (reader_ctf.c) */

struct ctf_set {
	struct pkt *p;       /* every packet, by node then time (trace_event.record indexes it) */
	size_t np;
	struct ctf_node *cn;
};

/* The format's write (struct trace_format, writer_ctf.c). */
int ctf_write(const struct trace_set *set, trace_convert_fn conv, void *ctx,
              const char *outdir);

#endif
