#include "autograd/rule_node.h"

#include <sstream>

#include "autograd/autograd_meta.h"
#include "autograd/grad_rules.h"

namespace hwaro::autograd {

namespace {

const char* kind_name(ops::GradOp kind) {
  switch (kind) {
    case ops::GradOp::Unary: return nullptr;  // named after the kernel
    case ops::GradOp::Binary: return nullptr;
    case ops::GradOp::Where: return "Where";
    case ops::GradOp::MaskedFill: return "MaskedFill";
    case ops::GradOp::Sum: return "Sum";
    case ops::GradOp::Prod: return "Prod";
    case ops::GradOp::Extremum: return "Max";
    case ops::GradOp::Softmax: return "Softmax";
    case ops::GradOp::LogSoftmax: return "LogSoftmax";
    case ops::GradOp::Mm: return "Mm";
    case ops::GradOp::Bmm: return "Bmm";
    case ops::GradOp::Addmm: return "Addmm";
    case ops::GradOp::Reshape: return "View";
    case ops::GradOp::Expand: return "Expand";
    case ops::GradOp::Permute: return "Permute";
    case ops::GradOp::Slice: return "Slice";
    case ops::GradOp::Select: return "Select";
    case ops::GradOp::Cat: return "Cat";
    case ops::GradOp::Convert: return "Copy";
    case ops::GradOp::IndexSelect: return "IndexSelect";
    case ops::GradOp::Gather: return "Gather";
    case ops::GradOp::Scatter: return "Scatter";
    case ops::GradOp::ScatterAdd: return "ScatterAdd";
    case ops::GradOp::Im2col: return "Im2col";
    case ops::GradOp::Col2im: return "Col2im";
    case ops::GradOp::MaxPool2d: return "MaxPool2d";
    case ops::GradOp::Conv2d: return "Conv2d";
  }
  return "Unknown";
}

// Whether the rule of c reads the values of input i, or of the output (else it uses at most their
// sizes, dtype and device, from SavedCall::input_meta). Only what is read is held, and so checked
// against in-place changes, as PyTorch saves and checks only what a node needs: changing an
// operand of an addition, or a weight that is only viewed, between forward and backward is
// allowed there. Must match the rules in grad_rules_*.cpp (a rule that reads an input not held
// meets an undefined tensor, which every op refuses); when in doubt, answer true.
bool reads_input(const SavedCall& c, std::size_t i) {
  using K = ops::GradOp;
  const auto other_needs_grad = [&](std::size_t j) { return c.needs_grad[j]; };
  switch (c.kind) {
    case K::Unary:  // exp, expm1, sqrt, rsqrt, tanh, sigmoid and relu read only the result
      return c.op != OpId::Neg && c.op != OpId::Exp && c.op != OpId::Expm1 && c.op != OpId::Sqrt &&
             c.op != OpId::Rsqrt && c.op != OpId::Tanh && c.op != OpId::Sigmoid && c.op != OpId::Relu;
    case K::Binary:
      switch (c.op) {
        case OpId::Add:
        case OpId::Sub:
          return false;
        case OpId::Mul:
          return other_needs_grad(1 - i);  // d(ab)/da = b
        case OpId::Div:
          return i == 1;  // g / b and -g * out / b
        default:
          return true;  // Pow, Maximum, Minimum
      }
    case K::Prod:
    case K::Extremum:
      return true;
    case K::Mm:
    case K::Bmm:
      return other_needs_grad(1 - i);
    case K::Addmm:
      return i > 0 && other_needs_grad(3 - i);  // inputs self, a, b: a for b's, b for a's
    case K::Conv2d:
      // The weight for x's gradient; x for the weight's and the bias's.
      if (i == 0) return c.needs_grad[1] || (c.needs_grad.size() == 3 && c.needs_grad[2]);
      return i == 1 && c.needs_grad[0];
    default:
      return false;  // sums, softmaxes, views, cat, conversions, indexing, windows: sizes only
  }
}

bool reads_output(const SavedCall& c) {
  using K = ops::GradOp;
  switch (c.kind) {
    case K::Unary:  // neg, abs, log, log1p, silu, clamp and pow(x, p) read only the input
      return c.op != OpId::Neg && c.op != OpId::Abs && c.op != OpId::Log && c.op != OpId::Log1p &&
             c.op != OpId::Silu && c.op != OpId::Clamp && c.op != OpId::PowScalar;
    case K::Binary:
      return (c.op == OpId::Div || c.op == OpId::Pow) && c.needs_grad[1];
    case K::Extremum:
    case K::Softmax:
    case K::LogSoftmax:
      return true;
    default:
      return false;
  }
}

}  // namespace

RuleNode::RuleNode(ops::GradCall&& call, const Tensor& output)
    : call_{.kind = call.kind, .op = call.op, .inputs = {}, .input_meta = {}, .saved = {}, .output = Tensor(),
            .ints = std::move(call.ints), .reals = {}, .flag = call.flag, .needs_grad = {}} {
  for (int i = 0; i < 4; ++i) call_.reals[i] = call.reals[i];
  for (const Tensor& t : call.inputs) {
    call_.needs_grad.push_back(t.defined() && t.requires_grad());
    mutable_next_edges().push_back(gradient_edge(t));
    call_.input_meta.push_back(t.defined() ? InputMeta{t.sizes(), t.dtype(), t.device()} : InputMeta{});
  }
  // reads_input and reads_output look only at kind, op and needs_grad, all set by now.
  for (std::size_t i = 0; i < call.inputs.size(); ++i) {
    const Tensor& t = call.inputs[i];
    call_.inputs.push_back(t.defined() && reads_input(call_, i) ? t.detach() : Tensor());
  }
  if (reads_output(call_)) call_.output = output.detach();
  for (const Tensor& t : call.saved) call_.saved.push_back(t.detach());
  for (const Tensor& t : call_.inputs) versions_.push_back(t.defined() ? t.version() : 0);
  for (const Tensor& t : call_.saved) versions_.push_back(t.version());
  versions_.push_back(call_.output.defined() ? call_.output.version() : 0);
}

std::string RuleNode::name() const {
  const char* kind = kind_name(call_.kind);
  return std::string(kind != nullptr ? kind : op_name(call_.op)) + "Backward";
}

void RuleNode::check_versions() const {
  std::size_t k = 0;
  auto check = [&](const Tensor& t, const char* role, std::size_t index) {
    const std::uint32_t expected = versions_[k++];
    if (!t.defined() || t.version() == expected) return;
    std::ostringstream what;
    what << "one of the tensors needed for gradient computation has been modified by an in-place operation: ["
         << t.dtype() << " " << t.sizes() << "] on " << t.device() << ", which is " << role << " " << index << " of "
         << name() << ", is at version " << t.version() << "; expected version " << expected
         << " instead. Use out-of-place ops (or clone()) for tensors the backward still needs";
    HWARO_CHECK(false, what.str());
  };
  // Only the tensors a rule reads are held (see the constructor), and each held one is checked.
  for (std::size_t i = 0; i < call_.inputs.size(); ++i) check(call_.inputs[i], "input", i);
  for (std::size_t i = 0; i < call_.saved.size(); ++i) check(call_.saved[i], "saved tensor", i);
  check(call_.output, "output", 0);
}

bool RuleNode::holds_tensors() const {
  for (const Tensor& t : call_.inputs) {
    if (t.defined()) return true;
  }
  return !call_.saved.empty() || call_.output.defined();
}

std::vector<Tensor> RuleNode::apply(const Tensor& grad_output) {
  HWARO_CHECK(!released_, "trying to backward through the graph a second time (or to use saved tensors after ",
              "they have been freed). Saved tensors are freed after backward(); pass retain_graph=true to the ",
              "first backward if you need to go through the graph again");
  check_versions();
  std::vector<Tensor> grads = rule_for(call_.kind)(call_, grad_output);
  // Each input's gradient in that input's dtype (a rule computes in the result's).
  for (std::size_t i = 0; i < grads.size(); ++i) {
    if (grads[i].defined() && call_.needs_grad[i] && grads[i].dtype() != call_.input_meta[i].dtype) {
      grads[i] = grads[i].to(call_.input_meta[i].dtype);
    }
  }
  return grads;
}

void RuleNode::release_saved() {
  if (!holds_tensors()) return;  // nothing to free, and nothing a second pass would miss
  released_ = true;
  call_.inputs.clear();
  call_.saved.clear();
  call_.output = Tensor();
}

}  // namespace hwaro::autograd
