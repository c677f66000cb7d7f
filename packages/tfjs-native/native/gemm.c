/* Batched, broadcast, transposed matrix products through CBLAS sgemm. */
#include "common.h"

/* Products with m·n·k at most this run one per thread when batched. */
#define POAD_SMALL_GEMM (256 * 256 * 256)
/* Single products with m·n·k at most this use one BLAS thread. */
#define POAD_TINY_GEMM (1 << 22)

typedef struct {
  const float *A, *B;
  float *C;
  int64_t m, n, k;
  bool tA, tB;
  int64_t aBatch, bBatch;
  const int32_t *aIdx, *bIdx;
} gemm_ctx;

static void gemm_chunk(void *p, size_t begin, size_t end) {
  gemm_ctx *g = (gemm_ctx *)p;
  int lda = g->tA ? (int)g->m : (int)g->k;
  int ldb = g->tB ? (int)g->k : (int)g->n;
  for (size_t i = begin; i < end; i++) {
    int64_t ai = g->aIdx ? g->aIdx[i] : (g->aBatch == 1 ? 0 : (int64_t)i);
    int64_t bi = g->bIdx ? g->bIdx[i] : (g->bBatch == 1 ? 0 : (int64_t)i);
    cblas_sgemm(CblasRowMajor, g->tA ? CblasTrans : CblasNoTrans, g->tB ? CblasTrans : CblasNoTrans,
                (int)g->m, (int)g->n, (int)g->k, 1.0f, g->A + ai * g->m * g->k, lda,
                g->B + bi * g->k * g->n, ldb, 0.0f, g->C + (int64_t)i * g->m * g->n, (int)g->n);
  }
}

/*
 * gemm(heap, aOff, bOff, cOff, batch, m, n, k, transposeA, transposeB,
 *      aBatch, bBatch, aIndex, bIndex)
 * C[i] = op(A[aIndex[i]]) * op(B[bIndex[i]]) for i < batch, row-major, C contiguous.
 * A null index means "i" when that side has `batch` matrices and "0" when it has one.
 */
napi_value js_gemm(napi_env env, napi_callback_info info) {
  GET_ARGS(14);
  heap_t heap;
  int64_t aOff, bOff, cOff, batch, m, n, k, aBatch, bBatch;
  bool tA, tB;
  const int32_t *aIdx, *bIdx;
  size_t aIdxLen, bIdxLen;
  if (!get_heap(env, argv[0], &heap) || !get_size(env, argv[1], "aOffset", &aOff) ||
      !get_size(env, argv[2], "bOffset", &bOff) || !get_size(env, argv[3], "cOffset", &cOff) ||
      !get_size(env, argv[4], "batch", &batch) || !get_size(env, argv[5], "m", &m) ||
      !get_size(env, argv[6], "n", &n) || !get_size(env, argv[7], "k", &k) ||
      !get_size(env, argv[10], "aBatch", &aBatch) || !get_size(env, argv[11], "bBatch", &bBatch) ||
      !get_index(env, argv[12], "aIndex", &aIdx, &aIdxLen) ||
      !get_index(env, argv[13], "bIndex", &bIdx, &bIdxLen))
    return NULL;
  napi_get_value_bool(env, argv[8], &tA);
  napi_get_value_bool(env, argv[9], &tB);
  if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX) {
    throw_error(env, "gemm: a matrix dimension exceeds 2^31 - 1");
    return NULL;
  }
  if ((aIdx && (int64_t)aIdxLen < batch) || (bIdx && (int64_t)bIdxLen < batch) ||
      (!aIdx && aBatch != batch && aBatch != 1) || (!bIdx && bBatch != batch && bBatch != 1)) {
    throw_error(env, "gemm: batch indices do not match the batch sizes");
    return NULL;
  }
  if (!check_range(env, &heap, aOff, aBatch * m * k, "gemm A") ||
      !check_range(env, &heap, bOff, bBatch * k * n, "gemm B") ||
      !check_range(env, &heap, cOff, batch * m * n, "gemm C"))
    return NULL;
  for (int64_t i = 0; i < batch; i++) {
    if ((aIdx && (aIdx[i] < 0 || aIdx[i] >= aBatch)) ||
        (bIdx && (bIdx[i] < 0 || bIdx[i] >= bBatch))) {
      throw_error(env, "gemm: a batch index is out of range");
      return NULL;
    }
  }
  const float *A = (const float *)(heap.data + aOff);
  const float *B = (const float *)(heap.data + bOff);
  float *C = (float *)(heap.data + cOff);
  if (m == 0 || n == 0 || batch == 0) return NULL;
  if (k == 0) {
    memset(C, 0, (size_t)(batch * m * n) * 4u);
    return NULL;
  }
  gemm_ctx ctx = {A, B, C, m, n, k, tA, tB, aBatch, bBatch, aIdx, bIdx};
  int64_t mnk = m * n * k;
  /*
   * Many small products (attention): one single-threaded BLAS call per matrix, matrices spread
   * over threads. Small single products (LoRA adapters): one BLAS thread. Splitting a small
   * product across BLAS threads costs more in synchronisation than it gains.
   */
  bool batch_parallel = batch >= 2 && g_elementwise_threads > 1 && mnk <= POAD_SMALL_GEMM;
  bool single = batch_parallel || (batch == 1 && mnk <= POAD_TINY_GEMM);
#if defined(POAD_BLAS_OPENBLAS)
  int saved = single ? openblas_get_num_threads() : 1;
  if (saved > 1) openblas_set_num_threads(1);
#endif
  if (batch_parallel)
    parallel_for((size_t)batch, 1, 1, gemm_chunk, &ctx);
  else
    gemm_chunk(&ctx, 0, (size_t)batch);
#if defined(POAD_BLAS_OPENBLAS)
  if (saved > 1) openblas_set_num_threads(saved);
#else
  (void)single;
#endif
  return NULL;
}
