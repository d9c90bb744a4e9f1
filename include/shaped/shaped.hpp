#ifndef SHAPED_SHAPED_HPP
#define SHAPED_SHAPED_HPP

/// \file
/// The whole library: axes, tensors, ops, the concepts for modules of one's own (`TensorOf`,
/// `LastAxis`), `nn::linear`, and PyTorch compatibility (random stream, printing), but for the fused attention: `<shaped/ops/scaled_dot_product_attention.hpp>`,
/// `<shaped/nn/multi_head_attention_sdpa.hpp>`, `<shaped/nn/grouped_query_attention.hpp>` and
/// `<shaped/nn/multi_head_latent_attention.hpp>` bring its kernel, whose SIMD intrinsics cost every translation unit that includes them about a second of compile
/// time at -O2.

/// \namespace shaped
/// Tensors whose axes, names and extents, are part of their type (`tensor<float, batch, num_tokens, d_out>`),
/// and the ops on them, each named after its PyTorch function (`view`, `transpose`, `matmul`, `softmax`,
/// `masked_fill`, `cat`, `split`, ...), which check shapes at compile time. The tutorial: docs/.
///
/// \namespace shaped::nn
/// The book's layers and modules (chapters 3 and 4): `linear`, `dropout`, `embedding`, `layer_norm`, the
/// attention modules, `feed_forward`, `transformer_block`, `gpt_model`, with PyTorch's member names, creation
/// order and `state_dict` names.
///
/// \namespace shaped::torch
/// PyTorch's compatibility layer: the random streams of `torch.manual_seed`, `torch.rand`, `torch.randn` and
/// the layers' initialisation, bit for bit PyTorch 1.13's, and PyTorch's printing of tensors.
///
/// \namespace shaped::io
/// Weights from files: safetensors and `.npy` readers and writers, strict `load_state_dict`, and Hugging
/// Face's GPT-2 layout.
///
/// \namespace shaped::diag
/// The words of shaped's compile errors: each failed shape check names its operation's roles (`in_features`,
/// `input_last`, ...) in the type the compiler prints beside the message (docs/reading-errors.md).

// The core first, and each op before tensor.hpp: a shape error in an op is then reported through this
// header alone, not through tensor.hpp or a module's header, which keeps every diagnostic's include chain
// short (the chain is printed above the message).
#include "axis.hpp"
#include "diagnostics.hpp"
#include "shape.hpp"
#include "ops/attention_mask.hpp"
#include "ops/bincount.hpp"
#include "ops/cat.hpp"
// elementwise.hpp before compare.hpp, which includes it: a broadcasting error then shows one line of
// "In file included from" fewer, and shaped's message within the first 8 lines on g++.
#include "ops/elementwise.hpp"
#include "ops/compare.hpp"
#include "ops/cross_entropy.hpp"
#include "ops/reduce.hpp"
#include "ops/gather.hpp"
#include "ops/index.hpp"
#include "ops/mask.hpp"
#include "ops/math.hpp"
#include "ops/matmul.hpp"
#include "ops/repeat.hpp"
#include "ops/softmax.hpp"
#include "ops/split.hpp"
#include "ops/stack.hpp"
#include "ops/topk.hpp"
#include "ops/transpose.hpp"
#include "ops/view.hpp"
#include "tensor.hpp"
#include "memory.hpp"
#include "tensor_of.hpp"

#include "nn/causal_attention.hpp"
#include "nn/dropout.hpp"
#include "nn/embedding.hpp"
#include "nn/feed_forward.hpp"
#include "nn/gated_feed_forward.hpp"
#include "nn/gpt_config.hpp"
#include "nn/gpt_model.hpp"
#include "nn/head_weights.hpp"
#include "nn/layer_norm.hpp"
#include "nn/linear.hpp"
#include "nn/multi_head_attention.hpp"
#include "nn/multi_head_attention_combined_qkv.hpp"
#include "nn/multi_head_attention_wrapper.hpp"
#include "nn/rms_norm.hpp"
#include "nn/rope.hpp"
#include "nn/self_attention.hpp"
#include "nn/transformer_block.hpp"
#include "torch/generator.hpp"
#include "torch/normal.hpp"
#include "torch/print.hpp"

#endif
