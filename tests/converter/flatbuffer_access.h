// tests/converter/flatbuffer_access.h: null-safe reads of a verified .hwm flatbuffer for tests.
// FlatBuffers accessors return nullptr for absent fields; these turn absent vectors/strings
// into empty values and absent tables into a loud abort naming the field, which also keeps
// GCC's -Wnull-dereference quiet. Tests only.
#ifndef HEADWISE_TESTS_CONVERTER_FLATBUFFER_ACCESS_H_
#define HEADWISE_TESTS_CONVERTER_FLATBUFFER_ACCESS_H_

#include <flatbuffers/flatbuffers.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace headwise::testing {

template <typename T>
const T& Deref(const T* p, const char* what) {
  if (p == nullptr) {
    std::fprintf(stderr, "flatbuffer field %s is absent\n", what);
    std::abort();
  }
  return *p;
}

template <typename T>
std::vector<T> Vec(const flatbuffers::Vector<T>* v) {
  return v ? std::vector<T>(v->begin(), v->end()) : std::vector<T>{};
}

inline std::string Str(const flatbuffers::String* s) { return s ? s->str() : std::string(); }

inline std::string Bytes(const flatbuffers::Vector<uint8_t>* v) {
  return v ? std::string(reinterpret_cast<const char*>(v->data()), v->size()) : std::string();
}

// Elements of a vector of tables, as pointers (empty when absent).
template <typename T>
std::vector<const T*> Tables(const flatbuffers::Vector<flatbuffers::Offset<T>>* v) {
  std::vector<const T*> out;
  if (v != nullptr) {
    for (flatbuffers::uoffset_t i = 0; i < v->size(); ++i) out.push_back(v->Get(i));
  }
  return out;
}

}  // namespace headwise::testing

#endif  // HEADWISE_TESTS_CONVERTER_FLATBUFFER_ACCESS_H_
