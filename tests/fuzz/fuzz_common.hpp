// What every fuzz target shares: FUZZ_CHECK for a promise of the loader, and the count of what became of
// each input, which run.py reads from the line printed at exit.
#ifndef SHAPED_TESTS_FUZZ_COMMON_HPP
#define SHAPED_TESTS_FUZZ_COMMON_HPP

#include <cstddef>
#include <cstdio>
#include <cstdlib>

// A broken promise of the loader: abort, which libFuzzer reports as a crash with its input.
#define FUZZ_CHECK(cond)            \
    do {                            \
        if (!(cond)) std::abort();  \
    } while (0)

// Inputs accepted (what "accepted" means is the target's: see its header comment) or refused with one of the
// loader's two exceptions. Any other outcome is a crash, which libFuzzer reports.
struct outcome_counts {
    std::size_t accepted = 0, refused = 0;
    ~outcome_counts() { std::fprintf(stderr, "shaped_fuzz: accepted %zu, refused %zu\n", accepted, refused); }
};
inline outcome_counts counts;

#endif
