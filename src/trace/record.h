/*
 * record.h - the tracer's raw per-process file (issue 12): what libhclock_trace writes while
 * the program runs and `hclock trace` turns into OTF2 and Perfetto afterwards.
 *
 * DIR/raw/rank.R: a header, the function names, then records of 64 bytes in the order they
 * were made, written whole buffers at a time (a program that calls MPI_Abort or is ended by a
 * signal it can catch has its last buffer written too; one killed by SIGKILL loses at most
 * the buffer being filled; everything before is on disk and readable); at MPI_Finalize a trailer:
 * the communicators (id, members as world ranks) and the summary. A reader takes what is
 * complete: records up to the last whole one, the trailer only when its magic is there.
 *
 * Times are integer ns: t_g on the global clock (hclock's sync), t_l on the process's own
 * base clock (the raw local time, for the --raw Gantt chart). Host byte order (the files are
 * read on the machine that wrote them, or one like it).
 */
#ifndef HCLOCK_TRACE_RECORD_H
#define HCLOCK_TRACE_RECORD_H

#include <stdint.h>

#define TRACE_MAGIC "HCLKTRC1"
#define TRACE_TRAILER_MAGIC "HCLKEND1"

struct trace_header {
	char magic[8];       /* TRACE_MAGIC */
	int32_t rank, size;  /* MPI_COMM_WORLD rank and size */
	uint32_t nfuncs;     /* function names that follow: nfuncs NUL-terminated strings,
	                        padded with NULs to a multiple of 8 bytes (names_bytes) */
	uint32_t names_bytes;
	char sync[192];      /* the sync spec the global clock came from */
	char clock[64];      /* the base clock's description */
	int64_t sync_ns;     /* time the sync at MPI_Init took (global clock), ns */
	int64_t reserved[4];
};

enum trace_kind {
	TRACE_CALL = 1, /* an MPI call: func, t_g/t_l at enter, t2_g/t2_l at leave */
	TRACE_SEND = 2, /* a message sent: at the send's start (t_g/t_l; a persistent send's
	                   MPI_Start/Startall, func that call), to peer, tag, bytes */
	TRACE_RECV = 3, /* a message received: at its completion (t_g/t_l), from peer, ... */
	TRACE_COLL = 4, /* a collective: func, root (peer, -1 none), bytes sent by this process
	                   (count x type size), at the call's enter and leave (TRACE_F_NB: a
	                   nonblocking one, from its start to its completion) */
	TRACE_DROP = 5, /* records were dropped (both buffers full) before this point: bytes
	                   holds how many since the previous TRACE_DROP, t_g/t_l when recording
	                   resumed. Lets a reader count them without the trailer (a program that
	                   died); the loader counts them and passes no TRACE_DROP on */
};

/* flags */
enum {
	TRACE_F_NB = 1, /* TRACE_COLL of a nonblocking collective (MPI_Iallreduce, ...): t_g/t_l
	                   the enter of the call that started it, t2_g/t2_l the leave of the Wait
	                   or Test call that completed it (each call has its own TRACE_CALL);
	                   made when it completed. Files without the flag: blocking ones only */
	TRACE_F_CUT = 2, /* TRACE_CALL of a call that had not returned when the program was
	                    ended (a signal, MPI_Abort elsewhere): t2_g/t2_l when it was ended */
};

struct trace_rec {
	uint8_t kind;      /* enum trace_kind */
	uint8_t flags;     /* TRACE_F_* */
	uint16_t func;     /* index into the names */
	int32_t peer;      /* world rank of the partner (send: destination, receive: source,
	                      collective: root), -1 none, -2 not resolvable (intercommunicator) */
	int32_t tag;
	uint32_t pad;
	uint64_t comm;     /* the communicator's id (same on every member, see trailer) */
	int64_t t_g, t_l;  /* ns: global, local */
	int64_t t2_g, t2_l;/* ns: leave (CALL, COLL), else 0 */
	uint64_t bytes;
};
_Static_assert(sizeof(struct trace_rec) == 64, "trace_rec is 64 bytes");

/* the trailer: magic, then ncomms of (struct trace_comm + size int32 world ranks, padded to
 * 8 bytes), then the summary */
struct trace_trailer {
	char magic[8];         /* TRACE_TRAILER_MAGIC */
	uint64_t records;      /* records written */
	uint64_t dropped;      /* records lost because both buffers were full (all of them;
	                          the TRACE_DROP records say when) */
	int64_t overhead_ns;   /* time the tracer took from the program: sync, finalize, and
	                          records x their measured cost, ns */
	int64_t rec_cost_ns;   /* measured cost of one record (two clock reads included), ns */
	double drift_max_ns;   /* at MPI_Finalize: largest |offset| rank 0 measured to any
	                          process on the global clock (NAN: not measured), ns */
	double drift_true_ns;  /* ... and the largest true error (emulation), NAN without, ns */
	uint32_t ncomms;
	uint32_t pad;
};

struct trace_comm {
	uint64_t id;
	int32_t size;          /* members; their world ranks follow (-1: not resolvable) */
	int32_t inter;         /* 1: an intercommunicator (peers not resolved) */
};

#endif
