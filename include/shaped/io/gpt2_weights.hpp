#ifndef SHAPED_IO_GPT2_WEIGHTS_HPP
#define SHAPED_IO_GPT2_WEIGHTS_HPP

/// \file
/// `io::load_gpt2_weights`: OpenAI's GPT-2 weights in Hugging Face's layout, loaded into `nn::gpt_model`
/// as the book's `load_weights_into_gpt` loads them (chapter 5).

#include <algorithm>
#include <array>
#include <cstddef>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "../nn/gpt_model.hpp"
#include "file_error.hpp"
#include "safetensors.hpp"
#include "state_dict.hpp"

namespace shaped::io {

namespace detail {

// dst (cols, rows) = the transpose of src (rows, cols), in blocks that stay in cache.
inline void transpose_into(const float* src, std::size_t rows, std::size_t cols, float* dst) {
    constexpr std::size_t tile = 32;
    for (std::size_t r0 = 0; r0 < rows; r0 += tile)
        for (std::size_t c0 = 0; c0 < cols; c0 += tile)
            for (std::size_t r = r0; r < std::min(rows, r0 + tile); ++r)
                for (std::size_t c = c0; c < std::min(cols, c0 + tile); ++c) dst[c * rows + r] = src[r * cols + c];
}

// One tensor of the file, as the loader expects it: its key, extents, and their names for messages.
struct gpt2_key {
    std::string name;
    std::vector<std::size_t> shape;
    std::string text;
};

}  // namespace detail

/// Loads a GPT-2 checkpoint in Hugging Face's layout (`model.safetensors` of `gpt2`, `gpt2-medium`, ...) into
/// `model`, as the book's `load_weights_into_gpt` does.
///
/// The layout: `wte.weight` (vocab_size, emb_dim), `wpe.weight` (context_length, emb_dim); for each block N,
/// `h.N.ln_1.weight`/`.bias`, `h.N.attn.c_attn.weight` (emb_dim, 3·emb_dim) holding the query, key and value
/// projections side by side and `.bias` (3·emb_dim), `h.N.attn.c_proj.weight`/`.bias`, `h.N.ln_2.*`,
/// `h.N.mlp.c_fc.weight` (emb_dim, 4·emb_dim) and `.bias`, `h.N.mlp.c_proj.weight` (4·emb_dim, emb_dim) and
/// `.bias`; `ln_f.weight`/`.bias`. Keys may all begin with `transformer.`. The weights of these Conv1D layers
/// are stored `(in, out)`, the transpose of `nn.Linear`'s `(out, in)`: each is transposed on the way in.
/// `out_head` is tied to `wte` (its copy), unless the file has an `lm_head.weight` of its own. The causal-mask
/// buffers `h.N.attn.bias` (1, 1, context_length, context_length) and `h.N.attn.masked_bias` (a scalar) of
/// the model's blocks are not weights and are skipped; any other key is unexpected. All or nothing: every
/// key, dtype and shape is checked before the first weight is written, so an error leaves the model as it was.
/// Shapes: the model's configuration must be the checkpoint's (`nn::gpt2_small` for `gpt2`).
/// Element type: F32, or F16/BF16 converted.
/// Errors: compile time, a configuration without `qkv_bias` (the checkpoints have query, key and value
/// biases). Thrown: `file_error` naming the file and every missing and unknown key at once, or a dtype a
/// float tensor cannot take; `shape_error` naming the file, the key, the expected extents with their names
/// (`(emb_dim=768, 3*emb_dim=2304)`) and the file's, for a checkpoint of another size.
/// Source: the book's `load_weights_into_gpt` (chapter 5, `gpt_download.py`); Hugging Face's `GPT2Model`.
/// Example: `nn::gpt_model<nn::gpt2_small> model(nn::skip_init);  io::load_gpt2_weights(model, io::safetensors_file(path));`
template <nn::GptConfig Config>
void load_gpt2_weights(nn::gpt_model<Config>& model, const safetensors_file& file) {
    static_assert(Config::qkv_bias,
                  "shaped::io::load_gpt2_weights: GPT-2's checkpoints have query, key and value biases; build the "
                  "model with a configuration whose qkv_bias is true (shaped::nn::gpt2_small, or yours)");
    const std::size_t V = Config::vocab_size::extent, C = Config::context_length::extent, E = Config::emb_dim::extent;
    const std::string e = "emb_dim=" + std::to_string(E);
    const std::string e3 = "3*emb_dim=" + std::to_string(3 * E), e4 = "4*emb_dim=" + std::to_string(4 * E);

    // The prefix every key carries, if the file's keys are those of GPT2LMHeadModel: told by the token
    // embedding's key, so that one stray key cannot turn every real key into a missing one.
    const std::string prefix = file.find("transformer.wte.weight") ? "transformer." : "";

    std::vector<detail::gpt2_key> expected{
        {"wte.weight", {V, E}, "(vocab_size=" + std::to_string(V) + ", " + e + ")"},
        {"wpe.weight", {C, E}, "(context_length=" + std::to_string(C) + ", " + e + ")"},
        {"ln_f.weight", {E}, "(" + e + ")"},
        {"ln_f.bias", {E}, "(" + e + ")"}};
    for (std::size_t n = 0; n < Config::n_layers; ++n) {
        const std::string h = "h." + std::to_string(n) + ".";
        for (const char* ln : {"ln_1.", "ln_2."}) {
            expected.push_back({h + ln + "weight", {E}, "(" + e + ")"});
            expected.push_back({h + ln + "bias", {E}, "(" + e + ")"});
        }
        expected.push_back({h + "attn.c_attn.weight", {E, 3 * E}, "(" + e + ", " + e3 + ")"});
        expected.push_back({h + "attn.c_attn.bias", {3 * E}, "(" + e3 + ")"});
        expected.push_back({h + "attn.c_proj.weight", {E, E}, "(" + e + ", " + e + ")"});
        expected.push_back({h + "attn.c_proj.bias", {E}, "(" + e + ")"});
        expected.push_back({h + "mlp.c_fc.weight", {E, 4 * E}, "(" + e + ", " + e4 + ")"});
        expected.push_back({h + "mlp.c_fc.bias", {4 * E}, "(" + e4 + ")"});
        expected.push_back({h + "mlp.c_proj.weight", {4 * E, E}, "(" + e4 + ", " + e + ")"});
        expected.push_back({h + "mlp.c_proj.bias", {E}, "(" + e + ")"});
    }

    // Everything before anything is copied, so that an error leaves the model as it was: the names (every
    // missing and unknown key at once), then each tensor's dtype and extents, lm_head's among them.
    const std::string lm_head = "lm_head.weight";
    const safetensors_entry* head = file.find(prefix + lm_head);
    if (!head) head = file.find(lm_head);
    std::set<std::string> known;
    std::vector<std::string> missing, unexpected;
    for (const auto& k : expected) {
        known.insert(prefix + k.name);
        if (!file.find(prefix + k.name)) missing.push_back(prefix + k.name);
    }
    // The causal-mask buffers that older checkpoints carry, one pair per block: h.N.attn.bias (1, 1, C, C) of
    // ones and zeros, h.N.attn.masked_bias a scalar. Only those of the model's blocks, in those shapes.
    const auto mask_buffer = [&](const safetensors_entry& entry) {
        for (std::size_t n = 0; n < Config::n_layers; ++n) {
            const std::string h = prefix + "h." + std::to_string(n) + ".attn.";
            const bool number = entry.dtype == "F32" || entry.dtype == "F16" || entry.dtype == "BF16";
            if (entry.name == h + "bias")
                return (number || entry.dtype == "U8" || entry.dtype == "BOOL") &&
                       entry.shape == std::vector<std::size_t>{1, 1, C, C};
            if (entry.name == h + "masked_bias") return number && entry.shape.empty();
        }
        return false;
    };
    for (const auto& entry : file.entries())
        if (!known.count(entry.name) && &entry != head && !mask_buffer(entry)) unexpected.push_back(entry.name);
    if (!missing.empty() || !unexpected.empty()) {
        std::string problem = "not a GPT-2 checkpoint of this configuration (" + std::to_string(Config::n_layers) +
                              " layers)";
        if (!missing.empty()) problem += "; missing key(s): " + detail::key_list(missing);
        if (!unexpected.empty()) problem += "; unexpected key(s): " + detail::key_list(unexpected);
        throw file_error("load_gpt2_weights", file.path(), problem);
    }
    for (const auto& k : expected) {
        const auto& entry = *file.find(prefix + k.name);
        file.check_dtype<float>(entry);
        file.check_extents(entry, k.shape, k.text);
    }
    if (head) {
        file.check_dtype<float>(*head);
        file.check_extents(*head, model.out_head.weight.shape.sizes(),
                           "(vocab_size=" + std::to_string(V) + ", " + e + ")");
    }

    std::vector<float> buffer;
    const auto read = [&](const detail::gpt2_key& k) -> const float* {
        std::size_t n = 1;
        for (auto d : k.shape) n *= d;
        buffer.resize(n);
        file.read(*file.find(prefix + k.name), std::span<const std::size_t>(k.shape), k.text, buffer.data());
        return buffer.data();
    };
    const auto copy = [&](const detail::gpt2_key& k, auto& t) { std::copy_n(read(k), t.numel(), t.data()); };
    std::size_t i = 0;
    copy(expected[i++], model.tok_emb.weight);
    copy(expected[i++], model.pos_emb.weight);
    copy(expected[i++], model.final_norm.scale);
    copy(expected[i++], model.final_norm.shift);
    for (auto& block : model.trf_blocks) {
        copy(expected[i++], block.norm1.scale);
        copy(expected[i++], block.norm1.shift);
        copy(expected[i++], block.norm2.scale);
        copy(expected[i++], block.norm2.shift);
        // c_attn: (emb, 3·emb), columns [q | k | v]; each Linear weight is its block's transpose.
        const float* qkv = read(expected[i++]);
        std::vector<float> part(E * E);
        const std::array projections{&block.att.W_query, &block.att.W_key, &block.att.W_value};
        for (std::size_t p = 0; p < 3; ++p) {
            for (std::size_t r = 0; r < E; ++r) std::copy_n(qkv + r * 3 * E + p * E, E, part.data() + r * E);
            detail::transpose_into(part.data(), E, E, projections[p]->weight.data());
        }
        const float* qkv_bias = read(expected[i++]);
        for (std::size_t p = 0; p < 3; ++p) std::copy_n(qkv_bias + p * E, E, projections[p]->bias->data());
        detail::transpose_into(read(expected[i++]), E, E, block.att.out_proj.weight.data());
        copy(expected[i++], *block.att.out_proj.bias);
        auto& [fc, gelu, proj] = block.ff.layers;
        (void)gelu;
        detail::transpose_into(read(expected[i++]), E, 4 * E, fc.weight.data());
        copy(expected[i++], *fc.bias);
        detail::transpose_into(read(expected[i++]), 4 * E, E, proj.weight.data());
        copy(expected[i++], *proj.bias);
    }
    if (head) {
        file.read(*head, model.out_head.weight);
    } else {
        std::copy_n(model.tok_emb.weight.data(), model.tok_emb.weight.numel(), model.out_head.weight.data());
    }
}

}  // namespace shaped::io

#endif
