/*
 * crash.c - a program that dies (crash.h): its records written out all the same, and the
 * job's one line about the failure.
 *
 * When the program calls MPI_Abort or gets a signal that ends it, the records of the current
 * buffer are written out (the writer's buffer is waited for, up to 2 s), so that DIR/raw
 * holds every record up to then (whole records; no trailer). The signals' handlers are
 * installed at MPI_Init over whatever was there (the program's, the MPI library's, the
 * default; an ignored signal is left ignored), and hand the signal on to it: the program dies
 * as it would have, its MPI library's messages included. MPI_Finalize puts the old handlers
 * back. SIGKILL cannot be caught: a program killed by it keeps what was flushed before. A
 * program that exits without MPI_Finalize writes them from a destructor.
 * The tracer (tracer.c) decides what is written: crash_init gives its flush, which the
 * handlers and the destructor call.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "trace/crash.h"

static struct {
	void (*flush)(int cut);
	int rank;
	char failed_path[4200];      /* DIR/raw/failed: the first process or launcher to see the
	                                program fail creates it and says so (one line a job) */
} C;

static const int fatal_sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT,
                                 SIGTERM, SIGINT, SIGHUP, SIGQUIT};
#define NFATAL (sizeof(fatal_sigs) / sizeof(fatal_sigs[0]))
static struct sigaction old_act[NFATAL];
static unsigned char have_old[NFATAL];

void crash_init(const char *dir, int rank, void (*flush)(int cut))
{
	C.flush = flush;
	C.rank = rank;
	snprintf(C.failed_path, sizeof(C.failed_path), "%s/raw/failed", dir);
	if (rank == 0)
		unlink(C.failed_path);
}

/* the job's one line about a failure, from whoever gets there first (async-signal-safe);
 * returns whether this process said it */
int crash_failure_line(const char *what)
{
	int fd = open(C.failed_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (fd < 0)
		return 0;
	close(fd);
	char line[600];
	size_t dl = strlen(C.failed_path) - strlen("/raw/failed");
	int n = snprintf(line, sizeof(line), "hclock trace: rank %d %s; its records up to then are "
	                 "in %.*s/raw (hclock trace --convert %.*s writes the trace from them)\n",
	                 C.rank, what, (int)dl, C.failed_path, (int)dl, C.failed_path);
	if (n > 0 && write(2, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1) < 0)
		return 0;
	return 1;
}

static void on_fatal(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	int e = errno;
	if (C.flush)
		C.flush(1);
	for (size_t i = 0; i < NFATAL; i++)
		if (fatal_sigs[i] == sig && have_old[i])
			sigaction(sig, &old_act[i], NULL);
	errno = e;
	/* a fault comes back when the instruction runs again, now to the old handler; a signal
	 * that was sent is sent again */
	if (si->si_code <= 0 || (sig != SIGSEGV && sig != SIGBUS && sig != SIGFPE && sig != SIGILL))
		raise(sig);
}

/* a program that exits without MPI_Finalize (exit() on an error path) writes its records
 * too (no trailer) */
__attribute__((destructor)) static void at_exit_flush(void)
{
	if (C.flush)
		C.flush(0);
}

void crash_handlers_install(void)
{
	struct sigaction sa = {0};
	sa.sa_sigaction = on_fatal;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NFATAL; i++) {
		if (sigaction(fatal_sigs[i], NULL, &old_act[i]) || old_act[i].sa_handler == SIG_IGN)
			continue;
		have_old[i] = !sigaction(fatal_sigs[i], &sa, NULL);
	}
}

void crash_handlers_remove(void)
{
	for (size_t i = 0; i < NFATAL; i++) {
		struct sigaction cur;
		/* a handler the program set since stays */
		if (have_old[i] && !sigaction(fatal_sigs[i], NULL, &cur) &&
		    (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_fatal)
			sigaction(fatal_sigs[i], &old_act[i], NULL);
		have_old[i] = 0;
	}
}
