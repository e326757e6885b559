/*
 * comms.h - the tracer's communicator registry (comms.c): what MPI_Init and MPI_Finalize ask
 * of it; the wrappers go through tracer.h's trace_comm_peer and trace_comm_created.
 */
#ifndef HCLOCK_TRACE_COMMS_H
#define HCLOCK_TRACE_COMMS_H

#include <stddef.h>
#include <stdint.h>

#include "util/record.h"

/* At MPI_Init: the attribute's key, MPI_COMM_WORLD (size processes) and MPI_COMM_SELF
 * registered; a communicator the program makes is registered while recording() says the
 * tracer records. Returns 0 or -1 (the tracer then stays off). */
int comms_init(int size, int (*recording)(void));
/* The communicators seen so far. */
size_t comms_count(void);
/* Communicator i (< comms_count()) for the trailer: its record into *tc, and its ranks' world
 * ranks (-2: not resolvable) padded to an even count with 0, or NULL without memory; the
 * caller frees it. */
int32_t *comms_entry(size_t i, struct rec_comm *tc);
/* At MPI_Finalize: everything freed, the attribute's key too. */
void comms_free(void);

#endif
