/* Fused SwiGLU gate, forward and backward. */
#include "common.h"

/* SwiGLU: y = g · sigmoid(g) · u; dg = dy · u · s · (1 + g · (1 − s)), du = dy · g · s. */
typedef struct {
  const float *g, *u, *dy;
  float *y, *dg, *du;
} swiglu_ctx;

POAD_CLONES
static void swiglu_range(const float *restrict g, const float *restrict u, float *restrict y,
                         size_t n) {
  for (size_t i = 0; i < n; i++) y[i] = g[i] / (1.0f + poad_expf(-g[i])) * u[i];
}

POAD_CLONES
static void swiglu_grad_range(const float *restrict g, const float *restrict u,
                              const float *restrict dy, float *restrict dg, float *restrict du,
                              size_t n) {
  for (size_t i = 0; i < n; i++) {
    float s = 1.0f / (1.0f + poad_expf(-g[i]));
    du[i] = dy[i] * g[i] * s;
    dg[i] = dy[i] * u[i] * s * (1.0f + g[i] * (1.0f - s));
  }
}

static void swiglu_chunk(void *p, size_t b, size_t e) {
  swiglu_ctx *c = (swiglu_ctx *)p;
  swiglu_range(c->g + b, c->u + b, c->y + b, e - b);
}

static void swiglu_grad_chunk(void *p, size_t b, size_t e) {
  swiglu_ctx *c = (swiglu_ctx *)p;
  swiglu_grad_range(c->g + b, c->u + b, c->dy + b, c->dg + b, c->du + b, e - b);
}


/* swiGlu(heap, gOff, uOff, yOff, count) */
napi_value js_swiglu(napi_env env, napi_callback_info info) {
  GET_ARGS(5);
  heap_t heap;
  int64_t gOff, uOff, yOff, count;
  if (!get_heap(env, argv[0], &heap) || !get_size(env, argv[1], "gateOffset", &gOff) ||
      !get_size(env, argv[2], "upOffset", &uOff) || !get_size(env, argv[3], "yOffset", &yOff) ||
      !get_size(env, argv[4], "count", &count) ||
      !check_range(env, &heap, gOff, count, "swiGlu gate") ||
      !check_range(env, &heap, uOff, count, "swiGlu up") ||
      !check_range(env, &heap, yOff, count, "swiGlu y"))
    return NULL;
  swiglu_ctx ctx = {(const float *)(heap.data + gOff), (const float *)(heap.data + uOff), NULL,
                    (float *)(heap.data + yOff), NULL, NULL};
  parallel_for((size_t)count, POAD_PARALLEL_MIN, 64, swiglu_chunk, &ctx);
  return NULL;
}

/* swiGluGrad(heap, gOff, uOff, dyOff, dgOff, duOff, count) */
napi_value js_swiglu_grad(napi_env env, napi_callback_info info) {
  GET_ARGS(7);
  heap_t heap;
  int64_t gOff, uOff, dyOff, dgOff, duOff, count;
  if (!get_heap(env, argv[0], &heap) || !get_size(env, argv[1], "gateOffset", &gOff) ||
      !get_size(env, argv[2], "upOffset", &uOff) || !get_size(env, argv[3], "dyOffset", &dyOff) ||
      !get_size(env, argv[4], "dgOffset", &dgOff) || !get_size(env, argv[5], "duOffset", &duOff) ||
      !get_size(env, argv[6], "count", &count) ||
      !check_range(env, &heap, gOff, count, "swiGluGrad gate") ||
      !check_range(env, &heap, uOff, count, "swiGluGrad up") ||
      !check_range(env, &heap, dyOff, count, "swiGluGrad dy") ||
      !check_range(env, &heap, dgOff, count, "swiGluGrad dg") ||
      !check_range(env, &heap, duOff, count, "swiGluGrad du"))
    return NULL;
  swiglu_ctx ctx = {(const float *)(heap.data + gOff), (const float *)(heap.data + uOff),
                    (const float *)(heap.data + dyOff), NULL, (float *)(heap.data + dgOff),
                    (float *)(heap.data + duOff)};
  parallel_for((size_t)count, POAD_PARALLEL_MIN, 64, swiglu_grad_chunk, &ctx);
  return NULL;
}
