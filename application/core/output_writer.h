/* output_writer.h -- the background writer of asynchronous outputs (core-private).
 *
 * One thread per analysis (per model part: the outputs of one model part share it), created by
 * the first output that asks for it and joined when the last one lets go.  Jobs run in the order
 * they were submitted, one at a time, so every .pvd is appended in step order.  A job that fails
 * keeps its message (the writer's own copy: the error buffer is per thread); the jobs after it
 * are dropped, not run, and the failure is returned by the next submit, check or drain on the
 * main thread, so it fails the run at the next output or at the end and is never lost.
 * Timing figures go to the log (stage "output", ef_log.h) from the main thread only.
 */
#ifndef EF_OUTPUT_WRITER_H
#define EF_OUTPUT_WRITER_H

typedef struct ef_output_writer_s ef_output_writer;

/* A job: run (writer thread) returns an EF error code with its message; drop (writer thread, or
 * the main thread at release) frees the job after run or instead of it; `ran` is 0 for a job
 * that was dropped unrun, which must still settle what it holds (a snapshot in flight). */
typedef int (*ef_output_job_run)(void *job);
typedef void (*ef_output_job_drop)(void *job, int ran);

/* The writer of `key` (the model part), created with its thread on first use. */
int ef_output_writer_acquire(const void *key, ef_output_writer **w);
/* Let go: the last holder drains and joins the thread (a pending failure is reported on
 * stderr, as nobody is left to return it to); accepts NULL and sets *w to NULL. */
void ef_output_writer_release(ef_output_writer **w);
/* Queue a job (main thread); waits while two jobs are unfinished.  A failure of an earlier job
 * is returned instead (the job is dropped). */
int ef_output_writer_submit(ef_output_writer *w, ef_output_job_run run, ef_output_job_drop drop, void *job);
/* Wait until every queued job has finished (main thread); returns an earlier failure not yet
 * returned (so the end of a failed run still closes its files and writes its summary). */
int ef_output_writer_drain(ef_output_writer *w);
/* An earlier failure, without waiting (main thread); submit and check return it every time. */
int ef_output_writer_check(ef_output_writer *w);
/* Writer thread, inside a job: add time spent waiting for a device copy to the figures. */
void ef_output_writer_add_copy_wait(ef_output_writer *w, double seconds);

#endif
