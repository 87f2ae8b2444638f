#pragma once
// Called once at start-up, next to the backends' registration: connects the ops' grad
// recording (ops/grad_record.h) to this layer.
namespace hwaro::autograd {
void install();
}  // namespace hwaro::autograd
