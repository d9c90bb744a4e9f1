// The tutorial programs' checks (examples/tutorial.cpp, examples/run_time_lengths.cpp): each section
// prints what a learner sees, and the program compares it with what PyTorch 1.13 printed for the same
// lines (or, for what only shaped prints, with the text the docs show).
#ifndef SHAPED_EXAMPLES_TUTORIAL_CHECK_HPP
#define SHAPED_EXAMPLES_TUTORIAL_CHECK_HPP

#include <iostream>
#include <sstream>
#include <string>
#include <string_view>

// What the program checks, and how: std::cout goes to a buffer; `printed(region)` takes what was printed
// since the last call, echoes it to the real standard output and compares it with the region's text.
namespace check {

inline int failures = 0;
inline std::ostringstream captured;
inline std::streambuf* real_cout = nullptr;

inline void that(bool ok, std::string_view what) {
    if (!ok) {
        ++failures;
        std::cerr << "check failed: " << what << "\n";
    }
}

// The lines of `region` between its first and its last line (the two `// [name]` marker lines).
inline std::string inside(std::string_view region) {
    const auto first = region.find('\n', region.find("// ["));
    const auto last = region.rfind("// [");
    return std::string(region.substr(first + 1, last - first - 1));
}

inline void printed(std::string_view region) {
    const std::string got = captured.str();
    captured.str("");
    std::ostream real(real_cout);
    real << got << std::flush;
    const std::string want = inside(region);
    if (got != want) {
        ++failures;
        std::cerr << "printed text differs from PyTorch's:\n--- PyTorch\n" << want << "--- shaped\n" << got << "---\n";
    }
}

inline void section(std::string_view title) {
    std::ostream real(real_cout);
    real << "\n== " << title << " ==\n";
}

}  // namespace check

#endif
