#pragma once
// hw::nn: modules, layers (convolution, pooling, normalisation and embedding too), containers, initialisers and functional (losses included).
#include "hwaro/nn/containers.h"
#include "hwaro/nn/conv.h"
#include "hwaro/nn/data_parallel.h"
#include "hwaro/nn/distributed_data_parallel.h"
#include "hwaro/nn/functional.h"
#include "hwaro/nn/init.h"
#include "hwaro/nn/layers.h"
#include "hwaro/nn/losses.h"
#include "hwaro/nn/module.h"
#include "hwaro/nn/normalization.h"
#include "hwaro/nn/utils.h"
