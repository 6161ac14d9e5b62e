/* ef_log.h -- named timing events adding up into one table (PETSc -log_view style).
 *
 * Events are registered once by name; begin/end pairs accumulate wall time and
 * counts, and device code adds measured durations (OpenCL profiling) with
 * ef_log_event_add.  The table is printed at the end of a run and the same
 * figures go to run_summary.json.  Not thread-safe: call from the main thread.
 */
#ifndef EF_LOG_H
#define EF_LOG_H

#include <stdio.h>

#include "edgeflow/ef_parameters.h"

#include "edgeflow/ef_util.h" /* ef_wtime */

#ifdef __cplusplus
extern "C" {
#endif


/* Id of the event `name` in `stage` ("setup", "step", "kernel", ...); created on first use. */
int ef_log_event(const char *stage, const char *name);
void ef_log_event_begin(int event);
void ef_log_event_end(int event);
/* Add a measured duration (seconds) and one call. */
void ef_log_event_add(int event, double seconds);
/* Add a byte count moved by this event (for bandwidth columns). */
void ef_log_event_add_bytes(int event, double bytes);
double ef_log_event_seconds(int event);
long ef_log_event_count(int event);
/* Forget all accumulated figures (keeps registrations). */
void ef_log_reset(void);

/* Print the table: per stage, events with total s, calls, mean us, % of stage. */
void ef_log_print_table(FILE *out);
/* Add {stage: {event: {seconds, calls, mean_us[, GB_per_s]}}} to a JSON object. */
int ef_log_to_parameters(ef_parameters object, const char *key);

#ifdef __cplusplus
}
#endif
#endif
