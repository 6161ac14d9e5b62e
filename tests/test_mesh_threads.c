/* test_mesh_threads.c -- the core's Initialize phases (uniform refinement, mesh check, Morton and
 * RCM renumbering) give bit-identical results for 1, 2 and 3 OpenMP threads (the check of a mesh with
 * a duplicated element too), and the same results as the serial code they replaced (FNV-1a hashes of
 * the meshes and the report, recorded before the phases ran in parallel).  The cavity mesh refined once (24k nodes, 134k tetrahedra) is above every size at
 * which the phases go parallel.  Without OpenMP the single run still checks the hashes. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "edgeflow/ef_error.h"
#include "edgeflow/ef_mesh_check.h"
#include "edgeflow/ef_mesh_io.h"
#include "edgeflow/ef_mesh_tools.h"
#include "edgeflow/ef_model_part.h"

#include "ef_test.h"

/* FNV-1a over n bytes, continuing from h. */
static uint64_t fnv(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= UINT64_C(1099511628211);
  }
  return h;
}

/* Hash of a sub model part tree's lists, depth first. */
static uint64_t hash_smps(uint64_t h, ef_sub_model_part **children, int n_children) {
  for (int i = 0; i < n_children; ++i) {
    const ef_sub_model_part *s = children[i];
    h = fnv(h, s->nodes, (size_t)s->n_nodes * sizeof *s->nodes);
    h = fnv(h, s->elements, (size_t)s->n_elements * sizeof *s->elements);
    h = fnv(h, s->conditions, (size_t)s->n_conditions * sizeof *s->conditions);
    h = hash_smps(h, s->children, s->n_children);
  }
  return h;
}

/* Hash of everything refinement and renumbering write: nodes, cells, ids, properties, variables, lists. */
static uint64_t hash_mesh(ef_model_part mp) {
  uint64_t h = UINT64_C(14695981039346656037);
  h = fnv(h, &mp->n_nodes, sizeof mp->n_nodes);
  h = fnv(h, mp->coords, (size_t)(3 * mp->n_nodes) * sizeof *mp->coords);
  h = fnv(h, mp->node_ids, (size_t)mp->n_nodes * sizeof *mp->node_ids);
  h = fnv(h, mp->elements, (size_t)(mp->n_elements * mp->nodes_per_element) * sizeof *mp->elements);
  h = fnv(h, mp->element_ids, (size_t)mp->n_elements * sizeof *mp->element_ids);
  h = fnv(h, mp->element_properties, (size_t)mp->n_elements * sizeof *mp->element_properties);
  h = fnv(h, mp->conditions, (size_t)(mp->n_conditions * mp->nodes_per_condition) * sizeof *mp->conditions);
  h = fnv(h, mp->condition_ids, (size_t)mp->n_conditions * sizeof *mp->condition_ids);
  h = fnv(h, mp->condition_properties, (size_t)mp->n_conditions * sizeof *mp->condition_properties);
  for (int v = 0; v < mp->n_variables; ++v) {
    const ef_variable *var = &mp->variables[v];
    h = fnv(h, var->values, (size_t)(mp->n_nodes * var->n_components) * sizeof *var->values);
    h = fnv(h, var->fixed, (size_t)(mp->n_nodes * var->n_components) * sizeof *var->fixed);
  }
  return hash_smps(h, mp->children, mp->n_children);
}

/* Hash of a check report, field by field (the struct has padding). */
static uint64_t hash_report(const ef_mesh_report *r) {
  uint64_t h = UINT64_C(14695981039346656037);
  const int64_t ints[] = {r->n_nodes, r->n_elements, r->n_interior_faces, r->n_boundary_faces,
                          r->worst_element_id, r->smallest_element_id, r->n_slivers, r->n_tiny,
                          r->n_tangled_faces, r->n_overshared_faces, r->n_duplicate_elements, r->n_uncovered_faces};
  const double reals[] = {r->min_measure, r->max_measure, r->mean_measure, r->min_edge, r->max_edge,
                          r->min_quality, r->mean_quality, r->uncovered_at[0], r->uncovered_at[1], r->uncovered_at[2]};
  h = fnv(h, ints, sizeof ints);
  return fnv(h, reals, sizeof reals);
}

typedef struct {
  uint64_t refined, checked, morton, rcm, broken;
} hashes;

/* Read the mesh, give it a variable, refine it, check, renumber (Morton; RCM on a second copy), and check
 * the Morton-ordered mesh again with one element turned into a duplicate of another. */
static hashes run(const char *path, int levels) {
  hashes out = {0, 0, 0, 0, 0};
  for (int method = 0; method < 2; ++method) {
    ef_model_part mp = NULL;
    ASSERT_OK(ef_read_mesh(path, NULL, &mp));
    ASSERT_OK(ef_model_part_add_variable(mp, "VELOCITY", 3));
    ef_variable *var = NULL;
    ASSERT_OK(ef_model_part_get_variable(mp, "VELOCITY", &var));
    for (int64_t i = 0; i < 3 * mp->n_nodes; ++i) {
      var->values[i] = mp->coords[i] * mp->coords[i] + (double)(i % 7);
      var->fixed[i] = (uint8_t)(i % 5 == 0);
    }
    ASSERT_OK(ef_mesh_refine_uniform(mp, levels));
    out.refined = hash_mesh(mp);
    ef_mesh_report report;
    ASSERT_OK(ef_mesh_check(mp, NULL, &report));
    EXPECT(report.n_boundary_faces > 0 && report.n_tangled_faces == 0, "implausible check report");
    out.checked = hash_report(&report);
    ASSERT_OK(ef_mesh_renumber(mp, method == 0 ? "morton" : "rcm"));
    *(method == 0 ? &out.morton : &out.rcm) = hash_mesh(mp);
    if (method == 0) {
      /* An element made a copy of another far away in the order: the findings (duplicate, faces of three
       * elements, the first of each) come from the serial pass over the flagged elements. */
      const int npe = mp->nodes_per_element;
      memcpy(mp->elements + (mp->n_elements / 2) * npe, mp->elements + 10 * npe, (size_t)npe * sizeof *mp->elements);
      ASSERT_OK(ef_mesh_check(mp, NULL, &report));
      EXPECT(report.n_duplicate_elements == 1 && report.n_overshared_faces > 0, "the copied element was not found");
      out.broken = hash_report(&report);
    }
    ef_model_part_destroy(&mp);
  }
  return out;
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : EF_SOURCE_DIR "/test_examples/cavity3d/cavity3d.msh";
  /* by hand: test_mesh_threads MESH --print [LEVELS] prints the hashes of any mesh and level */
  const int print = argc > 2 && !strcmp(argv[2], "--print");
  const int levels = argc > 3 ? atoi(argv[3]) : 1;
  int max_threads = 1;
#ifdef _OPENMP
  max_threads = 3;
#endif
  hashes first = {0, 0, 0, 0, 0};
  for (int threads = 1; threads <= max_threads; ++threads) {
#ifdef _OPENMP
    omp_set_num_threads(threads);
#endif
    const hashes h = run(path, levels);
    if (print)
      printf("threads %d: refined %016llx checked %016llx morton %016llx rcm %016llx\n", threads,
             (unsigned long long)h.refined, (unsigned long long)h.checked, (unsigned long long)h.morton,
             (unsigned long long)h.rcm);
    if (threads == 1) {
      first = h;
      continue;
    }
    EXPECT(h.refined == first.refined, "%d threads refine differently from 1", threads);
    EXPECT(h.checked == first.checked, "%d threads report a different mesh check from 1", threads);
    EXPECT(h.morton == first.morton, "%d threads give a different Morton renumbering from 1", threads);
    EXPECT(h.rcm == first.rcm, "%d threads give a different RCM renumbering from 1", threads);
    EXPECT(h.broken == first.broken, "%d threads report a different check of a broken mesh from 1", threads);
  }
  if (argc <= 1) {
    /* The serial code's results (before the phases ran in parallel), on this mesh. */
    EXPECT(first.refined == UINT64_C(0x6721ad00c4a72544), "refined mesh %016llx differs from the serial code's",
           (unsigned long long)first.refined);
    EXPECT(first.checked == UINT64_C(0xe2acb68b8e78f876), "mesh check report %016llx differs from the serial code's",
           (unsigned long long)first.checked);
    EXPECT(first.morton == UINT64_C(0xa88b71430ccb8cbb), "Morton renumbering %016llx differs from the serial code's",
           (unsigned long long)first.morton);
    EXPECT(first.rcm == UINT64_C(0x0f95652f2cabbba0), "RCM renumbering %016llx differs from the serial code's",
           (unsigned long long)first.rcm);
  }
  return failures != 0;
}
