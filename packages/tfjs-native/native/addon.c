/* Module registration, thread settings and build information. */
#include "common.h"

static int blas_threads(void) {
#if defined(POAD_BLAS_OPENBLAS)
  return openblas_get_num_threads();
#else
  return 0;
#endif
}

/* setThreads(blasThreads, elementwiseThreads): 0 leaves a setting unchanged. */
static napi_value js_set_threads(napi_env env, napi_callback_info info) {
  GET_ARGS(2);
  int64_t blas, elem;
  if (!get_size(env, argv[0], "blasThreads", &blas) ||
      !get_size(env, argv[1], "elementwiseThreads", &elem))
    return NULL;
#if defined(POAD_BLAS_OPENBLAS)
  if (blas > 0) openblas_set_num_threads((int)(blas > 256 ? 256 : blas));
#endif
  if (elem > 0) g_elementwise_threads = (int)(elem > POAD_MAX_THREADS ? POAD_MAX_THREADS : elem);
  return NULL;
}

static void set_prop_str(napi_env env, napi_value obj, const char *key, const char *val) {
  napi_value v;
  napi_create_string_utf8(env, val, NAPI_AUTO_LENGTH, &v);
  napi_set_named_property(env, obj, key, v);
}

static void set_prop_num(napi_env env, napi_value obj, const char *key, double val) {
  napi_value v;
  napi_create_double(env, val, &v);
  napi_set_named_property(env, obj, key, v);
}

static void set_prop_bool(napi_env env, napi_value obj, const char *key, bool val) {
  napi_value v;
  napi_get_boolean(env, val, &v);
  napi_set_named_property(env, obj, key, v);
}

/* info(): what the addon was built against and how it will run. */
static napi_value js_info(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value obj;
  napi_create_object(env, &obj);
  set_prop_str(env, obj, "blas", POAD_BLAS_NAME);
#if defined(POAD_BLAS_OPENBLAS)
  set_prop_str(env, obj, "blasConfig", openblas_get_config());
  set_prop_str(env, obj, "blasCore", openblas_get_corename());
#else
  set_prop_str(env, obj, "blasConfig", "");
  set_prop_str(env, obj, "blasCore", "");
#endif
  set_prop_num(env, obj, "blasThreads", blas_threads());
  set_prop_num(env, obj, "elementwiseThreads", g_elementwise_threads);
  bool avx2 = false;
#if POAD_HAVE_CLONES
  __builtin_cpu_init();
  avx2 = __builtin_cpu_supports("avx2") != 0;
#endif
  set_prop_bool(env, obj, "avx2", avx2);
  set_prop_num(env, obj, "abiVersion", 1);
  return obj;
}

NAPI_MODULE_INIT() {
  g_elementwise_threads = poad_default_threads();
  const char *env_threads = getenv("POAD_NATIVE_THREADS");
#if defined(POAD_BLAS_OPENBLAS)
  if (env_threads && *env_threads && atoi(env_threads) > 0)
    openblas_set_num_threads(g_elementwise_threads);
#else
  (void)env_threads;
#endif
#define POAD_PROPERTY(name, fn) {name, NULL, fn, NULL, NULL, NULL, napi_default, NULL},
  napi_property_descriptor props[] = {
      POAD_ENTRY_POINTS(POAD_PROPERTY)
      POAD_PROPERTY("setThreads", js_set_threads)
      POAD_PROPERTY("info", js_info)
  };
#undef POAD_PROPERTY
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  return exports;
}
