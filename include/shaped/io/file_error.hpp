#ifndef SHAPED_IO_FILE_ERROR_HPP
#define SHAPED_IO_FILE_ERROR_HPP

/// \file
/// `io::file_error`: what goes wrong with a file brought in from outside, naming the file.

#include <stdexcept>
#include <string>
#include <utility>

namespace shaped::io {

/// Thrown when a file cannot be read, is not what its format says (truncated, corrupt, offsets outside the
/// data), or does not hold what the program asks of it (a missing or unexpected key, another element type).
/// A tensor of another shape than the type states throws `shape_error` instead, whose message also names the
/// file and the key. `what()` begins with `shaped::<reader>: <file>: `.
///
/// Shapes: none. Errors: none of its own. Source: PyTorch's `load_state_dict` errors and the safetensors
/// reader's, in one type.
/// Example: `try { f = io::safetensors_file("gpt2.safetensors"); } catch (const io::file_error& e) { ... }`
class file_error : public std::runtime_error {
public:
    /// The message `shaped::<reader>: <path>: <problem>`; `path()` keeps the path.
    file_error(const std::string& reader, std::string path, const std::string& problem)
        : std::runtime_error("shaped::" + reader + ": " + path + ": " + problem), path_(std::move(path)) {}

    /// The file's path, as given.
    const std::string& path() const noexcept { return path_; }

private:
    std::string path_;
};

}  // namespace shaped::io

#endif
