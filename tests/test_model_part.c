/* test_model_part.c -- model part container: geometry, sub model parts, properties,
 * variables, renumbering, mesh checks, device sync. */
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_model_part.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ef_test.h"

/* Unit square split into two triangles plus a centre node: 5 nodes, 4 triangles.
 * Node ids are deliberately non-contiguous (10, 20, ...). */
static ef_model_part make_square(void) {
  ef_model_part mp = NULL;
  if (ef_model_part_create("FluidModelPart", 2, &mp)) return NULL;
  static const double xy[5][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}, {0.5, 0.5}};
  static const ef_index tri[4][3] = {{0, 1, 4}, {1, 2, 4}, {2, 3, 4}, {3, 0, 4}};
  static const ef_index lines[4][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 0}};
  if (ef_model_part_alloc_nodes(mp, 5) || ef_model_part_alloc_elements(mp, 4, 3) ||
      ef_model_part_alloc_conditions(mp, 4, 2)) {
    ef_model_part_destroy(&mp);
    return NULL;
  }
  for (int i = 0; i < 5; ++i) {
    mp->coords[3 * i] = xy[i][0];
    mp->coords[3 * i + 1] = xy[i][1];
    mp->node_ids[i] = 10 * (i + 1);
  }
  memcpy(mp->elements, tri, sizeof tri);
  memcpy(mp->conditions, lines, sizeof lines);
  for (int e = 0; e < 4; ++e) mp->element_ids[e] = 100 + e;
  return mp;
}

static void test_basic_and_lookup(void) {
  ef_model_part mp = make_square();
  EXPECT(mp);
  if (!mp) return;
  EXPECT(mp->n_owned_nodes == 5);
  EXPECT(mp->condition_ids[3] == 4); /* default ids are 1..n */
  EXPECT(ef_model_part_node_index(mp, 30) == 2);
  EXPECT(ef_model_part_node_index(mp, 31) == -1);
  /* The lookup table must notice in-place id edits. */
  mp->node_ids[2] = 77;
  EXPECT(ef_model_part_node_index(mp, 77) == 2);
  EXPECT(ef_model_part_node_index(mp, 30) == -1);
  mp->node_ids[2] = 30;
  EXPECT(ef_model_part_node_index(mp, 30) == 2);
  /* Exact: areas are sums of products of halves, representable in binary. */
  EXPECT(ef_model_part_element_measure(mp, 0) == 0.25);
  int64_t nre = -1;
  EXPECT_OK(ef_model_part_check_mesh(mp, &nre));
  EXPECT(nre == 0);
  ef_model_part_destroy(&mp);
  EXPECT(mp == NULL);
  ef_model_part_destroy(&mp);
  ef_model_part_destroy(NULL);
}

static void test_check_mesh(void) {
  ef_model_part mp = make_square();
  if (!mp) return;
  /* Invert element 101 (1,2,4 -> 2,1,4): it must be re-oriented. */
  ef_index t = mp->elements[3];
  mp->elements[3] = mp->elements[4];
  mp->elements[4] = t;
  EXPECT(ef_model_part_element_measure(mp, 1) < 0);
  int64_t nre = 0;
  EXPECT_OK(ef_model_part_check_mesh(mp, &nre));
  EXPECT(nre == 1);
  EXPECT(ef_model_part_element_measure(mp, 1) == 0.25);

  mp->node_ids[3] = 10;
  EXPECT_FAIL(ef_model_part_check_mesh(mp, NULL), EF_ERR_MESH, "duplicate node id 10");
  /* Two repeated ids, unsorted: the smaller is named, whether the ids span a short range (a bit
   * per value) or a long one (sorted). */
  const int64_t ids0[5] = {mp->node_ids[0], mp->node_ids[1], mp->node_ids[2], 40, mp->node_ids[4]};
  const int64_t short_range[5] = {50, 30, 50, 30, 7}, long_range[5] = {5000000000000000, 30, 5000000000000000, 30, 7};
  memcpy(mp->node_ids, short_range, sizeof short_range);
  EXPECT_FAIL(ef_model_part_check_mesh(mp, NULL), EF_ERR_MESH, "duplicate node id 30");
  memcpy(mp->node_ids, long_range, sizeof long_range);
  EXPECT_FAIL(ef_model_part_check_mesh(mp, NULL), EF_ERR_MESH, "duplicate node id 30");
  memcpy(mp->node_ids, ids0, sizeof ids0);
  mp->element_ids[2] = 100;
  EXPECT_FAIL(ef_model_part_check_mesh(mp, NULL), EF_ERR_MESH, "duplicate element id 100");
  mp->element_ids[2] = 102;
  mp->condition_ids[1] = 1;
  EXPECT_FAIL(ef_model_part_check_mesh(mp, NULL), EF_ERR_MESH, "duplicate condition id 1");
  mp->condition_ids[1] = 2;
  mp->coords[3 * 4 + 1] = NAN;
  EXPECT_FAIL(ef_model_part_check_mesh(mp, NULL), EF_ERR_MESH, "node 50 has a non-finite");
  mp->coords[3 * 4 + 1] = INFINITY;
  EXPECT_FAIL(ef_model_part_check_mesh(mp, NULL), EF_ERR_MESH, "node 50 has a non-finite");
  mp->coords[3 * 4 + 1] = 0.5;
  mp->elements[5] = 7;
  EXPECT_FAIL(ef_model_part_check_mesh(mp, NULL), EF_ERR_MESH, "element 101 refers to a missing node");
  mp->elements[5] = 4;
  mp->conditions[0] = -1;
  EXPECT_FAIL(ef_model_part_check_mesh(mp, NULL), EF_ERR_MESH, "condition 1 refers to a missing node");
  mp->conditions[0] = 0;
  /* Move the centre node onto the edge 0-1: element 100 becomes flat (area exactly 0). */
  mp->coords[3 * 4 + 1] = 0.0;
  EXPECT_FAIL(ef_model_part_check_mesh(mp, NULL), EF_ERR_MESH, "element 100 is degenerate");
  /* Nearly flat: area 1e-14 against a mean of 0.25 is below the 1e-12 relative threshold. */
  mp->coords[3 * 4 + 1] = 2e-14;
  EXPECT_FAIL(ef_model_part_check_mesh(mp, NULL), EF_ERR_MESH, "element 100 is degenerate");
  mp->coords[3 * 4 + 1] = 0.5;
  /* Keep only elements 100 and 101 (nodes 10, 20, 30, 50): node 40 is used by none. */
  mp->n_elements = 2;
  EXPECT_FAIL(ef_model_part_check_mesh(mp, NULL), EF_ERR_MESH, "used by no element: id 40");
  mp->n_elements = 4;
  EXPECT_OK(ef_model_part_check_mesh(mp, NULL));
  ef_model_part_destroy(&mp);

  /* Tetrahedron orientation in 3D. */
  EXPECT_OK(ef_model_part_create("Tet", 3, &mp));
  if (!mp) return;
  EXPECT_OK(ef_model_part_alloc_nodes(mp, 4));
  EXPECT_OK(ef_model_part_alloc_elements(mp, 1, 4));
  mp->coords[3] = 1;
  mp->coords[7] = 1;
  mp->coords[11] = 1;
  const ef_index inverted[4] = {1, 0, 2, 3};
  memcpy(mp->elements, inverted, sizeof inverted);
  /* Exact: the unit tetrahedron's volume 1/6 is computed from integer products. */
  EXPECT(ef_model_part_element_measure(mp, 0) == -1.0 / 6.0);
  int64_t n = 0;
  EXPECT_OK(ef_model_part_check_mesh(mp, &n));
  EXPECT(n == 1 && ef_model_part_element_measure(mp, 0) == 1.0 / 6.0);
  ef_model_part_destroy(&mp);

  EXPECT_FAIL(ef_model_part_create("x", 4, &mp), EF_ERR_PARAMETER, "dimension");
  EXPECT(mp == NULL);
}

static int count_visit(ef_sub_model_part *smp, const char *path, void *user) {
  (void)smp;
  char *buf = user;
  strcat(buf, path);
  strcat(buf, ";");
  return 0;
}

static void test_sub_model_parts(void) {
  ef_model_part mp = make_square();
  if (!mp) return;
  ef_sub_model_part *a = NULL, *b = NULL, *c = NULL, *again = NULL;
  EXPECT_OK(ef_model_part_add_sub_model_part(mp, NULL, "FluidModelPart.Walls", &a));
  EXPECT(a && strcmp(a->name, "Walls") == 0 && a->parent == NULL);
  EXPECT_OK(ef_model_part_add_sub_model_part(mp, a, "Bottom", &b));
  EXPECT(b && b->parent == a);
  EXPECT_OK(ef_model_part_add_sub_model_part(mp, NULL, "Walls.Top.Left", &c));
  EXPECT(c && c->parent && strcmp(c->parent->name, "Top") == 0 && c->parent->parent == a);
  EXPECT_OK(ef_model_part_add_sub_model_part(mp, NULL, "Walls.Bottom", &again));
  EXPECT(again == b);
  EXPECT(mp->n_children == 1 && a->n_children == 2);

  EXPECT(ef_model_part_find_sub_model_part(mp, "Walls.Top.Left") == c);
  EXPECT(ef_model_part_find_sub_model_part(mp, "FluidModelPart.Walls.Bottom") == b);
  EXPECT(ef_model_part_find_sub_model_part(mp, "Walls.Nope") == NULL);
  EXPECT(ef_model_part_find_sub_model_part(mp, "FluidModelPart") == NULL);
  ef_sub_model_part *got = NULL;
  EXPECT_FAIL(ef_model_part_get_sub_model_part(mp, "Inlet", &got), EF_ERR_NOT_FOUND,
              "existing: Walls, Walls.Bottom, Walls.Top, Walls.Top.Left");
  EXPECT_FAIL(ef_model_part_add_sub_model_part(mp, NULL, "Walls..X", &got), EF_ERR_PARAMETER,
              "empty component");

  char paths[256] = "";
  EXPECT_OK(ef_model_part_visit_sub_model_parts(mp, count_visit, paths));
  EXPECT(strcmp(paths, "Walls;Walls.Bottom;Walls.Top;Walls.Top.Left;") == 0);

  const ef_index nodes[] = {3, 1, 3, 0};
  EXPECT_OK(ef_sub_model_part_add_nodes(b, nodes, 4));
  const ef_index more[] = {1, 4};
  EXPECT_OK(ef_sub_model_part_add_nodes(b, more, 2));
  const ef_index conds[] = {2, 0, 2};
  EXPECT_OK(ef_sub_model_part_add_conditions(b, conds, 3));
  EXPECT_OK(ef_model_part_finalize_sub_model_parts(mp));
  EXPECT(b->n_nodes == 4 && b->nodes[0] == 0 && b->nodes[1] == 1 && b->nodes[2] == 3 && b->nodes[3] == 4);
  EXPECT(b->n_conditions == 2 && b->conditions[0] == 0 && b->conditions[1] == 2);

  /* Out-of-range sub model part entries are caught by the mesh check. */
  const ef_index bad = 9;
  EXPECT_OK(ef_sub_model_part_add_elements(c, &bad, 1));
  EXPECT_FAIL(ef_model_part_check_mesh(mp, NULL), EF_ERR_MESH, "sub model part 'Left' refers to element");
  c->n_elements = 0;

  FILE *devnull = fopen("/dev/null", "w");
  if (devnull) {
    ef_model_part_print_summary(mp, devnull);
    fclose(devnull);
  }
  ef_model_part_destroy(&mp);
}

static void test_properties_and_variables(void) {
  ef_model_part mp = make_square();
  if (!mp) return;
  double v = 0;
  EXPECT(!ef_model_part_get_property(mp, 1, "DENSITY", &v));
  EXPECT_OK(ef_model_part_set_property(mp, 1, "DENSITY", 1000.0));
  EXPECT_OK(ef_model_part_set_property(mp, 1, "DYNAMIC_VISCOSITY", 1e-3));
  EXPECT_OK(ef_model_part_set_property(mp, 1, "DENSITY", 998.0));
  EXPECT(ef_model_part_get_property(mp, 1, "DENSITY", &v) && v == 998.0);
  EXPECT(!ef_model_part_get_property(mp, 2, "DENSITY", &v));
  EXPECT(mp->n_properties == 1 && mp->properties[0].n_values == 2);

  EXPECT_OK(ef_model_part_add_variable(mp, "VELOCITY", 3));
  EXPECT_OK(ef_model_part_add_variable(mp, "PRESSURE", 1));
  EXPECT_OK(ef_model_part_add_variable(mp, "PRESSURE", 1));
  EXPECT_FAIL(ef_model_part_add_variable(mp, "PRESSURE", 3), EF_ERR_PARAMETER, "PRESSURE exists");
  EXPECT(mp->n_variables == 2);
  ef_variable *var = NULL;
  EXPECT_FAIL(ef_model_part_get_variable(mp, "TEMPERATURE", &var), EF_ERR_NOT_FOUND,
              "existing: VELOCITY, PRESSURE");
  EXPECT_OK(ef_model_part_get_variable(mp, "VELOCITY", &var));
  EXPECT(var && var->values[14] == 0.0 && var->fixed[14] == 0);

  EXPECT(ef_model_part_take_modified(mp, "VELOCITY") == 1);
  EXPECT(ef_model_part_take_modified(mp, "VELOCITY") == 0);
  EXPECT_OK(ef_model_part_mark_modified(mp, "VELOCITY"));
  EXPECT(ef_model_part_take_modified(mp, "VELOCITY") == 1);
  EXPECT_FAIL(ef_model_part_mark_modified(mp, "NOPE"), EF_ERR_NOT_FOUND, "NOPE");
  ef_model_part_destroy(&mp);
}

static void test_permute(void) {
  ef_model_part mp = make_square();
  if (!mp) return;
  EXPECT_OK(ef_model_part_add_variable(mp, "VELOCITY", 3));
  ef_variable *vel = ef_model_part_find_variable(mp, "VELOCITY");
  for (int i = 0; i < 5; ++i) {
    vel->values[3 * i + 1] = 100.0 + i;
    vel->fixed[3 * i + 1] = (uint8_t)(i == 3);
  }
  ef_sub_model_part *s = NULL;
  EXPECT_OK(ef_model_part_add_sub_model_part(mp, NULL, "Corner", &s));
  const ef_index nodes[] = {0, 3};
  EXPECT_OK(ef_sub_model_part_add_nodes(s, nodes, 2));
  /* Reverse the numbering: old i -> 4 - i. */
  const ef_index perm[5] = {4, 3, 2, 1, 0};
  double old_measure[4];
  for (int e = 0; e < 4; ++e) old_measure[e] = ef_model_part_element_measure(mp, e);
  EXPECT_OK(ef_model_part_permute_nodes(mp, perm));
  EXPECT(mp->node_ids[4] == 10 && mp->node_ids[0] == 50);
  EXPECT(mp->coords[3 * 0] == 0.5 && mp->coords[3 * 3] == 1.0);
  EXPECT(mp->elements[0] == 4 && mp->elements[2] == 0);
  EXPECT(mp->conditions[0] == 4 && mp->conditions[1] == 3);
  for (int e = 0; e < 4; ++e) EXPECT(ef_model_part_element_measure(mp, e) == old_measure[e]);
  EXPECT(s->n_nodes == 2 && s->nodes[0] == 1 && s->nodes[1] == 4);
  EXPECT(vel->values[3 * 1 + 1] == 103.0 && vel->fixed[3 * 1 + 1] == 1 && vel->fixed[3 * 4 + 1] == 0);
  EXPECT(ef_model_part_node_index(mp, 10) == 4);
  const ef_index notperm[5] = {0, 0, 1, 2, 3};
  EXPECT_FAIL(ef_model_part_permute_nodes(mp, notperm), EF_ERR_PARAMETER, "not a permutation");
  EXPECT(mp->node_ids[4] == 10);
  ef_model_part_destroy(&mp);
}

static int fake_sync_calls = 0;
static int fake_sync(void *context, struct ef_model_part_s *mp) {
  (void)mp;
  fake_sync_calls += *(int *)context;
  return 0;
}

static void test_sync(void) {
  ef_model_part mp = make_square();
  if (!mp) return;
  EXPECT_OK(ef_model_part_sync_to_host(mp));
  mp->device_newer = 1;
  EXPECT_FAIL(ef_model_part_sync_to_host(mp), EF_ERR_INTERNAL, "no sync_to_host hook");
  int one = 1;
  mp->device.context = &one;
  mp->device.sync_to_host = fake_sync;
  EXPECT_OK(ef_model_part_sync_to_host(mp));
  EXPECT(fake_sync_calls == 1 && mp->device_newer == 0);
  EXPECT_OK(ef_model_part_sync_to_host(mp));
  EXPECT(fake_sync_calls == 1);
  ef_model_part_destroy(&mp);
}

/* A fake asynchronous hook: it covers VELOCITY, filled (with 7 + node) only in wait. */
static double *fake_dest;
static int fake_begin_calls, fake_wait_calls;
static int fake_begin(void *context, struct ef_model_part_s *mp, int n, const char *const *names, double *const *dest,
                      int *covered, long *ticket) {
  (void)context;
  (void)mp;
  for (int i = 0; i < n; i++)
    if (!strcmp(names[i], "VELOCITY")) {
      fake_dest = dest[i];
      covered[i] = 1;
    }
  *ticket = 42;
  fake_begin_calls++;
  return 0;
}
static int fake_wait(void *context, long ticket) {
  ef_model_part mp = context;
  for (int64_t i = 0; i < 3 * mp->n_nodes; i++) fake_dest[i] = ticket == 42 ? 7.0 + (double)i : -1.0;
  fake_wait_calls++;
  return 0;
}

/* Snapshots: without the hooks a sync and a copy; with them the device's variables through the hook
 * and the others copied from the host, in a view that shares the mesh. */
static void test_snapshot(void) {
  ef_model_part mp = make_square();
  if (!mp) return;
  EXPECT_OK(ef_model_part_add_variable(mp, "VELOCITY", 3));
  EXPECT_OK(ef_model_part_add_variable(mp, "PRESSURE", 1));
  ef_variable *u = ef_model_part_find_variable(mp, "VELOCITY"), *p = ef_model_part_find_variable(mp, "PRESSURE");
  for (int64_t i = 0; i < mp->n_nodes; i++) p->values[i] = 2.0 * (double)i;
  const char *names[2] = {"PRESSURE", "VELOCITY"};
  ef_model_part_snapshot s = NULL;
  EXPECT_FAIL(ef_model_part_snapshot_create(mp, 1, (const char *const[]){"NOPE"}, &s), EF_ERR_NOT_FOUND, "NOPE");
  EXPECT_OK(ef_model_part_snapshot_create(mp, 2, names, &s));
  int one = 1, asynchronous = -1;
  mp->device.context = &one;
  mp->device.sync_to_host = fake_sync;
  mp->device_newer = 1;
  fake_sync_calls = 0;
  ef_model_part view;
  EXPECT(!ef_model_part_has_async_snapshot(mp));
  EXPECT_OK(ef_model_part_snapshot_take(s, &asynchronous));
  EXPECT(asynchronous == 0 && fake_sync_calls == 1 && mp->device_newer == 0);
  EXPECT_OK(ef_model_part_snapshot_wait(s, &view));
  EXPECT(view && view != mp && view->coords == mp->coords && view->n_variables == 2 && !view->device.sync_to_host);
  ef_variable *vp = ef_model_part_find_variable(view, "PRESSURE");
  EXPECT(vp && vp->values != p->values && vp->values[3] == 6.0);
  mp->device.context = mp;
  mp->device.snapshot_begin = fake_begin;
  mp->device.snapshot_wait = fake_wait;
  mp->device_newer = 1;
  EXPECT(ef_model_part_has_async_snapshot(mp));
  EXPECT_OK(ef_model_part_snapshot_take(s, &asynchronous));
  EXPECT_FAIL(ef_model_part_snapshot_take(s, NULL), EF_ERR_PARAMETER, "in flight");
  EXPECT(asynchronous == 1 && fake_begin_calls == 1 && fake_wait_calls == 0 && mp->device_newer == 1);
  p->values[3] = -5.0; /* after the take: not in the snapshot */
  EXPECT_OK(ef_model_part_snapshot_wait(s, &view));
  ef_variable *vu = ef_model_part_find_variable(view, "VELOCITY");
  vp = ef_model_part_find_variable(view, "PRESSURE");
  EXPECT(fake_wait_calls == 1 && vu && vu->values[4] == 11.0 && u->values[4] == 0.0 && vp->values[3] == 6.0);
  EXPECT(view->children == mp->children && view->elements == mp->elements && view->name == mp->name);
  EXPECT_OK(ef_model_part_snapshot_take(s, NULL));
  ef_model_part_snapshot_destroy(&s); /* waits for the copy in flight */
  EXPECT(s == NULL && fake_wait_calls == 2);
  ef_model_part_snapshot_destroy(&s);
  memset(&mp->device, 0, sizeof mp->device);
  mp->device_newer = 0;
  ef_model_part_destroy(&mp);
}

int main(void) {
  test_basic_and_lookup();
  test_check_mesh();
  test_sub_model_parts();
  test_properties_and_variables();
  test_permute();
  test_sync();
  test_snapshot();
  if (failures) fprintf(stderr, "%d expectation(s) failed\n", failures);
  return failures ? 1 : 0;
}
