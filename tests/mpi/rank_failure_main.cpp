// Run by tests/mpi/expect_job_failure.sh under mpirun -np 2: rank 1 fails while rank 0 waits
// in an all_reduce. The job must end with rank 1's error on the output, rather than rank 0
// hanging. How rank 1 fails is the argument:
//   uncaught  the hw::Error leaves main (std::terminate);
//   returned  main catches it, prints it and returns 1, as a command-line tool does.
#include <hwaro/hwaro.h>

#include <cstring>
#include <iostream>

namespace hw = hwaro;

int main(int argc, char** argv) {
  const bool uncaught = argc == 2 && std::strcmp(argv[1], "uncaught") == 0;
  const bool returned = argc == 2 && std::strcmp(argv[1], "returned") == 0;
  if (!uncaught && !returned) {
    std::cerr << "usage: rank_failure_main uncaught|returned\n";
    return 2;
  }
  hw::distributed::init_process_group("mpi", std::chrono::seconds(120));
  hw::Tensor t = hw::ones({8});
  if (hw::distributed::get_rank() == 1) {
    if (uncaught) throw hw::Error("rank 1 failed on purpose");
    try {
      throw hw::Error("rank 1 failed on purpose");
    } catch (const hw::Error& e) {
      std::cerr << "error: " << e.what() << "\n";
      return 1;
    }
  }
  hw::distributed::all_reduce(t);
  std::cout << "rank 0 finished its all_reduce, which it never should have\n";
  return 0;
}
