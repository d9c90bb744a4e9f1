#ifndef SHAPED_NN_PARAMETERS_HPP
#define SHAPED_NN_PARAMETERS_HPP

/// \file
/// What every module shares about its parameters: one declaration of them (`parameters()`, each under the
/// name PyTorch's `state_dict()` gives it), from which visiting (`for_each_parameter`), loading, saving and
/// counting follow; and `skip_init`, for a module whose weights will be loaded.

#include <boost/hana/for_each.hpp>
#include <boost/hana/tuple.hpp>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
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

namespace detail {

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};
template <class T>
struct is_tuple : std::false_type {};
template <class... T>
struct is_tuple<std::tuple<T...>> : std::true_type {};

// One entry of a parameter list: what to call `f` with, on a module `m` that is const or not.
enum class entry_role { tensor, module, modules };
template <entry_role Role, entry_kind Kind, class Access>
struct list_entry {
    static constexpr entry_role role = Role;
    static constexpr entry_kind kind = Kind;
    const char* name;
    Access access;  // a pointer to member, or a function of the module returning a reference
};

}  // namespace detail

/// A tensor of the module under `name` (`"weight"`): `access` is a pointer to the member (`&linear::weight`)
/// or a function of the module returning it. A `std::optional` tensor (a bias that may be absent) is an
/// entry only while it holds one. Used in a module's `parameters()`.
template <class Access>
constexpr auto parameter(const char* name, Access access) {
    return detail::list_entry<detail::entry_role::tensor, entry_kind::parameter, Access>{name, access};
}
/// A buffer (`register_buffer`: in the state_dict, neither trained nor counted), as `parameter`.
template <class Access>
constexpr auto buffer(const char* name, Access access) {
    return detail::list_entry<detail::entry_role::tensor, entry_kind::buffer, Access>{name, access};
}
/// A submodule under `name` (`"W_query"`): its entries, each named `name`, a dot and its own (`W_query.weight`).
/// A `std::optional` submodule (Qwen3's `q_norm`, present under `qk_norm`) has entries only while engaged.
template <class Access>
constexpr auto submodule(const char* name, Access access) {
    return detail::list_entry<detail::entry_role::module, entry_kind::parameter, Access>{name, access};
}
/// A range of submodules under `name` (`"trf_blocks"`, PyTorch's `nn.ModuleList`): the entries of each,
/// named `name`, a dot, its index, a dot and its own (`trf_blocks.0.att.W_query.weight`). The member is a
/// range (`std::array` of one block type) or a `std::tuple` of modules of several types (Gemma 3's local
/// and global blocks).
template <class Access>
constexpr auto submodules(const char* name, Access access) {
    return detail::list_entry<detail::entry_role::modules, entry_kind::parameter, Access>{name, access};
}
/// A module's parameter list: its entries in PyTorch's `state_dict()` order (the order the module's
/// `__init__` assigns them). A module returns one from `static constexpr auto parameters()`.
///
/// Example, the book's `LayerNorm`:
/// `static constexpr auto parameters() { return nn::parameter_list(nn::parameter("scale", &layer_norm::scale), nn::parameter("shift", &layer_norm::shift)); }`
template <class... Entries>
constexpr auto parameter_list(Entries... entries) {
    return boost::hana::make_tuple(entries...);
}

/// A model's parameter counts: `total` counts the output head apart from the token embeddings, as the
/// book's `sum(p.numel() for p in model.parameters())` does before the weights are tied; `unique` counts
/// each tensor once (tied weights once).
struct parameter_counts {
    std::size_t total;   ///< with a tied output head counted again
    std::size_t unique;  ///< each tensor once
};

/// A module: something whose parameters have PyTorch's names, declared once in
/// `static constexpr auto parameters()` (a `parameter_list`).
template <class M>
concept Module = requires { std::remove_cvref_t<M>::parameters(); };

/// Calls `f(name, tensor, kind)` for each tensor of `m` (parameters and buffers) in PyTorch's `state_dict()`
/// order, `name` beginning with `prefix` (`"trf_blocks.0.att.W_query.weight"`); the tensors are const when
/// `m` is.
///
/// Shapes: each tensor as declared. Errors: none of its own; what `f` throws passes through.
/// Source: `model.state_dict()`, `model.named_parameters()`.
template <Module M, class F>
void for_each_parameter(M& m, const std::string& prefix, F&& f) {
    boost::hana::for_each(std::remove_const_t<M>::parameters(), [&](const auto& entry) {
        using entry_t = std::remove_cvref_t<decltype(entry)>;
        auto& member = std::invoke(entry.access, m);
        if constexpr (entry_t::role == detail::entry_role::module) {
            if constexpr (detail::is_optional<std::remove_cvref_t<decltype(member)>>::value) {
                if (member) for_each_parameter(*member, prefix + entry.name + ".", f);
            } else {
                for_each_parameter(member, prefix + entry.name + ".", f);
            }
        } else if constexpr (entry_t::role == detail::entry_role::modules) {
            std::size_t i = 0;
            auto each = [&](auto& sub) { for_each_parameter(sub, prefix + entry.name + "." + std::to_string(i++) + ".", f); };
            if constexpr (detail::is_tuple<std::remove_cvref_t<decltype(member)>>::value)
                std::apply([&](auto&... subs) { (each(subs), ...); }, member);  // modules of several types, in order
            else
                for (auto& sub : member) each(sub);
        } else if constexpr (detail::is_optional<std::remove_cvref_t<decltype(member)>>::value) {
            if (member) f(prefix + entry.name, *member, entry_t::kind);
        } else {
            f(prefix + entry.name, member, entry_t::kind);
        }
    });
}

/// The number of parameters, buffers not counted: PyTorch's `sum(p.numel() for p in model.parameters())`.
///
/// Shapes: none. Errors: none. Source: the book's parameter count (chapter 4).
template <Module M>
std::size_t parameter_count(const M& m) {
    std::size_t n = 0;
    for_each_parameter(m, "", [&](const std::string&, const auto& t, entry_kind kind) {
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
    for_each_parameter(m, "", [&](const std::string& name, const auto&, entry_kind) { keys.push_back(name); });
    return keys;
}

/// One line per tensor of the module, in `state_dict()` order: its name, its axes with their extents, and
/// `(buffer)` after a buffer; what `for name, t in model.state_dict().items(): print(name, t.shape)` prints,
/// with the axes named.
///
/// Shapes: none. Errors: none. Source: `model.state_dict()`, `named_parameters()`.
/// Example: `std::cout << nn::parameter_table(nn::layer_norm<emb_dim>{});` prints
/// `scale (emb_dim=768)` and `shift (emb_dim=768)`.
template <Module M>
std::string parameter_table(const M& m) {
    std::string out;
    for_each_parameter(m, "", [&](const std::string& name, const auto& t, entry_kind kind) {
        out += name + " " + t.shape.text() + (kind == entry_kind::buffer ? " (buffer)" : "") + "\n";
    });
    return out;
}

}  // namespace shaped::nn

#endif
