// headwise/status.hpp: the one error type of headwise, shared by the runtime, the converter
// and the tools.
//
//   headwise::Result<Model> r = Model::Load(path);
//   if (!r.ok()) { std::cerr << r.status().ToString() << "\n"; return 1; }
//
// Codes are grouped by kind and have the same numeric values as hw_status in headwise.h.
// A message says what was expected, what was found, and where. Foreign statuses
// (xnn_status, SentencePiece, errno) are translated at the boundary, keeping the foreign name
// in the message. Status and Result are values: cheap to move, no exceptions.
#ifndef HEADWISE_STATUS_HPP_
#define HEADWISE_STATUS_HPP_

#include <cassert>
#include <new>
#include <string>
#include <utility>

namespace headwise {

enum class ErrorCode : int {
  kOk = 0,
  // The caller passed something wrong.
  kInvalidArgument = 10,
  kInputTooLong = 11,
  kBatchTooLarge = 12,
  kInvalidUtf8 = 13,
  // The model file or checkpoint is wrong.
  kIoError = 20,
  kInvalidModel = 21,
  kUnsupportedVersion = 22,
  kChecksumMismatch = 23,
  kInvalidCheckpoint = 24,
  // A declared or system resource ran out.
  kOutOfMemory = 30,
  kLimitExceeded = 31,
  // A backend (XNNPACK, SentencePiece, pthreadpool) failed.
  kBackend = 40,
  kTokenizer = 41,
  // A bug in headwise.
  kInternal = 50,
};

// Stable name of a code, e.g. "INVALID_MODEL".
const char* ErrorCodeName(ErrorCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status Ok() { return Status(); }

  bool ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "INVALID_MODEL: encoder layer 3 ..." or "OK".
  std::string ToString() const;
  // Returns a copy with "context: " put in front of the message.
  Status WithContext(const std::string& context) const;

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) { return {ErrorCode::kInvalidArgument, std::move(m)}; }
inline Status InvalidModel(std::string m) { return {ErrorCode::kInvalidModel, std::move(m)}; }
inline Status InvalidCheckpoint(std::string m) { return {ErrorCode::kInvalidCheckpoint, std::move(m)}; }
inline Status IoError(std::string m) { return {ErrorCode::kIoError, std::move(m)}; }
inline Status BackendError(std::string m) { return {ErrorCode::kBackend, std::move(m)}; }
inline Status InternalError(std::string m) { return {ErrorCode::kInternal, std::move(m)}; }

// Result<T>: a T or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : has_value_(true) { new (&storage_) T(std::move(value)); }  // NOLINT
  Result(Status status) : status_(std::move(status)) {                           // NOLINT
    assert(!status_.ok() && "Result constructed from an OK status without a value");
    if (status_.ok()) status_ = InternalError("Result built from OK status without value");
  }
  Result(const Result& other) : status_(other.status_), has_value_(other.has_value_) {
    if (has_value_) new (&storage_) T(*other.ptr());
  }
  Result(Result&& other) noexcept : status_(std::move(other.status_)), has_value_(other.has_value_) {
    if (has_value_) new (&storage_) T(std::move(*other.ptr()));
  }
  Result& operator=(Result other) {
    Reset();
    status_ = std::move(other.status_);
    has_value_ = other.has_value_;
    if (has_value_) new (&storage_) T(std::move(*other.ptr()));
    return *this;
  }
  ~Result() { Reset(); }

  bool ok() const { return has_value_; }
  const Status& status() const { return status_; }
  T& value() & { assert(has_value_); return *ptr(); }
  const T& value() const& { assert(has_value_); return *ptr(); }
  T&& value() && { assert(has_value_); return std::move(*ptr()); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  // Through void*: storage_ is alignas(T), but a direct reinterpret_cast from the byte array
  // trips -Wcast-align on strict-alignment targets (armhf).
  T* ptr() { return std::launder(static_cast<T*>(static_cast<void*>(&storage_))); }
  const T* ptr() const {
    return std::launder(static_cast<const T*>(static_cast<const void*>(&storage_)));
  }
  void Reset() {
    if (has_value_) ptr()->~T();
    has_value_ = false;
  }
  Status status_;
  bool has_value_ = false;
  alignas(T) unsigned char storage_[sizeof(T)];
};

}  // namespace headwise

#define HW_CONCAT_INNER_(a, b) a##b
#define HW_CONCAT_(a, b) HW_CONCAT_INNER_(a, b)

// Returns the Status from the enclosing function if `expr` is not OK.
#define HW_RETURN_IF_ERROR(expr)                      \
  do {                                                \
    ::headwise::Status hw_status_tmp_ = (expr);       \
    if (!hw_status_tmp_.ok()) return hw_status_tmp_;  \
  } while (0)

// `HW_ASSIGN_OR_RETURN(auto x, MakeX());` declares x from a Result or returns its Status.
#define HW_ASSIGN_OR_RETURN(lhs, expr) \
  HW_ASSIGN_OR_RETURN_IMPL_(HW_CONCAT_(hw_result_, __LINE__), lhs, expr)
#define HW_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(tmp).value()

#endif  // HEADWISE_STATUS_HPP_
