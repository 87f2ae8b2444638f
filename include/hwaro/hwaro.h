#pragma once
// The umbrella header: #include <hwaro/hwaro.h> and namespace hw = hwaro;
#include "hwaro/autograd.h"
#include "hwaro/cuda.h"
#include "hwaro/device.h"
#include "hwaro/dtype.h"
#include "hwaro/errors.h"
#include "hwaro/generator.h"
#include "hwaro/nn.h"
#include "hwaro/ops.h"
#include "hwaro/scalar.h"
#include "hwaro/tensor.h"
#include "hwaro/tensor_options.h"
#include "hwaro/version.h"
