/* Fused log-probability + entropy of softmax rows, forward and backward. */
#include "common.h"

/*
 * Per row of logits z with target t, p = softmax(z), lse = log Σ exp z:
 *   lp = z_t − lse (0 when t is outside [0, cols)),  H = −Σ p log p = log s − Σ e·(z−m) / s
 * Backward: dz_k = gl·([k = t] − p_k) − gh·p_k·(z_k − lse + H).
 */
typedef struct {
  const float *z;
  const int32_t *t;
  float *stats; /* [lp(rows), H(rows)] */
  float *lse;
  const float *dy; /* [gl(rows), gh(rows)] (backward) */
  float *dz;
  size_t rows, cols;
} lps_ctx;

POAD_CLONES
static void lps_row(const float *restrict z, size_t n, float *m_out, float *s_out, float *tz_out) {
  float m = poad_max8(z, n);
  float s8[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  float t8[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; j++) {
      float d = z[i + j] - m;
      float e = poad_expf(d);
      s8[j] += e;
      t8[j] += e * d;
    }
  float s = 0.0f, tz = 0.0f;
  for (int j = 0; j < 8; j++) {
    s += s8[j];
    tz += t8[j];
  }
  for (; i < n; i++) {
    float d = z[i] - m;
    float e = poad_expf(d);
    s += e;
    tz += e * d;
  }
  *m_out = m;
  *s_out = s;
  *tz_out = tz;
}

static void lps_chunk(void *p, size_t b, size_t e) {
  lps_ctx *c = (lps_ctx *)p;
  for (size_t r = b; r < e; r++) {
    const float *z = c->z + r * c->cols;
    float m, s, tz;
    lps_row(z, c->cols, &m, &s, &tz);
    float logs = logf(s);
    float lse = m + logs;
    int32_t t = c->t[r];
    c->stats[r] = (t >= 0 && (size_t)t < c->cols) ? z[t] - lse : 0.0f;
    c->stats[c->rows + r] = logs - tz / s;
    c->lse[r] = lse;
  }
}

POAD_CLONES
static void lps_grad_row(const float *restrict z, float *restrict dz, size_t n, float lse, float h,
                         float gl, float gh) {
  for (size_t k = 0; k < n; k++) {
    float lp = z[k] - lse;
    float p = poad_expf(lp);
    dz[k] = -gl * p - gh * p * (lp + h);
  }
}

static void lps_grad_chunk(void *p, size_t b, size_t e) {
  lps_ctx *c = (lps_ctx *)p;
  for (size_t r = b; r < e; r++) {
    float gl = c->dy[r];
    lps_grad_row(c->z + r * c->cols, c->dz + r * c->cols, c->cols, c->lse[r], c->stats[c->rows + r],
                 gl, c->dy[c->rows + r]);
    int32_t t = c->t[r];
    if (t >= 0 && (size_t)t < c->cols) c->dz[r * c->cols + (size_t)t] += gl;
  }
}

/* logProbStats(heap, zOff, tOff, statsOff, lseOff, rows, cols) */
napi_value js_log_prob_stats(napi_env env, napi_callback_info info) {
  GET_ARGS(7);
  heap_t heap;
  int64_t zOff, tOff, sOff, lOff, rows, cols;
  if (!get_heap(env, argv[0], &heap) || !get_size(env, argv[1], "logitsOffset", &zOff) ||
      !get_size(env, argv[2], "targetsOffset", &tOff) ||
      !get_size(env, argv[3], "statsOffset", &sOff) || !get_size(env, argv[4], "lseOffset", &lOff) ||
      !get_size(env, argv[5], "rows", &rows) || !get_size(env, argv[6], "cols", &cols) ||
      !check_range(env, &heap, zOff, rows * cols, "logProbStats logits") ||
      !check_range(env, &heap, tOff, rows, "logProbStats targets") ||
      !check_range(env, &heap, sOff, 2 * rows, "logProbStats stats") ||
      !check_range(env, &heap, lOff, rows, "logProbStats lse"))
    return NULL;
  if (cols == 0) {
    throw_error(env, "logProbStats: the vocabulary axis is empty");
    return NULL;
  }
  lps_ctx ctx = {(const float *)(heap.data + zOff),
                 (const int32_t *)(heap.data + tOff),
                 (float *)(heap.data + sOff),
                 (float *)(heap.data + lOff),
                 NULL,
                 NULL,
                 (size_t)rows,
                 (size_t)cols};
  parallel_for((size_t)rows, (size_t)(POAD_PARALLEL_MIN / (uint64_t)cols) + 1, 1, lps_chunk, &ctx);
  return NULL;
}

/* logProbStatsGrad(heap, zOff, tOff, lseOff, statsOff, dyOff, dzOff, rows, cols) */
napi_value js_log_prob_stats_grad(napi_env env, napi_callback_info info) {
  GET_ARGS(9);
  heap_t heap;
  int64_t zOff, tOff, lOff, sOff, dyOff, dzOff, rows, cols;
  if (!get_heap(env, argv[0], &heap) || !get_size(env, argv[1], "logitsOffset", &zOff) ||
      !get_size(env, argv[2], "targetsOffset", &tOff) || !get_size(env, argv[3], "lseOffset", &lOff) ||
      !get_size(env, argv[4], "statsOffset", &sOff) || !get_size(env, argv[5], "dyOffset", &dyOff) ||
      !get_size(env, argv[6], "dzOffset", &dzOff) || !get_size(env, argv[7], "rows", &rows) ||
      !get_size(env, argv[8], "cols", &cols) ||
      !check_range(env, &heap, zOff, rows * cols, "logProbStatsGrad logits") ||
      !check_range(env, &heap, tOff, rows, "logProbStatsGrad targets") ||
      !check_range(env, &heap, lOff, rows, "logProbStatsGrad lse") ||
      !check_range(env, &heap, sOff, 2 * rows, "logProbStatsGrad stats") ||
      !check_range(env, &heap, dyOff, 2 * rows, "logProbStatsGrad dy") ||
      !check_range(env, &heap, dzOff, rows * cols, "logProbStatsGrad dz"))
    return NULL;
  if (cols == 0) return NULL;
  lps_ctx ctx = {(const float *)(heap.data + zOff),
                 (const int32_t *)(heap.data + tOff),
                 (float *)(heap.data + sOff),
                 (float *)(heap.data + lOff),
                 (const float *)(heap.data + dyOff),
                 (float *)(heap.data + dzOff),
                 (size_t)rows,
                 (size_t)cols};
  parallel_for((size_t)rows, (size_t)(POAD_PARALLEL_MIN / (uint64_t)cols) + 1, 1, lps_grad_chunk, &ctx);
  return NULL;
}
