/* ef_util.h -- small utilities every library of edgeflow shares: the wall clock, folder
 * creation and string copies.  One home for them (they used to be written per file). */
#ifndef EF_UTIL_H
#define EF_UTIL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Seconds since an arbitrary origin (monotonic clock). */
double ef_wtime(void);

/* mkdir -p: create path and its missing parents ("a//b" and a trailing '/' are fine).  On
 * failure returns the errno and, when failed is not NULL, the prefix that could not be made
 * (an existing non-folder there gives ENOTDIR).  No error is recorded: see ef_make_folders. */
int ef_make_folders_errno(const char *path, char *failed, size_t failed_size);
/* The same, recording "cannot create folder 'PREFIX': reason" (EF_ERR_IO) on failure. */
int ef_make_folders(const char *path);

/* Copy src (NULL: "") into dst of size bytes, always terminated (truncated when too long);
 * returns 1 when it fitted, 0 when truncated. */
int ef_copy_string(char *dst, size_t size, const char *src);
/* A malloc'ed copy of s (NULL when out of memory or s is NULL). */
char *ef_strdup(const char *s);

/* A file named in a case's parameters: name as given when absolute or readable from here,
 * else folder/name (the folder of ProjectParameters.json). */
void ef_resolve_path(const char *folder, const char *name, char *out, size_t size);

#ifdef __cplusplus
}
#endif
#endif
