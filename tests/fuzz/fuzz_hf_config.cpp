// libFuzzer target: any bytes as a Hugging Face config.json, read flat as io::hf_checkpoint reads it, then
// checked against three compiled configurations (Llama 3.2 1B, Qwen3 0.6B, Gemma 3 270M) as
// io::load_llama_weights and io::load_gemma_weights check it. The text must be read or refused with
// file_error, never crash or read out of bounds; a text that is read gives a list of problems that is empty
// for at most one of the three (a model_type is "llama", "qwen3" or "gemma3_text", not two of them). An input is counted as accepted when its text is read.
// Built and run by run.py (meson test --suite fuzz).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_common.hpp"

#include <shaped/io/gemma_weights.hpp>
#include <shaped/io/llama_weights.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        const auto config = shaped::io::hf_checkpoint::flat_json(text, "config.json");
        ++counts.accepted;
        const auto llama = shaped::io::detail::llama_config_problems<shaped::nn::llama32_1b>(config);
        const auto qwen = shaped::io::detail::llama_config_problems<shaped::nn::qwen3_0_6b>(config);
        const auto gemma = shaped::io::detail::gemma_config_problems<shaped::nn::gemma3_270m>(config);
        FUZZ_CHECK(int(llama.empty()) + int(qwen.empty()) + int(gemma.empty()) <= 1);
        for (const auto& p : llama) FUZZ_CHECK(p.find(" in the type") != std::string::npos);
        for (const auto& p : gemma) FUZZ_CHECK(p.find(" in the type") != std::string::npos);
    } catch (const shaped::io::file_error&) {
        ++counts.refused;
    }
    return 0;
}
