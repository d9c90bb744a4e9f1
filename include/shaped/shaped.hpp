#ifndef SHAPED_SHAPED_HPP
#define SHAPED_SHAPED_HPP

/// \file
/// The whole library: axes, tensors, ops, `nn::linear`, and PyTorch compatibility (random stream,
/// printing).

#include "axis.hpp"
#include "diagnostics.hpp"
#include "nn/causal_attention.hpp"
#include "nn/dropout.hpp"
#include "nn/head_weights.hpp"
#include "nn/linear.hpp"
#include "nn/multi_head_attention.hpp"
#include "nn/multi_head_attention_wrapper.hpp"
#include "nn/self_attention.hpp"
#include "shape.hpp"
#include "tensor.hpp"
#include "torch/generator.hpp"
#include "torch/print.hpp"

#endif
