// runtime/src/team.h: the pool's workers held for the length of one call (a team), so that the
// parallel loops of a call reach them without a wake each.
//
// Why: by default the pool's workers sleep after each parallel call (WorkerWait::kYield), and a
// batch-1 decode step makes about 40 of them (every product, attention), each a few
// microseconds of work, so waking the workers for each cost more than splitting saved: the
// 512-wide int8 model ran 1.18x on 2 threads (bench/results/2026-12-04-threads-x86-2core.md).
// A team wakes the workers once per call: Team::Run runs the whole call on the calling thread
// (the leader) inside one pthreadpool call whose other tasks (the helpers) wait for loops the
// leader posts, spinning for a bounded time between them (a decode step's loops come
// microseconds apart) and then sleeping on a condition variable.
//
// A loop is cut into tiles that whoever is free claims, the leader first: the leader never
// waits for a helper to arrive, only for the tiles a helper has claimed to be done. A helper
// that is late or descheduled (busy cores) leaves its share to the leader, so a call is never
// held up by a helper that has not woken. Which thread computes a tile changes nothing in its
// result: the tiles are the ones the pool would run, and each is computed by the same code.
//
// Threads: Run is called by one thread at a time per Team (a Translator calls one at a time);
// For is called only by the leader, from inside Run's body. The body must not call the pool
// itself (pthreadpool does not nest): loops go through For (parallel.h's Workers route them
// here), and XNNPACK's operators get no pool while a team runs. No heap allocation after
// construction (std::mutex / std::condition_variable do not allocate on the platforms we build).
//
// Ownership: a Team is created with its Translator and used with that Translator's pool; it
// holds no pointer to the pool between calls.
#ifndef HEADWISE_RUNTIME_TEAM_H_
#define HEADWISE_RUNTIME_TEAM_H_

#include <pthreadpool.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>

#include "headwise/status.hpp"

namespace headwise {

class Team {
 public:
  // fn(context, begin, count): one tile of a loop, [begin, begin + count).
  using TileFn = void (*)(void* context, size_t begin, size_t count);

  // `adapt_to_busy_cores` false: every call runs as a team and every loop is split whatever the
  // cores' load (neither busy-cores rule below applies; tests of the mechanics on pools larger
  // than the machine).
  explicit Team(bool adapt_to_busy_cores = true) : adapt_(adapt_to_busy_cores) {}
  Team(const Team&) = delete;
  Team& operator=(const Team&) = delete;

  // Runs body() (a callable returning Status) on the calling thread while the other threads of
  // `pool` serve this team's loops; returns body's status once every helper has left. `spin`:
  // helpers spin until the call ends (WorkerWait::kSpin); otherwise they spin for at most
  // kSpinMicros after a loop, then sleep until the next. A null pool or a pool of one thread
  // runs body() alone.
  template <typename Body>
  Status Run(pthreadpool_t pool, bool spin, Body&& body);

  // Leader only, inside Run: calls fn(context, begin, count) over [0, range) in tiles of `tile`
  // (the last one shorter), spread over the team; returns when every tile is done.
  void For(TileFn fn, void* context, size_t range, size_t tile);

  // Inside Run: the threads of the team (leader included).
  size_t size() const { return size_; }

  // How long a yielding helper spins after a loop before it sleeps. A batch-1 decode step's
  // loops come a few microseconds apart, steps tens of microseconds apart.
  static constexpr int64_t kSpinMicros = 200;
  // A loop whose helpers' tiles kept the leader waiting longer than the leader's own share took
  // (and at least kStallFloorMicros) means the helpers were descheduled (other processes hold
  // the cores); the leader then runs the loops alone for kSoloMicros before it tries again, so
  // that on busy cores a call runs about as fast as on one thread instead of waiting for time
  // slices.
  static constexpr int64_t kStallFloorMicros = 20;
  static constexpr int64_t kSoloMicros = 20000;
  // Busy cores, between calls: a call in which the calling thread ran less than kBusyShare of
  // the wall time (it never sleeps in a call, so the rest is time other threads held its core)
  // means that the cores are shared. Helpers that spin on shared cores take the leader's time
  // slices (measured with a training job on both cores of a 2-core machine: 2 threads ran the
  // shipped models at 0.42-0.58x of 1 thread at batch 1), so the calls of the next kBusyMicros
  // run on the calling thread alone. The first call after that runs as a team again, a probe:
  // if it finds the cores still busy, the calls run alone twice as long as before (at most
  // kMaxBusyMicros, so a probe costs one slow call every 1.6 s), and a call that finds them
  // free keeps the team on. (The calling thread alone got 0.89 of its core in that
  // measurement, so its own share cannot tell whether the helpers' cores are free: only a
  // team call can.) Calls shorter than kMinMeasureMicros do not decide.
  static constexpr double kBusyShare = 0.85;
  static constexpr int64_t kBusyMicros = 100000;
  static constexpr int64_t kMaxBusyMicros = 1600000;
  static constexpr int64_t kMinMeasureMicros = 500;

  // The busy-cores rule (above) on one measured team call: started at `start` (steady clock,
  // microseconds), `wall` long, the calling thread on CPU for `cpu` of it. Run calls it after
  // each team call; public for tests.
  void ObserveCall(int64_t start, int64_t wall, int64_t cpu);
  // Whether a call starting at `now` runs alone for busy cores.
  bool SoloAt(int64_t now) const { return adapt_ && busy_until_ != 0 && now < busy_until_; }

 private:
  struct alignas(64) Ticket {
    // generation << 32 | next tile; generation 0: no loop posted yet.
    std::atomic<uint64_t> value{0};
  };

  struct CallClock {
    int64_t wall = 0;  // steady clock, microseconds
    int64_t cpu = 0;   // the calling thread's CPU time, microseconds
    bool solo = false;
  };
  CallClock StartCall() const;
  void FinishCall(const CallClock& start);

  static void Task(void* team, size_t index);
  void Help();
  bool TryTile(uint64_t ticket);  // claims and runs the tile `ticket` names; false if gone
  void Sleep(uint64_t seen);

  Ticket ticket_;
  // The posted loop, written by the leader before it publishes the generation; atomics so that
  // a helper may read them while the leader writes the next loop's (its claim then fails).
  std::atomic<TileFn> fn_{nullptr};
  std::atomic<void*> context_{nullptr};
  std::atomic<size_t> range_{0};
  std::atomic<size_t> tile_{1};
  std::atomic<size_t> tiles_{0};
  alignas(64) std::atomic<size_t> done_{0};  // tiles of the current loop that helpers finished
  alignas(64) std::atomic<bool> stop_{false};
  std::atomic<int> sleepers_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool adapt_ = true;
  // Set before the pool starts the helpers, which read them: atomics, so that ThreadSanitizer,
  // which does not see into pthreadpool, sees the order too. For the same reason each task
  // begins by acquiring calls_ (Run releases it before it starts the pool), and a helper ends by
  // releasing left_, which Run acquires once the pool returns: edges pthreadpool already makes,
  // made visible.
  std::atomic<bool> spin_{false};
  std::atomic<uint64_t> calls_{0};
  std::atomic<size_t> left_{0};
  size_t size_ = 1;
  int64_t solo_until_ = 0;  // steady-clock microseconds; leader only
  int64_t busy_until_ = 0;  // steady-clock microseconds: calls until then run alone
  int64_t busy_backoff_ = kBusyMicros;  // how long the next busy finding makes calls run alone
  std::atomic<std::thread::id> leader_{};
  bool leader_started_ = false;     // the leader's task has begun (read by the leader only)
  void* body_ = nullptr;             // the running Run's body
  Status (*call_body_)(void*) = nullptr;
  Status status_;
};

template <typename Body>
Status Team::Run(pthreadpool_t pool, bool spin, Body&& body) {
  const size_t threads = pool == nullptr ? 1 : pthreadpool_get_threads_count(pool);
  if (threads < 2) return body();
  const CallClock clock = StartCall();
  // Busy cores: the calling thread alone (size() is 1, For runs loops whole); such a call
  // decides nothing (FinishCall).
  if (clock.solo) return body();
  using B = typename std::remove_reference<Body>::type;
  body_ = const_cast<void*>(static_cast<const void*>(&body));
  call_body_ = [](void* b) -> Status { return (*static_cast<B*>(b))(); };
  spin_.store(spin, std::memory_order_relaxed);
  size_ = threads;
  leader_.store(std::this_thread::get_id(), std::memory_order_relaxed);
  leader_started_ = false;
  solo_until_ = 0;
  stop_.store(false, std::memory_order_relaxed);
  status_ = Status::Ok();
  left_.store(0, std::memory_order_relaxed);
  calls_.fetch_add(1, std::memory_order_release);
  // One task per thread: each thread starts on its own task, and none finishes before the
  // leader's body has (the helpers wait for stop_), so the leader's task is never taken by
  // another thread.
  pthreadpool_parallelize_1d(pool, &Team::Task, this, threads, PTHREADPOOL_FLAG_YIELD_WORKERS);
  (void)left_.load(std::memory_order_acquire);
  size_ = 1;
  body_ = nullptr;
  call_body_ = nullptr;
  FinishCall(clock);
  return std::move(status_);
}

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_TEAM_H_
