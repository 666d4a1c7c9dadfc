// mri_sync.h - the only synchronisation primitives used across the process
// boundary: atomic loads/stores on words in the segment, and futex waits
// (always with a timeout, so a dead peer is noticed) and wakes.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>

namespace mri::sync {

template <typename T>
inline T load(const T& word, std::memory_order order = std::memory_order_acquire) {
  return std::atomic_ref<T>(const_cast<T&>(word)).load(order);
}

template <typename T>
inline void store(T& word, T value, std::memory_order order = std::memory_order_release) {
  std::atomic_ref<T>(word).store(value, order);
}

// Increments a word that only this process writes (no read-modify-write
// atomicity needed across processes; the release store publishes the
// fields written before it).
inline uint32_t bump(uint32_t& word) {
  uint32_t next = load(word, std::memory_order_relaxed) + 1;
  store(word, next);
  return next;
}

// Waits while *word == expected, at most timeout_ns. Shared (not
// FUTEX_PRIVATE) so it works on a segment mapped in two processes.
inline void futex_wait_shared(uint32_t* word, uint32_t expected, long timeout_ns) {
  struct timespec ts{timeout_ns / 1000000000L, timeout_ns % 1000000000L};
  syscall(SYS_futex, word, FUTEX_WAIT, expected, &ts, nullptr, 0);
}

inline void futex_wake_shared(uint32_t* word) {
  syscall(SYS_futex, word, FUTEX_WAKE, INT32_MAX, nullptr, nullptr, 0);
}

inline void futex_wait_private(uint32_t* word, uint32_t expected, long timeout_ns) {
  struct timespec ts{timeout_ns / 1000000000L, timeout_ns % 1000000000L};
  syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, &ts, nullptr, 0);
}

inline void futex_wake_private(uint32_t* word) {
  syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr, nullptr, 0);
}

inline uint64_t monotonic_ns() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

}  // namespace mri::sync
