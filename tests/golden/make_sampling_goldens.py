# Goldens for tests/unit/sampling.cpp, from PyTorch 1.13 on the CPU: cross_entropy's float result (bits) on
# uniform logits of several shapes, randperm from seeded generators, the first exponential_ draws, and the
# DataLoader's shuffled order with the default generator. Run: python3 tests/golden/make_sampling_goldens.py
# > tests/golden/sampling_goldens.hpp
import torch
from torch.utils.data import DataLoader

print("// Made by tests/golden/make_sampling_goldens.py with PyTorch " + torch.__version__ + "; do not edit.")
print("#pragma once\n#include <cstdint>\n#include <vector>\nnamespace golden::sampling {")
print("struct ce_case { int rows, classes; float loss; float perplexity; };")
print("inline const std::vector<ce_case> cross_entropy = {")
for rows, classes in [(6, 50257), (3, 9), (7, 5), (100, 1000), (512, 50257), (33, 17), (1, 1), (17, 8)]:
    torch.manual_seed(rows * 1000 + classes)
    x = torch.rand(rows, classes) * 20 - 10
    t = (torch.arange(rows) * 7919) % classes
    loss = torch.nn.functional.cross_entropy(x, t)
    print(f"    {{{rows}, {classes}, {loss.item().hex()}f, {torch.exp(loss).item().hex()}f}},")
print("};")
print("struct perm_case { std::uint64_t seed; std::int64_t n; std::vector<std::int64_t> perm; };")
print("inline const std::vector<perm_case> randperm = {")
for seed, n in [(5, 10), (7, 100), (123, 1), (0, 2), (2**40 + 3, 37)]:
    g = torch.Generator()
    g.manual_seed(seed)
    print(f"    {{{seed}ULL, {n}, {{{', '.join(map(str, torch.randperm(n, generator=g).tolist()))}}}}},")
print("};")
torch.manual_seed(123)
q = torch.empty(5, dtype=torch.float64).exponential_(1)
print("inline const std::vector<double> exponential_123 = {" + ", ".join(x.hex() for x in q.tolist()) + "};")
torch.manual_seed(123)
loader = DataLoader(list(range(23)), batch_size=5, shuffle=True, drop_last=False)
order = [i for _ in range(2) for b in loader for i in b.tolist()]
after = torch.empty((), dtype=torch.int64).random_().item()
print("// Two passes of DataLoader(range(23), batch_size=5, shuffle=True) after torch.manual_seed(123), and the")
print("// int64 the default generator gives next.")
print("inline const std::vector<std::int64_t> loader_order = {" + ", ".join(map(str, order)) + "};")
print(f"inline const std::int64_t after_loader = {after}LL;")
print("}  // namespace golden::sampling")
