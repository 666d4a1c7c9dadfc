// tree_walk - a recursive C++ workload with small member functions: a
// binary search tree is built by recursive insertion and walked by
// recursive sums; every member function is an annotated routine
// (MONITOR_FUNCTION), most of them a few nanoseconds long.
//
//   tree_walk [-t THREADS] [-n NODES] [-w WALKS] [-r ROUNDS] [-T FILE]
//
// Each thread builds its own tree of NODES nodes and walks it WALKS times
// (default 1 thread, 100000 nodes, 10 walks); region "main" covers the
// whole program. With ROUNDS (default 1) the whole work is done that many
// times, each a region "round" (compensation_eval PAIRED); the threads are
// started once and kept for every round (crew.h). -T FILE: each round's
// time of each thread's part, a line a round (crew.h).
#include <mri_monitor.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "crew.h"

namespace {

MONITOR_REGION(r_main, MRI_REGION_PROGRAM, "main");
MONITOR_REGION(r_round, MRI_REGION_LOOP, "round");

// The key a node sorts by: a few multiply-xorshift rounds of its number
// (some work for the smallest member function, as a real comparison has).
inline long mix(long v) {
  unsigned long long h = static_cast<unsigned long long>(v);
  for (int i = 0; i < 4; ++i) {
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
  }
  return static_cast<long>(h >> 24);
}

class Node {
 public:
  explicit Node(long key) : key_(key) {}

  __attribute__((noinline)) long key() const {
    MONITOR_FUNCTION();
    return mix(key_);
  }

  __attribute__((noinline)) bool less(const Node& other) const {
    MONITOR_FUNCTION();
    return key() < other.key();
  }

  __attribute__((noinline)) void insert(Node* n) {
    MONITOR_FUNCTION();
    Node*& child = n->less(*this) ? left_ : right_;
    if (child)
      child->insert(n);
    else
      child = n;
  }

  __attribute__((noinline)) long sum() const {
    MONITOR_FUNCTION();
    long s = key();
    if (left_) s += left_->sum();
    if (right_) s += right_->sum();
    return s;
  }

  __attribute__((noinline)) int depth() const {
    MONITOR_FUNCTION();
    const int l = left_ ? left_->depth() : 0, r = right_ ? right_->depth() : 0;
    return 1 + (l > r ? l : r);
  }

 private:
  long key_;
  Node* left_ = nullptr;
  Node* right_ = nullptr;
};

struct Part {
  int nodes, walks, index;
  long checksum = 0;
};

void* grow_and_walk(void* p) {
  auto* part = static_cast<Part*>(p);
  std::vector<std::unique_ptr<Node>> nodes;
  nodes.reserve(size_t(part->nodes));
  unsigned long long seed = 2718281828ull + unsigned(part->index);
  long expected = 0;
  for (int i = 0; i < part->nodes; ++i) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    const long key = long(seed >> 40);
    expected += mix(key);
    nodes.push_back(std::make_unique<Node>(key));
    if (i > 0) nodes[0]->insert(nodes.back().get());
  }
  for (int w = 0; w < part->walks; ++w) part->checksum += nodes[0]->sum() - expected;
  part->checksum += nodes[0]->depth() > part->nodes;
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  MONITOR_ENTER(r_main);
  int threads = 1, n = 100000, walks = 10, rounds = 1, opt;
  const char* times = nullptr;
  while ((opt = getopt(argc, argv, "t:n:w:r:T:")) != -1) {
    if (opt == 't')
      threads = std::atoi(optarg);
    else if (opt == 'n')
      n = std::atoi(optarg);
    else if (opt == 'w')
      walks = std::atoi(optarg);
    else if (opt == 'r')
      rounds = std::atoi(optarg);
    else if (opt == 'T')
      times = optarg;
    else {
      std::fprintf(stderr, "usage: tree_walk [-t THREADS] [-n NODES] [-w WALKS] [-r ROUNDS] [-T FILE]\n");
      return 2;
    }
  }
  if (threads < 1 || threads > 64 || n < 1 || walks < 1 || rounds < 1) {
    std::fprintf(stderr, "tree_walk: need 1..64 threads, NODES >= 1, WALKS >= 1, ROUNDS >= 1\n");
    return 2;
  }
  std::vector<Part> parts(size_t(threads), Part{n, walks, 0});
  crew crew;
  crew_start(&crew, threads, rounds, grow_and_walk, parts.data(), sizeof(Part));
  crew_times_to(&crew, times);
  long bad = 0;
  for (int r = 0; r < rounds; ++r) {
    MONITOR_ENTER(r_round);
    for (int t = 0; t < threads; ++t) parts[size_t(t)] = Part{n, walks, t};
    crew_round(&crew);
    for (const Part& part : parts) bad += part.checksum;
    MONITOR_EXIT(r_round);
    crew_write_times(&crew, r);
  }
  crew_finish(&crew);
  MONITOR_EXIT(r_main);
  if (bad) {
    std::fprintf(stderr, "tree_walk: checksum off by %ld\n", bad);
    return 1;
  }
  return 0;
}
