#ifndef SHAPED_IO_HF_CHECKPOINT_HPP
#define SHAPED_IO_HF_CHECKPOINT_HPP

/// \file
/// `io::hf_checkpoint`: a Hugging Face model folder, its `config.json` and its safetensors, one file or
/// shards listed by `model.safetensors.index.json`, opened strictly. Not in the umbrella header.

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../detail/json.hpp"
#include "file_error.hpp"
#include "safetensors.hpp"

namespace shaped::io {

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
    /// strings unquoted, `true`/`false`/`null`; an array's key holds `[...]`.
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
            case kind::array:
                r.skip();
                out[key] = "[...]";
                return;
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

}  // namespace shaped::io

#endif
