/* log.c -- named timing events. */
#include "edgeflow/ef_log.h"
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_util.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EF_LOG_MAX_EVENTS 256

typedef struct {
  char stage[32];
  char name[64];
  double seconds, started, bytes;
  long calls;
} ef_event;

static ef_event ef_events[EF_LOG_MAX_EVENTS];
static int ef_n_events;

int ef_log_event(const char *stage, const char *name) {
  for (int i = 0; i < ef_n_events; i++)
    if (!strcmp(ef_events[i].stage, stage) && !strcmp(ef_events[i].name, name)) return i;
  if (ef_n_events == EF_LOG_MAX_EVENTS) return EF_LOG_MAX_EVENTS - 1; /* overflow bucket */
  ef_event *e = &ef_events[ef_n_events];
  snprintf(e->stage, sizeof e->stage, "%s", stage);
  snprintf(e->name, sizeof e->name, "%s", name);
  return ef_n_events++;
}

void ef_log_event_begin(int event) { ef_events[event].started = ef_wtime(); }

void ef_log_event_end(int event) {
  ef_events[event].seconds += ef_wtime() - ef_events[event].started;
  ef_events[event].calls++;
}

void ef_log_event_add(int event, double seconds) {
  ef_events[event].seconds += seconds;
  ef_events[event].calls++;
}

void ef_log_event_add_bytes(int event, double bytes) { ef_events[event].bytes += bytes; }
double ef_log_event_seconds(int event) { return ef_events[event].seconds; }
long ef_log_event_count(int event) { return ef_events[event].calls; }

void ef_log_reset(void) {
  for (int i = 0; i < ef_n_events; i++) {
    ef_events[i].seconds = ef_events[i].bytes = 0.0;
    ef_events[i].calls = 0;
  }
}

void ef_log_print_table(FILE *out) {
  fprintf(out, "\n%-10s %-34s %12s %10s %12s %7s %9s\n", "stage", "event", "total [s]", "calls", "mean [us]",
          "% stage", "GB/s");
  for (int i = 0; i < ef_n_events; i++) {
    int first = 1;
    for (int j = 0; j < i; j++)
      if (!strcmp(ef_events[j].stage, ef_events[i].stage)) first = 0;
    if (!first) continue;
    double stage_total = 0.0;
    for (int j = i; j < ef_n_events; j++)
      if (!strcmp(ef_events[j].stage, ef_events[i].stage)) stage_total += ef_events[j].seconds;
    for (int j = i; j < ef_n_events; j++) {
      ef_event *e = &ef_events[j];
      if (strcmp(e->stage, ef_events[i].stage) || !e->calls) continue;
      char bw[16] = "";
      if (e->bytes > 0 && e->seconds > 0) snprintf(bw, sizeof bw, "%.1f", e->bytes / e->seconds * 1e-9);
      fprintf(out, "%-10s %-34s %12.4f %10ld %12.2f %7.1f %9s\n", e->stage, e->name, e->seconds, e->calls,
              1e6 * e->seconds / (double)e->calls, stage_total > 0 ? 100.0 * e->seconds / stage_total : 0.0,
              bw);
    }
  }
}

int ef_log_to_parameters(ef_parameters object, const char *key) {
  EF_CALL(ef_parameters_set_json(object, key, "{}"));
  ef_parameters table;
  EF_CALL(ef_parameters_get(object, key, &table));
  for (int i = 0; i < ef_n_events; i++) {
    ef_event *e = &ef_events[i];
    if (!e->calls) continue;
    if (!ef_parameters_has(table, e->stage)) EF_CALL(ef_parameters_set_json(table, e->stage, "{}"));
    ef_parameters stage;
    EF_CALL(ef_parameters_get(table, e->stage, &stage));
    char json[256];
    if (e->bytes > 0 && e->seconds > 0)
      snprintf(json, sizeof json, "{\"seconds\": %.9g, \"calls\": %ld, \"mean_us\": %.6g, \"GB_per_s\": %.6g}",
               e->seconds, e->calls, 1e6 * e->seconds / (double)e->calls, e->bytes / e->seconds * 1e-9);
    else
      snprintf(json, sizeof json, "{\"seconds\": %.9g, \"calls\": %ld, \"mean_us\": %.6g}", e->seconds, e->calls,
               1e6 * e->seconds / (double)e->calls);
    EF_CALL(ef_parameters_set_json(stage, e->name, json));
  }
  return EF_SUCCESS;
}
