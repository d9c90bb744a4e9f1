// Made by tests/golden/make_sampling_goldens.py with PyTorch 1.13.0a0; do not edit.
#pragma once
#include <cstdint>
#include <vector>
namespace golden::sampling {
struct ce_case { int rows, classes; float loss; float perplexity; };
inline const std::vector<ce_case> cross_entropy = {
    {6, 50257, 0x1.c54db60000000p+3f, 0x1.5a87bc0000000p+20f},
    {3, 9, 0x1.17ec520000000p+3f, 0x1.8978bc0000000p+12f},
    {7, 5, 0x1.d926a60000000p+2f, 0x1.9622f80000000p+10f},
    {100, 1000, 0x1.f6a7e20000000p+3f, 0x1.9504c20000000p+22f},
    {512, 50257, 0x1.1837ac0000000p+4f, 0x1.33ff340000000p+25f},
    {33, 17, 0x1.4158e40000000p+3f, 0x1.66f6640000000p+14f},
    {1, 1, 0x0.0p+0f, 0x1.0000000000000p+0f},
    {17, 8, 0x1.0809680000000p+3f, 0x1.df00c00000000p+11f},
};
struct perm_case { std::uint64_t seed; std::int64_t n; std::vector<std::int64_t> perm; };
inline const std::vector<perm_case> randperm = {
    {5ULL, 10, {1, 4, 9, 6, 3, 5, 0, 2, 8, 7}},
    {7ULL, 100, {15, 59, 71, 57, 2, 27, 87, 54, 36, 96, 98, 76, 28, 43, 8, 80, 58, 91, 61, 25, 56, 5, 99, 9, 60, 93, 95, 42, 70, 3, 31, 53, 92, 81, 26, 14, 24, 35, 83, 41, 1, 64, 68, 37, 52, 23, 0, 29, 32, 34, 40, 75, 6, 10, 86, 97, 39, 89, 62, 12, 90, 79, 4, 48, 45, 85, 38, 33, 78, 84, 67, 50, 16, 51, 73, 63, 17, 46, 65, 66, 11, 22, 47, 7, 49, 94, 69, 21, 74, 82, 72, 55, 30, 44, 18, 88, 77, 13, 20, 19}},
    {123ULL, 1, {0}},
    {0ULL, 2, {0, 1}},
    {1099511627779ULL, 37, {13, 33, 19, 24, 32, 0, 15, 12, 25, 16, 35, 3, 7, 30, 20, 28, 22, 31, 23, 27, 1, 34, 6, 18, 21, 2, 36, 17, 4, 8, 11, 9, 26, 5, 14, 10, 29}},
};
inline const std::vector<double> exponential_123 = {0x1.d754cbb17a5efp-2, 0x1.b8edc3d2f675ep-7, 0x1.cab9d817a5a40p-1, 0x1.8e31906edd464p-4, 0x1.476e8bbc4e5f2p-1};
// Two passes of DataLoader(range(23), batch_size=5, shuffle=True) after torch.manual_seed(123), and the
// int64 the default generator gives next.
inline const std::vector<std::int64_t> loader_order = {4, 9, 3, 5, 1, 2, 22, 13, 16, 12, 0, 17, 18, 10, 19, 15, 20, 7, 8, 21, 11, 14, 6, 7, 2, 3, 0, 13, 6, 9, 5, 10, 16, 18, 19, 14, 8, 11, 22, 17, 1, 4, 21, 15, 12, 20};
inline const std::int64_t after_loader = 4048487933969823850LL;
}  // namespace golden::sampling
