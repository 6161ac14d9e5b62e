/* process_probes.c -- probes_output_process: nodal variables sampled at points.
 *
 * A probe set (one process, one CSV file) holds point probes and line probes (n points
 * evenly spaced between two ends, both included).  Each point is located once, at
 * initialisation, in the element that contains it; a sample is the P1 interpolation
 * v(x) = sum_k lambda_k(x) v_k over that element's vertices, lambda the barycentric
 * coordinates (exact for fields linear in space; at a mesh node it is the nodal value).
 *
 * Location uses a uniform bin grid over the mesh's bounding box with about one bin per
 * element: every element is entered in the bins its bounding box overlaps (two passes,
 * counting then filling, O(n_elements) for shape-regular meshes), a point is tested
 * against the elements of its bin only.  Among the elements that contain the point
 * (min lambda >= -tolerance) the one with the largest min lambda is taken, so a point on
 * a shared face always resolves to the same element whatever the bin order.
 *
 * Long CSV format: one row per probe and sample, "time,probe,x,y,z,<columns>", vectors
 * as <NAME>_X,<NAME>_Y,<NAME>_Z.  Rows reach the disk whole (see process_forces.c).
 */
#include "process_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char ef_probes_defaults[] =
    "{\"model_part_name\": \"\", \"output_file_name\": \"probes.csv\", \"output_path\": \"\","
    " \"points\": [], \"lines\": [], \"variables\": [\"VELOCITY\", \"PRESSURE\"],"
    " \"output_control_type\": \"step\", \"output_interval\": 1.0, \"output_times\": [],"
    " \"search_tolerance\": 1e-9, \"sync_each_row\": false}";

typedef struct {
  ef_model_part mp;
  char label[EF_PROCESS_LABEL_MAX];
  char file_name[1024];
  char output_path[1024];
  const char *output_folder;
  int n_probes;
  double *points;      /* 3 per probe */
  char (*where)[128];  /* "points[2]" / "lines[0] point 5": for messages */
  int64_t *element;    /* containing element, -1 until located */
  double *lambda;      /* 4 per probe */
  int n_variables;
  char **variables;
  ef_output_control control;
  const long *solver_step; /* the solver's step count, for "solver_step" schedules */
  double output_interval, next_output;
  int n_times, next_time;
  double *times;       /* sorted output times */
  double tolerance;
  int located;
  ef_csv_file csv;
  char *row;           /* one sample of all probes, formatted */
  size_t row_size;
  /* MPI (docs/mpi.md): on several ranks each element is searched on the rank owning its first node, the
   * best over the ranks (serial rule: largest smallest barycentric coordinate, then the lowest global
   * element index) answers, the others add zeros to a sum; rank 0 writes. */
  ef_comm comm;
  const ef_partition *partition;
  int n_columns;
  double *sample;      /* n_probes * n_columns values of one sample (several ranks) */
} ef_probes;

static void ef_probes_free(ef_probes *q) {
  if (!q) return;
  ef_csv_close(&q->csv);
  free(q->points);
  free(q->where);
  free(q->element);
  free(q->lambda);
  for (int i = 0; i < q->n_variables; i++) free(q->variables[i]);
  free(q->variables);
  free(q->times);
  free(q->row);
  free(q->sample);
  free(q);
}

/* Three coordinates from a JSON array of 2 or 3 numbers (z = 0 when absent). */
static int ef_probes_point(ef_parameters v, double x[3]) {
  int n = ef_parameters_size(v);
  EF_CHECK(ef_parameters_type(v) == EF_JSON_ARRAY && (n == 2 || n == 3), EF_ERR_PARAMETER,
           "%s: '%s' must be a point [x, y] or [x, y, z]", ef_parameters_origin(v), ef_parameters_path(v));
  x[2] = 0.0;
  for (int d = 0; d < n; d++) {
    ef_parameters c;
    EF_CALL(ef_parameters_at(v, d, &c));
    EF_CHECK(ef_parameters_type(c) == EF_JSON_NUMBER, EF_ERR_PARAMETER, "%s: '%s' must be a number",
             ef_parameters_origin(c), ef_parameters_path(c));
    EF_CALL(ef_parameters_as_double(c, &x[d]));
    EF_CHECK(isfinite(x[d]), EF_ERR_PARAMETER, "%s: '%s' is not finite", ef_parameters_origin(c),
             ef_parameters_path(c));
  }
  return EF_SUCCESS;
}

/* Append one probe at x, described by where. */
static int ef_probes_add(ef_probes *q, const double x[3], const char *where) {
  int n = q->n_probes + 1;
  double *pts = realloc(q->points, (size_t)n * 3 * sizeof *pts);
  EF_CHECK(pts, EF_ERR_MEMORY, "out of memory");
  q->points = pts;
  char(*w)[128] = realloc(q->where, (size_t)n * sizeof *w);
  EF_CHECK(w, EF_ERR_MEMORY, "out of memory");
  q->where = w;
  memcpy(q->points + 3 * q->n_probes, x, 3 * sizeof *x);
  snprintf(q->where[q->n_probes], sizeof q->where[q->n_probes], "%s", where);
  q->n_probes = n;
  return EF_SUCCESS;
}

/* Read "points" and "lines" ({"start": [..], "end": [..], "n_points": N}). */
static int ef_probes_read_locations(ef_probes *q, ef_parameters p) {
  ef_parameters list, item;
  char where[128];
  EF_CALL(ef_parameters_get(p, "points", &list));
  for (int i = 0; i < ef_parameters_size(list); i++) {
    double x[3];
    EF_CALL(ef_parameters_at(list, i, &item));
    EF_CALL(ef_probes_point(item, x));
    snprintf(where, sizeof where, "points[%d]", i);
    EF_CALL(ef_probes_add(q, x, where));
  }
  EF_CALL(ef_parameters_get(p, "lines", &list));
  for (int i = 0; i < ef_parameters_size(list); i++) {
    EF_CALL(ef_parameters_at(list, i, &item));
    EF_CALL(ef_parameters_validate_defaults(item, "{\"start\": [], \"end\": [], \"n_points\": 2}"));
    ef_parameters a, b;
    double xa[3], xb[3];
    long n;
    EF_CALL(ef_parameters_get(item, "start", &a));
    EF_CALL(ef_parameters_get(item, "end", &b));
    EF_CALL(ef_probes_point(a, xa));
    EF_CALL(ef_probes_point(b, xb));
    EF_CALL(ef_parameters_get_int(item, "n_points", &n));
    EF_CHECK(n >= 1 && n <= 1000000, EF_ERR_PARAMETER, "%s: '%s.n_points' = %ld must be in 1..1000000",
             ef_parameters_origin(item), ef_parameters_path(item), n);
    for (long k = 0; k < n; k++) {
      double s = n > 1 ? (double)k / (double)(n - 1) : 0.0, x[3];
      for (int d = 0; d < 3; d++) x[d] = xa[d] + s * (xb[d] - xa[d]);
      snprintf(where, sizeof where, "lines[%d] point %ld", i, k);
      EF_CALL(ef_probes_add(q, x, where));
    }
  }
  EF_CHECK(q->n_probes > 0, EF_ERR_PARAMETER, "%s: no probes: give \"points\" and/or \"lines\"", q->label);
  return EF_SUCCESS;
}

/* Read the variables and check each is a nodal variable of the model part. */
static int ef_probes_read_variables(ef_probes *q, ef_parameters p) {
  ef_parameters list;
  EF_CALL(ef_parameters_get(p, "variables", &list));
  int n = ef_parameters_size(list);
  EF_CHECK(n > 0, EF_ERR_PARAMETER, "%s: 'variables' is empty", q->label);
  EF_CALLOC(q->variables, n);
  for (int i = 0; i < n; i++) {
    ef_parameters item;
    const char *name;
    EF_CALL(ef_parameters_at(list, i, &item));
    EF_CALL(ef_parameters_as_string(item, &name));
    ef_variable *v;
    int err = ef_model_part_get_variable(q->mp, name, &v);
    if (err) return ef_error_push(err, __FILE__, __LINE__, "%s: variables[%d]", q->label, i);
    size_t len = strlen(name) + 1;
    EF_MALLOC(q->variables[i], len);
    memcpy(q->variables[i], name, len);
    q->n_variables++;
  }
  return EF_SUCCESS;
}

/* Sort doubles ascending (qsort callback). */
static int ef_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Create a probe set from its Parameters; the points are located in execute_initialize. */
static int ef_probes_create(const ef_process_context *ctx, ef_parameters p, void **data) {
  *data = NULL;
  EF_CHECK(ctx && ctx->model_part, EF_ERR_PARAMETER, "probes_output_process: no model part in the process context");
  EF_CALL(ef_process_validate(p, ef_probes_defaults, NULL, 0));
  ef_probes *q = calloc(1, sizeof *q);
  EF_CHECK(q, EF_ERR_MEMORY, "out of memory");
  q->csv.fd = -1;
  q->mp = ctx->model_part;
  q->output_folder = ctx->output_folder;
  ef_process_label(q->label, sizeof q->label, "probes_output_process", p);
  int err;
  const char *text, *control;
  ef_sub_model_part *smp;
  /* Probes search the whole mesh; the name is checked so a typo is caught. */
  if (ef_parameters_has(p, "model_part_name")) {
    EF_CALL_GOTO(ef_parameters_get_string(p, "model_part_name", &text), fail);
    if (text[0]) EF_CALL_GOTO(ef_process_resolve_part(q->mp, p, "model_part_name", &smp, NULL), fail);
  }
  EF_CALL_GOTO(ef_parameters_get_string(p, "output_file_name", &text), fail);
  snprintf(q->file_name, sizeof q->file_name, "%s", text);
  EF_CALL_GOTO(ef_parameters_get_string(p, "output_path", &text), fail);
  snprintf(q->output_path, sizeof q->output_path, "%s", text);
  EF_CALL_GOTO(ef_parameters_get_string(p, "output_control_type", &control), fail);
  EF_CALL_GOTO(ef_output_control_parse(q->label, control, &q->control), fail);
  q->solver_step = ctx->solver_step;
  EF_CALL_GOTO(ef_parameters_get_double(p, "output_interval", &q->output_interval), fail);
  EF_CHECK_GOTO(isfinite(q->output_interval) && q->output_interval >= 0.0, EF_ERR_PARAMETER, fail,
                "%s: output_interval = %g must be >= 0 (0: every step)", q->label, q->output_interval);
  EF_CALL_GOTO(ef_parameters_get_double(p, "search_tolerance", &q->tolerance), fail);
  EF_CHECK_GOTO(isfinite(q->tolerance) && q->tolerance >= 0.0 && q->tolerance < 0.1, EF_ERR_PARAMETER, fail,
                "%s: search_tolerance = %g must be in [0, 0.1)", q->label, q->tolerance);
  ef_parameters times;
  EF_CALL_GOTO(ef_parameters_get(p, "output_times", &times), fail);
  q->n_times = ef_parameters_size(times);
  if (q->n_times) {
    q->times = malloc((size_t)q->n_times * sizeof *q->times);
    EF_CHECK_GOTO(q->times, EF_ERR_MEMORY, fail, "out of memory");
    for (int i = 0; i < q->n_times; i++) {
      ef_parameters t;
      EF_CALL_GOTO(ef_parameters_at(times, i, &t), fail);
      EF_CHECK_GOTO(ef_parameters_type(t) == EF_JSON_NUMBER, EF_ERR_PARAMETER, fail, "%s: '%s' must be a number",
                    ef_parameters_origin(t), ef_parameters_path(t));
      EF_CALL_GOTO(ef_parameters_as_double(t, &q->times[i]), fail);
    }
    qsort(q->times, (size_t)q->n_times, sizeof *q->times, ef_cmp_double);
  }
  EF_CALL_GOTO(ef_probes_read_locations(q, p), fail);
  EF_CALL_GOTO(ef_probes_read_variables(q, p), fail);
  q->element = malloc((size_t)q->n_probes * sizeof *q->element);
  q->lambda = calloc((size_t)q->n_probes * 4, sizeof *q->lambda);
  EF_CHECK_GOTO(q->element && q->lambda, EF_ERR_MEMORY, fail, "out of memory");
  for (int i = 0; i < q->n_probes; i++) q->element[i] = -1;

  /* Header and the row buffer: 3 numbers per vector, one per scalar, ~24 characters each. */
  size_t header_size = 64;
  int n_columns = 0;
  for (int i = 0; i < q->n_variables; i++) {
    ef_variable *v = ef_model_part_find_variable(q->mp, q->variables[i]);
    header_size += 3 * (strlen(q->variables[i]) + 4);
    n_columns += v->n_components;
  }
  char *header = malloc(header_size);
  EF_CHECK_GOTO(header, EF_ERR_MEMORY, fail, "out of memory");
  size_t used = (size_t)snprintf(header, header_size, "time,probe,x,y,z");
  for (int i = 0; i < q->n_variables; i++) {
    ef_variable *v = ef_model_part_find_variable(q->mp, q->variables[i]);
    if (v->n_components == 1)
      used += (size_t)snprintf(header + used, header_size - used, ",%s", q->variables[i]);
    else
      for (int c = 0; c < v->n_components; c++)
        used += (size_t)snprintf(header + used, header_size - used, ",%s_%c", q->variables[i], "XYZ"[c % 3]);
  }
  snprintf(header + used, header_size - used, "\n");
  q->row_size = (size_t)q->n_probes * (size_t)(5 + n_columns) * 26 + 64;
  q->row = malloc(q->row_size);
  q->comm = ctx->comm;
  q->partition = ctx->partition;
  q->n_columns = n_columns;
  const size_t n_sample = (size_t)q->n_probes * (size_t)(n_columns > 0 ? n_columns : 1) + 1;
  if (q->partition && !(q->sample = calloc(n_sample, sizeof *q->sample))) {
    free(q->row);
    q->row = NULL;
  }
  if (!q->row) {
    free(header);
    err = EF_ERROR(EF_ERR_MEMORY, "out of memory");
    goto fail;
  }
  int sync_each_row;
  err = ef_parameters_get_bool(p, "sync_each_row", &sync_each_row);
  if (!err && ef_comm_rank(q->comm) == 0) /* MPI: rank 0 writes */
    err = ef_csv_open_run(ctx, q->output_path, q->file_name, header, sync_each_row, &q->csv);
  free(header);
  if (err) {
    err = ef_error_push(err, __FILE__, __LINE__, "%s", q->label);
    goto fail;
  }
  q->next_output = 0.0;
  *data = q;
  return EF_SUCCESS;
fail:
  ef_probes_free(q);
  return err;
}

/* Barycentric coordinates of x in element e (dim + 1 of them); 0 or an error for a
 * degenerate element. */
static int ef_probes_barycentric(ef_model_part mp, int64_t e, const double *x, double *lambda) {
  const int npe = mp->nodes_per_element;
  const ef_index *en = mp->elements + e * npe;
  const double *x0 = mp->coords + 3 * (int64_t)en[0];
  if (npe == 3) {
    const double *x1 = mp->coords + 3 * (int64_t)en[1], *x2 = mp->coords + 3 * (int64_t)en[2];
    double a = x1[0] - x0[0], b = x2[0] - x0[0], c = x1[1] - x0[1], d = x2[1] - x0[1];
    double det = a * d - b * c;
    EF_CHECK(det != 0.0, EF_ERR_MESH, "element %lld is degenerate", (long long)mp->element_ids[e]);
    double rx = x[0] - x0[0], ry = x[1] - x0[1];
    lambda[1] = (d * rx - b * ry) / det;
    lambda[2] = (-c * rx + a * ry) / det;
    lambda[0] = 1.0 - lambda[1] - lambda[2];
    return EF_SUCCESS;
  }
  double m[3][3], r[3];
  for (int k = 0; k < 3; k++) {
    const double *xk = mp->coords + 3 * (int64_t)en[k + 1];
    for (int d = 0; d < 3; d++) m[d][k] = xk[d] - x0[d];
    r[k] = x[k] - x0[k];
  }
  /* Cramer's rule on the 3x3 Jacobian. */
  double det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
               m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
  EF_CHECK(det != 0.0, EF_ERR_MESH, "element %lld is degenerate", (long long)mp->element_ids[e]);
  for (int k = 0; k < 3; k++) {
    double a[3][3];
    memcpy(a, m, sizeof a);
    for (int d = 0; d < 3; d++) a[d][k] = r[d];
    lambda[k + 1] = (a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
                     a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0])) /
                    det;
  }
  lambda[0] = 1.0 - lambda[1] - lambda[2] - lambda[3];
  return EF_SUCCESS;
}

/* MPI: the best element of each probe over the ranks (q->sample[p] holds this rank's best smallest
 * barycentric coordinate, q->element[p] its element); the others forget theirs (element -1). */
static int ef_probes_locate_ranks(ef_probes *q) {
  const int n = q->n_probes;
  double *best = malloc((size_t)(2 * n + 1) * sizeof *best), *global = best + n;
  EF_CHECK(best, EF_ERR_MEMORY, "out of memory");
  int err = EF_SUCCESS;
  memcpy(best, q->sample, (size_t)n * sizeof *best);
  EF_CALL_GOTO(ef_comm_allreduce(q->comm, best, n, EF_COMM_MAX), done);
  for (int p = 0; p < n; p++)
    global[p] = q->element[p] >= 0 && q->sample[p] == best[p] ? (double)q->partition->global_element[q->element[p]]
                                                               : HUGE_VAL;
  EF_CALL_GOTO(ef_comm_allreduce(q->comm, global, n, EF_COMM_MIN), done);
  for (int p = 0; p < n; p++) {
    const double *x = q->points + 3 * p;
    EF_CHECK_GOTO(best[p] > -HUGE_VAL, EF_ERR_PARAMETER, done,
                  "%s: probe %d (%s) at (%.9g, %.9g, %.9g) is outside the mesh (on no rank)", q->label, p, q->where[p],
                  x[0], x[1], x[2]);
    if (q->element[p] >= 0 && (double)q->partition->global_element[q->element[p]] != global[p]) q->element[p] = -1;
  }
  memset(q->sample, 0, (size_t)n * (size_t)q->n_columns * sizeof *q->sample);
done:
  free(best);
  return err;
}

/* Locate every probe: bin grid over the bounding box, then barycentric tests. */
static int ef_probes_locate(ef_probes *q) {
  ef_model_part mp = q->mp;
  const int dim = mp->dim, npe = mp->nodes_per_element;
  EF_CHECK(mp->n_elements > 0 && (npe == dim + 1), EF_ERR_MESH, "%s: the model part has no %s", q->label,
           dim == 2 ? "triangles" : "tetrahedra");
  double lo[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL}, hi[3] = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
  for (int64_t i = 0; i < mp->n_nodes; i++)
    for (int d = 0; d < dim; d++) {
      lo[d] = fmin(lo[d], mp->coords[3 * i + d]);
      hi[d] = fmax(hi[d], mp->coords[3 * i + d]);
    }
  /* About one bin per element, bins roughly cubic. */
  double extent[3], volume = 1.0;
  for (int d = 0; d < dim; d++) {
    extent[d] = fmax(hi[d] - lo[d], 1e-300);
    volume *= extent[d];
  }
  double cell = pow(volume / (double)mp->n_elements, 1.0 / dim);
  int64_t nb[3] = {1, 1, 1}, total = 1;
  for (int d = 0; d < dim; d++) {
    nb[d] = (int64_t)fmin(fmax(1.0, floor(extent[d] / cell)), 4096.0);
    total *= nb[d];
  }
  int err = EF_SUCCESS;
  int64_t *start = NULL, *fill = NULL, *items = NULL;
  start = calloc((size_t)total + 1, sizeof *start);
  fill = malloc((size_t)total * sizeof *fill);
  EF_CHECK_GOTO(start && fill, EF_ERR_MEMORY, done, "%s: out of memory for the search grid", q->label);
  /* Two passes over the elements: count per bin, then fill. */
  for (int pass = 0; pass < 2; pass++) {
    for (int64_t e = 0; e < mp->n_elements; e++) {
      int64_t b0[3] = {0, 0, 0}, b1[3] = {0, 0, 0};
      for (int d = 0; d < dim; d++) {
        double emin = HUGE_VAL, emax = -HUGE_VAL;
        for (int k = 0; k < npe; k++) {
          double c = mp->coords[3 * (int64_t)mp->elements[e * npe + k] + d];
          emin = fmin(emin, c);
          emax = fmax(emax, c);
        }
        b0[d] = (int64_t)floor((emin - lo[d]) / extent[d] * (double)nb[d]);
        b1[d] = (int64_t)floor((emax - lo[d]) / extent[d] * (double)nb[d]);
        if (b0[d] < 0) b0[d] = 0;
        if (b1[d] >= nb[d]) b1[d] = nb[d] - 1;
      }
      for (int64_t k = b0[2]; k <= b1[2]; k++)
        for (int64_t j = b0[1]; j <= b1[1]; j++)
          for (int64_t i = b0[0]; i <= b1[0]; i++) {
            int64_t b = (k * nb[1] + j) * nb[0] + i;
            if (pass == 0) start[b + 1]++;
            else items[fill[b]++] = e;
          }
    }
    if (pass == 0) {
      for (int64_t b = 0; b < total; b++) start[b + 1] += start[b];
      items = malloc((size_t)(start[total] ? start[total] : 1) * sizeof *items);
      EF_CHECK_GOTO(items, EF_ERR_MEMORY, done, "%s: out of memory for the search grid", q->label);
      memcpy(fill, start, (size_t)total * sizeof *fill);
    }
  }
  for (int p = 0; p < q->n_probes; p++) {
    const double *x = q->points + 3 * p;
    int64_t b[3] = {0, 0, 0}, inside = 1;
    for (int d = 0; d < dim; d++) {
      /* A point on the box's face belongs to the last bin; a little outside still looks there. */
      double s = (x[d] - lo[d]) / extent[d];
      if (s < -q->tolerance - 1e-12 || s > 1.0 + q->tolerance + 1e-12) inside = 0;
      b[d] = (int64_t)floor(s * (double)nb[d]);
      if (b[d] < 0) b[d] = 0;
      if (b[d] >= nb[d]) b[d] = nb[d] - 1;
    }
    double best = -HUGE_VAL, lambda[4] = {0, 0, 0, 0};
    int64_t found = -1;
    if (inside) {
      int64_t bin = (b[2] * nb[1] + b[1]) * nb[0] + b[0];
      for (int64_t k = start[bin]; k < start[bin + 1]; k++) {
        if (q->partition && mp->elements[items[k] * npe] >= mp->n_owned_nodes) continue; /* MPI: another rank's */
        EF_CALL_GOTO(ef_probes_barycentric(mp, items[k], x, lambda), done);
        double m = lambda[0];
        for (int c = 1; c < npe; c++) m = fmin(m, lambda[c]);
        if (m >= -q->tolerance && (m > best || (m == best && items[k] < found))) {
          best = m;
          found = items[k];
          memcpy(q->lambda + 4 * p, lambda, sizeof lambda);
        }
      }
    }
    if (q->partition) { /* MPI: decided over the ranks below */
      q->element[p] = found;
      q->sample[p] = found >= 0 ? best : -HUGE_VAL;
      continue;
    }
    EF_CHECK_GOTO(found >= 0, EF_ERR_PARAMETER, done,
                  "%s: probe %d (%s) at (%.9g, %.9g, %.9g) is outside the mesh (bounding box [%g, %g] x [%g, %g]%s)",
                  q->label, p, q->where[p], x[0], x[1], x[2], lo[0], hi[0], lo[1], hi[1],
                  dim == 3 ? " x ..." : "");
    q->element[p] = found;
  }
  if (q->partition) EF_CALL_GOTO(ef_probes_locate_ranks(q), done);
  q->located = 1;
done:
  free(start);
  free(fill);
  free(items);
  return err;
}

/* Locate the probes once the mesh is final. */
static int ef_probes_initialize(void *data) {
  ef_probes *q = data;
  return q->located ? EF_SUCCESS : ef_probes_locate(q);
}

/* Output steps: each listed time (the first step that reaches it), else every
 * output_interval steps or time units (0: every step); the initial state counts. */
static int ef_probes_is_output_step(void *data, double time, int step) {
  ef_probes *q = data;
  double now = q->n_times ? ef_output_time(time) : ef_output_clock(q->control, q->solver_step, time, step);
  if (q->n_times) return q->next_time < q->n_times && now >= ef_output_time(q->times[q->next_time]);
  if (q->output_interval <= 0.0) return 1;
  return now >= q->next_output;
}

/* MPI: the values of every probe from the rank that answers it (the others add zeros), on every rank. */
static int ef_probes_sample_ranks(ef_probes *q) {
  ef_model_part mp = q->mp;
  const int npe = mp->nodes_per_element;
  for (int p = 0; p < q->n_probes; p++) {
    double *out = q->sample + (int64_t)p * q->n_columns;
    const double *lambda = q->lambda + 4 * p;
    int column = 0;
    for (int i = 0; i < q->n_variables; i++) {
      ef_variable *v;
      EF_CALL(ef_model_part_get_variable(mp, q->variables[i], &v));
      for (int c = 0; c < v->n_components; c++, column++) {
        double s = 0.0;
        if (q->element[p] >= 0) {
          const ef_index *en = mp->elements + q->element[p] * npe;
          for (int k = 0; k < npe; k++) s += lambda[k] * v->values[(int64_t)en[k] * v->n_components + c];
        }
        out[column] = s;
      }
    }
  }
  return ef_comm_allreduce(q->comm, q->sample, q->n_probes * q->n_columns, EF_COMM_SUM);
}

/* Interpolate every variable at every probe and append the rows of this sample. */
static int ef_probes_print_output(void *data, double time, int step) {
  ef_probes *q = data;
  EF_CALL(ef_probes_initialize(q));
  ef_model_part mp = q->mp;
  EF_CALL(ef_model_part_sync_to_host(mp));
  const int npe = mp->nodes_per_element;
  if (q->partition) EF_CALL(ef_probes_sample_ranks(q));
  size_t used = 0;
  for (int p = 0; p < q->n_probes; p++) {
    const double *x = q->points + 3 * p, *lambda = q->lambda + 4 * p;
    const ef_index *en = q->partition ? NULL : mp->elements + q->element[p] * npe;
    used += (size_t)snprintf(q->row + used, q->row_size - used, "%.12g,%d,%.9g,%.9g,%.9g", time, p, x[0], x[1], x[2]);
    int column = 0;
    for (int i = 0; i < q->n_variables; i++) {
      ef_variable *v;
      EF_CALL(ef_model_part_get_variable(mp, q->variables[i], &v));
      for (int c = 0; c < v->n_components; c++) {
        double s = 0.0;
        if (en)
          for (int k = 0; k < npe; k++) s += lambda[k] * v->values[(int64_t)en[k] * v->n_components + c];
        else
          s = q->sample[(int64_t)p * q->n_columns + column];
        column++;
        used += (size_t)snprintf(q->row + used, q->row_size - used, ",%.12e", s);
      }
    }
    used += (size_t)snprintf(q->row + used, q->row_size - used, "\n");
    EF_CHECK(used < q->row_size, EF_ERR_INTERNAL, "%s: row buffer too small", q->label);
  }
  int err = ef_comm_rank(q->comm) == 0 ? ef_csv_append(&q->csv, q->row, used) : EF_SUCCESS;
  if (err) return ef_error_push(err, __FILE__, __LINE__, "%s at step %d", q->label, step);
  double now = q->n_times ? ef_output_time(time) : ef_output_clock(q->control, q->solver_step, time, step);
  if (q->n_times) {
    while (q->next_time < q->n_times && now >= ef_output_time(q->times[q->next_time])) q->next_time++;
  } else {
    ef_output_schedule(q->control, q->output_interval, now, &q->next_output);
  }
  return EF_SUCCESS;
}

/* Close the file at the end of the run. */
static int ef_probes_finalize(void *data) {
  ef_probes *q = data;
  ef_csv_close(&q->csv);
  return EF_SUCCESS;
}

/* Free the probe set (NULL-safe; sets *data to NULL). */
static void ef_probes_destroy(void **data) {
  if (!data || !*data) return;
  ef_probes_free(*data);
  *data = NULL;
}

/* Restarts: the schedule and the file's length. */
static int ef_probes_save_state(void *data, ef_restart_writer *w) {
  ef_probes *q = data;
  EF_CALL(ef_restart_write_double(w, "next_output", q->next_output));
  EF_CALL(ef_restart_write_int64(w, "next_time", q->next_time));
  return ef_csv_save_state(&q->csv, w, "csv_length");
}

static int ef_probes_load_state(void *data, ef_restart_reader *r) {
  ef_probes *q = data;
  int64_t next_time;
  EF_CALL(ef_restart_read_double(r, "next_output", &q->next_output));
  EF_CALL(ef_restart_read_int64(r, "next_time", &next_time));
  q->next_time = (int)next_time;
  return ef_csv_load_state(&q->csv, r, "csv_length");
}

/* A restart point: the rows so far durable. */
static int ef_probes_sync_outputs(void *data) { return ef_csv_sync(&((ef_probes *)data)->csv); }

const ef_process_ops ef_probes_output_process_ops = {
    .name = "probes_output_process",
    .distributed = 1, /* MPI: each probe answered by one rank, rank 0 writes */
    .create = ef_probes_create,
    .execute_initialize = ef_probes_initialize,
    .is_output_step = ef_probes_is_output_step,
    .print_output = ef_probes_print_output,
    .execute_finalize = ef_probes_finalize,
    .destroy = ef_probes_destroy,
    .save_state = ef_probes_save_state,
    .load_state = ef_probes_load_state,
    .sync_outputs = ef_probes_sync_outputs,
};
