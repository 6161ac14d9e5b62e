/* ef_stream.c -- STREAM triad bandwidth with OpenMP (the reference figure for the
 * momentum phase of the OpenMP strategy).
 * Usage: ef_stream [-n elements (default 2^25 per array)] [-r repeats (default 10)] [-j file.json] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ef_triad.h"

/* Measure and print the STREAM triad bandwidth. */
int main(int argc, char **argv) {
  int64_t n = (int64_t)1 << 25;
  int repeats = 10;
  const char *json = NULL;
  for (int k = 1; k < argc; ++k) {
    if (!strcmp(argv[k], "-n") && k + 1 < argc)
      n = atoll(argv[++k]);
    else if (!strcmp(argv[k], "-r") && k + 1 < argc)
      repeats = atoi(argv[++k]);
    else if (!strcmp(argv[k], "-j") && k + 1 < argc)
      json = argv[++k];
    else {
      fprintf(stderr, "usage: %s [-n elements] [-r repeats] [-j file.json]\n", argv[0]);
      return 2;
    }
  }
  if (n < 1000 || repeats < 1) {
    fprintf(stderr, "ef_stream: need n >= 1000 and repeats >= 1\n");
    return 2;
  }
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  double secs = 0.0;
  const double gbs = ef_triad_bandwidth(n, repeats, &secs);
  if (gbs < 0) {
    fprintf(stderr, "ef_stream: cannot allocate 3 x %lld doubles\n", (long long)n);
    return 1;
  }
  printf("STREAM triad: %lld doubles per array (%.1f MB total), %d threads, best of %d: %.4f s, %.2f GB/s\n",
         (long long)n, 24.0 * (double)n / 1e6, threads, repeats, secs, gbs);
  if (json) {
    FILE *f = fopen(json, "w");
    if (!f) {
      fprintf(stderr, "ef_stream: cannot write %s\n", json);
      return 1;
    }
    fprintf(f, "{\"benchmark\": \"stream_triad\", \"elements\": %lld, \"threads\": %d, \"repeats\": %d, "
               "\"best_seconds\": %.6e, \"GB_per_s\": %.4f}\n",
            (long long)n, threads, repeats, secs, gbs);
    fclose(f);
  }
  return 0;
}
