/* exp and softmax / log-softmax over the last axis. */
#include "common.h"

POAD_CLONES
static void exp_range(const float *restrict x, float *restrict y, size_t n) {
  for (size_t i = 0; i < n; i++) y[i] = poad_expf(x[i]);
}

typedef struct {
  const float *x;
  float *y;
} unary_ctx;

static void exp_chunk(void *p, size_t b, size_t e) {
  unary_ctx *c = (unary_ctx *)p;
  exp_range(c->x + b, c->y + b, e - b);
}

/* Softmax / log-softmax over the last axis */

POAD_CLONES
static void softmax_row(const float *restrict x, float *restrict y, size_t n, int log_mode) {
  float mx = poad_max8(x, n);

  float s8[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; j++) {
      float e = poad_expf(x[i + j] - mx);
      y[i + j] = e;
      s8[j] += e;
    }
  float sum = 0.0f;
  for (int j = 0; j < 8; j++) sum += s8[j];
  for (; i < n; i++) {
    float e = poad_expf(x[i] - mx);
    y[i] = e;
    sum += e;
  }
  if (log_mode) {
    float shift = mx + logf(sum);
    for (i = 0; i < n; i++) y[i] = x[i] - shift;
  } else {
    float inv = 1.0f / sum;
    for (i = 0; i < n; i++) y[i] *= inv;
  }
}

typedef struct {
  const float *x;
  float *y;
  size_t cols;
  int log_mode;
} softmax_ctx;

static void softmax_chunk(void *p, size_t b, size_t e) {
  softmax_ctx *c = (softmax_ctx *)p;
  for (size_t r = b; r < e; r++)
    softmax_row(c->x + r * c->cols, c->y + r * c->cols, c->cols, c->log_mode);
}

/* exp(heap, xOff, yOff, count) */
napi_value js_exp(napi_env env, napi_callback_info info) {
  GET_ARGS(4);
  heap_t heap;
  int64_t xOff, yOff, count;
  if (!get_heap(env, argv[0], &heap) || !get_size(env, argv[1], "xOffset", &xOff) ||
      !get_size(env, argv[2], "yOffset", &yOff) || !get_size(env, argv[3], "count", &count) ||
      !check_range(env, &heap, xOff, count, "exp x") ||
      !check_range(env, &heap, yOff, count, "exp y"))
    return NULL;
  unary_ctx ctx = {(const float *)(heap.data + xOff), (float *)(heap.data + yOff)};
  parallel_for((size_t)count, POAD_PARALLEL_MIN, 64, exp_chunk, &ctx);
  return NULL;
}

/* softmax(heap, xOff, yOff, rows, cols, logMode) */
napi_value js_softmax(napi_env env, napi_callback_info info) {
  GET_ARGS(6);
  heap_t heap;
  int64_t xOff, yOff, rows, cols;
  bool log_mode;
  if (!get_heap(env, argv[0], &heap) || !get_size(env, argv[1], "xOffset", &xOff) ||
      !get_size(env, argv[2], "yOffset", &yOff) || !get_size(env, argv[3], "rows", &rows) ||
      !get_size(env, argv[4], "cols", &cols) ||
      !check_range(env, &heap, xOff, rows * cols, "softmax x") ||
      !check_range(env, &heap, yOff, rows * cols, "softmax y"))
    return NULL;
  napi_get_value_bool(env, argv[5], &log_mode);
  if (cols == 0) return NULL;
  softmax_ctx ctx = {(const float *)(heap.data + xOff), (float *)(heap.data + yOff), (size_t)cols,
                     log_mode ? 1 : 0};
  size_t min_rows = (size_t)(POAD_PARALLEL_MIN / (uint64_t)cols) + 1;
  parallel_for((size_t)rows, min_rows, 1, softmax_chunk, &ctx);
  return NULL;
}
