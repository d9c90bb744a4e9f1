#ifndef SHAPED_IO_GEMMA_WEIGHTS_HPP
#define SHAPED_IO_GEMMA_WEIGHTS_HPP

/// \file
/// `io::load_gemma_weights`: a Gemma 3 checkpoint in Hugging Face's layout into `nn::gemma_model`, its
/// `config.json` checked against the compiled configuration field by field. Not in the umbrella header.

#include <charconv>
#include <cstddef>
#include <map>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "../nn/gemma_config.hpp"
#include "../nn/gemma_model.hpp"
#include "hf_checkpoint.hpp"
#include "state_dict.hpp"

namespace shaped::io {

namespace detail {

// The Hugging Face key of a gemma_model parameter (`blocks.3.pre_feedforward_layernorm.scale` is
// `model.layers.3.pre_feedforward_layernorm.weight`).
inline std::string gemma_hf_key(const std::string& name) { return hf_model_key(name, "blocks"); }

inline const char* layer_type_name(nn::layer_type t) {
    return t == nn::layer_type::sliding_attention ? "sliding_attention" : "full_attention";
}

// The fields of config.json that change the computation, against the compiled configuration; each mismatch
// is one entry of the result.
template <nn::GemmaConfig C>
std::vector<std::string> gemma_config_problems(const std::map<std::string, std::string>& config) {
    config_check ck(config);
    ck.text("model_type", "gemma3_text");
    ck.integer("vocab_size", C::vocab_size::extent);
    ck.integer("max_position_embeddings", C::context_length::extent);
    ck.integer("hidden_size", C::emb_dim::extent);
    ck.integer("num_attention_heads", C::num_heads::extent);
    ck.integer("num_key_value_heads", C::num_kv_heads::extent);
    if (ck.value("head_dim"))
        ck.integer("head_dim", C::head_dim::extent);
    else if (C::head_dim::extent != 256)  // Gemma3TextConfig's default
        ck.mismatch("head_dim", nullptr, std::to_string(C::head_dim::extent));
    ck.integer("intermediate_size", C::hidden_dim::extent);
    ck.integer("num_hidden_layers", C::n_layers);
    ck.integer("sliding_window", C::sliding_window::extent);
    // layer_types, or when absent the pattern transformers derives them from (sliding_window_pattern, 6).
    if (ck.value("layer_types")) {
        ck.text("layer_types", "[" + std::to_string(C::n_layers) + "]");
        for (std::size_t i = 0; i < C::n_layers; ++i)
            ck.text("layer_types." + std::to_string(i), layer_type_name(C::layer_types[i]));
    } else {
        std::size_t pattern = 6;
        if (const std::string* v = ck.value("sliding_window_pattern")) {
            unsigned long long got = 0;
            const auto r = std::from_chars(v->data(), v->data() + v->size(), got);
            pattern = r.ec == std::errc{} && r.ptr == v->data() + v->size() ? got : 0;
        }
        bool same = pattern > 0;
        for (std::size_t i = 0; same && i < C::n_layers; ++i)
            same = ((i + 1) % pattern == 0) == (C::layer_types[i] == nn::layer_type::full_attention);
        if (!same) ck.mismatch("layer_types", nullptr, "another pattern");
    }
    ck.real("rope_theta", C::rope_theta, false);
    ck.real("rope_local_base_freq", C::rope_local_base_freq, false);
    ck.real("rms_norm_eps", C::rms_norm_eps, true);
    ck.real("query_pre_attn_scalar", C::query_pre_attn_scalar, false);
    ck.text("tie_word_embeddings", C::tie_word_embeddings ? "true" : "false", "true");
    ck.text("hidden_activation", "gelu_pytorch_tanh", "gelu_pytorch_tanh");
    ck.text("attention_bias", "false", "false");
    ck.text("rope_scaling", "null", "null");
    ck.text("attn_logit_softcapping", "null", "null");
    ck.text("final_logit_softcapping", "null", "null");
    ck.text("use_bidirectional_attention", "false", "false");
    return std::move(ck.problems);
}

}  // namespace detail

/// Loads a Hugging Face Gemma 3 checkpoint (`model_type` "gemma3_text", `Gemma3ForCausalLM`) into `model`,
/// after checking its `config.json` against `Config`.
///
/// Shapes: every tensor must have its parameter's extents (`model.layers.N.self_attn.q_proj.weight` is
/// `W_query`'s `(num_heads × head_dim, emb_dim)`, `q_norm` and `k_norm` `(head_dim)`, `mlp.gate_proj`,
/// `up_proj`, `down_proj` are `ff.fc1`, `fc2`, `fc3`, the four norms keep their names, `model.norm` is
/// `final_norm`, `lm_head` `out_head` when untied). Element type: F32, or F16 and BF16 converted to float.
/// Errors: thrown, `file_error` naming `config.json` and every field that differs from the type
/// (`model_type`, `vocab_size`, `max_position_embeddings`, `hidden_size`, `num_attention_heads`,
/// `num_key_value_heads`, `head_dim`, `intermediate_size`, `num_hidden_layers`, `sliding_window`, each of
/// `layer_types` (`layer_types.5 is sliding_attention in the file, full_attention in the type`),
/// `rope_theta`, `rope_local_base_freq`, `rms_norm_eps`, `query_pre_attn_scalar`, `tie_word_embeddings`,
/// `hidden_activation`, `attention_bias`, `rope_scaling` (linear scaling, of the larger Gemma 3 sizes, is not
/// supported), `attn_logit_softcapping`, `final_logit_softcapping`, `use_bidirectional_attention`), then
/// every missing and unexpected key at once; `shape_error` naming the file, the key and both extents; what
/// `hf_checkpoint` throws. All or nothing: everything is checked before any tensor is copied.
/// Source: the book's `load_weights_into_gemma` (ch05/12_gemma3); transformers' `Gemma3ForCausalLM` layout.
/// Example: `nn::gemma_model<nn::gemma3_270m> model(nn::skip_init);  io::load_gemma_weights(model, io::hf_checkpoint(dir));`
template <nn::GemmaConfig Config>
void load_gemma_weights(nn::gemma_model<Config>& model, const hf_checkpoint& checkpoint) {
    detail::refuse_config("load_gemma_weights", checkpoint, detail::gemma_config_problems<Config>(checkpoint.config()));
    detail::load_mapped(model, checkpoint.files(), detail::gemma_hf_key, "load_gemma_weights",
                        checkpoint.directory().string());
}

}  // namespace shaped::io

#endif
