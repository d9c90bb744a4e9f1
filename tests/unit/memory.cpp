// Large buffers kept for reuse (shaped/memory.hpp, detail/buffer_cache.hpp): a freed buffer of 1 MiB or more is
// handed to the next tensor it fits, within the limit; zeros are zeros in a reused buffer; small buffers are
// not kept; the limit and release free what is kept; many threads at once.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <shaped/memory.hpp>
#include <shaped/shaped.hpp>

namespace {

struct rows : shaped::dynamic_axis<"rows"> {};
using column = shaped::tensor<float, rows>;

column ones(std::size_t n) {
    column t(column::extents_type(n), shaped::uninitialized);
    std::fill(t.data(), t.data() + n, 1.0f);
    return t;
}

constexpr std::size_t mib_floats = (std::size_t{1} << 20) / sizeof(float);

// Each case starts from an empty cache with the default limit.
struct fresh {
    fresh() {
        shaped::set_cached_memory_limit(std::size_t{1} << 30);
        shaped::release_cached_memory();
    }
    ~fresh() { shaped::set_cached_memory_limit(std::size_t{1} << 30); }
};

}  // namespace

TEST_CASE("a freed large buffer is kept and handed to the next tensor that fits it") {
    fresh f;
    const float* first = nullptr;
    {
        const column a = ones(4 * mib_floats);
        first = a.data();
        CHECK(reinterpret_cast<std::uintptr_t>(first) % 64 == 0);
        CHECK(shaped::cached_memory_bytes() == 0);
    }
    const std::size_t kept = shaped::cached_memory_bytes();
    CHECK(kept >= 4 * mib_floats * sizeof(float));
    CHECK(kept <= 4 * mib_floats * sizeof(float) + (std::size_t{128} << 10));
    const column b(column::extents_type(4 * mib_floats - 100));  // slightly smaller: the same block
    CHECK(b.data() == first);
    CHECK(shaped::cached_memory_bytes() == 0);
    // torch.zeros: the reused buffer held ones, the new tensor holds zeros.
    CHECK(std::all_of(b.data(), b.data() + b.numel(), [](float v) { return v == 0.0f; }));
}

TEST_CASE("a kept block much larger than the request is not handed out") {
    fresh f;
    { const column big = ones(8 * mib_floats); }
    const std::size_t kept = shaped::cached_memory_bytes();
    REQUIRE(kept > 0);
    const column small = ones(2 * mib_floats);  // 2 MiB does not take the 8 MiB block
    CHECK(shaped::cached_memory_bytes() == kept);
    const column almost = ones(7 * mib_floats);  // 7 MiB does (within a quarter)
    CHECK(shaped::cached_memory_bytes() == 0);
}

TEST_CASE("small buffers are not kept") {
    fresh f;
    { const column a = ones(mib_floats / 2); }
    CHECK(shaped::cached_memory_bytes() == 0);
}

TEST_CASE("the limit bounds what is kept; release frees it") {
    fresh f;
    {
        const column a = ones(2 * mib_floats), b = ones(2 * mib_floats), c = ones(2 * mib_floats);
    }
    const std::size_t three = shaped::cached_memory_bytes();
    CHECK(three >= 3 * 2 * mib_floats * sizeof(float));
    shaped::set_cached_memory_limit(three / 2);  // the oldest go first, until what is kept fits
    CHECK(shaped::cached_memory_bytes() <= three / 2);
    CHECK(shaped::cached_memory_bytes() > 0);
    CHECK(shaped::cached_memory_limit() == three / 2);
    shaped::release_cached_memory();
    CHECK(shaped::cached_memory_bytes() == 0);
    shaped::set_cached_memory_limit(0);  // nothing kept
    { const column d = ones(2 * mib_floats); }
    CHECK(shaped::cached_memory_bytes() == 0);
    shaped::set_cached_memory_limit(std::size_t{1} << 20);  // a block larger than the limit is freed
    { const column e = ones(2 * mib_floats); }
    CHECK(shaped::cached_memory_bytes() == 0);
}

TEST_CASE("ops' results reuse the buffers of the tensors they freed, and compute the same") {
    fresh f;
    const column x = ones(3 * mib_floats);
    double first = 0, second = 0;
    {
        const column y = x * 2.0f + 1.0f;
        first = std::accumulate(y.data(), y.data() + y.numel(), 0.0);
    }
    REQUIRE(shaped::cached_memory_bytes() > 0);
    {
        const column y = x * 2.0f + 1.0f;  // into the kept buffer
        second = std::accumulate(y.data(), y.data() + y.numel(), 0.0);
    }
    CHECK(first == 3.0 * 3 * mib_floats);
    CHECK(second == first);
}

TEST_CASE("many threads allocate and free at once") {
    fresh f;
    shaped::set_cached_memory_limit(std::size_t{16} << 20);  // small: blocks are kept, reused and freed
    std::vector<std::thread> threads;
    std::vector<double> sums(4, 0.0);
    for (std::size_t i = 0; i < 4; ++i)
        threads.emplace_back([i, &sums] {
            for (std::size_t round = 0; round < 50; ++round) {
                const column t = ones((1 + (round + i) % 3) * mib_floats);
                sums[i] += static_cast<double>(t.data()[t.numel() - 1]);
            }
        });
    for (auto& t : threads) t.join();
    for (const double s : sums) CHECK(s == 50.0);
    CHECK(shaped::cached_memory_bytes() <= std::size_t{16} << 20);
}

#if defined(__linux__)
TEST_CASE("a buffer of a huge page or more starts on one, advised for huge pages before its first write") {
    fresh f;
    // 2.4 MB, a GPT-2 small layer's weight: its block (the buffer less its 64-byte header) starts on a 2 MB page.
    const auto w = ones(768 * 768);
    const auto block = reinterpret_cast<std::uintptr_t>(w.data()) - 64;
    CHECK(block % shaped::detail::huge_page_bytes == 0);
    // The kernel recorded the advice ("hg" in VmFlags) on the mapping that holds the block's first 2 MB.
    std::ifstream smaps("/proc/self/smaps");
    std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
    if (!smaps || !thp) return;  // no THP in this kernel: the advice is a no-op
    std::string line;
    bool inside = false, advised = false;
    long huge_kb = -1;
    while (std::getline(smaps, line)) {
        std::uintptr_t lo = 0, hi = 0;
        char dash = 0;
        std::istringstream head(line);
        if (line.find('-') < line.find(' ') && (head >> std::hex >> lo >> dash >> hi) && dash == '-') {
            inside = lo <= block && block < hi;
            continue;
        }
        if (!inside) continue;
        if (line.rfind("AnonHugePages:", 0) == 0) huge_kb = std::stol(line.substr(14));
        if (line.rfind("VmFlags:", 0) == 0) advised = line.find(" hg") != std::string::npos;
    }
    CHECK(advised);
    MESSAGE("huge pages behind the block's mapping: ", huge_kb, " kB (0 where the kernel had none to give)");
}
#endif
