/* Reading and checking arguments passed from JS. */
#include "common.h"

int throw_error(napi_env env, const char *msg) {
  napi_throw_range_error(env, "ERR_POAD_NATIVE", msg);
  return 0;
}

int get_heap(napi_env env, napi_value v, heap_t *heap) {
  bool is_typed = false;
  napi_is_typedarray(env, v, &is_typed);
  if (is_typed) {
    napi_typedarray_type type;
    size_t length;
    void *data;
    napi_value ab;
    size_t byte_offset;
    if (napi_get_typedarray_info(env, v, &type, &length, &data, &ab, &byte_offset) != napi_ok)
      return throw_error(env, "heap: cannot read the typed array");
    if (type != napi_uint8_array) return throw_error(env, "heap: expected a Uint8Array");
    heap->data = (uint8_t *)data;
    heap->length = length;
    return 1;
  }
  bool is_ab = false;
  napi_is_arraybuffer(env, v, &is_ab);
  if (is_ab) {
    void *data;
    size_t length;
    if (napi_get_arraybuffer_info(env, v, &data, &length) != napi_ok)
      return throw_error(env, "heap: cannot read the ArrayBuffer");
    heap->data = (uint8_t *)data;
    heap->length = length;
    return 1;
  }
  return throw_error(env, "heap: expected the wasm heap as a Uint8Array or ArrayBuffer");
}

/* Reads a non-negative integer (up to 2^53) from a JS number. */
int get_size(napi_env env, napi_value v, const char *name, int64_t *out) {
  double d;
  if (napi_get_value_double(env, v, &d) != napi_ok || !(d >= 0) || d > 9007199254740992.0 ||
      d != floor(d)) {
    char msg[160];
    snprintf(msg, sizeof msg, "%s: expected a non-negative integer", name);
    return throw_error(env, msg);
  }
  *out = (int64_t)d;
  return 1;
}

int get_float(napi_env env, napi_value v, const char *name, float *out) {
  double d;
  if (napi_get_value_double(env, v, &d) != napi_ok) {
    char msg[160];
    snprintf(msg, sizeof msg, "%s: expected a number", name);
    return throw_error(env, msg);
  }
  *out = (float)d;
  return 1;
}

/* Optional Int32Array of batch indices (null or undefined when absent). */
int get_index(napi_env env, napi_value v, const char *name, const int32_t **out,
                     size_t *len) {
  napi_valuetype t;
  napi_typeof(env, v, &t);
  if (t == napi_null || t == napi_undefined) {
    *out = NULL;
    *len = 0;
    return 1;
  }
  napi_typedarray_type type;
  void *data;
  napi_value ab;
  size_t byte_offset;
  bool is_typed = false;
  napi_is_typedarray(env, v, &is_typed);
  if (!is_typed || napi_get_typedarray_info(env, v, &type, len, &data, &ab, &byte_offset) !=
                       napi_ok ||
      type != napi_int32_array) {
    char msg[160];
    snprintf(msg, sizeof msg, "%s: expected an Int32Array or null", name);
    return throw_error(env, msg);
  }
  *out = (const int32_t *)data;
  return 1;
}

/* Checks that [offset, offset + bytes) lies inside the heap and is float aligned. */
int check_range(napi_env env, const heap_t *heap, int64_t offset, int64_t count,
                       const char *name) {
  uint64_t bytes = (uint64_t)count * 4u;
  if ((offset & 3) != 0 || (uint64_t)offset > heap->length ||
      bytes > heap->length - (uint64_t)offset) {
    char msg[200];
    snprintf(msg, sizeof msg, "%s: %lld floats at byte %lld fall outside the %llu-byte heap", name,
             (long long)count, (long long)offset, (unsigned long long)heap->length);
    return throw_error(env, msg);
  }
  return 1;
}
