// Whether ops record the autograd graph: one flag per thread, as torch.is_grad_enabled().
#include "hwaro/autograd.h"

namespace hwaro {

namespace {
thread_local bool grad_enabled = true;
}  // namespace

bool is_grad_enabled() { return grad_enabled; }
void set_grad_enabled(bool enabled) { grad_enabled = enabled; }

GradModeGuard::GradModeGuard(bool enabled) : previous_(grad_enabled) { grad_enabled = enabled; }
GradModeGuard::~GradModeGuard() { grad_enabled = previous_; }

}  // namespace hwaro
