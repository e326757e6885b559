/*
 * crash.h - a program that dies, for the tracer (crash.c): the handlers of the signals that
 * end a program, a destructor for one that exits without MPI_Finalize, and the job's one
 * line about a failure (DIR/raw/failed: whoever creates it says so).
 */
#ifndef HCLOCK_TRACE_CRASH_H
#define HCLOCK_TRACE_CRASH_H

/* At MPI_Init, before any process can be past the sync: the trace's directory dir (an
 * earlier run's failure mark removed by rank 0) and flush, which a signal that ends the
 * program (cut 1: the call it is inside is recorded as ending there) and the exit (cut 0)
 * call; it must be async-signal-safe. */
void crash_init(const char *dir, int rank, void (*flush)(int cut));
/* The handlers installed over whatever was there (an ignored signal left ignored), and at
 * MPI_Finalize the old ones put back (a handler the program set since stays). */
void crash_handlers_install(void);
void crash_handlers_remove(void);
/* "hclock trace: rank R WHAT; its records up to then are in ..." on stderr if no process of
 * the job has said its line yet (async-signal-safe). Returns whether this one did. */
int crash_failure_line(const char *what);

#endif
