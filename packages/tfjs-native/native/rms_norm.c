/* Fused RMSNorm, forward and backward. */
#include "common.h"

/* RMSNorm over rows: y = x · rstd · w with rstd = 1 / sqrt(mean(x²) + eps). */
typedef struct {
  const float *x, *w;
  float *y, *rstd;
  const float *dy;
  float *dx;
  size_t cols;
  float eps;
} rms_ctx;

POAD_CLONES
static void rms_row(const float *restrict x, const float *restrict w, float *restrict y,
                    float *rstd_out, size_t n, float eps) {
  float rstd = 1.0f / sqrtf(poad_dot8(x, x, n) / (float)n + eps);
  for (size_t i = 0; i < n; i++) y[i] = x[i] * rstd * w[i];
  *rstd_out = rstd;
}

static void rms_chunk(void *p, size_t b, size_t e) {
  rms_ctx *c = (rms_ctx *)p;
  for (size_t r = b; r < e; r++)
    rms_row(c->x + r * c->cols, c->w, c->y + r * c->cols, c->rstd + r, c->cols, c->eps);
}

/* dx = rstd · (g − x̂ · mean(g · x̂)) with g = dy · w and x̂ = x · rstd. */
POAD_CLONES
static void rms_grad_row(const float *restrict x, const float *restrict w, const float *restrict dy,
                         float *restrict dx, size_t n, float rstd) {
  float a8[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; j++) a8[j] += dy[i + j] * w[i + j] * x[i + j];
  float a = 0.0f;
  for (int j = 0; j < 8; j++) a += a8[j];
  for (; i < n; i++) a += dy[i] * w[i] * x[i];
  float c = a * rstd * rstd / (float)n;
  for (i = 0; i < n; i++) dx[i] = rstd * (dy[i] * w[i] - x[i] * c);
}

static void rms_grad_chunk(void *p, size_t b, size_t e) {
  rms_ctx *c = (rms_ctx *)p;
  for (size_t r = b; r < e; r++)
    rms_grad_row(c->x + r * c->cols, c->w, c->dy + r * c->cols, c->dx + r * c->cols, c->cols,
                 c->rstd[r]);
}

/* dw_j = Σ_r dy[r, j] · x[r, j] · rstd[r] (one pass, vectorised over j). */
POAD_CLONES
static void rms_dw(const float *restrict x, const float *restrict dy, const float *restrict rstd,
                   float *restrict dw, size_t rows, size_t n) {
  for (size_t j = 0; j < n; j++) dw[j] = 0.0f;
  for (size_t r = 0; r < rows; r++) {
    const float *xr = x + r * n;
    const float *dr = dy + r * n;
    float s = rstd[r];
    for (size_t j = 0; j < n; j++) dw[j] += dr[j] * xr[j] * s;
  }
}

/* rmsNorm(heap, xOff, wOff, yOff, rstdOff, rows, cols, eps) */
napi_value js_rms_norm(napi_env env, napi_callback_info info) {
  GET_ARGS(8);
  heap_t heap;
  int64_t xOff, wOff, yOff, rOff, rows, cols;
  float eps;
  if (!get_heap(env, argv[0], &heap) || !get_size(env, argv[1], "xOffset", &xOff) ||
      !get_size(env, argv[2], "wOffset", &wOff) || !get_size(env, argv[3], "yOffset", &yOff) ||
      !get_size(env, argv[4], "rstdOffset", &rOff) || !get_size(env, argv[5], "rows", &rows) ||
      !get_size(env, argv[6], "cols", &cols) || !get_float(env, argv[7], "eps", &eps) ||
      !check_range(env, &heap, xOff, rows * cols, "rmsNorm x") ||
      !check_range(env, &heap, wOff, cols, "rmsNorm w") ||
      !check_range(env, &heap, yOff, rows * cols, "rmsNorm y") ||
      !check_range(env, &heap, rOff, rows, "rmsNorm rstd"))
    return NULL;
  if (cols == 0) return NULL;
  rms_ctx ctx = {(const float *)(heap.data + xOff),
                 (const float *)(heap.data + wOff),
                 (float *)(heap.data + yOff),
                 (float *)(heap.data + rOff),
                 NULL,
                 NULL,
                 (size_t)cols,
                 eps};
  parallel_for((size_t)rows, (size_t)(POAD_PARALLEL_MIN / (uint64_t)cols) + 1, 1, rms_chunk, &ctx);
  return NULL;
}

/* rmsNormGrad(heap, xOff, wOff, rstdOff, dyOff, dxOff, dwOff, rows, cols) */
napi_value js_rms_norm_grad(napi_env env, napi_callback_info info) {
  GET_ARGS(9);
  heap_t heap;
  int64_t xOff, wOff, rOff, dyOff, dxOff, dwOff, rows, cols;
  if (!get_heap(env, argv[0], &heap) || !get_size(env, argv[1], "xOffset", &xOff) ||
      !get_size(env, argv[2], "wOffset", &wOff) || !get_size(env, argv[3], "rstdOffset", &rOff) ||
      !get_size(env, argv[4], "dyOffset", &dyOff) || !get_size(env, argv[5], "dxOffset", &dxOff) ||
      !get_size(env, argv[6], "dwOffset", &dwOff) || !get_size(env, argv[7], "rows", &rows) ||
      !get_size(env, argv[8], "cols", &cols) ||
      !check_range(env, &heap, xOff, rows * cols, "rmsNormGrad x") ||
      !check_range(env, &heap, wOff, cols, "rmsNormGrad w") ||
      !check_range(env, &heap, rOff, rows, "rmsNormGrad rstd") ||
      !check_range(env, &heap, dyOff, rows * cols, "rmsNormGrad dy") ||
      !check_range(env, &heap, dxOff, rows * cols, "rmsNormGrad dx") ||
      !check_range(env, &heap, dwOff, cols, "rmsNormGrad dw"))
    return NULL;
  if (cols == 0) return NULL;
  rms_ctx ctx = {(const float *)(heap.data + xOff),
                 (const float *)(heap.data + wOff),
                 NULL,
                 (float *)(heap.data + rOff),
                 (const float *)(heap.data + dyOff),
                 (float *)(heap.data + dxOff),
                 (size_t)cols,
                 0.0f};
  parallel_for((size_t)rows, (size_t)(POAD_PARALLEL_MIN / (uint64_t)cols) + 1, 1, rms_grad_chunk, &ctx);
  rms_dw(ctx.x, ctx.dy, ctx.rstd, (float *)(heap.data + dwOff), (size_t)rows, (size_t)cols);
  return NULL;
}
