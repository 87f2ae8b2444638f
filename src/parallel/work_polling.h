#pragma once
// Waiting for a collective, as both backends' Work::wait do: poll until it completes or its
// deadline passes. The first polls only yield (a collective often completes within
// microseconds); after that the thread sleeps 100 us between polls, so a long wait does not
// spin a core that the other ranks on this machine need.
#include <chrono>
#include <functional>
#include <string>

namespace hwaro::distributed::detail {

// Returns once completed() is true; calls on_timeout() (which throws) when the deadline passes.
void poll_until_complete(const std::function<bool()>& completed, std::chrono::steady_clock::time_point deadline,
                         const std::function<void()>& on_timeout);

// The DistributedError of a collective (`what`) that missed its deadline; engine: "MPI", "NCCL".
[[noreturn]] void throw_collective_timeout(const char* engine, const std::string& what,
                                           std::chrono::milliseconds timeout, int rank, int world);

}  // namespace hwaro::distributed::detail
