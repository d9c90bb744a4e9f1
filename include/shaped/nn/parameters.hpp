#ifndef SHAPED_NN_PARAMETERS_HPP
#define SHAPED_NN_PARAMETERS_HPP

/// \file
/// What every module shares about its parameters: their names as PyTorch's `state_dict()` gives them
/// (`for_each_parameter`), a count, and `skip_init`, for a module whose weights will be loaded.

#include <cstddef>
#include <string>
#include <vector>

namespace shaped::nn {

/// Whether a named tensor of a module is a parameter (`nn.Parameter`, trained and counted) or a buffer
/// (`register_buffer`, such as the causal mask: in PyTorch's `state_dict()` too, but neither trained nor
/// counted).
enum class entry_kind { parameter, buffer };

/// Tag for a module built to be loaded: its parameters are allocated but not drawn (163M uniform and
/// normal draws take seconds for GPT-2 124M), so they hold no meaningful values until loaded. Buffers such as
/// the causal mask are built as usual.
///
/// Shapes: none. Errors: none. Source: `torch.nn.utils.skip_init`.
/// Example: `shaped::nn::gpt_model<gpt2_124m_hf> model(shaped::nn::skip_init);`
struct skip_init_t {
    explicit skip_init_t() = default;
};
/// The tag itself: `gpt_model<gpt2_124m> model(shaped::nn::skip_init);`.
inline constexpr skip_init_t skip_init{};

/// A module: something with parameters under PyTorch's names. `m.for_each_parameter(prefix, f)` calls
/// `f(name, tensor, kind)` for each, in PyTorch's `state_dict()` order, `name` beginning with `prefix`
/// (`"trf_blocks.0.att.W_query.weight"`).
template <class M>
concept Module = requires(M& m) { m.for_each_parameter(std::string{}, [](const std::string&, auto&, entry_kind) {}); };

/// The number of parameters, buffers not counted: PyTorch's `sum(p.numel() for p in model.parameters())`.
///
/// Shapes: none. Errors: none. Source: the book's parameter count (chapter 4).
template <Module M>
std::size_t parameter_count(const M& m) {
    std::size_t n = 0;
    m.for_each_parameter("", [&](const std::string&, const auto& t, entry_kind kind) {
        if (kind == entry_kind::parameter) n += t.numel();
    });
    return n;
}

/// Every key of the module's `state_dict()`, parameters and buffers, in PyTorch's order.
///
/// Shapes: none. Errors: none. Source: `list(model.state_dict().keys())`.
template <Module M>
std::vector<std::string> state_dict_keys(const M& m) {
    std::vector<std::string> keys;
    m.for_each_parameter("", [&](const std::string& name, const auto&, entry_kind) { keys.push_back(name); });
    return keys;
}

}  // namespace shaped::nn

#endif
