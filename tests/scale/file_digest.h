/* What a sparse file holds, summarized so that two runs can compare their
 * files by their output: the file's size, its nonzero bytes and a hash of
 * each with its offset (FNV-1a), read only where the file system has data
 * (SEEK_DATA / SEEK_HOLE). Holes and written zeros read alike, so the
 * digest does not depend on how the file system allocated the file. For
 * the scale tier's MPI-IO programs, whose files are tens of GiB long with
 * a few MiB written (comparing them whole would read every hole). */
#ifndef FLOWIO_TESTS_SCALE_FILE_DIGEST_H_
#define FLOWIO_TESTS_SCALE_FILE_DIGEST_H_

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* SEEK_DATA, SEEK_HOLE */
#endif

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

struct file_digest {
  long long size;
  long long nonzero;
  uint64_t hash;
};

/* The digest of the file at `path`; size -1 when it cannot be read. */
static inline struct file_digest digest_file(const char* path) {
  struct file_digest digest = {-1, 0, 14695981039346656037ull};
  const int fd = open(path, O_RDONLY);
  if (fd < 0) return digest;
  struct stat info;
  fstat(fd, &info);
  digest.size = (long long)info.st_size;
  enum { kChunk = 1 << 20 };
  unsigned char* chunk = malloc(kChunk);
  off_t at = 0;
  for (;;) {
    const off_t begin = lseek(fd, at, SEEK_DATA);
    if (begin < 0) break;
    const off_t end = lseek(fd, begin, SEEK_HOLE);
    for (off_t from = begin; from < end; from += kChunk) {
      const size_t want = (size_t)(end - from < kChunk ? end - from : kChunk);
      const ssize_t got = pread(fd, chunk, want, from);
      for (ssize_t i = 0; i < got; ++i) {
        if (chunk[i] == 0) continue;
        const uint64_t offset = (uint64_t)(from + i);
        ++digest.nonzero;
        for (int b = 0; b < 8; ++b) {
          digest.hash = (digest.hash ^ ((offset >> (8 * b)) & 0xFF)) * 1099511628211ull;
        }
        digest.hash = (digest.hash ^ chunk[i]) * 1099511628211ull;
      }
    }
    at = end;
  }
  free(chunk);
  close(fd);
  return digest;
}

#endif /* FLOWIO_TESTS_SCALE_FILE_DIGEST_H_ */
