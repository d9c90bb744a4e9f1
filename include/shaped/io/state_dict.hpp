#ifndef SHAPED_IO_STATE_DICT_HPP
#define SHAPED_IO_STATE_DICT_HPP

/// \file
/// `io::load_state_dict` and `io::save_state_dict`: a module's parameters from and to a safetensors file,
/// under PyTorch's `state_dict()` names, strictly, as `module.load_state_dict(sd)` loads them.

#include <algorithm>
#include <cstddef>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <type_traits>
#include <vector>

#include "../nn/parameters.hpp"
#include "file_error.hpp"
#include "safetensors.hpp"

namespace shaped::io {

namespace detail {

// The first ten keys, quoted, and how many more there are.
inline std::string key_list(const std::vector<std::string>& keys) {
    std::string s;
    const std::size_t shown = std::min<std::size_t>(keys.size(), 10);
    for (std::size_t i = 0; i < shown; ++i) s += (i ? ", \"" : "\"") + keys[i] + "\"";
    if (keys.size() > shown) s += " and " + std::to_string(keys.size() - shown) + " more";
    return s;
}

// The strict load of `module` from `files` (one, or a checkpoint's shards), each parameter under the key
// `key_of(name)` gives its state_dict name: every parameter found, every key of every file a parameter or a
// buffer, dtypes and extents checked for all before any is copied. Errors name `where` (a file or a folder).
template <nn::Module M, class KeyOf>
void load_mapped(M& module, std::span<const safetensors_file* const> files, KeyOf key_of, const std::string& reader,
                 const std::string& where) {
    auto find = [&](const std::string& key) -> std::pair<const safetensors_file*, const safetensors_entry*> {
        for (const safetensors_file* f : files)
            if (const safetensors_entry* e = f->find(key)) return {f, e};
        return {nullptr, nullptr};
    };
    std::vector<std::string> missing, unexpected;
    std::set<std::string> known;
    nn::for_each_parameter(module, "", [&](const std::string& name, auto& t, nn::entry_kind kind) {
        const std::string key = key_of(name);
        known.insert(key);
        if (const auto [f, e] = find(key); e)
            f->template check_dtype<typename std::remove_cvref_t<decltype(t)>::value_type>(*e);
        else if (kind == nn::entry_kind::parameter)
            missing.push_back(key);
    });
    for (const safetensors_file* f : files)
        for (const auto& e : f->entries())
            if (!known.count(e.name)) unexpected.push_back(e.name);
    if (!missing.empty() || !unexpected.empty()) {
        std::string problem = "the keys do not match the module's";
        if (!missing.empty()) problem += "; missing key(s): " + key_list(missing);
        if (!unexpected.empty()) problem += "; unexpected key(s): " + key_list(unexpected);
        throw file_error(reader, where, problem);
    }
    nn::for_each_parameter(module, "", [&](const std::string& name, auto& t, nn::entry_kind) {
        if (const auto [f, e] = find(key_of(name)); e) f->check_extents(*e, t.shape.sizes(), t.shape.text());
    });
    nn::for_each_parameter(module, "", [&](const std::string& name, auto& t, nn::entry_kind) {
        if (const auto [f, e] = find(key_of(name)); e) f->read(*e, t);
    });
}

}  // namespace detail

/// Loads every parameter of `module` from `file`, by PyTorch's `state_dict()` names
/// (`trf_blocks.0.att.W_query.weight`, see each module's `parameters()`).
///
/// Strict, as PyTorch's `load_state_dict(strict=True)`: every parameter must be in the file, and every key
/// of the file must be a parameter or a buffer of the module. Buffers (the causal `mask`, which the book's
/// chapter-3 classes save and its KV-cache classes do not) are loaded when the file has them.
/// Shapes: each tensor of the file must have its parameter's extents. Element type: as
/// `safetensors_file::read` (F32, or F16/BF16 converted).
/// Errors: thrown, `file_error` naming the file and every missing and unexpected key at once (a bias in the
/// file for a layer built with `qkv_bias=false` is an unexpected key), or a key of a dtype the parameter
/// cannot take; `shape_error` naming the file, the key, the expected extents with their axis names and the
/// file's (`expected (d_out=768, d_in=768), got (768, 2304)`). All or nothing: names, element types and
/// extents are checked for every key before any is copied, so an error leaves the module as it was. A square
/// weight stored transposed has the right extents and cannot be told apart: see `load_gpt2_weights` for a
/// layout whose weights are stored `(in, out)`.
/// Source: `torch.nn.Module.load_state_dict`; `torch.load` / `safetensors.torch.load_file` for the file.
/// Example: `shaped::nn::gpt_model<cfg> model(shaped::nn::skip_init);  io::load_state_dict(model, io::safetensors_file("model.safetensors"));`
template <nn::Module M>
void load_state_dict(M& module, const safetensors_file& file) {
    const safetensors_file* files[] = {&file};
    detail::load_mapped(module, files, [](const std::string& name) { return name; }, "load_state_dict", file.path());
}

/// Writes every parameter and buffer of `module` to `path`, under PyTorch's `state_dict()` names, as F32.
///
/// Shapes: each tensor's own. Element type: float parameters. Errors: thrown, `file_error` when the file
/// cannot be written. Source: `safetensors.torch.save_file(model.state_dict(), path)`.
/// Example: `io::save_state_dict(model, "model.safetensors");`
template <nn::Module M>
void save_state_dict(const M& module, const std::string& path) {
    std::vector<safetensors_tensor> tensors;
    nn::for_each_parameter(module, "", [&](const std::string& name, const auto& t, nn::entry_kind) {
        const auto sizes = t.shape.sizes();
        tensors.push_back({name, std::vector<std::size_t>(sizes.begin(), sizes.end()), {t.data(), t.numel()}});
    });
    save_safetensors(path, tensors);
}

}  // namespace shaped::io

#endif
