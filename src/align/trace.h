/*
 * trace.h - the in-memory form of a set of per-node traces, and the interface every trace
 * format (native CSV, pcap, OTF2) implements to read it and to write it back corrected.
 *
 * This is the contract between the readers (src/align/reader_*.c) and the alignment engine
 * (src/align/align.c). Readers know nothing of hulls; the engine knows nothing of formats.
 * Fields may be added; existing fields keep their meaning.
 */
#ifndef HCLOCK_ALIGN_TRACE_H
#define HCLOCK_ALIGN_TRACE_H

#include <stddef.h>
#include <stdint.h>

enum trace_kind {
	TRACE_SEND,  /* a message left this node */
	TRACE_RECV,  /* a message arrived at this node */
	TRACE_BCAST, /* an event seen by every node at once (evaluation only, never fitted) */
	TRACE_OTHER, /* anything else: carried through and converted */
};

struct trace_event {
	int64_t time_ns;     /* node-local timestamp, ns (may be realtime-sized, ~1.7e18) */
	enum trace_kind kind;
	uint64_t msg;        /* message key: equal on the send and the recv of one message, and on
	                        every node's copy of one broadcast; unused for TRACE_OTHER */
	int peer;            /* index into trace_set.nodes of the other side (send/recv), else -1 */
	size_t record;       /* format-specific index of the source record, for the writer */
	uint32_t line;       /* source line (CSV) or record number, for error messages; 0 if none */
};

struct trace_node {
	char *name;               /* node name (CSV: file name without .csv; pcap: host) */
	char *path;               /* the file it was read from */
	struct trace_event *ev;   /* events in source order (time-sorted for well-formed input) */
	size_t nev;
	void *priv;               /* the format's own per-node state for writing; owned by reader */
};

struct trace_set {
	const struct trace_format *fmt; /* who read it, who writes it */
	struct trace_node *nodes;
	size_t nnodes;
	void *priv;                     /* the format's own whole-set state */
	int partial_ok;                 /* set by a reader whose inputs may lose one side of a
	                                   message (captures drop packets): the engine then
	                                   ignores unmatched send/recv instead of failing */
};

/*
 * Conversion of one node's local timestamps to the reference timeline, supplied by the
 * engine to the writers. Must be monotonic non-decreasing in t for a valid alignment.
 */
typedef int64_t (*trace_convert_fn)(void *ctx, size_t node, int64_t local_ns);

/* Errors: readers and writers fill err (one line: "FILE:LINE: what is wrong; what is right")
 * and return a negative value; on success they return 0. */
struct trace_format {
	const char *name; /* "csv", "pcap", "otf2" */
	/* nonzero if this format recognises the file or directory at path */
	int (*probe)(const char *path);
	/* read all inputs (one per node, or one archive) into set; set is zeroed by the caller */
	int (*read)(const char *const *paths, size_t npaths, struct trace_set *set, char *err,
	            size_t errlen);
	/* write the corrected traces into outdir atomically (temporary file, then rename) */
	int (*write)(const struct trace_set *set, trace_convert_fn conv, void *ctx,
	             const char *outdir, char *err, size_t errlen);
	/* free everything read() allocated, including nodes[] and priv */
	void (*release)(struct trace_set *set);
};

extern const struct trace_format trace_format_csv;
extern const struct trace_format trace_format_pcap;
extern const struct trace_format trace_format_otf2;

#endif
