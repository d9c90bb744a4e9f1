// Hugging Face checkpoint folders for the loader tests: the committed ones (tests/golden/llama/, gemma/) and
// copies with one file's text replaced.
#pragma once

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace test {

/// A copy of the checkpoint folder `from` in the temporary directory, removed at the end of the test, with
/// the first `old_text` of `file` replaced by `new_text` (which must be there).
struct edited_checkpoint {
    std::filesystem::path dir;
    edited_checkpoint(const std::filesystem::path& from, const std::string& file, const std::string& old_text,
                      const std::string& new_text)
        : dir(std::filesystem::temp_directory_path() /
              ("shaped_test_" + from.parent_path().filename().string() + "_" + from.filename().string())) {
        std::filesystem::remove_all(dir);
        std::filesystem::copy(from, dir);
        std::ifstream in(dir / file);
        std::string text{std::istreambuf_iterator<char>(in), {}};
        const auto at = text.find(old_text);
        REQUIRE(at != std::string::npos);
        text.replace(at, old_text.size(), new_text);
        std::ofstream(dir / file, std::ios::trunc) << text;
    }
    ~edited_checkpoint() { std::filesystem::remove_all(dir); }
    edited_checkpoint(const edited_checkpoint&) = delete;
    edited_checkpoint& operator=(const edited_checkpoint&) = delete;
};

}  // namespace test
