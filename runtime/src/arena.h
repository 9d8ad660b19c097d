// runtime/src/arena.h: one block of memory carved into the buffers of a Translator.
//
// Planning and carving are the same code run twice: a layout function takes buffers from an
// ArenaCarver; run with no base it only measures (every Take returns nullptr), run again on an
// allocation of the measured size it hands out the real pointers. So the plan and the pointers
// cannot disagree. Mark/Rewind let two phases share bytes (the encoder's scratch and the
// decoder's scratch are never live at the same time).
//
// Ownership: Arena owns the block (64-byte aligned) and frees it; carved pointers are valid
// while the Arena lives.
#ifndef HEADWISE_RUNTIME_ARENA_H_
#define HEADWISE_RUNTIME_ARENA_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>

#include "headwise/status.hpp"

namespace headwise {

inline constexpr size_t kArenaAlignment = 64;

class ArenaCarver {
 public:
  explicit ArenaCarver(uint8_t* base = nullptr) : base_(base) {}

  // A buffer of product(dims) elements of T, 64-byte aligned. On size overflow the carver
  // records it (overflowed()) and returns nullptr.
  template <typename T>
  T* Take(std::initializer_list<size_t> dims) {
    size_t bytes = sizeof(T);
    for (size_t d : dims) {
      if (d != 0 && bytes > SIZE_MAX / d) {
        overflow_ = true;
        return nullptr;
      }
      bytes *= d;
    }
    const size_t start = cursor_;
    if (bytes > SIZE_MAX - start - kArenaAlignment) {
      overflow_ = true;
      return nullptr;
    }
    cursor_ = (start + bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
    if (cursor_ > high_) high_ = cursor_;
    // start is a multiple of kArenaAlignment; through void* so strict-alignment targets (armhf)
    // do not flag the cast under -Wcast-align.
    return base_ == nullptr ? nullptr : static_cast<T*>(static_cast<void*>(base_ + start));
  }

  size_t Mark() const { return cursor_; }
  // Moves the cursor back (or forward) to a value from Mark(); later buffers reuse the bytes.
  void Rewind(size_t mark) { cursor_ = mark; }
  // Bytes needed: the furthest the cursor ever went.
  size_t bytes() const { return high_; }
  bool overflowed() const { return overflow_; }

 private:
  uint8_t* base_;
  size_t cursor_ = 0;
  size_t high_ = 0;
  bool overflow_ = false;
};

class Arena {
 public:
  // Errors: kOutOfMemory naming the bytes.
  static Result<Arena> Allocate(size_t bytes);
  uint8_t* data() const { return data_.get(); }
  size_t size() const { return size_; }

 private:
  struct Free {
    void operator()(uint8_t* p) const;
  };
  std::unique_ptr<uint8_t, Free> data_;
  size_t size_ = 0;
};

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_ARENA_H_
