#include <gtest/gtest.h>

#include "kembed/core/error.hpp"
#include "kembed/mpi/comm.hpp"
#include "test_support.hpp"

using kembed::Comm;

TEST(Agree, NoErrorReturnsEverywhere) {
  auto comm = Comm::world();
  EXPECT_NO_THROW(kembed::agree(comm, ""));
}

TEST(Agree, LowestFailingRankMessageReachesAll) {
  auto comm = Comm::world();
  const int p = comm.size();
  // The highest rank and (when p > 2) rank 1 fail; rank min(1, p-1) must win.
  std::string mine;
  if (comm.rank() == p - 1) mine = "from rank " + std::to_string(p - 1);
  if (p > 2 && comm.rank() == 1) mine = "from rank 1";
  const std::string expected = "from rank " + std::to_string(p > 2 ? 1 : p - 1);
  std::string got;
  try {
    kembed::agree(comm, mine);
  } catch (const kembed::Error& e) {
    got = e.what();
  }
  EXPECT_EQ(got, expected);
}

TEST(Collectively, BadAllocOnOneRankBecomesAnErrorEverywhere) {
  auto comm = Comm::world();
  bool thrown = false;
  try {
    kembed::collectively(comm, [&] {
      if (comm.rank() == comm.size() - 1) throw std::bad_alloc();
    });
  } catch (const kembed::Error& e) {
    thrown = std::string(e.what()) == "out of memory";
  }
  EXPECT_TRUE(kembed::test::all_ranks(comm, thrown));
}

TEST(CommSplit, OwnedSubcommunicatorSums) {
  auto comm = Comm::world();
  Comm half = comm.split(comm.rank() % 2, comm.rank());
  const long long expected_size = (comm.size() + 1 - comm.rank() % 2) / 2;
  EXPECT_EQ(half.size(), expected_size);
  EXPECT_EQ(half.sum(1LL), expected_size);
}

// gatherv and allgatherv: rank r contributes r + 1 values r * 100 + t (rank 1
// none, to cover empty pieces); the root sees the concatenation in rank
// order, the other ranks nothing; allgatherv gives everyone the same.
TEST(CommGather, GathervConcatenatesOnTheRootOnly) {
  auto comm = Comm::world();
  const int p = comm.size();
  auto piece = [](int r) {
    std::vector<long long> v;
    if (r != 1)
      for (int t = 0; t <= r; ++t) v.push_back(r * 100LL + t);
    return v;
  };
  std::vector<long long> expected;
  for (int r = 0; r < p; ++r)
    for (long long x : piece(r)) expected.push_back(x);
  const int root = p - 1;
  const auto gathered = comm.gatherv(piece(comm.rank()), root);
  if (comm.rank() == root)
    EXPECT_EQ(gathered, expected);
  else
    EXPECT_TRUE(gathered.empty());
  EXPECT_EQ(comm.allgatherv(piece(comm.rank())), expected);
}
