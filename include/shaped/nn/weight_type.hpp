#ifndef SHAPED_NN_WEIGHT_TYPE_HPP
#define SHAPED_NN_WEIGHT_TYPE_HPP

/// \file
/// `nn::weight_type_of<Config>`: the element type a model keeps its weights in, float unless its config says
/// `using weight_type = shaped::bfloat16;`.

#include <type_traits>

#include "../bfloat16.hpp"

namespace shaped::nn {

/// \cond
namespace detail {
template <class Config>
struct declared_weight_type {
    using type = float;
};
template <class Config>
    requires requires { typename Config::weight_type; }
struct declared_weight_type<Config> {
    using type = typename Config::weight_type;
};
}  // namespace detail
/// \endcond

/// Whether `Config`'s weight type is one a model can keep: float (also when the config declares none) or
/// `bfloat16`. The models assert it, naming the field. Shapes: none. Errors: none. Source: none in PyTorch
/// (any dtype converts there).
template <class Config>
inline constexpr bool valid_weight_type = std::is_same_v<typename detail::declared_weight_type<Config>::type, float> ||
                                          std::is_same_v<typename detail::declared_weight_type<Config>::type, bfloat16>;

/// The element type of a model's matrices (every projection, the feed-forward layers, the token embeddings
/// and the output head): `Config::weight_type` where the config declares one, else float. `bfloat16` keeps
/// them in BF16, as Hugging Face checkpoints store them: half the memory, and half the bytes a decoding step
/// reads; the norms' scales stay float, and every product and sum is taken in float.
///
/// Shapes: none. Element type: float or `bfloat16`; for any other declared type it is float, so that the
/// model's one error (`valid_weight_type`, naming `Config::weight_type`) is the only one. Errors: none here.
/// Nothing is thrown. Source: a checkpoint's `torch_dtype` kept (`model.to(torch.bfloat16)` for the
/// weights, the activations left in float).
/// Example: `struct qwen3_0_6b_bf16 : nn::qwen3_0_6b { using weight_type = shaped::bfloat16; };`
template <class Config>
using weight_type_of =
    std::conditional_t<valid_weight_type<Config>, typename detail::declared_weight_type<Config>::type, float>;

}  // namespace shaped::nn

#endif
