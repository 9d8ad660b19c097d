#include "arena.h"

#include <cstdlib>
#include <string>

namespace headwise {

void Arena::Free::operator()(uint8_t* p) const { std::free(p); }

Result<Arena> Arena::Allocate(size_t bytes) {
  Arena a;
  const size_t rounded = bytes == 0 ? kArenaAlignment : bytes;
  void* p = nullptr;
  if (posix_memalign(&p, kArenaAlignment, rounded) != 0 || p == nullptr) {
    return Status(ErrorCode::kOutOfMemory,
                  "cannot allocate the activation arena of " + std::to_string(bytes) + " bytes");
  }
  // Not touched here: pages a call never uses (e.g. beam rows of a greedy-only workload) stay
  // uncommitted, so resident memory follows what translation really uses.
  a.data_.reset(static_cast<uint8_t*>(p));
  a.size_ = bytes;
  return a;
}

}  // namespace headwise
