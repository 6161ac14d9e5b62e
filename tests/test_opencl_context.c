/* test_opencl_context.c -- device listing and choice, memory refusal, error names,
 * kernel sources and include resolution, build errors, and the program cache. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_opencl_common.h"

static char work[1024];

/* Contents of a stream written so far. */
static char *slurp(FILE *f) {
  long size = ftell(f);
  char *s = calloc((size_t)(size > 0 ? size : 0) + 1, 1);
  if (!s) return NULL;
  rewind(f);
  size_t got = fread(s, 1, (size_t)(size > 0 ? size : 0), f);
  s[got] = '\0';
  return s;
}

/* Write a small text file into dir. */
static int write_text(const char *dir, const char *name, const char *text) {
  char p[1200];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  FILE *f = fopen(p, "w");
  if (!f) return 1;
  fputs(text, f);
  return fclose(f) != 0;
}

/* A failing OpenCL call reported through EF_CL_CALL. */
static int release_nothing(void) {
  EF_CL_CALL(clReleaseMemObject(NULL));
  return 0;
}

/* cg_dot (n, x, y, part) given `count` of its four arguments through EF_CL_SET_ARGS. */
static int set_cg_dot_args(cl_kernel kern, int count) {
  const cl_int n = 0;
  cl_mem none = NULL;
  if (count == 3) EF_CL_SET_ARGS(kern, EF_CL_ARG(n), EF_CL_ARG(none), EF_CL_ARG(none));
  if (count == 4) EF_CL_SET_ARGS(kern, EF_CL_ARG(n), EF_CL_ARG(none), EF_CL_ARG(none), EF_CL_ARG(none));
  if (count == 5)
    EF_CL_SET_ARGS(kern, EF_CL_ARG(n), EF_CL_ARG(none), EF_CL_ARG(none), EF_CL_ARG(none), EF_CL_LOCAL(64));
  return 0;
}

/* Count occurrences of needle in hay. */
static int count_of(const char *hay, const char *needle) {
  int c = 0;
  for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle)) ++c;
  return c;
}

/* A context with its own cache folder, quiet, logging to log. */
static int make_context(const char *cache, FILE *log, ef_cl_context **ctx) {
  ef_cl_settings s;
  ef_cl_settings_default(&s);
  s.verbose = 0;
  s.cache_dir = cache;
  s.log = log;
  s.ignore_environment = 1;
  return ef_cl_context_create(&s, ctx);
}

/* The only file of a folder whose name starts with prefix (path into out). */
static int find_cache_file(const char *dir, char *out, size_t size) {
  char cmd[1400];
  snprintf(cmd, sizeof cmd, "ls %s/prog-*.bin 2>/dev/null", dir);
  FILE *p = popen(cmd, "r");
  if (!p) return 1;
  int ok = fgets(out, (int)size, p) != NULL;
  pclose(p);
  if (!ok) return 1;
  out[strcspn(out, "\n")] = '\0';
  return 0;
}

/* Listing, choice, errors, sources, build failures, cache. */
int main(int argc, char **argv) {
  snprintf(work, sizeof work, "%s", argc > 1 ? argv[1] : "opencl_context_work");
  mkdir(work, 0755);
  unsetenv("EDGEFLOW_OPENCL_DEVICE");
  unsetenv("EDGEFLOW_KERNEL_DIR");

  ef_cl_context *ctx = NULL;
  int skip = test_context(&ctx, "");
  if (skip) return skip;

  /* The listing names the chosen device and states fp64 support. */
  FILE *out = tmpfile();
  ASSERT(out, "tmpfile");
  ASSERT_OK(ef_cl_list_devices(out));
  char *listing = slurp(out);
  fclose(out);
  ASSERT(listing && strstr(listing, ctx->device_name) && strstr(listing, "fp64") &&
             strstr(listing, "driver"), "listing: %s", listing ? listing : "");
  free(listing);

  /* Errors carry the CL_* name, the call and the site. */
  ASSERT(release_nothing() == EF_ERR_OPENCL, "EF_CL_CALL did not fail");
  ASSERT(strstr(ef_error_message(), "CL_INVALID_MEM_OBJECT") &&
             strstr(ef_error_message(), "clReleaseMemObject") &&
             strstr(ef_error_message(), "test_opencl_context.c"), "%s", ef_error_message());

  /* A device that does not exist: a clear error listing the devices. */
  ef_cl_settings s;
  ef_cl_settings_default(&s);
  s.verbose = 0;
  s.ignore_environment = 1;
  s.platform = "NoSuchPlatformAnywhere";
  ef_cl_context *none = NULL;
  ASSERT(ef_cl_context_create(&s, &none) == EF_ERR_NOT_FOUND && none == NULL, "bogus platform accepted");
  ASSERT(strstr(ef_error_message(), "NoSuchPlatformAnywhere") &&
             strstr(ef_error_message(), "available devices") &&
             strstr(ef_error_message(), ctx->device_name), "%s", ef_error_message());
  s.platform = NULL;
  s.type = EF_CL_DEVICE_ANY;
  s.device_index = 99;
  ASSERT(ef_cl_context_create(&s, &none) == EF_ERR_NOT_FOUND, "index 99 accepted");

  /* The environment overrides the settings. */
  ef_cl_settings_default(&s);
  s.verbose = 0;
  s.cache_dir = "";
  setenv("EDGEFLOW_OPENCL_DEVICE", "NoSuchVendor:0", 1);
  ASSERT(ef_cl_context_create(&s, &none) == EF_ERR_NOT_FOUND &&
             strstr(ef_error_message(), "EDGEFLOW_OPENCL_DEVICE"), "env ignored: %s", ef_error_message());
  char spec[300];
  snprintf(spec, sizeof spec, "%.40s:0", ctx->platform_name);
  setenv("EDGEFLOW_OPENCL_DEVICE", spec, 1);
  ASSERT_OK(ef_cl_context_create(&s, &none));
  ASSERT(!strcmp(none->device_name, ctx->device_name), "env chose %s", none->device_name);
  ef_cl_context_destroy(&none);
  ASSERT(none == NULL, "destroy must clear the handle");
  ef_cl_context_destroy(&none);
  setenv("EDGEFLOW_OPENCL_DEVICE", (ctx->device_type & CL_DEVICE_TYPE_GPU) ? "gpu" : "cpu", 1);
  ASSERT_OK(ef_cl_context_create(&s, &none));
  ef_cl_context_destroy(&none);
  unsetenv("EDGEFLOW_OPENCL_DEVICE");

  /* Memory estimates: printed, and refused beyond the device. */
  ASSERT_OK(ef_cl_context_check_memory(ctx, 1 << 20, "a small job"));
  ASSERT(ef_cl_context_check_memory(ctx, ctx->global_mem_bytes * 2, "a huge job") == EF_ERR_UNSUPPORTED &&
             strstr(ef_error_message(), "refused") && strstr(ef_error_message(), "a huge job"),
         "%s", ef_error_message());

  /* Sources: embedded by default, unknown names fail, the kernel file builds on
   * its own with every tunable at its default. */
  char *text = NULL;
  ASSERT_OK(ef_cl_source_load("cg.cl", &text));
  ASSERT(strstr(text, "cg_std_update") != NULL, "embedded cg.cl incomplete");
  free(text);
  ASSERT(ef_cl_source_load("no_such_kernel.cl", &text) == EF_ERR_NOT_FOUND, "missing source found");
  cl_program prog = NULL;
  ASSERT_OK(ef_cl_program_get(ctx, "cg.cl", "", &prog));
  clReleaseProgram(prog);
  ASSERT_OK(ef_cl_program_get(ctx, "spmv.cl", "", &prog));
  clReleaseProgram(prog);

  /* Include resolution from EDGEFLOW_KERNEL_DIR: each header once, #line kept valid. */
  char kdir[1100];
  snprintf(kdir, sizeof kdir, "%s/kernels", work);
  mkdir(kdir, 0755);
  ASSERT(!write_text(kdir, "inc_a.h", "#define INC_A_MARKER 3\n") &&
             !write_text(kdir, "inc_b.h", "#include \"inc_a.h\"\n#define INC_B (INC_A_MARKER + 1)\n") &&
             !write_text(kdir, "inc_main.cl",
                         "#include \"inc_a.h\"\n#include \"inc_b.h\"\n  #  include \"inc_a.h\"\n"
                         "__kernel void k(__global int *x) { x[0] = INC_B; }\n") &&
             !write_text(kdir, "inc_missing.cl", "#include \"not_there.h\"\n"),
         "cannot write kernels");
  setenv("EDGEFLOW_KERNEL_DIR", kdir, 1);
  ASSERT_OK(ef_cl_source_resolve("inc_main.cl", &text));
  ASSERT(count_of(text, "#define INC_A_MARKER") == 1 && count_of(text, "#define INC_B") == 1 &&
             !strstr(text, "#include \"inc"), "resolved:\n%s", text);
  free(text);
  ASSERT_OK(ef_cl_program_get(ctx, "inc_main.cl", "", &prog));
  clReleaseProgram(prog);
  ASSERT(ef_cl_source_resolve("inc_missing.cl", &text) == EF_ERR_IO &&
             strstr(ef_error_message(), "not_there.h") && strstr(ef_error_message(), "inc_missing.cl"),
         "%s", ef_error_message());
  unsetenv("EDGEFLOW_KERNEL_DIR");

  /* A syntax error: EF_ERR_OPENCL with the build log, the file and the options. */
  FILE *log = tmpfile();
  ASSERT(log, "tmpfile");
  ef_cl_context *quiet = NULL;
  ASSERT_OK(make_context("", log, &quiet));
  /* Some compilers print their diagnostics straight to stderr: keep the test quiet. */
  fflush(stderr);
  int saved_stderr = dup(2), devnull = open("/dev/null", O_WRONLY);
  if (devnull >= 0) dup2(devnull, 2);
  int err = ef_cl_program_get_text(quiet, "broken.cl", "__kernel void f(__global int *x) { x[0] = ; }",
                                   "-D SOME_OPTION=1", &prog);
  fflush(stderr);
  if (saved_stderr >= 0) dup2(saved_stderr, 2);
  if (saved_stderr >= 0) close(saved_stderr);
  if (devnull >= 0) close(devnull);
  ASSERT(err == EF_ERR_OPENCL && strstr(ef_error_message(), "broken.cl") &&
             strstr(ef_error_message(), "build log") && strstr(ef_error_message(), "SOME_OPTION"),
         "%s", ef_error_message());
  char *printed = slurp(log);
  ASSERT(printed && strstr(printed, "broken.cl") && strstr(printed, "build log"), "log: %s",
         printed ? printed : "");
  free(printed);
  fclose(log);
  ef_cl_context_destroy(&quiet);

  /* Program cache: source, then memory, then disk in a new context; a corrupt file
   * is ignored and rebuilt. */
  char cache[1100];
  snprintf(cache, sizeof cache, "%s/cache_%ld", work, (long)getpid());
  const char *opts = "-D WGS_BITS=6 -D ROWS_BITS=3";
  ef_cl_context *c1 = NULL, *c2 = NULL, *c3 = NULL, *c4 = NULL;
  ASSERT_OK(make_context(cache, NULL, &c1));
  ASSERT_OK(ef_cl_program_get(c1, "cg.cl", opts, &prog));
  clReleaseProgram(prog);
  ASSERT_OK(ef_cl_program_get(c1, "cg.cl", opts, &prog));
  clReleaseProgram(prog);
  ASSERT(c1->builds_from_source == 1 && c1->builds_from_memory == 1 && c1->builds_from_disk_cache == 0,
         "first context: %d source, %d memory, %d disk", c1->builds_from_source, c1->builds_from_memory,
         c1->builds_from_disk_cache);
  ASSERT_OK(make_context(cache, NULL, &c2));
  ASSERT_OK(ef_cl_program_get(c2, "cg.cl", opts, &prog));
  cl_kernel kern = clCreateKernel(prog, "cg_dot", &(cl_int){0});
  ASSERT(kern != NULL, "kernel from a cached binary");
  /* The argument list must be as long as the kernel's, and the message names both counts. */
  ASSERT_OK(set_cg_dot_args(kern, 4));
  ASSERT(set_cg_dot_args(kern, 3) == EF_ERR_OPENCL && strstr(ef_error_message(), "cg_dot takes 4 arguments, 3 were"),
         "three arguments for four: %s", ef_error_message());
  ASSERT(set_cg_dot_args(kern, 5) == EF_ERR_OPENCL && strstr(ef_error_message(), "cg_dot takes 4 arguments, 5 were"),
         "five arguments for four: %s", ef_error_message());
  clReleaseKernel(kern);
  clReleaseProgram(prog);
  ASSERT(c2->builds_from_disk_cache == 1 && c2->builds_from_source == 0,
         "second context: %d source, %d disk", c2->builds_from_source, c2->builds_from_disk_cache);
  char file[1300];
  ASSERT(!find_cache_file(cache, file, sizeof file), "no cache file in %s", cache);
  FILE *cf = fopen(file, "r+b");
  ASSERT(cf, "open %s", file);
  fseek(cf, 40, SEEK_SET);
  fputs("garbage garbage garbage", cf);
  fclose(cf);
  ASSERT_OK(make_context(cache, NULL, &c3));
  ASSERT_OK(ef_cl_program_get(c3, "cg.cl", opts, &prog));
  clReleaseProgram(prog);
  ASSERT(c3->disk_cache_rejected == 1 && c3->builds_from_source == 1,
         "corrupt cache: %d rejected, %d source", c3->disk_cache_rejected, c3->builds_from_source);
  ASSERT_OK(make_context(cache, NULL, &c4));
  ASSERT_OK(ef_cl_program_get(c4, "cg.cl", opts, &prog));
  clReleaseProgram(prog);
  ASSERT(c4->builds_from_disk_cache == 1, "cache not rewritten after corruption");
  ef_cl_context_destroy(&c1);
  ef_cl_context_destroy(&c2);
  ef_cl_context_destroy(&c3);
  ef_cl_context_destroy(&c4);
  char cmd[1300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache);
  if (system(cmd) != 0) fprintf(stderr, "note: could not remove %s\n", cache);

  ef_cl_context_destroy(&ctx);
  ASSERT(ctx == NULL, "destroy must clear the handle");
  return 0;
}
