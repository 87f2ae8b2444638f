#pragma once
// torch.nn.Conv2d's and torch.nn.functional.conv2d's padding strings: Same pads so that the output
// has the input's height and width (stride 1 only), dilation * (kernel - 1) rows or columns in all
// per axis, the odd one after, as PyTorch; Valid pads nothing.

namespace hwaro::nn {

enum class Padding { Same, Valid };

}  // namespace hwaro::nn
