/* A small parallel-for over pthreads (elementwise work; the BLAS has its own pool). */
#include "common.h"

int g_elementwise_threads = 1;

typedef struct {
  range_fn fn;
  void *ctx;
  size_t begin, end;
} chunk_t;

#ifndef _WIN32
static void *run_chunk(void *p) {
  chunk_t *c = (chunk_t *)p;
  c->fn(c->ctx, c->begin, c->end);
  return NULL;
}
#endif

/* Splits [0, n) in contiguous chunks, multiples of `align`, each at least `min_chunk` long. */
void parallel_for(size_t n, size_t min_chunk, size_t align, range_fn fn, void *ctx) {
  size_t nt = (size_t)g_elementwise_threads;
  if (min_chunk == 0) min_chunk = 1;
  if (nt > n / min_chunk) nt = n / min_chunk;
  if (nt <= 1) {
    fn(ctx, 0, n);
    return;
  }
#ifdef _WIN32
  fn(ctx, 0, n);
#else
  chunk_t chunks[POAD_MAX_THREADS];
  pthread_t threads[POAD_MAX_THREADS];
  int started[POAD_MAX_THREADS];
  size_t per = (n + nt - 1) / nt;
  per = (per + align - 1) / align * align;
  size_t count = 0;
  for (size_t b = 0; b < n && count < POAD_MAX_THREADS; b += per) {
    chunks[count].fn = fn;
    chunks[count].ctx = ctx;
    chunks[count].begin = b;
    chunks[count].end = b + per < n ? b + per : n;
    count++;
  }
  for (size_t i = 1; i < count; i++)
    started[i] = pthread_create(&threads[i], NULL, run_chunk, &chunks[i]) == 0;
  fn(ctx, chunks[0].begin, chunks[0].end);
  for (size_t i = 1; i < count; i++) {
    if (started[i])
      pthread_join(threads[i], NULL);
    else
      fn(ctx, chunks[i].begin, chunks[i].end);
  }
#endif
}

int poad_default_threads(void) {
  const char *env_threads = getenv("POAD_NATIVE_THREADS");
  if (env_threads && *env_threads) {
    int t = atoi(env_threads);
    if (t > 0) return t > POAD_MAX_THREADS ? POAD_MAX_THREADS : t;
  }
#ifndef _WIN32
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus > 0) return cpus > POAD_MAX_THREADS ? POAD_MAX_THREADS : (int)cpus;
#endif
  return 1;
}
