/* process_steady_state.c -- stop_when_steady_process: end the run once the flow stops changing.
 *
 * Every check_interval steps it compares the watched nodal variables with their values at the
 * previous check:  r_v = max_I |v_I(t) - v_I(t_c)| / ((t - t_c) * scale_v), the relative change
 * per unit time, where scale_v is max_I |v_I| for a vector (the velocity) and max_I v_I - min_I v_I
 * for a scalar (the pressure, which is defined up to a constant).  Once max_v r_v has stayed below
 * relative_tolerance for hold_time (and t >= minimum_time), it asks the analysis to stop; the
 * analysis then writes every output at that step.  The same process serves the command-line
 * switch --stop-when-steady and problem_data.steady_state.relative_tolerance (analysis.c).
 */
#include "process_internal.h"
#include "edgeflow/ef_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char ef_steady_defaults[] =
    "{\"model_part_name\": \"\", \"relative_tolerance\": 1e-3, \"hold_time\": 0.0, \"check_interval\": 10,"
    " \"minimum_time\": 0.0, \"variables\": [\"VELOCITY\", \"PRESSURE\"], \"echo\": true}";

typedef struct {
  ef_model_part mp;
  char label[EF_PROCESS_LABEL_MAX];
  double tolerance, hold_time, minimum_time;
  long check_interval;
  int echo, echo_level;
  int n_variables;
  char names[4][64];
  double *previous;   /* the watched values at the last check, back to back */
  int64_t size;
  int have_previous, stop;
  long calls;
  double t_check, below_since, rate;
  ef_comm comm; /* MPI: maxima over the ranks (ghosts hold their owners' values, so every node counts) */
} ef_steady;

static void ef_steady_free(ef_steady *s) {
  if (!s) return;
  free(s->previous);
  free(s);
}

static int ef_steady_create(const ef_process_context *ctx, ef_parameters p, void **data) {
  *data = NULL;
  EF_CHECK(ctx && ctx->model_part, EF_ERR_PARAMETER, "stop_when_steady_process: no model part in the context");
  EF_CALL(ef_process_validate(p, ef_steady_defaults, NULL, 0));
  ef_steady *s = calloc(1, sizeof *s);
  EF_CHECK(s, EF_ERR_MEMORY, "out of memory");
  int err = EF_SUCCESS;
  s->mp = ctx->model_part;
  s->comm = ctx->comm;
  s->echo_level = ctx->echo_level;
  ef_process_label(s->label, sizeof s->label, "stop_when_steady_process", p);
  ef_parameters list;
  EF_CALL_GOTO(ef_parameters_get_double(p, "relative_tolerance", &s->tolerance), fail);
  EF_CALL_GOTO(ef_parameters_get_double(p, "hold_time", &s->hold_time), fail);
  EF_CALL_GOTO(ef_parameters_get_double(p, "minimum_time", &s->minimum_time), fail);
  EF_CALL_GOTO(ef_parameters_get_int(p, "check_interval", &s->check_interval), fail);
  EF_CALL_GOTO(ef_parameters_get_bool(p, "echo", &s->echo), fail);
  EF_CHECK_GOTO(s->tolerance > 0 && isfinite(s->tolerance) && s->hold_time >= 0 && s->check_interval >= 1,
                EF_ERR_PARAMETER, fail,
                "%s: needs relative_tolerance > 0, hold_time >= 0 and check_interval >= 1 (got %g, %g, %ld)",
                s->label, s->tolerance, s->hold_time, s->check_interval);
  EF_CALL_GOTO(ef_parameters_get(p, "variables", &list), fail);
  s->n_variables = ef_parameters_size(list);
  EF_CHECK_GOTO(s->n_variables >= 1 && s->n_variables <= 4, EF_ERR_PARAMETER, fail,
                "%s: variables must name 1 to 4 nodal variables", s->label);
  for (int i = 0; i < s->n_variables; i++) {
    ef_parameters item;
    const char *name;
    ef_variable *v;
    EF_CALL_GOTO(ef_parameters_at(list, i, &item), fail);
    EF_CALL_GOTO(ef_parameters_as_string(item, &name), fail);
    snprintf(s->names[i], sizeof s->names[i], "%s", name);
    err = ef_model_part_get_variable(s->mp, name, &v);
    if (err) {
      err = ef_error_push(err, __FILE__, __LINE__, "%s: variables[%d]", s->label, i);
      goto fail;
    }
    s->size += s->mp->n_nodes * v->n_components;
  }
  EF_CHECK_GOTO(s->previous = malloc((size_t)(s->size > 0 ? s->size : 1) * sizeof *s->previous), EF_ERR_MEMORY, fail,
                "out of memory");
  s->rate = -1.0;
  s->below_since = -1.0;
  *data = s;
  return EF_SUCCESS;
fail:
  ef_steady_free(s);
  return err;
}

/* The check: relative change per unit time of every watched variable since the last check. */
static int ef_steady_finalize_step(void *data, double time, int step) {
  ef_steady *s = data;
  (void)step; /* solver steps are counted here, so a cut fixed time step does not thin the checks out */
  if (s->stop || ++s->calls % s->check_interval != 0) return EF_SUCCESS;
  EF_CALL(ef_model_part_sync_to_host(s->mp));
  double rate = 0.0;
  int64_t at = 0;
  for (int i = 0; i < s->n_variables; i++) {
    ef_variable *v;
    EF_CALL(ef_model_part_get_variable(s->mp, s->names[i], &v));
    const int64_t n = s->mp->n_nodes * v->n_components;
    double change = 0.0, scale = 0.0, lo = HUGE_VAL, hi = -HUGE_VAL;
    for (int64_t k = 0; k < n; k++) {
      const double x = v->values[k];
      if (s->have_previous) change = fmax(change, fabs(x - s->previous[at + k]));
      lo = fmin(lo, x);
      hi = fmax(hi, x);
      scale = fmax(scale, fabs(x));
    }
    if (ef_comm_size(s->comm) > 1) { /* MPI: the same maxima on every rank */
      double m[4] = {change, scale, hi, -lo};
      EF_CALL(ef_comm_allreduce(s->comm, m, 4, EF_COMM_MAX));
      change = m[0];
      scale = m[1];
      hi = m[2];
      lo = -m[3];
    }
    if (v->n_components == 1) scale = hi - lo;
    if (s->have_previous && time > s->t_check) {
      /* A field that is zero everywhere (a pressure-free start) has no relative change to measure. */
      const double r = scale > 0 ? change / (scale * (time - s->t_check)) : (change > 0 ? HUGE_VAL : 0.0);
      rate = fmax(rate, r);
    }
    memcpy(s->previous + at, v->values, (size_t)n * sizeof *s->previous);
    at += n;
  }
  if (s->have_previous) {
    s->rate = rate;
    if (s->echo_level >= 2 && ef_comm_rank(s->comm) == 0) printf("steady-state check: t = %.9g  relative change %.4e per unit time\n", time, rate);
    if (rate >= s->tolerance || time < s->minimum_time)
      s->below_since = -1.0;
    else if (s->below_since < 0)
      s->below_since = s->t_check; /* below over the whole interval just measured */
    if (s->below_since >= 0 && time - s->below_since >= s->hold_time * (1 - 1e-12)) {
      s->stop = 1;
      if (s->echo && ef_comm_rank(s->comm) == 0)
        printf("steady state at t = %.6g: relative change %.3e per unit time < %.3e since t = %.6g\n", time, rate,
               s->tolerance, s->below_since);
    }
  }
  s->have_previous = 1;
  s->t_check = time;
  return EF_SUCCESS;
}

static int ef_steady_stop_requested(void *data) { return ((ef_steady *)data)->stop; }

/* What the run summary reports: the last rate and whether it stopped the run. */
int ef_steady_state_process_report(void *data, double *rate, int *reached) {
  ef_steady *s = data;
  *rate = s->rate;
  *reached = s->stop;
  return EF_SUCCESS;
}

static void ef_steady_destroy(void **data) {
  if (!data || !*data) return;
  ef_steady_free(*data);
  *data = NULL;
}

const ef_process_ops ef_stop_when_steady_process_ops = {
    .name = "stop_when_steady_process",
    .distributed = 1, /* MPI: maxima reduced over the ranks */
    .create = ef_steady_create,
    .execute_finalize_solution_step = ef_steady_finalize_step,
    .stop_requested = ef_steady_stop_requested,
    .destroy = ef_steady_destroy,
};
