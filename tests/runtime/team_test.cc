// Team (runtime/src/team.h): every tile of every loop runs exactly once, with the bounds the
// split asks for, on pools of 2-4 threads, yielding and spinning helpers, over many loops in a
// row (the generations of the ticket) and across calls; the body runs on the calling thread and
// its status comes back; without a pool the body runs alone; ParallelTiles and ParallelFor
// route to the team.
#include "team.h"

#include <gtest/gtest.h>
#include <pthreadpool.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "parallel.h"

namespace headwise {
namespace {

struct PoolDeleter {
  void operator()(pthreadpool* p) const { pthreadpool_destroy(p); }
};
using Pool = std::unique_ptr<pthreadpool, PoolDeleter>;

struct Counts {
  std::vector<std::atomic<int>> hits;
  std::atomic<int> bad_bounds{0};
  size_t tile = 1;
  size_t range = 0;
  explicit Counts(size_t n) : hits(n), range(n) {}
};

void CountTile(void* c, size_t begin, size_t count) {
  Counts& k = *static_cast<Counts*>(c);
  // A tile, or the whole range at once (a leader that runs a loop alone).
  const bool whole = begin == 0 && count == k.range;
  if (!whole && (begin % k.tile != 0 || count == 0 || count > k.tile)) k.bad_bounds.fetch_add(1);
  for (size_t i = begin; i < begin + count; ++i) k.hits[i].fetch_add(1);
}

class TeamTest : public ::testing::TestWithParam<std::tuple<size_t, bool>> {};

TEST_P(TeamTest, EveryTileOnceOverManyLoops) {
  const auto [threads, spin] = GetParam();
  Pool pool(pthreadpool_create(threads));
  ASSERT_NE(pool, nullptr);
  Team team(/*adapt_to_busy_cores=*/false);
  for (int call = 0; call < 3; ++call) {
    const std::thread::id caller = std::this_thread::get_id();
    std::thread::id body_thread;
    int loops = 0;
    const Status s = team.Run(pool.get(), spin, [&]() -> Status {
      body_thread = std::this_thread::get_id();
      EXPECT_EQ(team.size(), threads);
      for (size_t range : {1, 2, 7, 64, 65, 1000, 4096}) {
        for (size_t tile : {1, 3, 16, 64}) {
          for (int rep = 0; rep < 40; ++rep) {
            Counts k(range);
            k.tile = tile;
            team.For(&CountTile, &k, range, tile);
            ++loops;
            EXPECT_EQ(k.bad_bounds.load(), 0) << "range " << range << " tile " << tile;
            size_t wrong = 0;
            for (size_t i = 0; i < range; ++i) wrong += k.hits[i].load() != 1;
            EXPECT_EQ(wrong, 0u) << "range " << range << " tile " << tile;
          }
        }
      }
      return call == 2 ? InvalidArgument("from the body") : Status::Ok();
    });
    EXPECT_EQ(body_thread, caller);
    EXPECT_EQ(loops, 7 * 4 * 40);
    if (call == 2) {
      EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
      EXPECT_EQ(s.message(), "from the body");
    } else {
      EXPECT_TRUE(s.ok()) << s.ToString();
    }
  }
}

// Helpers that went to sleep (a gap longer than Team::kSpinMicros between loops) are woken by
// the next loop, and the loop is complete whether they arrive or not.
TEST_P(TeamTest, LoopsAfterTheHelpersSlept) {
  const auto [threads, spin] = GetParam();
  Pool pool(pthreadpool_create(threads));
  Team team(/*adapt_to_busy_cores=*/false);
  const Status s = team.Run(pool.get(), spin, [&]() -> Status {
    for (int rep = 0; rep < 5; ++rep) {
      std::this_thread::sleep_for(std::chrono::microseconds(3 * Team::kSpinMicros));
      Counts k(512);
      k.tile = 8;
      team.For(&CountTile, &k, 512, 8);
      for (size_t i = 0; i < 512; ++i) EXPECT_EQ(k.hits[i].load(), 1);
    }
    return Status::Ok();
  });
  EXPECT_TRUE(s.ok());
}

// The helpers take part: with tiles that each take a while, some run off the calling thread.
TEST_P(TeamTest, HelpersTakeTiles) {
  const auto [threads, spin] = GetParam();
  Pool pool(pthreadpool_create(threads));
  Team team(/*adapt_to_busy_cores=*/false);
  std::atomic<int> off_caller{0};
  const std::thread::id caller = std::this_thread::get_id();
  struct Ctx {
    std::atomic<int>* off;
    std::thread::id caller;
  } ctx{&off_caller, caller};
  const Status s = team.Run(pool.get(), spin, [&]() -> Status {
    for (int rep = 0; rep < 20 && off_caller.load() == 0; ++rep) {
      team.For(
          [](void* c, size_t, size_t) {
            const Ctx& x = *static_cast<const Ctx*>(c);
            if (std::this_thread::get_id() != x.caller) x.off->fetch_add(1);
            std::this_thread::sleep_for(std::chrono::microseconds(200));
          },
          &ctx, 64, 1);
    }
    return Status::Ok();
  });
  EXPECT_TRUE(s.ok());
  EXPECT_GT(off_caller.load(), 0);
}

// ParallelTiles through a team: tiles are multiples of the caller's tile and cover the range;
// ParallelFor covers every index once.
TEST_P(TeamTest, ParallelTilesAndForRouteToTheTeam) {
  const auto [threads, spin] = GetParam();
  Pool pool(pthreadpool_create(threads));
  Team team(/*adapt_to_busy_cores=*/false);
  const Status s = team.Run(pool.get(), spin, [&]() -> Status {
    const Workers w = Workers::OfTeam(&team);
    EXPECT_EQ(w.pool, nullptr);  // XNNPACK's operators get no pool inside a team
    for (size_t range : {64, 100, 4000, 32000}) {
      std::vector<std::atomic<int>> hits(range);
      std::atomic<int> bad{0};
      std::atomic<int> calls{0};
      ParallelTiles(w, range, 64, kMinTeamWork, WorkKind::kInt8, [&](size_t begin, size_t count) {
        calls.fetch_add(1);
        if (begin % 64 != 0 || (begin + count != range && count % 64 != 0)) bad.fetch_add(1);
        for (size_t i = begin; i < begin + count; ++i) hits[i].fetch_add(1);
      });
      EXPECT_EQ(bad.load(), 0) << range;
      size_t wrong = 0;
      for (size_t i = 0; i < range; ++i) wrong += hits[i].load() != 1;
      EXPECT_EQ(wrong, 0u) << range;
      if (range > 64) {
        EXPECT_GT(calls.load(), 1) << range;
      }
      // Too little work: one call over the whole range.
      calls = 0;
      ParallelTiles(w, range, 64, kMinTeamWork - 1, WorkKind::kFloat,
                    [&](size_t begin, size_t count) {
                      calls.fetch_add(1);
                      EXPECT_EQ(begin, 0u);
                      EXPECT_EQ(count, range);
                    });
      EXPECT_EQ(calls.load(), 1);
    }
    std::vector<std::atomic<int>> heads(8);
    ParallelFor(w, 8, kMinTeamWork, [&](size_t h) { heads[h].fetch_add(1); });
    for (auto& h : heads) EXPECT_EQ(h.load(), 1);
    return Status::Ok();
  });
  EXPECT_TRUE(s.ok());
}

INSTANTIATE_TEST_SUITE_P(Pools, TeamTest,
                         ::testing::Combine(::testing::Values(size_t{2}, size_t{3}, size_t{4}),
                                            ::testing::Bool()),
                         [](const ::testing::TestParamInfo<std::tuple<size_t, bool>>& p) {
                           return std::to_string(std::get<0>(p.param)) + "threads_" +
                                  (std::get<1>(p.param) ? "spin" : "yield");
                         });

TEST(TeamNoPool, BodyRunsAlone) {
  Team team(/*adapt_to_busy_cores=*/false);
  int ran = 0;
  const Status s = team.Run(nullptr, false, [&]() -> Status {
    ++ran;
    EXPECT_EQ(team.size(), 1u);
    Counts k(100);
    k.tile = 100;  // alone, a loop is one call over the whole range
    team.For(&CountTile, &k, 100, 7);
    for (size_t i = 0; i < 100; ++i) EXPECT_EQ(k.hits[i].load(), 1);
    return Status::Ok();
  });
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(ran, 1);
}

// The busy-cores rule: a team call in which the leader got less than kBusyShare of the wall
// time makes the calls of the next kBusyMicros run alone; each probe that finds the cores still
// busy doubles that (at most kMaxBusyMicros); one that finds them free turns the team back on.
// Calls shorter than kMinMeasureMicros decide nothing.
TEST(TeamBusyCores, BacksOffAndComesBack) {
  Team team;
  EXPECT_FALSE(team.SoloAt(0));
  const int64_t w = 4000;  // a 4 ms call
  team.ObserveCall(0, w, w);  // on CPU the whole time: free
  EXPECT_FALSE(team.SoloAt(w + 1));
  team.ObserveCall(0, Team::kMinMeasureMicros - 1, 0);  // too short to tell
  EXPECT_FALSE(team.SoloAt(w + 1));
  int64_t t = 10 * w;
  team.ObserveCall(t, w, w / 2);  // half the time off CPU: busy
  EXPECT_TRUE(team.SoloAt(t + w));
  EXPECT_TRUE(team.SoloAt(t + w + Team::kBusyMicros - 1));
  EXPECT_FALSE(team.SoloAt(t + w + Team::kBusyMicros));
  // Still busy at each probe: twice as long each time, up to the cap.
  int64_t expect = Team::kBusyMicros;
  for (int probe = 0; probe < 8; ++probe) {
    t += w + expect;
    expect = std::min<int64_t>(expect * 2, Team::kMaxBusyMicros);
    team.ObserveCall(t, w, static_cast<int64_t>(w * (Team::kBusyShare - 0.05)));
    EXPECT_TRUE(team.SoloAt(t + w + expect - 1)) << probe;
    EXPECT_FALSE(team.SoloAt(t + w + expect)) << probe;
  }
  EXPECT_EQ(expect, Team::kMaxBusyMicros);
  // A probe that finds the cores free: the team stays on, and the next busy finding starts over.
  t += w + expect;
  team.ObserveCall(t, w, w);
  EXPECT_FALSE(team.SoloAt(t + w));
  team.ObserveCall(t + w, w, 0);
  EXPECT_TRUE(team.SoloAt(t + 2 * w + Team::kBusyMicros - 1));
  EXPECT_FALSE(team.SoloAt(t + 2 * w + Team::kBusyMicros));
  // Not adapting: never alone.
  Team fixed(/*adapt_to_busy_cores=*/false);
  fixed.ObserveCall(0, w, 0);
  EXPECT_FALSE(fixed.SoloAt(1));
}

}  // namespace
}  // namespace headwise
