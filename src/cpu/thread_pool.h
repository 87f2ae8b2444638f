#pragma once
// The CPU backend's fork-join pool. parallel_for splits [begin, end) into
// chunks of at least `grain` elements over the pool's threads and the caller's.
// A parallel_for inside another runs serially on the calling thread.
//
// Our own small pool rather than OpenMP: it stays ThreadSanitizer-clean (the
// data loader's tests run under TSan) and costs nothing for small inputs.
#include <cstdint>
#include <functional>

namespace hwaro::cpu {

void set_num_threads(int n);
int get_num_threads();

namespace detail {
// True when a loop of n elements should run on the calling thread alone.
bool run_serially(std::int64_t n, std::int64_t grain);
void parallel_for_pooled(std::int64_t begin, std::int64_t end, std::int64_t grain,
                         const std::function<void(std::int64_t, std::int64_t)>& fn);
}  // namespace detail

// fn(chunk_begin, chunk_end). The serial case is decided inline, so small loops pay nothing.
template <typename F> void parallel_for(std::int64_t begin, std::int64_t end, std::int64_t grain, F&& fn) {
  if (end <= begin) return;
  if (detail::run_serially(end - begin, grain)) {
    fn(begin, end);
    return;
  }
  detail::parallel_for_pooled(begin, end, grain, fn);
}

// Elements below which an elementwise loop does not split (about 10 us of work).
inline constexpr std::int64_t kElementwiseGrain = 32768;

}  // namespace hwaro::cpu
