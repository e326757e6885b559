/* driver.c - the continuous clock's background thread (cont/driver.h). */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

#include "cont/driver.h"
#include "util/err.h"
#include "util/timeutil.h"

/* While an exchange is under way: poll without sleeping for SPIN_NS after its start or its
 * last message (a reply on a free core comes within a few us; a parent wakes 50 us before a
 * child's announced time), then nap POLL_NS, doubling up to MAX_POLL_NS while nothing
 * comes. A nap costs 20-30 us of CPU on this machine (timer and two context switches), so
 * short naps save nothing over spinning; under loops that keep every core busy the spin of
 * 300 us and steady 20 us naps this replaces cost 1.3-2.3 % of a core. */
#define SPIN_NS 100000
#define POLL_NS 50000
#define MAX_POLL_NS 1000000
#define MAX_SLEEP_NS 1000000000ll

struct driver {
	struct engine *e;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop;  /* set under mu (for the condition variable), read atomically while spinning */
	int rc;    /* the engine's error the thread saw */
	clockid_t cpu;
	int have_cpu;
};


/* sleep d_ns unless stopped meanwhile; returns 1 when stopped */
static int nap(struct driver *d, int64_t d_ns)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	int64_t end = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + d_ns;
	ts.tv_sec = end / 1000000000;
	ts.tv_nsec = end % 1000000000;
	pthread_mutex_lock(&d->mu);
	while (!d->stop && pthread_cond_timedwait(&d->cv, &d->mu, &ts) == 0)
		;
	int stop = d->stop;
	pthread_mutex_unlock(&d->mu);
	return stop;
}

int drive_step(struct engine *e, struct drive_state *st, int64_t *sleep_ns)
{
	int64_t wake;
	int rc = engine_try_progress(e, &wake);
	if (rc) {
		*sleep_ns = MAX_SLEEP_NS;
		return rc;
	}
	int64_t now = hclock_now(engine_base(e));
	if (engine_busy(e) || wake - now <= 0) {
		uint64_t ev = engine_events(e);
		if (st->busy_since < 0 || ev != st->events) {
			st->busy_since = now;
			st->poll_ns = POLL_NS;
		}
		st->events = ev;
		if (now - st->busy_since < SPIN_NS) {
			*sleep_ns = 0;
		} else {
			*sleep_ns = st->poll_ns;
			st->poll_ns = st->poll_ns * 2 > MAX_POLL_NS ? MAX_POLL_NS : st->poll_ns * 2;
		}
		return 0;
	}
	st->busy_since = -1;
	*sleep_ns = wake - now < MAX_SLEEP_NS ? wake - now : MAX_SLEEP_NS;
	return 0;
}

static void *loop(void *arg)
{
	struct driver *d = arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	prctl(PR_SET_TIMERSLACK, 1000UL); /* naps from 50 us: the default slack is as long */
	struct drive_state st = DRIVE_STATE_INIT;
	for (;;) {
		int64_t sleep_ns;
		int rc = drive_step(d->e, &st, &sleep_ns);
		if (rc) {
			d->rc = rc;
			break;
		}
		if (!sleep_ns) {
			if (__atomic_load_n(&d->stop, __ATOMIC_ACQUIRE))
				break;
			continue;
		}
		if (nap(d, sleep_ns))
			break;
	}
	return NULL;
}

int driver_start(struct engine *e, struct driver **out)
{
	struct driver *d = calloc(1, sizeof(*d));
	*out = NULL;
	if (!d)
		return err_set(HCLOCK_ENOMEM, "out of memory");
	d->e = e;
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&d->cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&d->mu, NULL);
	int r = pthread_create(&d->th, NULL, loop, d);
	if (r) {
		pthread_cond_destroy(&d->cv);
		pthread_mutex_destroy(&d->mu);
		free(d);
		return err_set(HCLOCK_EUNSUPP, "cont(...): could not start the background thread "
		               "(pthread_create: error %d); use cont(...,drive=progress)", r);
	}
	d->have_cpu = pthread_getcpuclockid(d->th, &d->cpu) == 0;
	*out = d;
	return 0;
}

int driver_stop(struct driver *d)
{
	if (!d)
		return 0;
	pthread_mutex_lock(&d->mu);
	__atomic_store_n(&d->stop, 1, __ATOMIC_RELEASE);
	pthread_cond_signal(&d->cv);
	pthread_mutex_unlock(&d->mu);
	pthread_join(d->th, NULL);
	int rc = d->rc;
	pthread_cond_destroy(&d->cv);
	pthread_mutex_destroy(&d->mu);
	free(d);
	return rc;
}

int64_t driver_cpu_ns(const struct driver *d)
{
	struct timespec ts;
	if (!d || !d->have_cpu || clock_gettime(d->cpu, &ts))
		return -1;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
