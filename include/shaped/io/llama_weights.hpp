#ifndef SHAPED_IO_LLAMA_WEIGHTS_HPP
#define SHAPED_IO_LLAMA_WEIGHTS_HPP

/// \file
/// `io::load_llama_weights`: a Llama 3 or Qwen3 checkpoint in Hugging Face's layout into `nn::llama_model`,
/// its `config.json` checked against the compiled configuration field by field. Not in the umbrella header.

#include <charconv>
#include <cstddef>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "../nn/llama_config.hpp"
#include "../nn/llama_model.hpp"
#include "hf_checkpoint.hpp"
#include "state_dict.hpp"

namespace shaped::io {

namespace detail {

// The Hugging Face key of a llama_model parameter (`trf_blocks.3.att.W_query.weight` is
// `model.layers.3.self_attn.q_proj.weight`); a name it does not know is returned as it is.
inline std::string llama_hf_key(const std::string& name) {
    static constexpr std::pair<const char*, const char*> block[] = {
        {"att.W_query.weight", "self_attn.q_proj.weight"},  {"att.W_key.weight", "self_attn.k_proj.weight"},
        {"att.W_value.weight", "self_attn.v_proj.weight"},  {"att.out_proj.weight", "self_attn.o_proj.weight"},
        {"att.q_norm.scale", "self_attn.q_norm.weight"},    {"att.k_norm.scale", "self_attn.k_norm.weight"},
        {"ff.fc1.weight", "mlp.gate_proj.weight"},          {"ff.fc2.weight", "mlp.up_proj.weight"},
        {"ff.fc3.weight", "mlp.down_proj.weight"},          {"norm1.scale", "input_layernorm.weight"},
        {"norm2.scale", "post_attention_layernorm.weight"}};
    if (name == "tok_emb.weight") return "model.embed_tokens.weight";
    if (name == "final_norm.scale") return "model.norm.weight";
    if (name == "out_head.weight") return "lm_head.weight";
    const std::string prefix = "trf_blocks.";
    if (name.rfind(prefix, 0) == 0) {
        const std::size_t dot = name.find('.', prefix.size());
        if (dot != std::string::npos) {
            const std::string layer = name.substr(prefix.size(), dot - prefix.size());
            const std::string rest = name.substr(dot + 1);
            for (const auto& [ours, theirs] : block)
                if (rest == ours) return "model.layers." + layer + "." + theirs;
        }
    }
    return name;
}

inline std::string shown_number(double x) {
    std::ostringstream os;
    os.precision(9);
    os << x;
    return os.str();
}

// The fields of config.json that change the computation, against the compiled configuration; each mismatch
// is one entry of `problems`.
template <nn::LlamaConfig C>
std::vector<std::string> llama_config_problems(const std::map<std::string, std::string>& config) {
    std::vector<std::string> problems;
    struct {
        const std::map<std::string, std::string>& c;
        const std::string* config_value(const std::string& key) const {
            const auto it = c.find(key);
            return it == c.end() ? nullptr : &it->second;
        }
    } ck{config};
    auto mismatch = [&](const std::string& key, const std::string* file, const std::string& type) {
        problems.push_back(key + " is " + (file ? *file : std::string("absent")) + " in the file, " + type +
                           " in the type");
    };
    auto integer = [&](const std::string& key, std::size_t want, bool optional = false) {
        const std::string* v = ck.config_value(key);
        if (!v && optional) return;
        unsigned long long got = 0;
        const bool ok = v && std::from_chars(v->data(), v->data() + v->size(), got).ptr == v->data() + v->size() &&
                        !v->empty() && got == want;
        if (!ok) mismatch(key, v, std::to_string(want));
    };
    auto real = [&](const std::string& key, double want, bool as_float) {
        const std::string* v = ck.config_value(key);
        double got = 0;
        bool ok = v && !v->empty() && std::from_chars(v->data(), v->data() + v->size(), got).ptr == v->data() + v->size();
        ok = ok && (as_float ? static_cast<float>(got) == static_cast<float>(want) : got == want);
        if (!ok) mismatch(key, v, shown_number(want));
    };
    auto text = [&](const std::string& key, const std::string& want, const char* absent_means = nullptr) {
        const std::string* v = ck.config_value(key);
        const std::string got = v ? *v : (absent_means ? absent_means : "");
        if ((!v && !absent_means) || got != want) mismatch(key, v, want);
    };
    text("model_type", nn::qk_norm_of<C>() ? "qwen3" : "llama");
    integer("vocab_size", C::vocab_size::extent);
    integer("max_position_embeddings", C::context_length::extent);
    integer("hidden_size", C::emb_dim::extent);
    integer("num_attention_heads", C::num_heads::extent);
    integer("num_key_value_heads", C::num_kv_heads::extent);
    if (ck.config_value("head_dim"))
        integer("head_dim", C::head_dim::extent);
    else if (C::head_dim::extent * C::num_heads::extent != C::emb_dim::extent)  // Llama's default
        mismatch("head_dim", nullptr, std::to_string(C::head_dim::extent));
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
    return problems;
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
    const auto problems = detail::llama_config_problems<Config>(checkpoint.config());
    if (!problems.empty()) {
        std::string all;
        for (const auto& p : problems) all += (all.empty() ? "" : "; ") + p;
        throw file_error("load_llama_weights", (checkpoint.directory() / "config.json").string(),
                         "does not match the compiled configuration: " + all);
    }
    detail::load_mapped(model, checkpoint.files(), detail::llama_hf_key, "load_llama_weights",
                        checkpoint.directory().string());
}

}  // namespace shaped::io

#endif
