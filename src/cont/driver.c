/* driver.c - the continuous clock's background thread (cont/driver.h). */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

#include "cont/driver.h"
#include "util/timeutil.h"
#include "util/err.h"

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
	struct timespec ts = mono_deadline(d_ns);
	pthread_mutex_lock(&d->mu);
	while (!d->stop && pthread_cond_timedwait(&d->cv, &d->mu, &ts) == 0)
		;
	int stop = d->stop;
	pthread_mutex_unlock(&d->mu);
	return stop;
}

static void *loop(void *arg)
{
	struct driver *d = arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	prctl(PR_SET_TIMERSLACK, 1000UL); /* naps from 50 us: the default slack is as long */
	for (;;) {
		int64_t sleep_ns;
		int rc = engine_drive(d->e, &sleep_ns, NULL);
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
	mono_cond_init(&d->cv);
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
