/*
 * yield_pingpong.c - does sched_yield() hand a shared core to the partner process?
 *
 *   cc -O2 -o yield_pingpong bench/yield_pingpong.c
 *   ./yield_pingpong [N] [same|setsid] [yield|sleep] [HOGS]
 *
 * Two processes pinned to CPU 0 pass a token N times through shared memory; each waits for
 * its turn by polling and calling sched_yield() (yield, the default), nanosleep(0) (sleep,
 * default timer slack: 50 us) or nanosleep(1 us) with a timer slack of 1 ns (sleep1) between
 * polls. HOGS more processes (default 0), each in a session of its own,
 * spin on CPU 0 meanwhile (another job's compiler, an MPI rank busy-polling). "setsid" puts
 * both partners in a session of their own first, as MPICH's launcher (hydra) does with every
 * rank; "same" leaves them in this one's, as Open MPI's does. With the kernel's autogroup
 * scheduling (/proc/sys/kernel/sched_autogroup_enabled = 1) each session is a scheduling
 * group. Prints the median, the 99th percentile and the mean of the round trip.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static void wait_turn(_Atomic int *tok, int want, int sleep)
{
	struct timespec z = {0, sleep == 2 ? 1000 : 0};
	while (atomic_load(tok) != want) {
		if (sleep)
			nanosleep(&z, NULL);
		else
			sched_yield();
	}
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2000;
	int own_session = argc > 2 && !strcmp(argv[2], "setsid");
	int sleep = argc > 3 && !strcmp(argv[3], "sleep") ? 1 : argc > 3 && !strcmp(argv[3], "sleep1") ? 2 : 0;
	if (sleep == 2)
		prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	int hogs = argc > 4 ? atoi(argv[4]) : 0;
	_Atomic int *tok = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
	                        -1, 0);
	int64_t *rtt = malloc((size_t)n * sizeof(*rtt));
	if (own_session && getpid() == getpgrp()) { /* a group leader cannot setsid: fork */
		int st = 0;
		pid_t c = fork();
		if (c > 0) {
			waitpid(c, &st, 0);
			return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
		}
	}
	if (own_session)
		setsid();
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
	atomic_store(tok, 0);
	pid_t hog[16];
	for (int h = 0; h < hogs && h < 16; h++)
		if ((hog[h] = fork()) == 0) {
			setsid();
			for (;;)
				;
		}
	usleep(100000);
	pid_t pid = fork();
	if (pid == 0) {
		if (own_session)
			setsid();
		for (int i = 0; i < n; i++) {
			wait_turn(tok, 1, sleep);
			atomic_store(tok, 0);
		}
		_exit(0);
	}
	for (int i = 0; i < n; i++) {
		int64_t t0 = now_ns();
		atomic_store(tok, 1);
		wait_turn(tok, 0, sleep);
		rtt[i] = now_ns() - t0;
	}
	waitpid(pid, NULL, 0);
	for (int h = 0; h < hogs && h < 16; h++) {
		kill(hog[h], SIGKILL);
		waitpid(hog[h], NULL, 0);
	}
	double sum = 0;
	for (int i = 0; i < n; i++)
		sum += (double)rtt[i];
	qsort(rtt, (size_t)n, sizeof(*rtt), cmp);
	printf("%s, %s, %d hog%s: round trip median %.1f us, p99 %.1f us, mean %.1f us (%d)\n",
	       own_session ? "partners in sessions of their own" : "partners in one session",
	       sleep == 2 ? "nanosleep(1 us), slack 1 ns" : sleep ? "nanosleep(0)" : "sched_yield", hogs, hogs == 1 ? "" : "s", rtt[n / 2] * 1e-3,
	       rtt[n * 99 / 100] * 1e-3, sum / n * 1e-3, n);
	return 0;
}
