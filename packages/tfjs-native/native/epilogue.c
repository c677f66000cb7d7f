/* Bias + activation: the epilogue of a fused matmul. */
#include "common.h"

enum {
  ACT_LINEAR = 0,
  ACT_RELU = 1,
  ACT_RELU6 = 2,
  ACT_LEAKY = 3,
  ACT_ELU = 4,
  ACT_SIGMOID = 5,
  ACT_PRELU = 6
};

typedef struct {
  float *c;
  const float *bias;
  size_t n;         /* row length */
  size_t bias_size; /* 0 none, 1 scalar, n per column, else full */
  int act;
  float alpha;
  const float *prelu; /* PReLU slopes, laid out like the bias */
  size_t prelu_size;
} epilogue_ctx;

POAD_CLONES
static void epilogue_range(float *restrict c, const float *restrict bias, size_t begin, size_t end,
                           size_t n, size_t bias_size, int act, float alpha,
                           const float *restrict prelu, size_t prelu_size) {
  if (bias_size == 1) {
    float b = bias[0];
    for (size_t i = begin; i < end; i++) c[i] += b;
  } else if (bias_size == n) {
    for (size_t i = begin; i < end; i++) c[i] += bias[i % n];
  } else if (bias_size > 0) {
    for (size_t i = begin; i < end; i++) c[i] += bias[i];
  }
  switch (act) {
  case ACT_RELU:
    for (size_t i = begin; i < end; i++) c[i] = c[i] > 0.0f ? c[i] : 0.0f;
    break;
  case ACT_RELU6:
    for (size_t i = begin; i < end; i++) {
      float v = c[i] > 0.0f ? c[i] : 0.0f;
      c[i] = v < 6.0f ? v : 6.0f;
    }
    break;
  case ACT_LEAKY:
    for (size_t i = begin; i < end; i++) c[i] = c[i] < 0.0f ? c[i] * alpha : c[i];
    break;
  case ACT_ELU:
    for (size_t i = begin; i < end; i++) c[i] = c[i] < 0.0f ? poad_expf(c[i]) - 1.0f : c[i];
    break;
  case ACT_SIGMOID:
    for (size_t i = begin; i < end; i++) c[i] = 1.0f / (1.0f + poad_expf(-c[i]));
    break;
  case ACT_PRELU:
    if (prelu_size == 1) {
      float w = prelu[0];
      for (size_t i = begin; i < end; i++) c[i] = c[i] < 0.0f ? c[i] * w : c[i];
    } else if (prelu_size == n) {
      for (size_t i = begin; i < end; i++) c[i] = c[i] < 0.0f ? c[i] * prelu[i % n] : c[i];
    } else {
      for (size_t i = begin; i < end; i++) c[i] = c[i] < 0.0f ? c[i] * prelu[i] : c[i];
    }
    break;
  default:
    break;
  }
}

static void epilogue_chunk(void *p, size_t b, size_t e) {
  epilogue_ctx *c = (epilogue_ctx *)p;
  epilogue_range(c->c, c->bias, b, e, c->n, c->bias_size, c->act, c->alpha, c->prelu,
                 c->prelu_size);
}

/*
 * epilogue(heap, cOff, size, n, biasOff, biasSize, act, alpha, preluOff, preluSize):
 * bias (biasSize 0 = none, 1 scalar, n per column, size full), then the activation.
 */
napi_value js_epilogue(napi_env env, napi_callback_info info) {
  GET_ARGS(10);
  heap_t heap;
  int64_t cOff, size, n, biasOff, biasSize, act, preluOff, preluSize;
  float alpha;
  if (!get_heap(env, argv[0], &heap) || !get_size(env, argv[1], "cOffset", &cOff) ||
      !get_size(env, argv[2], "size", &size) || !get_size(env, argv[3], "n", &n) ||
      !get_size(env, argv[4], "biasOffset", &biasOff) ||
      !get_size(env, argv[5], "biasSize", &biasSize) || !get_size(env, argv[6], "act", &act) ||
      !get_float(env, argv[7], "alpha", &alpha) ||
      !get_size(env, argv[8], "preluOffset", &preluOff) ||
      !get_size(env, argv[9], "preluSize", &preluSize))
    return NULL;
  if (!check_range(env, &heap, cOff, size, "epilogue C") ||
      (biasSize > 0 && !check_range(env, &heap, biasOff, biasSize, "epilogue bias")) ||
      (preluSize > 0 && !check_range(env, &heap, preluOff, preluSize, "epilogue prelu")))
    return NULL;
  if ((biasSize > 1 && biasSize != n && biasSize != size) ||
      (act == ACT_PRELU && preluSize != 1 && preluSize != n && preluSize != size)) {
    throw_error(env, "epilogue: bias and PReLU weights must have 1, n or size elements");
    return NULL;
  }
  if (act > ACT_PRELU) {
    throw_error(env, "epilogue: unknown activation code");
    return NULL;
  }
  if (n == 0) return NULL;
  epilogue_ctx ctx = {(float *)(heap.data + cOff),
                      (const float *)(heap.data + biasOff),
                      (size_t)n,
                      (size_t)biasSize,
                      (int)act,
                      alpha,
                      (const float *)(heap.data + preluOff),
                      (size_t)preluSize};
  /* chunks are whole rows so that per-column bias indexing stays simple */
  parallel_for((size_t)size, POAD_PARALLEL_MIN, (size_t)n, epilogue_chunk, &ctx);
  return NULL;
}
