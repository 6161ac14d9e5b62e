/* normals.c -- outward normals of boundary conditions (faces in 3D, lines in 2D) and at their nodes.
 *
 * A condition's own node order says nothing reliable about which side the
 * domain is on (mesh generators differ), so the orientation comes from the
 * element that owns the face: the normal points away from the element's node
 * opposite to the face.  Faces are matched through a hash of their sorted
 * node tuples: the conditions are hashed, then every element face is looked
 * up once, O(elements + conditions).
 */
#include "process_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  ef_index key[3];   /* sorted node indices; key[2] = -1 for 2D lines */
  ef_index opposite; /* element node opposite to the face, -1 until found */
  int64_t element;
} ef_face_slot;

/* Sort up to three indices ascending (unused entries are -1 and stay last). */
static void ef_sort_key(ef_index *k, int n) {
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && k[j - 1] > k[j]; j--) {
      ef_index t = k[j];
      k[j] = k[j - 1];
      k[j - 1] = t;
    }
}

static uint64_t ef_hash_key(const ef_index *k) {
  uint64_t h = 1469598103934665603ull;
  for (int i = 0; i < 3; i++) {
    h ^= (uint64_t)(uint32_t)k[i];
    h *= 1099511628211ull;
    h ^= h >> 29;
  }
  return h;
}

/* Slot of key in an open-addressing table of `mask + 1` entries (-1 = empty). */
static int64_t ef_table_find(const int64_t *table, uint64_t mask, const ef_face_slot *slots, const ef_index *key,
                             int64_t *empty_at) {
  uint64_t h = ef_hash_key(key) & mask;
  for (;;) {
    int64_t s = table[h];
    if (s < 0) {
      if (empty_at) *empty_at = (int64_t)h;
      return -1;
    }
    if (!memcmp(slots[s].key, key, sizeof slots[s].key)) return s;
    h = (h + 1) & mask;
  }
}

/* Area-weighted outward normals of conditions cond[0..n) (see process_internal.h). */
int ef_condition_face_normals(ef_model_part mp, int64_t n, const ef_index *cond, double *normals) {
  EF_CHECK(mp && (n == 0 || (cond && normals)), EF_ERR_PARAMETER, "ef_condition_face_normals: NULL argument");
  if (n == 0) return EF_SUCCESS;
  const int nf = mp->dim; /* nodes per face: 2 (line) or 3 (triangle) */
  EF_CHECK(mp->nodes_per_condition == nf, EF_ERR_MESH,
           "model part '%s' (%dD) has conditions with %d nodes; normals need %s", mp->name, mp->dim,
           mp->nodes_per_condition, nf == 2 ? "2-node lines" : "3-node triangles");
  EF_CHECK(mp->nodes_per_element == nf + 1, EF_ERR_MESH,
           "model part '%s' (%dD) has elements with %d nodes; normals need %s", mp->name, mp->dim,
           mp->nodes_per_element, nf == 2 ? "triangles" : "tetrahedra");

  uint64_t size = 16;
  while (size < 2 * (uint64_t)n) size *= 2;
  int err = EF_SUCCESS;
  int64_t *table = NULL, *slot_of = NULL;
  ef_face_slot *slots = NULL;
  table = malloc(size * sizeof *table);
  slot_of = malloc((size_t)n * sizeof *slot_of);
  slots = malloc((size_t)n * sizeof *slots);
  EF_CHECK_GOTO(table && slot_of && slots, EF_ERR_MEMORY, done, "out of memory hashing %lld boundary faces",
                (long long)n);
  for (uint64_t i = 0; i < size; i++) table[i] = -1;

  int64_t n_slots = 0;
  for (int64_t k = 0; k < n; k++) {
    EF_CHECK_GOTO(cond[k] >= 0 && cond[k] < mp->n_conditions, EF_ERR_MESH, done,
                  "condition index %d outside [0, %lld)", (int)cond[k], (long long)mp->n_conditions);
    const ef_index *cn = mp->conditions + (int64_t)cond[k] * nf;
    ef_index key[3] = {cn[0], cn[1], nf == 3 ? cn[2] : -1};
    ef_sort_key(key, nf);
    int64_t empty_at = -1;
    int64_t s = ef_table_find(table, size - 1, slots, key, &empty_at);
    if (s < 0) {
      s = n_slots++;
      memcpy(slots[s].key, key, sizeof key);
      slots[s].opposite = -1;
      slots[s].element = -1;
      table[empty_at] = s;
    }
    slot_of[k] = s;
  }

  /* Each element face: omit local node `skip`; the omitted node is the one opposite. */
  const int ne = mp->nodes_per_element;
  for (int64_t e = 0; e < mp->n_elements; e++) {
    const ef_index *en = mp->elements + e * ne;
    for (int skip = 0; skip < ne; skip++) {
      ef_index key[3] = {-1, -1, -1};
      int m = 0;
      for (int j = 0; j < ne; j++)
        if (j != skip) key[m++] = en[j];
      ef_sort_key(key, nf);
      int64_t s = ef_table_find(table, size - 1, slots, key, NULL);
      if (s >= 0 && slots[s].opposite < 0) {
        slots[s].opposite = en[skip];
        slots[s].element = e;
      }
    }
  }

  for (int64_t k = 0; k < n; k++) {
    const ef_face_slot *s = &slots[slot_of[k]];
    int64_t c = cond[k];
    EF_CHECK_GOTO(s->opposite >= 0, EF_ERR_MESH, done,
                  "condition %lld (nodes %lld %lld%s%lld) is not a face of any element of model part '%s': "
                  "cannot orient its normal",
                  (long long)(mp->condition_ids ? mp->condition_ids[c] : c + 1),
                  (long long)mp->node_ids[mp->conditions[c * nf]],
                  (long long)mp->node_ids[mp->conditions[c * nf + 1]], nf == 3 ? " " : "",
                  nf == 3 ? (long long)mp->node_ids[mp->conditions[c * nf + 2]] : 0LL, mp->name);
    const ef_index *cn = mp->conditions + c * nf;
    const double *a = mp->coords + 3 * (int64_t)cn[0], *b = mp->coords + 3 * (int64_t)cn[1];
    double nrm[3], centroid[3];
    if (nf == 2) {
      /* Line a-b: (dy, -dx) has the line's length. */
      nrm[0] = b[1] - a[1];
      nrm[1] = -(b[0] - a[0]);
      nrm[2] = 0.0;
      for (int d = 0; d < 3; d++) centroid[d] = 0.5 * (a[d] + b[d]);
    } else {
      /* Triangle a-b-c: (b - a) x (c - a) / 2 has the triangle's area. */
      const double *cc = mp->coords + 3 * (int64_t)cn[2];
      double u[3], v[3];
      for (int d = 0; d < 3; d++) {
        u[d] = b[d] - a[d];
        v[d] = cc[d] - a[d];
        centroid[d] = (a[d] + b[d] + cc[d]) / 3.0;
      }
      nrm[0] = 0.5 * (u[1] * v[2] - u[2] * v[1]);
      nrm[1] = 0.5 * (u[2] * v[0] - u[0] * v[2]);
      nrm[2] = 0.5 * (u[0] * v[1] - u[1] * v[0]);
    }
    /* Outward: away from the opposite node of the owning element. */
    const double *o = mp->coords + 3 * (int64_t)s->opposite;
    double side = 0.0;
    for (int d = 0; d < 3; d++) side += nrm[d] * (centroid[d] - o[d]);
    double sign = side < 0.0 ? -1.0 : 1.0;
    for (int d = 0; d < 3; d++) normals[3 * k + d] = sign * nrm[d];
  }

done:
  free(table);
  free(slot_of);
  free(slots);
  return err;
}

/* Nodal normal n_i = sum over faces f containing i of A_f n_f (outward), then
 * normalised to unit length; nodes on no face of the part stay 0. */
int ef_model_part_nodal_normals(ef_model_part mp, const ef_sub_model_part *smp, double *normals) {
  EF_CHECK(mp && normals, EF_ERR_PARAMETER, "ef_model_part_nodal_normals: NULL argument");
  memset(normals, 0, (size_t)mp->n_nodes * 3 * sizeof *normals);
  int64_t n = smp ? smp->n_conditions : mp->n_conditions;
  if (n == 0) return EF_SUCCESS;
  ef_index *all = NULL;
  const ef_index *cond = smp ? smp->conditions : NULL;
  if (!cond) {
    EF_MALLOC(all, n);
    for (int64_t k = 0; k < n; k++) all[k] = (ef_index)k;
    cond = all;
  }
  double *face = NULL;
  int err = EF_SUCCESS;
  face = malloc((size_t)n * 3 * sizeof *face);
  EF_CHECK_GOTO(face, EF_ERR_MEMORY, done, "out of memory for %lld face normals", (long long)n);
  EF_CALL_GOTO(ef_condition_face_normals(mp, n, cond, face), done);
  const int nf = mp->nodes_per_condition;
  for (int64_t k = 0; k < n; k++)
    for (int j = 0; j < nf; j++) {
      ef_index node = mp->conditions[(int64_t)cond[k] * nf + j];
      for (int d = 0; d < 3; d++) normals[3 * (int64_t)node + d] += face[3 * k + d];
    }
  for (int64_t i = 0; i < mp->n_nodes; i++) {
    double *v = normals + 3 * i;
    double len = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    if (len > 0.0)
      for (int d = 0; d < 3; d++) v[d] /= len;
  }
done:
  free(all);
  free(face);
  return err;
}
