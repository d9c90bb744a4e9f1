// Writes the random GPT-2 124M checkpoint of tests/golden/make_goldens.py (gpt2_layout with
// torch.manual_seed(73)) in Hugging Face's layout, drawing the same numbers with shaped's torch::randn, which
// is bit for bit PyTorch's: the test suite gets a 500 MB checkpoint without PyTorch and without committing it.
// Usage: make_gpt2_checkpoint OUT.safetensors
#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

#include <shaped/io/safetensors.hpp>
#include <shaped/shaped.hpp>

namespace {

struct n : shaped::dynamic_axis<"n"> {};

// torch.randn(numel) * scale + offset, as PyTorch rounds it: the product in float, then the sum.
std::vector<float> draw(std::size_t numel, float scale, float offset = 0.0f) {
    const auto x = shaped::torch::randn<n>(numel);
    std::vector<float> v(x.data(), x.data() + numel);
    for (auto& e : v) e = offset == 0.0f ? e * scale : offset + e * scale;
    return v;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: make_gpt2_checkpoint OUT.safetensors\n");
        return 2;
    }
    constexpr std::size_t V = 50257, C = 1024, E = 768, layers = 12;
    constexpr float scale = 0.02f;
    shaped::torch::manual_seed(73);
    std::vector<std::pair<std::string, std::vector<std::size_t>>> keys;
    std::vector<std::vector<float>> values;
    const auto add = [&](std::string name, std::vector<std::size_t> shape, std::vector<float> v) {
        keys.emplace_back(std::move(name), std::move(shape));
        values.push_back(std::move(v));
    };
    add("wte.weight", {V, E}, draw(V * E, scale));
    add("wpe.weight", {C, E}, draw(C * E, scale));
    std::vector<float> tril(C * C, 0.0f);
    for (std::size_t i = 0; i < C; ++i)
        for (std::size_t j = 0; j <= i; ++j) tril[i * C + j] = 1.0f;
    for (std::size_t l = 0; l < layers; ++l) {
        const std::string h = "h." + std::to_string(l) + ".";
        add(h + "ln_1.weight", {E}, draw(E, 0.1f, 1.0f));
        add(h + "ln_1.bias", {E}, draw(E, 0.1f));
        add(h + "attn.bias", {1, 1, C, C}, tril);
        add(h + "attn.c_attn.weight", {E, 3 * E}, draw(E * 3 * E, scale));
        add(h + "attn.c_attn.bias", {3 * E}, draw(3 * E, scale));
        add(h + "attn.c_proj.weight", {E, E}, draw(E * E, scale));
        add(h + "attn.c_proj.bias", {E}, draw(E, scale));
        add(h + "ln_2.weight", {E}, draw(E, 0.1f, 1.0f));
        add(h + "ln_2.bias", {E}, draw(E, 0.1f));
        add(h + "mlp.c_fc.weight", {E, 4 * E}, draw(E * 4 * E, scale));
        add(h + "mlp.c_fc.bias", {4 * E}, draw(4 * E, scale));
        add(h + "mlp.c_proj.weight", {4 * E, E}, draw(4 * E * E, scale));
        add(h + "mlp.c_proj.bias", {E}, draw(E, scale));
    }
    add("ln_f.weight", {E}, draw(E, 0.1f, 1.0f));
    add("ln_f.bias", {E}, draw(E, 0.1f));
    std::vector<shaped::io::safetensors_tensor> tensors;
    for (std::size_t i = 0; i < keys.size(); ++i) tensors.push_back({keys[i].first, keys[i].second, values[i]});
    shaped::io::save_safetensors(argv[1], tensors);
}
