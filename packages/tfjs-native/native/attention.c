/* Fused causal self-attention (any additive mask, grouped-query heads), forward and backward. */
#include "common.h"

/*
 * Layout: q and the output are [batch·seq, heads·hd], k and v are [batch·seq, kvHeads·hd], row
 * b·seq + t holds position t of sequence b and head h occupies columns h·hd .. h·hd + hd − 1.
 * Query head h reads kv head h / (heads / kvHeads). Every product below addresses one head's
 * [seq, hd] block in place with the row stride of its tensor as leading dimension, so q, k, v
 * and the gradients are never transposed or copied.
 *
 * Forward, per (b, h):  P = softmax(scale · Q Kᵀ + mask[b]) (kept for the backward),  O = P V.
 * Backward, per (b, h): dV += Pᵀ dO,  dP = dO Vᵀ,  dS = P ⊙ (dP − rowsum(dP ⊙ P)),
 *                       dQ = scale · dS K,  dK += scale · dSᵀ Q.
 * The backward runs one task per (b, kv head): the query heads sharing a kv head are handled in
 * turn by the same task, so their dK and dV accumulate without races.
 */

/* Per-task products up to this size (seq·seq·hd) spread tasks over threads; see gemm.c. */
#define POAD_ATTN_SMALL (256 * 256 * 256)

typedef struct {
  const float *q, *k, *v, *mask, *probs, *dy;
  float *out, *p, *dq, *dk, *dv;
  size_t seq, heads, kv_heads, hd;
  float scale;
  volatile int failed; /* set by a backward task that could not allocate its scratch */
} attn_ctx;

/* One score row s (already scale · q·k): s += mask, then softmax in place. */
POAD_CLONES
static void attn_softmax_row(float *restrict s, const float *restrict mask, size_t n) {
  float m = -INFINITY;
  for (size_t j = 0; j < n; j++) {
    float x = s[j] + mask[j];
    s[j] = x;
    m = x > m ? x : m;
  }
  if (m == -INFINITY) {
    /* every key masked with -Infinity: the row attends to nothing */
    for (size_t j = 0; j < n; j++) s[j] = 0.0f;
    return;
  }
  float sum = 0.0f;
  for (size_t j = 0; j < n; j++) {
    float e = poad_expf(s[j] - m);
    s[j] = e;
    sum += e;
  }
  float inv = 1.0f / sum;
  for (size_t j = 0; j < n; j++) s[j] *= inv;
}

/* One row of dS from dP (in place) and P: dS = P ⊙ (dP − Σ dP ⊙ P). */
POAD_CLONES
static void attn_softmax_grad_row(float *restrict ds, const float *restrict p, size_t n) {
  float dot = poad_dot8(ds, p, n);
  for (size_t j = 0; j < n; j++) ds[j] = p[j] * (ds[j] - dot);
}

/* Tasks [begin, end) of the forward, task = b · heads + h. */
static void attn_forward_chunk(void *arg, size_t begin, size_t end) {
  attn_ctx *c = (attn_ctx *)arg;
  const size_t seq = c->seq, hd = c->hd, group = c->heads / c->kv_heads;
  const int ldq = (int)(c->heads * hd), ldk = (int)(c->kv_heads * hd), n = (int)seq;
  for (size_t task = begin; task < end; task++) {
    size_t b = task / c->heads, h = task % c->heads, kvh = h / group;
    const float *q = c->q + b * seq * (size_t)ldq + h * hd;
    const float *k = c->k + b * seq * (size_t)ldk + kvh * hd;
    const float *v = c->v + b * seq * (size_t)ldk + kvh * hd;
    const float *mask = c->mask + b * seq * seq;
    float *p = c->p + task * seq * seq;
    float *o = c->out + b * seq * (size_t)ldq + h * hd;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, (int)hd, c->scale, q, ldq, k, ldk,
                0.0f, p, n);
    for (size_t t = 0; t < seq; t++) attn_softmax_row(p + t * seq, mask + t * seq, seq);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, (int)hd, n, 1.0f, p, n, v, ldk, 0.0f,
                o, ldq);
  }
}

/* Tasks [begin, end) of the backward, task = b · kvHeads + kv head; one dS scratch per chunk. */
static void attn_backward_chunk(void *arg, size_t begin, size_t end) {
  attn_ctx *c = (attn_ctx *)arg;
  const size_t seq = c->seq, hd = c->hd, group = c->heads / c->kv_heads;
  const int ldq = (int)(c->heads * hd), ldk = (int)(c->kv_heads * hd), n = (int)seq;
  float *ds = (float *)malloc(seq * seq * sizeof(float));
  if (!ds) {
    c->failed = 1;
    return;
  }
  for (size_t task = begin; task < end; task++) {
    size_t b = task / c->kv_heads, kvh = task % c->kv_heads;
    const float *k = c->k + b * seq * (size_t)ldk + kvh * hd;
    const float *v = c->v + b * seq * (size_t)ldk + kvh * hd;
    float *dk = c->dk + b * seq * (size_t)ldk + kvh * hd;
    float *dv = c->dv + b * seq * (size_t)ldk + kvh * hd;
    for (size_t i = 0; i < group; i++) {
      size_t h = kvh * group + i;
      const float *q = c->q + b * seq * (size_t)ldq + h * hd;
      const float *dy = c->dy + b * seq * (size_t)ldq + h * hd;
      const float *p = c->probs + (b * c->heads + h) * seq * seq;
      float *dq = c->dq + b * seq * (size_t)ldq + h * hd;
      float beta = i == 0 ? 0.0f : 1.0f; /* the first head of the group overwrites dK and dV */
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n, (int)hd, n, 1.0f, p, n, dy, ldq,
                  beta, dv, ldk);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, (int)hd, 1.0f, dy, ldq, v, ldk,
                  0.0f, ds, n);
      for (size_t t = 0; t < seq; t++) attn_softmax_grad_row(ds + t * seq, p + t * seq, seq);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, (int)hd, n, c->scale, ds, n, k,
                  ldk, 0.0f, dq, ldq);
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n, (int)hd, n, c->scale, ds, n, q, ldq,
                  beta, dk, ldk);
    }
  }
  free(ds);
}

/*
 * Runs `tasks` tasks: spread over threads (one BLAS thread each) when there are enough of them
 * or they are small, else one after the other with the BLAS threads on each product.
 */
static void attn_run(size_t tasks, range_fn fn, attn_ctx *ctx) {
  size_t threads = (size_t)g_elementwise_threads;
  uint64_t work = (uint64_t)ctx->seq * ctx->seq * ctx->hd;
  bool spread = tasks >= 2 && threads > 1 && (tasks >= threads || work <= POAD_ATTN_SMALL);
#if defined(POAD_BLAS_OPENBLAS)
  int saved = spread ? openblas_get_num_threads() : 1;
  if (saved > 1) openblas_set_num_threads(1);
#endif
  if (spread)
    parallel_for(tasks, 1, 1, fn, ctx);
  else
    fn(ctx, 0, tasks);
#if defined(POAD_BLAS_OPENBLAS)
  if (saved > 1) openblas_set_num_threads(saved);
#endif
}

/* Reads batch, seq, heads, kvHeads, hd from argv[0..4] and checks how they fit. */
static int get_dims(napi_env env, napi_value *argv, int64_t *dims) {
  static const char *names[5] = {"batch", "seq", "heads", "kvHeads", "headDim"};
  for (int i = 0; i < 5; i++)
    if (!get_size(env, argv[i], names[i], &dims[i])) return 0;
  int64_t batch = dims[0], seq = dims[1], heads = dims[2], kv = dims[3], hd = dims[4];
  if (heads == 0 || kv == 0 || heads % kv != 0)
    return throw_error(env, "attention: heads must be a positive multiple of kvHeads");
  if (hd == 0) return throw_error(env, "attention: headDim must be at least 1");
  if (seq > INT32_MAX || hd > INT32_MAX || heads * hd > INT32_MAX || batch * seq > INT32_MAX)
    return throw_error(env, "attention: a dimension exceeds 2^31 - 1");
  return 1;
}

/* The part of the context both passes share: q, k and v in the heap, the sizes d, the scale. */
static attn_ctx attn_inputs(const heap_t *heap, int64_t qOff, int64_t kOff, int64_t vOff,
                            const int64_t *d, float scale) {
  attn_ctx c = {0};
  c.q = (const float *)(heap->data + qOff);
  c.k = (const float *)(heap->data + kOff);
  c.v = (const float *)(heap->data + vOff);
  c.seq = (size_t)d[1];
  c.heads = (size_t)d[2];
  c.kv_heads = (size_t)d[3];
  c.hd = (size_t)d[4];
  c.scale = scale;
  return c;
}

/* attention(heap, qOff, kOff, vOff, maskOff, outOff, probsOff, batch, seq, heads, kvHeads, hd, scale) */
napi_value js_attention(napi_env env, napi_callback_info info) {
  GET_ARGS(13);
  heap_t heap;
  int64_t qOff, kOff, vOff, mOff, oOff, pOff, d[5];
  float scale;
  if (!get_heap(env, argv[0], &heap) || !get_size(env, argv[1], "qOffset", &qOff) ||
      !get_size(env, argv[2], "kOffset", &kOff) || !get_size(env, argv[3], "vOffset", &vOff) ||
      !get_size(env, argv[4], "maskOffset", &mOff) || !get_size(env, argv[5], "outOffset", &oOff) ||
      !get_size(env, argv[6], "probsOffset", &pOff) || !get_dims(env, argv + 7, d) ||
      !get_float(env, argv[12], "scale", &scale))
    return NULL;
  int64_t batch = d[0], seq = d[1], heads = d[2], kv = d[3], hd = d[4];
  if (!check_range(env, &heap, qOff, batch * seq * heads * hd, "attention q") ||
      !check_range(env, &heap, kOff, batch * seq * kv * hd, "attention k") ||
      !check_range(env, &heap, vOff, batch * seq * kv * hd, "attention v") ||
      !check_range(env, &heap, mOff, batch * seq * seq, "attention mask") ||
      !check_range(env, &heap, oOff, batch * seq * heads * hd, "attention out") ||
      !check_range(env, &heap, pOff, batch * heads * seq * seq, "attention probs"))
    return NULL;
  if (batch == 0 || seq == 0) return NULL;
  attn_ctx ctx = attn_inputs(&heap, qOff, kOff, vOff, d, scale);
  ctx.mask = (const float *)(heap.data + mOff);
  ctx.out = (float *)(heap.data + oOff);
  ctx.p = (float *)(heap.data + pOff);
  attn_run((size_t)(batch * heads), attn_forward_chunk, &ctx);
  return NULL;
}

/*
 * attentionGrad(heap, qOff, kOff, vOff, probsOff, dyOff, dqOff, dkOff, dvOff,
 *               batch, seq, heads, kvHeads, hd, scale)
 */
napi_value js_attention_grad(napi_env env, napi_callback_info info) {
  GET_ARGS(15);
  heap_t heap;
  int64_t qOff, kOff, vOff, pOff, dyOff, dqOff, dkOff, dvOff, d[5];
  float scale;
  if (!get_heap(env, argv[0], &heap) || !get_size(env, argv[1], "qOffset", &qOff) ||
      !get_size(env, argv[2], "kOffset", &kOff) || !get_size(env, argv[3], "vOffset", &vOff) ||
      !get_size(env, argv[4], "probsOffset", &pOff) || !get_size(env, argv[5], "dyOffset", &dyOff) ||
      !get_size(env, argv[6], "dqOffset", &dqOff) || !get_size(env, argv[7], "dkOffset", &dkOff) ||
      !get_size(env, argv[8], "dvOffset", &dvOff) || !get_dims(env, argv + 9, d) ||
      !get_float(env, argv[14], "scale", &scale))
    return NULL;
  int64_t batch = d[0], seq = d[1], heads = d[2], kv = d[3], hd = d[4];
  if (!check_range(env, &heap, qOff, batch * seq * heads * hd, "attentionGrad q") ||
      !check_range(env, &heap, kOff, batch * seq * kv * hd, "attentionGrad k") ||
      !check_range(env, &heap, vOff, batch * seq * kv * hd, "attentionGrad v") ||
      !check_range(env, &heap, pOff, batch * heads * seq * seq, "attentionGrad probs") ||
      !check_range(env, &heap, dyOff, batch * seq * heads * hd, "attentionGrad dy") ||
      !check_range(env, &heap, dqOff, batch * seq * heads * hd, "attentionGrad dq") ||
      !check_range(env, &heap, dkOff, batch * seq * kv * hd, "attentionGrad dk") ||
      !check_range(env, &heap, dvOff, batch * seq * kv * hd, "attentionGrad dv"))
    return NULL;
  if (batch == 0 || seq == 0) return NULL;
  attn_ctx ctx = attn_inputs(&heap, qOff, kOff, vOff, d, scale);
  ctx.probs = (const float *)(heap.data + pOff);
  ctx.dy = (const float *)(heap.data + dyOff);
  ctx.dq = (float *)(heap.data + dqOff);
  ctx.dk = (float *)(heap.data + dkOff);
  ctx.dv = (float *)(heap.data + dvOff);
  attn_run((size_t)(batch * kv), attn_backward_chunk, &ctx);
  if (ctx.failed) throw_error(env, "attentionGrad: out of memory for a [seq, seq] scratch buffer");
  return NULL;
}
