// JNI glue for org.headwise.Translator over the C API (include/headwise/headwise.h).
// A Java Translator holds a pointer to a NativeTranslator as a long. Text arrives and leaves as
// UTF-8 byte arrays; the Java side converts (JNI's "modified UTF-8" would mangle characters
// outside the BMP). Every failure of the C API becomes an org.headwise.HeadwiseException
// carrying the hw_status; a pending Java exception (e.g. OutOfMemoryError from a JNI
// allocation) is left to propagate.
#include <jni.h>

#include <cstdint>
#include <new>
#include <string>
#include <vector>

#include "headwise/headwise.h"

namespace {

struct NativeTranslator {
  hw_model* model = nullptr;
  hw_translator* translator = nullptr;
};

NativeTranslator* FromHandle(jlong handle) {
  return reinterpret_cast<NativeTranslator*>(static_cast<intptr_t>(handle));
}

void ThrowHeadwise(JNIEnv* env, hw_status status, const char* message) {
  if (env->ExceptionCheck()) return;
  jclass cls = env->FindClass("org/headwise/HeadwiseException");
  if (cls == nullptr) return;  // NoClassDefFoundError is pending
  jmethodID ctor = env->GetMethodID(cls, "<init>", "(ILjava/lang/String;Ljava/lang/String;)V");
  if (ctor == nullptr) return;
  jstring name = env->NewStringUTF(hw_status_name(status));
  // hw_last_error_message() is valid UTF-8; NewStringUTF expects modified UTF-8, which only
  // differs for NUL and characters outside the BMP, so build the message from bytes instead.
  std::string text = message ? message : "";
  jbyteArray bytes = env->NewByteArray(static_cast<jsize>(text.size()));
  if (name == nullptr || bytes == nullptr) return;
  env->SetByteArrayRegion(bytes, 0, static_cast<jsize>(text.size()),
                          reinterpret_cast<const jbyte*>(text.data()));
  jclass string_cls = env->FindClass("java/lang/String");
  jmethodID string_ctor =
      string_cls ? env->GetMethodID(string_cls, "<init>", "([BLjava/lang/String;)V") : nullptr;
  jstring charset = env->NewStringUTF("UTF-8");
  if (string_ctor == nullptr || charset == nullptr) return;
  auto msg = static_cast<jstring>(env->NewObject(string_cls, string_ctor, bytes, charset));
  if (msg == nullptr) return;
  auto exc = static_cast<jthrowable>(env->NewObject(cls, ctor, static_cast<jint>(status), name, msg));
  if (exc != nullptr) env->Throw(exc);
}

void ThrowLastError(JNIEnv* env, hw_status status) {
  ThrowHeadwise(env, status, hw_last_error_message());
}

// The bytes of a Java byte[] as a std::string (false if a Java exception is pending).
bool ReadBytes(JNIEnv* env, jbyteArray array, std::string* out) {
  if (array == nullptr) {
    ThrowHeadwise(env, HW_ERR_INVALID_ARGUMENT, "null text");
    return false;
  }
  const jsize n = env->GetArrayLength(array);
  out->resize(static_cast<size_t>(n));
  env->GetByteArrayRegion(array, 0, n, reinterpret_cast<jbyte*>(out->data()));
  return !env->ExceptionCheck();
}

}  // namespace

extern "C" {

JNIEXPORT jstring JNICALL Java_org_headwise_Translator_version(JNIEnv* env, jclass) {
  return env->NewStringUTF(hw_version());
}

JNIEXPORT jlongArray JNICALL Java_org_headwise_Translator_nativeTranslatorDefaults(JNIEnv* env,
                                                                                   jclass) {
  const hw_translator_params p = hw_translator_default_params();
  const jlong values[] = {p.max_batch,   p.max_source_tokens, p.max_target_tokens,
                          p.max_beam,    p.num_threads,       static_cast<jlong>(p.max_memory_bytes)};
  jlongArray out = env->NewLongArray(6);
  if (out != nullptr) env->SetLongArrayRegion(out, 0, 6, values);
  return out;
}

JNIEXPORT jfloatArray JNICALL Java_org_headwise_Translator_nativeSearchDefaults(JNIEnv* env,
                                                                                jclass) {
  const hw_search_params p = hw_search_default_params();
  const hw_batch_params b = hw_batch_default_params();
  const jfloat values[] = {static_cast<jfloat>(p.beam_size), p.length_penalty,
                           static_cast<jfloat>(p.max_length),
                           static_cast<jfloat>(b.split_sentences),
                           static_cast<jfloat>(p.min_length), static_cast<jfloat>(p.sample),
                           static_cast<jfloat>(p.top_k), p.top_p, p.temperature};
  constexpr jsize kCount = sizeof(values) / sizeof(values[0]);
  jfloatArray out = env->NewFloatArray(kCount);
  if (out != nullptr) env->SetFloatArrayRegion(out, 0, kCount, values);
  return out;
}

JNIEXPORT jlong JNICALL Java_org_headwise_Translator_nativeSearchDefaultSeed(JNIEnv*, jclass) {
  return static_cast<jlong>(hw_search_default_params().seed);
}

JNIEXPORT jlong JNICALL Java_org_headwise_Translator_nativeOpen(JNIEnv* env, jclass,
                                                                jbyteArray path_utf8,
                                                                jlongArray limits) {
  std::string path;
  if (!ReadBytes(env, path_utf8, &path)) return 0;
  if (limits == nullptr || env->GetArrayLength(limits) != 6) {
    ThrowHeadwise(env, HW_ERR_INVALID_ARGUMENT, "limits must hold 6 values");
    return 0;
  }
  jlong l[6];
  env->GetLongArrayRegion(limits, 0, 6, l);
  for (int i = 0; i < 5; ++i) {
    if (l[i] < 0 || l[i] > INT32_MAX) {
      ThrowHeadwise(env, HW_ERR_INVALID_ARGUMENT, "a translator limit is out of range");
      return 0;
    }
  }
  if (l[5] < 0) {
    ThrowHeadwise(env, HW_ERR_INVALID_ARGUMENT, "maxMemoryBytes is negative");
    return 0;
  }
  hw_translator_params params = hw_translator_default_params();
  params.max_batch = static_cast<int>(l[0]);
  params.max_source_tokens = static_cast<int>(l[1]);
  params.max_target_tokens = static_cast<int>(l[2]);
  params.max_beam = static_cast<int>(l[3]);
  params.num_threads = static_cast<int>(l[4]);
  params.max_memory_bytes = static_cast<size_t>(l[5]);

  auto* native = new (std::nothrow) NativeTranslator;
  if (native == nullptr) {
    ThrowHeadwise(env, HW_ERR_OUT_OF_MEMORY, "JNI handle");
    return 0;
  }
  hw_status status = hw_model_load(path.c_str(), nullptr, &native->model);
  if (status == HW_OK) status = hw_translator_create(native->model, &params, &native->translator);
  if (status != HW_OK) {
    ThrowLastError(env, status);
    hw_translator_free(native->translator);
    hw_model_free(native->model);
    delete native;
    return 0;
  }
  return static_cast<jlong>(reinterpret_cast<intptr_t>(native));
}

JNIEXPORT jint JNICALL Java_org_headwise_Translator_nativeVocabSize(JNIEnv*, jclass,
                                                                   jlong handle) {
  return hw_model_vocab_size(FromHandle(handle)->model);
}

JNIEXPORT jobjectArray JNICALL Java_org_headwise_Translator_nativeTranslate(
    JNIEnv* env, jclass, jlong handle, jobjectArray texts_utf8, jobjectArray prefixes_utf8,
    jint beam_size, jfloat length_penalty, jint max_length, jboolean split_sentences,
    jint min_length, jboolean sample, jint top_k, jfloat top_p, jfloat temperature, jlong seed,
    jfloatArray scores_out) {
  NativeTranslator* native = FromHandle(handle);
  if (texts_utf8 == nullptr || scores_out == nullptr) {
    ThrowHeadwise(env, HW_ERR_INVALID_ARGUMENT, "null texts or scores");
    return nullptr;
  }
  const jsize n = env->GetArrayLength(texts_utf8);
  if (env->GetArrayLength(scores_out) < n) {
    ThrowHeadwise(env, HW_ERR_INVALID_ARGUMENT, "scores array shorter than texts");
    return nullptr;
  }
  std::vector<std::string> texts(static_cast<size_t>(n));
  for (jsize i = 0; i < n; ++i) {
    auto bytes = static_cast<jbyteArray>(env->GetObjectArrayElement(texts_utf8, i));
    const bool ok = ReadBytes(env, bytes, &texts[static_cast<size_t>(i)]);
    env->DeleteLocalRef(bytes);
    if (!ok) return nullptr;
  }
  std::vector<const char*> pointers;
  pointers.reserve(texts.size());
  for (const std::string& t : texts) pointers.push_back(t.c_str());
  std::vector<std::string> prefixes;
  std::vector<const char*> prefix_pointers;
  std::vector<size_t> prefix_lengths;
  if (prefixes_utf8 != nullptr) {
    if (env->GetArrayLength(prefixes_utf8) != n) {
      ThrowHeadwise(env, HW_ERR_INVALID_ARGUMENT, "targetPrefixes: one per text");
      return nullptr;
    }
    prefixes.resize(static_cast<size_t>(n));
    for (jsize i = 0; i < n; ++i) {
      auto bytes = static_cast<jbyteArray>(env->GetObjectArrayElement(prefixes_utf8, i));
      const bool ok = ReadBytes(env, bytes, &prefixes[static_cast<size_t>(i)]);
      env->DeleteLocalRef(bytes);
      if (!ok) return nullptr;
    }
    for (const std::string& p : prefixes) {
      prefix_pointers.push_back(p.data());
      prefix_lengths.push_back(p.size());
    }
  }

  hw_search_params search = hw_search_default_params();
  search.beam_size = beam_size;
  search.length_penalty = length_penalty;
  search.max_length = max_length;
  search.min_length = min_length;
  search.sample = sample ? 1 : 0;
  search.top_k = top_k;
  search.top_p = top_p;
  search.temperature = temperature;
  search.seed = static_cast<uint64_t>(seed);
  hw_result* result = nullptr;
  if (split_sentences || prefixes_utf8 != nullptr) {
    // hw_translate has no batch params or prefixes: the per-line call, failing as hw_translate
    // would (the first failed line's status and message, which name the line).
    hw_batch_params batch = hw_batch_default_params();
    batch.split_sentences = split_sentences ? 1 : 0;
    const hw_status status = hw_translate_each_prefixed(
        native->translator, pointers.data(), nullptr, pointers.size(),
        prefixes_utf8 != nullptr ? prefix_pointers.data() : nullptr,
        prefixes_utf8 != nullptr ? prefix_lengths.data() : nullptr, &search, &batch, &result);
    if (status != HW_OK) {
      ThrowLastError(env, status);
      return nullptr;
    }
    for (jsize i = 0; i < n; ++i) {
      const hw_status line = hw_result_status(result, static_cast<size_t>(i));
      if (line != HW_OK) {
        ThrowHeadwise(env, line, hw_result_error_message(result, static_cast<size_t>(i)));
        hw_result_free(result);
        return nullptr;
      }
    }
  } else {
    const hw_status status =
        hw_translate(native->translator, pointers.data(), pointers.size(), &search, &result);
    if (status != HW_OK) {
      ThrowLastError(env, status);
      return nullptr;
    }
  }
  jclass byte_array_cls = env->FindClass("[B");
  jobjectArray out =
      byte_array_cls ? env->NewObjectArray(n, byte_array_cls, nullptr) : nullptr;
  std::vector<jfloat> scores(static_cast<size_t>(n), 0.0f);
  for (jsize i = 0; out != nullptr && i < n; ++i) {
    const char* text = hw_result_text(result, static_cast<size_t>(i), 0);
    const std::string s = text ? text : "";
    scores[static_cast<size_t>(i)] = hw_result_score(result, static_cast<size_t>(i), 0);
    jbyteArray bytes = env->NewByteArray(static_cast<jsize>(s.size()));
    if (bytes == nullptr) {
      out = nullptr;
      break;
    }
    env->SetByteArrayRegion(bytes, 0, static_cast<jsize>(s.size()),
                            reinterpret_cast<const jbyte*>(s.data()));
    env->SetObjectArrayElement(out, i, bytes);
    env->DeleteLocalRef(bytes);
  }
  hw_result_free(result);
  if (out != nullptr) env->SetFloatArrayRegion(scores_out, 0, n, scores.data());
  return out;
}

JNIEXPORT void JNICALL Java_org_headwise_Translator_nativeClose(JNIEnv*, jclass, jlong handle) {
  NativeTranslator* native = FromHandle(handle);
  hw_translator_free(native->translator);
  hw_model_free(native->model);
  delete native;
}

}  // extern "C"
