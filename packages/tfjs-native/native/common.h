/*
 * Shared declarations of the native kernels for the TensorFlow.js wasm backend.
 *
 * Every entry point works in place on the wasm heap: the caller passes the heap
 * (a Uint8Array over the module's memory, read after any allocation) and byte
 * offsets of tensors living in it. Nothing is copied. Offsets and sizes are
 * checked against the heap length before any memory is touched.
 *
 * Matrix products go to the system CBLAS (OpenBLAS, Accelerate or any other
 * CBLAS). Elementwise loops are plain C written so that the compiler vectorises
 * them; with GCC on x86-64 Linux an AVX2 clone is chosen at run time, the
 * default clone only needs the x86-64 baseline (SSE2).
 */
#ifndef POAD_COMMON_H
#define POAD_COMMON_H

#define NAPI_VERSION 8
#include <node_api.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef _WIN32
#include <pthread.h>
#include <unistd.h>
#endif

#if defined(POAD_BLAS_ACCELERATE)
#include <Accelerate/Accelerate.h>
#define POAD_BLAS_NAME "Accelerate"
#else
#include <cblas.h>
#if defined(POAD_BLAS_OPENBLAS)
#define POAD_BLAS_NAME "OpenBLAS"
#else
#define POAD_BLAS_NAME "CBLAS"
#endif
#endif

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define POAD_CLONES __attribute__((target_clones("avx2", "default")))
#define POAD_HAVE_CLONES 1
#else
#define POAD_CLONES
#define POAD_HAVE_CLONES 0
#endif

#define POAD_MAX_THREADS 64

/*
 * Elementwise work is split over threads only in chunks of at least this many elements: starting
 * a thread costs tens of microseconds, and when the other cores are busy it costs far more.
 */
#define POAD_PARALLEL_MIN ((size_t)1 << 19)

/* Threads used by large elementwise kernels and batched small products (parallel.c). */
extern int g_elementwise_threads;

/* Reads POAD_NATIVE_THREADS, else the number of online CPUs (parallel.c). */
int poad_default_threads(void);

/* A view of the wasm heap. */
typedef struct {
  uint8_t *data;
  size_t length;
} heap_t;

/* Argument helpers (args.c). Each returns 1 on success; on failure it throws and returns 0. */
int throw_error(napi_env env, const char *msg);
int get_heap(napi_env env, napi_value v, heap_t *heap);
int get_size(napi_env env, napi_value v, const char *name, int64_t *out);
int get_float(napi_env env, napi_value v, const char *name, float *out);
int get_index(napi_env env, napi_value v, const char *name, const int32_t **out, size_t *len);
int check_range(napi_env env, const heap_t *heap, int64_t offset, int64_t count, const char *name);

#define GET_ARGS(N)                                                                            \
  size_t argc = (N);                                                                           \
  napi_value argv[(N)];                                                                        \
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < (N)) {         \
    throw_error(env, "wrong number of arguments");                                             \
    return NULL;                                                                               \
  }

typedef void (*range_fn)(void *ctx, size_t begin, size_t end);

/* Splits [0, n) in contiguous chunks, multiples of `align`, each at least `min_chunk` long. */
void parallel_for(size_t n, size_t min_chunk, size_t align, range_fn fn, void *ctx);

/*
 * exp(x) for float32: x = n ln2 + r with |r| <= ln2/2 (two-part ln2), a degree-7
 * polynomial for e^r, then scaling by 2^n in two steps so that results in the
 * subnormal range and overflow to +Inf come out right. About 1 ulp over the
 * normal range. NaN propagates, -Inf gives 0, +Inf gives +Inf.
 */
static inline float poad_expf(float x) {
  float xc = x > -104.0f ? x : -104.0f; /* NaN lands here too; fixed at the end */
  xc = xc < 89.0f ? xc : 89.0f;
  const float magic = 12582912.0f; /* 1.5 * 2^23: adds and removes to round to nearest */
  float t = xc * 1.44269504088896341f + magic;
  float nf = t - magic;
  int32_t ni = (int32_t)nf;
  float r = xc - nf * 0.693359375f;
  r = r + nf * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  float e = p * (r * r) + r + 1.0f;
  int32_t h = ni >> 1;
  int32_t l = ni - h;
  uint32_t hb = (uint32_t)(h + 127) << 23;
  uint32_t lb = (uint32_t)(l + 127) << 23;
  float s1, s2;
  memcpy(&s1, &hb, 4);
  memcpy(&s2, &lb, 4);
  float res = e * s1 * s2;
  return x != x ? x : res;
}

/*
 * Row reductions over 8 lanes, so that the loops vectorise: lane j takes elements j, j + 8, …,
 * the lanes are combined in order, then the tail is added. Every kernel that reduces a row this
 * way gets the same bits.
 */

/* Largest of x[0..n); -Infinity when n = 0. */
static inline float poad_max8(const float *x, size_t n) {
  float m8[8];
  for (int j = 0; j < 8; j++) m8[j] = -INFINITY;
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; j++) m8[j] = x[i + j] > m8[j] ? x[i + j] : m8[j];
  float m = -INFINITY;
  for (int j = 0; j < 8; j++) m = m8[j] > m ? m8[j] : m;
  for (; i < n; i++) m = x[i] > m ? x[i] : m;
  return m;
}

/* Σ a[i]·b[i] over [0, n). */
static inline float poad_dot8(const float *a, const float *b, size_t n) {
  float s8[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; j++) s8[j] += a[i + j] * b[i + j];
  float s = 0.0f;
  for (int j = 0; j < 8; j++) s += s8[j];
  for (; i < n; i++) s += a[i] * b[i];
  return s;
}

/*
 * Entry points, one file per concept: X(name on the addon's exports, C function). addon.c
 * registers them in this order.
 */
#define POAD_ENTRY_POINTS(X)                         \
  X("gemm", js_gemm)                                 \
  X("epilogue", js_epilogue)                         \
  X("exp", js_exp)                                   \
  X("softmax", js_softmax)                           \
  X("logProbStats", js_log_prob_stats)               \
  X("logProbStatsGrad", js_log_prob_stats_grad)      \
  X("rmsNorm", js_rms_norm)                          \
  X("rmsNormGrad", js_rms_norm_grad)                 \
  X("swiGlu", js_swiglu)                             \
  X("swiGluGrad", js_swiglu_grad)                    \
  X("rope", js_rope)                                 \
  X("attention", js_attention)                       \
  X("attentionGrad", js_attention_grad)

#define POAD_DECLARE_ENTRY(name, fn) napi_value fn(napi_env env, napi_callback_info info);
POAD_ENTRY_POINTS(POAD_DECLARE_ENTRY)

#endif
