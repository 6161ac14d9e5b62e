/* test_amg_opencl.h -- the device half of test_amg.c (included there). */
static int run_opencl(const char *cache) {
  (void)cache;
  return EF_TEST_SKIP;
}
static int run_tiny(const char *cache) {
  (void)cache;
  return EF_TEST_SKIP;
}
