#include "headwise/status.hpp"

namespace headwise {

const char* ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk: return "OK";
    case ErrorCode::kInvalidArgument: return "INVALID_ARGUMENT";
    case ErrorCode::kInputTooLong: return "INPUT_TOO_LONG";
    case ErrorCode::kBatchTooLarge: return "BATCH_TOO_LARGE";
    case ErrorCode::kInvalidUtf8: return "INVALID_UTF8";
    case ErrorCode::kIoError: return "IO_ERROR";
    case ErrorCode::kInvalidModel: return "INVALID_MODEL";
    case ErrorCode::kUnsupportedVersion: return "UNSUPPORTED_VERSION";
    case ErrorCode::kChecksumMismatch: return "CHECKSUM_MISMATCH";
    case ErrorCode::kInvalidCheckpoint: return "INVALID_CHECKPOINT";
    case ErrorCode::kOutOfMemory: return "OUT_OF_MEMORY";
    case ErrorCode::kLimitExceeded: return "LIMIT_EXCEEDED";
    case ErrorCode::kBackend: return "BACKEND";
    case ErrorCode::kTokenizer: return "TOKENIZER";
    case ErrorCode::kInternal: return "INTERNAL";
  }
  return "UNKNOWN";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(ErrorCodeName(code_)) + ": " + message_;
}

Status Status::WithContext(const std::string& context) const {
  if (ok()) return *this;
  return Status(code_, context + ": " + message_);
}

}  // namespace headwise
