#ifndef SHAPED_IO_LLAMA_WEIGHTS_HPP
#define SHAPED_IO_LLAMA_WEIGHTS_HPP

/// \file
/// `io::load_llama_weights`: a Llama 3 or Qwen3 checkpoint in Hugging Face's layout into `nn::llama_model`,
/// its `config.json` checked against the compiled configuration field by field. Not in the umbrella header.

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../nn/llama_config.hpp"
#include "../nn/llama_model.hpp"
#include "hf_checkpoint.hpp"
#include "state_dict.hpp"

namespace shaped::io {

namespace detail {

// The Hugging Face key of a llama_model parameter.
inline std::string llama_hf_key(const std::string& name) { return hf_model_key(name, "trf_blocks"); }

// The fields of config.json that change the computation, against the compiled configuration; each mismatch
// is one entry of the result.
template <nn::LlamaConfig C>
std::vector<std::string> llama_config_problems(const std::map<std::string, std::string>& config) {
    config_check ck(config);
    auto integer = [&](const std::string& key, std::size_t want) { ck.integer(key, want); };
    auto real = [&](const std::string& key, double want, bool as_float) { ck.real(key, want, as_float); };
    auto text = [&](const std::string& key, const std::string& want, const char* absent_means = nullptr) {
        ck.text(key, want, absent_means);
    };
    text("model_type", nn::qk_norm_of<C>() ? "qwen3" : "llama");
    integer("vocab_size", C::vocab_size::extent);
    integer("max_position_embeddings", C::context_length::extent);
    integer("hidden_size", C::emb_dim::extent);
    integer("num_attention_heads", C::num_heads::extent);
    integer("num_key_value_heads", C::num_kv_heads::extent);
    if (ck.value("head_dim"))
        integer("head_dim", C::head_dim::extent);
    else if (C::head_dim::extent * C::num_heads::extent != C::emb_dim::extent)  // Llama's default
        ck.mismatch("head_dim", nullptr, std::to_string(C::head_dim::extent));
    integer("intermediate_size", C::hidden_dim::extent);
    integer("num_hidden_layers", C::n_layers);
    real("rope_theta", C::rope_theta, false);
    real("rms_norm_eps", C::rms_norm_eps, true);
    text("tie_word_embeddings", C::tie_word_embeddings ? "true" : "false", "false");
    text("hidden_act", "silu");
    text("attention_bias", "false", "false");
    text("mlp_bias", "false", "false");
    constexpr std::optional<nn::llama3_rope_scaling> scaling = C::rope_scaling;
    if constexpr (scaling.has_value()) {
        text("rope_scaling.rope_type", "llama3");
        real("rope_scaling.factor", scaling->factor, true);
        real("rope_scaling.low_freq_factor", scaling->low_freq_factor, true);
        real("rope_scaling.high_freq_factor", scaling->high_freq_factor, true);
        real("rope_scaling.original_max_position_embeddings", scaling->original_context_length, true);
    } else {
        text("rope_scaling", "null", "null");
    }
    return std::move(ck.problems);
}

}  // namespace detail

/// Loads a Hugging Face Llama 3 (`model_type` "llama") or Qwen3 ("qwen3") checkpoint into `model`, after
/// checking its `config.json` against `Config`.
///
/// Shapes: every tensor must have its parameter's extents (`model.layers.N.self_attn.q_proj.weight` is
/// `W_query`'s `(d_out, emb_dim)`, `mlp.gate_proj`, `up_proj`, `down_proj` are `ff.fc1`, `fc2`, `fc3`,
/// `input_layernorm` and `post_attention_layernorm` `norm1` and `norm2`, `model.norm` `final_norm`,
/// `lm_head` `out_head` when untied). Element type: F32, or F16 and BF16 converted to float.
/// Errors: thrown, `file_error` naming `config.json` and every field that differs from the type (`rope_theta
/// is 10000.0 in the file, 500000 in the type`: `model_type`, `vocab_size`, `max_position_embeddings`,
/// `hidden_size`, `num_attention_heads`, `num_key_value_heads`, `head_dim`, `intermediate_size`,
/// `num_hidden_layers`, `rope_theta`, `rms_norm_eps`, `tie_word_embeddings`, `hidden_act`, `attention_bias`,
/// `mlp_bias`, `rope_scaling`), then every missing and unexpected key at once (an `lm_head.weight` in a tied
/// checkpoint is unexpected); `shape_error` naming the file, the key and both extents; what `hf_checkpoint`
/// throws. All or nothing: everything is checked before any tensor is copied.
/// Source: the book's `load_weights_into_llama` (standalone-llama32) and `load_weights_into_qwen`
/// (ch05/11_qwen3); transformers' `LlamaForCausalLM` and `Qwen3ForCausalLM` layout.
/// Example: `nn::llama_model<nn::llama32_1b> model(nn::skip_init);  io::load_llama_weights(model, io::hf_checkpoint(dir));`
template <nn::LlamaConfig Config>
void load_llama_weights(nn::llama_model<Config>& model, const hf_checkpoint& checkpoint) {
    detail::refuse_config("load_llama_weights", checkpoint, detail::llama_config_problems<Config>(checkpoint.config()));
    detail::load_mapped(model, checkpoint.files(), detail::llama_hf_key, "load_llama_weights",
                        checkpoint.directory().string());
}

}  // namespace shaped::io

#endif
