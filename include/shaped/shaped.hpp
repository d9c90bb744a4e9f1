#ifndef SHAPED_SHAPED_HPP
#define SHAPED_SHAPED_HPP

/// \file
/// The whole library: axes, tensors, ops, `nn::linear`, and PyTorch compatibility (random stream,
/// printing), but for the fused attention: `<shaped/ops/scaled_dot_product_attention.hpp>` and
/// `<shaped/nn/multi_head_attention_sdpa.hpp>` bring its kernel, whose SIMD intrinsics cost every
/// translation unit that includes them about a second of compile time at -O2.

// The core first: a shape error in an op is then reported through tensor.hpp rather than through a
// module's header, which makes every diagnostic's include chain a line shorter.
#include "axis.hpp"
#include "diagnostics.hpp"
#include "shape.hpp"
#include "tensor.hpp"

#include "nn/causal_attention.hpp"
#include "nn/dropout.hpp"
#include "nn/embedding.hpp"
#include "nn/feed_forward.hpp"
#include "nn/gpt_config.hpp"
#include "nn/gpt_model.hpp"
#include "nn/head_weights.hpp"
#include "nn/layer_norm.hpp"
#include "nn/linear.hpp"
#include "nn/multi_head_attention.hpp"
#include "nn/multi_head_attention_combined_qkv.hpp"
#include "nn/multi_head_attention_wrapper.hpp"
#include "nn/self_attention.hpp"
#include "nn/transformer_block.hpp"
#include "torch/generator.hpp"
#include "torch/normal.hpp"
#include "torch/print.hpp"

#endif
