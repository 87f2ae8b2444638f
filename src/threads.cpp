// hw::set_num_threads / get_num_threads: the CPU backend's pool and OpenBLAS together.
#include "cpu/thread_pool.h"
#include "hwaro/ops.h"

namespace hwaro {
void set_num_threads(int n) { cpu::set_num_threads(n); }
int get_num_threads() { return cpu::get_num_threads(); }
}  // namespace hwaro
