/* fuzz_replay.c -- a plain driver for the fuzz harnesses, without libFuzzer: runs
 * LLVMFuzzerTestOneInput on every file named (folders: every file in them), so the corpora and
 * the inputs that once crashed are regression tests in every build, sanitizers included. */
#include "fuzz_common.h"

#include <dirent.h>
#include <sys/stat.h>

/* Feed one file to the harness; 0 when read. */
static int ef_replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "fuzz_replay: cannot open %s\n", path);
    return 1;
  }
  size_t cap = 4096, n = 0;
  uint8_t *buf = malloc(cap);
  for (;;) {
    if (!buf) break;
    if (n == cap) {
      uint8_t *grown = realloc(buf, 2 * cap);
      if (!grown) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = grown;
      cap *= 2;
    }
    size_t got = fread(buf + n, 1, cap - n, f);
    if (!got) break;
    n += got;
  }
  fclose(f);
  if (!buf) return 1;
  LLVMFuzzerTestOneInput(buf, n);
  free(buf);
  return 0;
}

int main(int argc, char **argv) {
  int failures = 0, files = 0;
  for (int a = 1; a < argc; ++a) {
    struct stat st;
    if (stat(argv[a], &st) != 0) {
      fprintf(stderr, "fuzz_replay: no such file or folder %s\n", argv[a]);
      failures++;
      continue;
    }
    if (!S_ISDIR(st.st_mode)) {
      failures += ef_replay_file(argv[a]);
      files++;
      continue;
    }
    DIR *dir = opendir(argv[a]);
    struct dirent *entry;
    while (dir && (entry = readdir(dir))) {
      if (entry->d_name[0] == '.') continue;
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", argv[a], entry->d_name);
      failures += ef_replay_file(path);
      files++;
    }
    if (dir) closedir(dir);
  }
  if (files == 0) {
    fprintf(stderr, "fuzz_replay: no inputs\n");
    return 1;
  }
  return failures ? 1 : 0;
}
