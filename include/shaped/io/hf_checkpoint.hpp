#ifndef SHAPED_IO_HF_CHECKPOINT_HPP
#define SHAPED_IO_HF_CHECKPOINT_HPP

/// \file
/// `io::hf_checkpoint`: a Hugging Face model folder, its `config.json` and its safetensors, one file or
/// shards listed by `model.safetensors.index.json`, opened strictly. Not in the umbrella header.

#include <charconv>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "../detail/json.hpp"
#include "file_error.hpp"
#include "safetensors.hpp"

namespace shaped::io {

namespace detail {

// Compares config.json's fields (flat, as hf_checkpoint::config() holds them) with a compiled configuration;
// each mismatch is one entry of `problems`, "key is <file's> in the file, <type's> in the type".
class config_check {
public:
    explicit config_check(const std::map<std::string, std::string>& config) : c_(config) {}
    std::vector<std::string> problems;

    const std::string* value(const std::string& key) const {
        const auto it = c_.find(key);
        return it == c_.end() ? nullptr : &it->second;
    }
    void mismatch(const std::string& key, const std::string* file, const std::string& type) {
        problems.push_back(key + " is " + (file ? *file : std::string("absent")) + " in the file, " + type + " in the type");
    }
    // A whole number; an absent optional one is no mismatch.
    void integer(const std::string& key, std::size_t want, bool optional = false) {
        const std::string* v = value(key);
        if (!v && optional) return;
        unsigned long long got = 0;
        const bool ok = v && !v->empty() && std::from_chars(v->data(), v->data() + v->size(), got).ptr == v->data() + v->size() &&
                        got == want;
        if (!ok) mismatch(key, v, std::to_string(want));
    }
    // A number, compared as double or, with `as_float`, as the float the model computes with.
    void real(const std::string& key, double want, bool as_float) {
        const std::string* v = value(key);
        double got = 0;
        bool ok = v && !v->empty() && std::from_chars(v->data(), v->data() + v->size(), got).ptr == v->data() + v->size();
        ok = ok && (as_float ? static_cast<float>(got) == static_cast<float>(want) : got == want);
        if (!ok) mismatch(key, v, shown(want));
    }
    // A string, `true`/`false` or `null`; `absent_means` is the value an absent key has.
    void text(const std::string& key, const std::string& want, const char* absent_means = nullptr) {
        const std::string* v = value(key);
        const std::string got = v ? *v : (absent_means ? absent_means : "");
        if ((!v && !absent_means) || got != want) mismatch(key, v, want);
    }
    static std::string shown(double x) {
        std::ostringstream os;
        os.precision(9);
        os << x;
        return os.str();
    }

private:
    const std::map<std::string, std::string>& c_;
};

}  // namespace detail

/// A Hugging Face model folder: `config.json` (read flat: `"rope_scaling": {"factor": 32.0}` is the key
/// `rope_scaling.factor`) and the weights, `model.safetensors` or the shards that
/// `model.safetensors.index.json` lists.
///
/// Shapes: none of its own; each tensor's as its file says. Element type: the files' (F32, F16, BF16, ...).
/// Errors: thrown, `file_error` naming the file: a missing or unreadable `config.json` (at most 1 MB) or
/// weights file, JSON that is not an object, an index whose `weight_map` names a shard outside the folder
/// (a path, not a file name) or a key that its shard does not hold, a shard holding a key the index does not
/// give to it, a key in two shards; what `safetensors_file` throws for a bad file.
/// Source: Hugging Face's `save_pretrained` layout (transformers, safetensors' sharding).
/// Example: `io::hf_checkpoint ck("Llama-3.2-1B");  io::load_llama_weights(model, ck);`
class hf_checkpoint {
public:
    /// Opens `dir`: reads `config.json`, then the weights' headers (the tensors are mapped, not read).
    explicit hf_checkpoint(std::filesystem::path dir) : dir_(std::move(dir)) {
        read_config();
        const auto index = dir_ / "model.safetensors.index.json";
        if (std::filesystem::exists(index))
            open_shards(index);
        else
            owned_.push_back(std::make_unique<safetensors_file>((dir_ / "model.safetensors").string()));
        for (const auto& f : owned_) files_.push_back(f.get());
        check_keys_once();
    }

    /// The folder.
    const std::filesystem::path& directory() const noexcept { return dir_; }
    /// `config.json`, flat: each scalar under its key path (`rope_scaling.factor`), numbers as written,
    /// strings unquoted, `true`/`false`/`null`; an array's elements under its key and their index
    /// (`layer_types.0`), and its key holds its length in brackets (`[18]`).
    const std::map<std::string, std::string>& config() const noexcept { return config_; }
    /// The config's value at `key`, or nullptr.
    const std::string* config_value(const std::string& key) const {
        const auto it = config_.find(key);
        return it == config_.end() ? nullptr : &it->second;
    }
    /// The weights' files, in the index's order of first mention (or the one file).
    std::span<const safetensors_file* const> files() const noexcept { return files_; }

    /// A JSON object's text read flat, as `config()` holds it: each scalar under its dotted key path, nesting
    /// at most 8 deep.
    /// Errors: thrown, `file_error` naming `path` when the text is not JSON (RFC 8259) or not an object.
    static std::map<std::string, std::string> flat_json(std::string_view text, const std::string& path) {
        std::map<std::string, std::string> out;
        try {
            shaped::detail::json::reader r(text, 8);
            if (r.next() != shaped::detail::json::kind::object)
                throw file_error("hf_checkpoint", path, "is not a JSON object");
            flatten(r, "", out);
            r.finish();
        } catch (const shaped::detail::json::error& e) {
            throw file_error("hf_checkpoint", path, std::string("is not JSON: ") + e.what());
        }
        return out;
    }

private:
    static std::string read_text(const std::filesystem::path& path, std::size_t limit) {
        std::ifstream in(path, std::ios::binary);
        if (!in) throw file_error("hf_checkpoint", path.string(), "cannot be opened");
        std::string text;
        char buf[65536];
        while (in.read(buf, sizeof buf) || in.gcount() > 0) {
            text.append(buf, static_cast<std::size_t>(in.gcount()));
            if (text.size() > limit)
                throw file_error("hf_checkpoint", path.string(), "more than " + std::to_string(limit) + " bytes");
        }
        return text;
    }

    // Records every scalar under its dotted key path; depth is bounded by the reader.
    static void flatten(shaped::detail::json::reader& r, const std::string& key, std::map<std::string, std::string>& out) {
        using shaped::detail::json::kind;
        switch (r.next()) {
            case kind::object: {
                r.begin_object();
                std::string member;
                while (r.member(member)) flatten(r, key.empty() ? member : key + "." + member, out);
                return;
            }
            case kind::array: {
                // `"layer_types": ["sliding_attention", ...]` is `layer_types.0`, `layer_types.1`, ...
                r.begin_array();
                std::size_t i = 0;
                while (r.item()) flatten(r, key + "." + std::to_string(i++), out);
                out[key] = "[" + std::to_string(i) + "]";
                return;
            }
            case kind::string: out[key] = r.string(); return;
            case kind::number: out[key] = std::string(r.read_number().text); return;
            case kind::boolean: out[key] = r.boolean() ? "true" : "false"; return;
            case kind::null: r.null(); out[key] = "null"; return;
        }
    }

    static std::map<std::string, std::string> parse(const std::filesystem::path& path, const std::string& text) {
        return flat_json(text, path.string());
    }

    void read_config() {
        const auto path = dir_ / "config.json";
        config_ = parse(path, read_text(path, std::size_t{1} << 20));
    }

    void open_shards(const std::filesystem::path& index) {
        const auto map = parse(index, read_text(index, std::size_t{64} << 20));
        std::map<std::string, std::size_t> shard_of_name;
        for (const auto& [key, value] : map) {
            if (key.rfind("weight_map.", 0) != 0) continue;
            const std::string tensor = key.substr(11);
            if (value.empty() || value.find('/') != std::string::npos || value.find('\\') != std::string::npos ||
                value == "." || value == "..")
                throw file_error("hf_checkpoint", index.string(),
                                 "the weight_map gives " + tensor + " to \"" + value + "\", which is not a file name in the folder");
            auto [it, added] = shard_of_name.try_emplace(value, owned_.size());
            if (added) owned_.push_back(std::make_unique<safetensors_file>((dir_ / value).string()));
            weight_map_.emplace(tensor, it->second);
        }
        if (owned_.empty()) throw file_error("hf_checkpoint", index.string(), "the weight_map lists no tensor");
        for (const auto& [tensor, shard] : weight_map_)
            if (!owned_[shard]->find(tensor))
                throw file_error("hf_checkpoint", owned_[shard]->path(),
                                 "holds no tensor " + tensor + ", which the index gives to it");
        for (std::size_t shard = 0; shard < owned_.size(); ++shard)
            for (const auto& e : owned_[shard]->entries()) {
                const auto it = weight_map_.find(e.name);
                if (it == weight_map_.end() || it->second != shard)
                    throw file_error("hf_checkpoint", owned_[shard]->path(),
                                     "holds " + e.name + ", which the index does not give to it");
            }
    }

    void check_keys_once() const {
        std::set<std::string> seen;
        for (const safetensors_file* f : files_)
            for (const auto& e : f->entries())
                if (!seen.insert(e.name).second)
                    throw file_error("hf_checkpoint", f->path(), "holds " + e.name + ", which another file holds too");
    }

    std::filesystem::path dir_;
    std::map<std::string, std::string> config_;
    std::map<std::string, std::size_t> weight_map_;
    std::vector<std::unique_ptr<safetensors_file>> owned_;
    std::vector<const safetensors_file*> files_;
};

namespace detail {

// The Hugging Face key of a model's parameter whose blocks are under `blocks` (`trf_blocks.3.att.W_query.weight`
// is `model.layers.3.self_attn.q_proj.weight`); a name it does not know is returned as it is. The names of
// Llama 3's, Qwen3's and Gemma 3's blocks (a block has only its own).
inline std::string hf_model_key(const std::string& name, const std::string& blocks) {
    static constexpr std::pair<const char*, const char*> block[] = {
        {"att.W_query.weight", "self_attn.q_proj.weight"},
        {"att.W_key.weight", "self_attn.k_proj.weight"},
        {"att.W_value.weight", "self_attn.v_proj.weight"},
        {"att.out_proj.weight", "self_attn.o_proj.weight"},
        {"att.q_norm.scale", "self_attn.q_norm.weight"},
        {"att.k_norm.scale", "self_attn.k_norm.weight"},
        {"ff.fc1.weight", "mlp.gate_proj.weight"},
        {"ff.fc2.weight", "mlp.up_proj.weight"},
        {"ff.fc3.weight", "mlp.down_proj.weight"},
        {"norm1.scale", "input_layernorm.weight"},
        {"norm2.scale", "post_attention_layernorm.weight"},
        {"input_layernorm.scale", "input_layernorm.weight"},
        {"post_attention_layernorm.scale", "post_attention_layernorm.weight"},
        {"pre_feedforward_layernorm.scale", "pre_feedforward_layernorm.weight"},
        {"post_feedforward_layernorm.scale", "post_feedforward_layernorm.weight"}};
    if (name == "tok_emb.weight") return "model.embed_tokens.weight";
    if (name == "final_norm.scale") return "model.norm.weight";
    if (name == "out_head.weight") return "lm_head.weight";
    const std::string prefix = blocks + ".";
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

// Throws file_error naming config.json and every problem, if there is one.
inline void refuse_config(const char* reader, const hf_checkpoint& checkpoint, const std::vector<std::string>& problems) {
    if (problems.empty()) return;
    std::string all;
    for (const auto& p : problems) all += (all.empty() ? "" : "; ") + p;
    throw file_error(reader, (checkpoint.directory() / "config.json").string(),
                     "does not match the compiled configuration: " + all);
}

}  // namespace detail

}  // namespace shaped::io

#endif
