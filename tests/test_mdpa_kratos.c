/* test_mdpa_kratos.c -- the two real Kratos cases in ../shared/kratos_cases load with
 * the counts, sub model parts and measures obtained independently of our reader. */
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_mesh_io.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "ef_test.h"

typedef struct {
  const char *name;
  long nodes, elements, conditions;
} smp_count;

typedef struct {
  const char *file;
  int dim;
  long nodes, elements, conditions;
  double measure; /* total |area| or |volume| */
  smp_count smps[5];
} kratos_case;

/* How the figures were obtained, without our reader:
 *  - counts: line spans of the blocks, e.g. for nodes
 *      awk '/^Begin Nodes/{s=NR} /^End Nodes/{print NR-s-1}' FILE
 *    (same for Elements; Conditions summed over the four blocks; for each
 *    SubModelPart the spans of its SubModelPartNodes/Conditions/Elements blocks,
 *    from `grep -n "Begin\|End" FILE`);
 *  - names: grep "^Begin SubModelPart " FILE | awk '{print $3}';
 *  - measure: a separate numpy script summing |det|/2 (triangles) and |det|/6
 *    (tetrahedra) over the raw Elements block; no element was inverted. */
static const kratos_case cases[2] = {
    {"channel_sphere2D/2D_sphere_remeshed_channel_test.mdpa", 2, 473, 836, 110, 2.8050827898598345,
     {{"Parts_Parts_Auto1", 473, 836, 0},
      {"AutomaticInlet2D_Automatic_inlet_velocity_Auto1", 11, 0, 10},
      {"Outlet2D_Outlet_pressure_Auto1", 11, 0, 10},
      {"NoSlip2D_No_Slip_Auto2", 30, 0, 30},
      {"NoSlip2D_No_Slip_Auto3", 62, 0, 60}}},
    {"channel_sphere3D/3D_sphere_remeshed_channel_test.mdpa", 3, 1007, 4541, 880, 2.9424503509793882,
     {{"Parts_Parts_Auto1", 1007, 4541, 0},
      {"AutomaticInlet3D_Automatic_inlet_velocity_Auto1", 37, 0, 52},
      {"Outlet3D_Outlet_pressure_Auto1", 37, 0, 52},
      {"NoSlip3D_No_Slip_Auto1", 364, 0, 688},
      {"NoSlip3D_No_Slip_Auto2", 46, 0, 88}}},
};

int main(void) {
  struct stat st;
  if (stat(EF_SHARED_DIR "/kratos_cases", &st) != 0) {
    fprintf(stderr, "skipping: %s/kratos_cases is absent\n", EF_SHARED_DIR);
    return 77;
  }
  for (int c = 0; c < 2; ++c) {
    const kratos_case *k = &cases[c];
    char path[1024];
    snprintf(path, sizeof path, "%s/kratos_cases/%s", EF_SHARED_DIR, k->file);
    ef_model_part mp = NULL;
    int rc = ef_read_mesh(path, NULL, &mp);
    if (rc) {
      fprintf(stderr, "reading %s: %s\n", path, ef_error_message());
      failures++;
      continue;
    }
    EXPECT(mp->dim == k->dim);
    EXPECT(mp->n_nodes == k->nodes);
    EXPECT(mp->n_elements == k->elements);
    EXPECT(mp->n_conditions == k->conditions);
    EXPECT(mp->n_children == 5);
    for (int s = 0; s < 5; ++s) {
      ef_sub_model_part *smp = NULL;
      rc = ef_model_part_get_sub_model_part(mp, k->smps[s].name, &smp);
      if (rc) fprintf(stderr, "%s\n", ef_error_message());
      EXPECT(rc == 0 && smp);
      if (!smp) continue;
      EXPECT(smp->n_nodes == k->smps[s].nodes);
      EXPECT(smp->n_elements == k->smps[s].elements);
      EXPECT(smp->n_conditions == k->smps[s].conditions);
    }
    double total = 0.0;
    int all_positive = 1;
    for (int64_t e = 0; e < mp->n_elements; ++e) {
      double m = ef_model_part_element_measure(mp, e);
      all_positive &= m > 0.0;
      total += m;
    }
    EXPECT(all_positive);
    /* 1e-12 relative: the same sum in a different order and formula differs by round-off only
     * (~n_elements * 1e-16). */
    EXPECT(fabs(total - k->measure) <= 1e-12 * k->measure);
    double v = 0;
    EXPECT(ef_model_part_get_property(mp, 1, "DENSITY", &v) && v == 1000.0);
    EXPECT(ef_model_part_get_property(mp, 1, "DYNAMIC_VISCOSITY", &v) && v == 1e-3);
    /* Each condition belongs to exactly one boundary part, and its nodes are in that part. */
    int64_t owned = 0, nodes_ok = 1;
    for (int s = 1; s < 5; ++s) {
      ef_sub_model_part *smp = ef_model_part_find_sub_model_part(mp, k->smps[s].name);
      if (!smp) continue;
      owned += smp->n_conditions;
      for (int64_t i = 0; i < smp->n_conditions; ++i)
        for (int q = 0; q < mp->nodes_per_condition; ++q) {
          ef_index node = mp->conditions[(int64_t)smp->conditions[i] * mp->nodes_per_condition + q];
          int found = 0;
          for (int64_t j = 0; j < smp->n_nodes && !found; ++j) found = smp->nodes[j] == node;
          nodes_ok &= found;
        }
    }
    EXPECT(owned == k->conditions && nodes_ok);
    ef_model_part_destroy(&mp);
  }
  if (failures) fprintf(stderr, "%d expectation(s) failed\n", failures);
  return failures ? 1 : 0;
}
