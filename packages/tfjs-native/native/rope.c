/* Fused rotary embedding (rotate-half); its transpose gives the gradient. */
#include "common.h"

/*
 * Rotary embedding, rotate-half form, rows of `heads` heads of 2·half values each:
 *   y1 = x1·c − x2·s,  y2 = x2·c + x1·s     (c, s: one row of `half` values per x row)
 * The transpose (for the gradient) is the same map with s → −s.
 */
typedef struct {
  const float *x, *c, *s;
  float *y;
  size_t heads, half;
  float sign;
} rope_ctx;

POAD_CLONES
static void rope_row(const float *restrict x, const float *restrict c, const float *restrict s,
                     float *restrict y, size_t heads, size_t half, float sign) {
  for (size_t h = 0; h < heads; h++) {
    const float *x1 = x + h * 2 * half;
    const float *x2 = x1 + half;
    float *y1 = y + h * 2 * half;
    float *y2 = y1 + half;
    for (size_t i = 0; i < half; i++) {
      float si = sign * s[i];
      y1[i] = x1[i] * c[i] - x2[i] * si;
      y2[i] = x2[i] * c[i] + x1[i] * si;
    }
  }
}

static void rope_chunk(void *p, size_t b, size_t e) {
  rope_ctx *c = (rope_ctx *)p;
  size_t width = c->heads * 2 * c->half;
  for (size_t r = b; r < e; r++)
    rope_row(c->x + r * width, c->c + r * c->half, c->s + r * c->half, c->y + r * width, c->heads,
             c->half, c->sign);
}

/* rope(heap, xOff, cosOff, sinOff, yOff, rows, heads, half, transpose) */
napi_value js_rope(napi_env env, napi_callback_info info) {
  GET_ARGS(9);
  heap_t heap;
  int64_t xOff, cOff, sOff, yOff, rows, heads, half;
  bool transpose;
  if (!get_heap(env, argv[0], &heap) || !get_size(env, argv[1], "xOffset", &xOff) ||
      !get_size(env, argv[2], "cosOffset", &cOff) || !get_size(env, argv[3], "sinOffset", &sOff) ||
      !get_size(env, argv[4], "yOffset", &yOff) || !get_size(env, argv[5], "rows", &rows) ||
      !get_size(env, argv[6], "heads", &heads) || !get_size(env, argv[7], "half", &half) ||
      !check_range(env, &heap, xOff, rows * heads * 2 * half, "rope x") ||
      !check_range(env, &heap, cOff, rows * half, "rope cos") ||
      !check_range(env, &heap, sOff, rows * half, "rope sin") ||
      !check_range(env, &heap, yOff, rows * heads * 2 * half, "rope y"))
    return NULL;
  napi_get_value_bool(env, argv[8], &transpose);
  if (half == 0 || heads == 0) return NULL;
  rope_ctx ctx = {(const float *)(heap.data + xOff), (const float *)(heap.data + cOff),
                  (const float *)(heap.data + sOff), (float *)(heap.data + yOff),
                  (size_t)heads, (size_t)half, transpose ? -1.0f : 1.0f};
  size_t width = (size_t)(heads * 2 * half);
  parallel_for((size_t)rows, POAD_PARALLEL_MIN / width + 1, 1, rope_chunk, &ctx);
  return NULL;
}
