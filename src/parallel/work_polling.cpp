#include "parallel/work_polling.h"

#include <sstream>
#include <thread>

#include "hwaro/distributed.h"

namespace hwaro::distributed::detail {

void poll_until_complete(const std::function<bool()>& completed, std::chrono::steady_clock::time_point deadline,
                         const std::function<void()>& on_timeout) {
  for (int polls = 0; !completed(); ++polls) {
    if (std::chrono::steady_clock::now() > deadline) on_timeout();
    if (polls < 1000) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }
}

void throw_collective_timeout(const char* engine, const std::string& what, std::chrono::milliseconds timeout,
                              int rank, int world) {
  std::ostringstream msg;
  msg << "hw::distributed (" << engine << "): " << what << " did not complete within " << timeout.count()
      << " ms on rank " << rank << " of " << world << ": another rank has died, hangs, or called the "
      << "collectives in a different order. The job cannot continue safely: end every rank "
      << "(the timeout is init_process_group's second argument)";
  throw DistributedError(msg.str());
}

}  // namespace hwaro::distributed::detail
