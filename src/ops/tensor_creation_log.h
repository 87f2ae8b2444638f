#pragma once
// A record of the tensors created on this thread while it is open: every new tensor (ops'
// new_tensor) goes to the innermost open log. nn's ConstructionWatch opens one around a module's
// constructor, to find the tensors the constructor kept without registering them.
#include <memory>
#include <vector>

#include "hwaro/tensor.h"

namespace hwaro::ops {

class TensorCreationLog {
 public:
  TensorCreationLog();
  ~TensorCreationLog();
  TensorCreationLog(const TensorCreationLog&) = delete;
  TensorCreationLog& operator=(const TensorCreationLog&) = delete;

  // Weak: a temporary that died is simply expired.
  const std::vector<std::weak_ptr<TensorImpl>>& created() const { return created_; }

  // Adds t to this thread's innermost open log, if any (called by new_tensor).
  static void note(const Tensor& t);

 private:
  std::vector<std::weak_ptr<TensorImpl>> created_;
  TensorCreationLog* outer_;
};

}  // namespace hwaro::ops
