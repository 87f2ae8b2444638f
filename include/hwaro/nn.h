#pragma once
// hw::nn: modules, layers (convolution and pooling too), containers, initialisers and functional (losses included).
#include "hwaro/nn/containers.h"
#include "hwaro/nn/conv.h"
#include "hwaro/nn/data_parallel.h"
#include "hwaro/nn/functional.h"
#include "hwaro/nn/init.h"
#include "hwaro/nn/layers.h"
#include "hwaro/nn/losses.h"
#include "hwaro/nn/module.h"
#include "hwaro/nn/utils.h"
