#include "team.h"

#include <time.h>

#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace headwise {
namespace {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__) || defined(__arm__)
  asm volatile("yield" ::: "memory");
#endif
}

// A ticket: generation << 32 | next tile. kClosed in the tile bits: the leader is writing the
// next loop, nothing can be claimed.
constexpr uint64_t kClosed = 0xffffffffu;
constexpr uint64_t Generation(uint64_t ticket) { return ticket >> 32; }
constexpr size_t TileIndex(uint64_t ticket) { return static_cast<size_t>(ticket & 0xffffffffu); }

int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t ThreadCpuMicros() {
  timespec ts{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return -1;
  return static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

}  // namespace

Team::CallClock Team::StartCall() const {
  CallClock c;
  c.wall = NowMicros();
  c.cpu = ThreadCpuMicros();
  c.solo = SoloAt(c.wall);
  return c;
}

void Team::FinishCall(const CallClock& start) {
  // Alone, not adapting, or no thread CPU clock: nothing to decide.
  if (start.solo || !adapt_ || start.cpu < 0) return;
  const int64_t wall = NowMicros() - start.wall;
  const int64_t cpu = ThreadCpuMicros() - start.cpu;
  ObserveCall(start.wall, wall, cpu);
}

void Team::ObserveCall(int64_t start, int64_t wall, int64_t cpu) {
  if (wall < kMinMeasureMicros) return;
  if (static_cast<double>(cpu) < kBusyShare * static_cast<double>(wall)) {
    busy_until_ = start + wall + busy_backoff_;
    busy_backoff_ = busy_backoff_ * 2 > kMaxBusyMicros ? kMaxBusyMicros : busy_backoff_ * 2;
  } else {
    busy_until_ = 0;
    busy_backoff_ = kBusyMicros;
  }
}

void Team::Task(void* team, size_t /*index*/) {
  Team& t = *static_cast<Team*>(team);
  (void)t.calls_.load(std::memory_order_acquire);
  if (std::this_thread::get_id() == t.leader_.load(std::memory_order_relaxed) &&
      !t.leader_started_) {
    t.leader_started_ = true;
    t.status_ = t.call_body_(t.body_);
    t.stop_.store(true, std::memory_order_seq_cst);
    { const std::lock_guard<std::mutex> lock(t.mutex_); }  // a helper between its check and wait
    t.wake_.notify_all();
    return;
  }
  t.Help();
}

bool Team::TryTile(uint64_t ticket) {
  // The loop's fields first, then the claim: a claim that succeeds proves that the ticket had
  // not moved on, so the fields read were this generation's (For closes the ticket before it
  // writes the next loop's fields, with release, and these loads acquire).
  const size_t tiles = tiles_.load(std::memory_order_acquire);
  const size_t i = TileIndex(ticket);
  if (Generation(ticket) == 0 || i >= tiles) return false;
  const TileFn fn = fn_.load(std::memory_order_acquire);
  void* const context = context_.load(std::memory_order_acquire);
  const size_t range = range_.load(std::memory_order_acquire);
  const size_t tile = tile_.load(std::memory_order_acquire);
  if (!ticket_.value.compare_exchange_strong(ticket, ticket + 1, std::memory_order_acq_rel,
                                             std::memory_order_acquire)) {
    return false;
  }
  const size_t begin = i * tile;
  fn(context, begin, range - begin < tile ? range - begin : tile);
  done_.fetch_add(1, std::memory_order_release);
  return true;
}

void Team::Help() {
  int64_t idle_since = -1;
  unsigned spins = 0;
  while (!stop_.load(std::memory_order_acquire)) {
    const uint64_t ticket = ticket_.value.load(std::memory_order_acquire);
    if (TryTile(ticket)) {
      idle_since = -1;
      continue;
    }
    if (TileIndex(ticket) < tiles_.load(std::memory_order_acquire) && Generation(ticket) != 0) {
      continue;  // lost a race for a tile; others may be left
    }
    if (!spin_.load(std::memory_order_relaxed)) {
      if (idle_since < 0) {
        idle_since = NowMicros();
        spins = 0;
      } else if ((++spins & 63u) == 0 && NowMicros() - idle_since > kSpinMicros) {
        Sleep(ticket);
        idle_since = -1;
        continue;
      }
    }
    CpuRelax();
  }
  left_.fetch_add(1, std::memory_order_release);
}

void Team::Sleep(uint64_t seen) {
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  {
    std::unique_lock<std::mutex> lock(mutex_);
    wake_.wait(lock, [&] {
      return stop_.load(std::memory_order_seq_cst) ||
             ticket_.value.load(std::memory_order_seq_cst) != seen;
    });
  }
  sleepers_.fetch_sub(1, std::memory_order_relaxed);
}

void Team::For(TileFn fn, void* context, size_t range, size_t tile) {
  if (range == 0) return;
  if (tile == 0) tile = 1;
  const size_t tiles = (range + tile - 1) / tile;
  if (size_ < 2 || tiles < 2 || (solo_until_ != 0 && NowMicros() < solo_until_)) {
    fn(context, 0, range);
    return;
  }
  const uint64_t generation = Generation(ticket_.value.load(std::memory_order_relaxed)) + 1;
  // Close the ticket: no claim on the previous loop can succeed from here on.
  ticket_.value.store((generation << 32) | kClosed, std::memory_order_seq_cst);
  fn_.store(fn, std::memory_order_release);
  context_.store(context, std::memory_order_release);
  range_.store(range, std::memory_order_release);
  tile_.store(tile, std::memory_order_release);
  tiles_.store(tiles, std::memory_order_release);
  done_.store(0, std::memory_order_relaxed);
  ticket_.value.store(generation << 32, std::memory_order_seq_cst);  // open: tile 0 next
  if (sleepers_.load(std::memory_order_seq_cst) > 0) {
    { const std::lock_guard<std::mutex> lock(mutex_); }
    wake_.notify_all();
  }
  const int64_t start = NowMicros();
  size_t mine = 0;
  for (;;) {
    const size_t i = TileIndex(ticket_.value.fetch_add(1, std::memory_order_acq_rel));
    if (i >= tiles) break;
    const size_t begin = i * tile;
    fn(context, begin, range - begin < tile ? range - begin : tile);
    ++mine;
  }
  if (done_.load(std::memory_order_acquire) == tiles - mine) return;
  // Wait only for the tiles helpers claimed; they are running now, unless the system took
  // their core: then a tile of a few microseconds can take a scheduler time slice.
  const int64_t own = NowMicros() - start;
  const int64_t patience = own > kStallFloorMicros ? own : kStallFloorMicros;
  int64_t waited = 0;
  unsigned spins = 0;
  while (done_.load(std::memory_order_acquire) != tiles - mine) {
    if ((++spins & 63u) == 0) {
      waited = NowMicros() - start - own;
      if (waited > patience) std::this_thread::yield();  // let a descheduled helper run
    }
    CpuRelax();
  }
  if (waited > patience && adapt_) solo_until_ = NowMicros() + kSoloMicros;
}

}  // namespace headwise
