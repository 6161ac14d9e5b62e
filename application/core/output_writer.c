/* output_writer.c -- the background writer of asynchronous outputs (output_writer.h).
 *
 * Ownership: the queue, the counters and the failure are guarded by `lock`; a job's data belongs
 * to the main thread until submit and to the writer thread from then until its drop.  Figures
 * measured on the writer thread are published to the (main-thread-only) log by the main thread.
 */
#include "output_writer.h"

#include "edgeflow/ef_error.h"
#include "edgeflow/ef_log.h"
#include "edgeflow/ef_util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EF_WRITER_MAX_UNFINISHED 2 /* the job being written and the next one */

typedef struct ef_output_job_s {
  ef_output_job_run run;
  ef_output_job_drop drop;
  void *data;
  struct ef_output_job_s *next;
} ef_output_job;

struct ef_output_writer_s {
  const void *key;
  int holders;
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t changed; /* a job queued or finished, or stop */
  ef_output_job *head, *tail;
  int unfinished; /* queued + running */
  int stop;
  int failed;          /* the code of the first failure (0: none) */
  int failure_taken;   /* returned to the main thread once (later calls return it again) */
  char message[4096];  /* its message, copied on the writer thread */
  /* Figures: writer-thread busy time and jobs, time waiting for device copies; published up to. */
  double busy, copy_wait, busy_published, copy_wait_published;
  long jobs, jobs_published;
  struct ef_output_writer_s *next_writer;
};

/* The writers alive, one per key. */
static pthread_mutex_t ef_writers_lock = PTHREAD_MUTEX_INITIALIZER;
static ef_output_writer *ef_writers;

static void *ef_writer_main(void *arg) {
  ef_output_writer *w = arg;
  pthread_mutex_lock(&w->lock);
  for (;;) {
    while (!w->head && !w->stop) pthread_cond_wait(&w->changed, &w->lock);
    if (!w->head) break;
    ef_output_job *job = w->head;
    const int skip = w->failed != 0;
    pthread_mutex_unlock(&w->lock);
    int err = EF_SUCCESS;
    double t0 = ef_wtime();
    if (!skip) {
      ef_error_clear();
      err = job->run(job->data);
    }
    job->drop(job->data, !skip);
    double t1 = ef_wtime();
    pthread_mutex_lock(&w->lock);
    if (!skip) {
      w->busy += t1 - t0;
      w->jobs++;
    }
    if (err && !w->failed) {
      w->failed = err;
      snprintf(w->message, sizeof w->message, "%s", ef_error_message());
    }
    w->head = job->next;
    if (!w->head) w->tail = NULL;
    free(job);
    w->unfinished--;
    pthread_cond_broadcast(&w->changed);
  }
  pthread_mutex_unlock(&w->lock);
  return NULL;
}

/* Publish the writer thread's figures accumulated since the last call (main thread, w locked). */
static void ef_writer_publish(ef_output_writer *w) {
  static int ev_busy = -1, ev_copy = -1;
  if (ev_busy < 0) {
    ev_busy = ef_log_event("output", "writer thread (format + write, background)");
    ev_copy = ef_log_event("output", "writer thread: wait for device copy");
  }
  long jobs = w->jobs - w->jobs_published;
  if (jobs > 0) {
    /* One call per job, the time spread evenly (the log adds one call per add). */
    double each = (w->busy - w->busy_published) / (double)jobs, copy = (w->copy_wait - w->copy_wait_published) / (double)jobs;
    for (long i = 0; i < jobs; i++) {
      ef_log_event_add(ev_busy, each);
      ef_log_event_add(ev_copy, copy);
    }
  }
  w->jobs_published = w->jobs;
  w->busy_published = w->busy;
  w->copy_wait_published = w->copy_wait;
}

/* The failure, as this thread's error (w locked). */
static int ef_writer_failure(ef_output_writer *w) {
  if (!w->failed) return EF_SUCCESS;
  w->failure_taken = 1;
  return ef_error_set(w->failed, __FILE__, __LINE__, "a background output write failed (later outputs were not "
                      "written): %s", w->message);
}

static int ef_writer_wait_event(void) {
  static int ev = -1;
  if (ev < 0) ev = ef_log_event("output", "main thread: wait for writer");
  return ev;
}

int ef_output_writer_acquire(const void *key, ef_output_writer **out) {
  EF_CHECK(out, EF_ERR_PARAMETER, "ef_output_writer_acquire: NULL argument");
  *out = NULL;
  pthread_mutex_lock(&ef_writers_lock);
  ef_output_writer *w = ef_writers;
  while (w && w->key != key) w = w->next_writer;
  if (w) {
    w->holders++;
    pthread_mutex_unlock(&ef_writers_lock);
    *out = w;
    return EF_SUCCESS;
  }
  w = calloc(1, sizeof *w);
  if (!w) {
    pthread_mutex_unlock(&ef_writers_lock);
    return EF_ERROR(EF_ERR_MEMORY, "out of memory");
  }
  w->key = key;
  w->holders = 1;
  pthread_mutex_init(&w->lock, NULL);
  pthread_cond_init(&w->changed, NULL);
  int e = pthread_create(&w->thread, NULL, ef_writer_main, w);
  if (e) {
    pthread_cond_destroy(&w->changed);
    pthread_mutex_destroy(&w->lock);
    free(w);
    pthread_mutex_unlock(&ef_writers_lock);
    return EF_ERROR(EF_ERR_INTERNAL, "cannot start the output writer thread: %s", strerror(e));
  }
  w->next_writer = ef_writers;
  ef_writers = w;
  pthread_mutex_unlock(&ef_writers_lock);
  *out = w;
  return EF_SUCCESS;
}

void ef_output_writer_release(ef_output_writer **pw) {
  if (!pw || !*pw) return;
  ef_output_writer *w = *pw;
  *pw = NULL;
  pthread_mutex_lock(&ef_writers_lock);
  if (--w->holders > 0) {
    pthread_mutex_unlock(&ef_writers_lock);
    return;
  }
  for (ef_output_writer **p = &ef_writers; *p; p = &(*p)->next_writer)
    if (*p == w) {
      *p = w->next_writer;
      break;
    }
  pthread_mutex_unlock(&ef_writers_lock);
  pthread_mutex_lock(&w->lock);
  w->stop = 1; /* the thread finishes (or drops) what is queued, then ends */
  pthread_cond_broadcast(&w->changed);
  pthread_mutex_unlock(&w->lock);
  pthread_join(w->thread, NULL);
  if (w->failed && !w->failure_taken)
    fprintf(stderr, "edgeflow: error: a background output write failed: %s\n", w->message);
  ef_writer_publish(w);
  pthread_cond_destroy(&w->changed);
  pthread_mutex_destroy(&w->lock);
  free(w);
}

int ef_output_writer_submit(ef_output_writer *w, ef_output_job_run run, ef_output_job_drop drop, void *data) {
  EF_CHECK(w && run && drop, EF_ERR_PARAMETER, "ef_output_writer_submit: NULL argument");
  ef_output_job *job = calloc(1, sizeof *job);
  if (!job) {
    drop(data, 0);
    return EF_ERROR(EF_ERR_MEMORY, "out of memory");
  }
  job->run = run;
  job->drop = drop;
  job->data = data;
  const int ev = ef_writer_wait_event();
  pthread_mutex_lock(&w->lock);
  if (w->unfinished >= EF_WRITER_MAX_UNFINISHED && !w->failed) {
    ef_log_event_begin(ev);
    while (w->unfinished >= EF_WRITER_MAX_UNFINISHED && !w->failed) pthread_cond_wait(&w->changed, &w->lock);
    ef_log_event_end(ev);
  }
  ef_writer_publish(w);
  if (w->failed) {
    int err = ef_writer_failure(w);
    pthread_mutex_unlock(&w->lock);
    free(job);
    drop(data, 0);
    return err;
  }
  if (w->tail)
    w->tail->next = job;
  else
    w->head = job;
  w->tail = job;
  w->unfinished++;
  pthread_cond_broadcast(&w->changed);
  pthread_mutex_unlock(&w->lock);
  return EF_SUCCESS;
}

int ef_output_writer_drain(ef_output_writer *w) {
  if (!w) return EF_SUCCESS;
  const int ev = ef_writer_wait_event();
  pthread_mutex_lock(&w->lock);
  if (w->unfinished > 0) {
    ef_log_event_begin(ev);
    while (w->unfinished > 0) pthread_cond_wait(&w->changed, &w->lock);
    ef_log_event_end(ev);
  }
  ef_writer_publish(w);
  int err = w->failure_taken ? EF_SUCCESS : ef_writer_failure(w); /* once: the run has failed on it */
  pthread_mutex_unlock(&w->lock);
  return err;
}

int ef_output_writer_check(ef_output_writer *w) {
  if (!w) return EF_SUCCESS;
  pthread_mutex_lock(&w->lock);
  ef_writer_publish(w);
  int err = ef_writer_failure(w);
  pthread_mutex_unlock(&w->lock);
  return err;
}

void ef_output_writer_add_copy_wait(ef_output_writer *w, double seconds) {
  pthread_mutex_lock(&w->lock);
  w->copy_wait += seconds;
  pthread_mutex_unlock(&w->lock);
}
