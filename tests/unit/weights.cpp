// Trained weights from PyTorch's files (tests/golden/weights/, made by make_goldens.py): the book's GPTModel
// saved by its state_dict() names, and the same weights in Hugging Face's GPT-2 layout, both give PyTorch's
// logits (to test::tolerance, 1e-5) and ids; every way a file can be wrong throws, naming the file and what
// is wrong; a fuzzed file is refused or read, never read outside its bytes (run under ASan/UBSan too).
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <sys/stat.h>

#include <shaped/detail/json.hpp>
#include <shaped/io/gpt2_weights.hpp>
#include <shaped/io/npy.hpp>
#include <shaped/io/state_dict.hpp>

#include "check.hpp"
#include "golden/weights_goldens.hpp"
#include "module_goldens.hpp"

#ifndef SHAPED_GOLDEN_DIR
#error "SHAPED_GOLDEN_DIR must name tests/golden (set by tests/meson.build)"
#endif

namespace {

using test::thrown;

namespace nn = shaped::nn;
namespace io = shaped::io;

struct tiny {
    struct vocab_size : shaped::axis<"vocab_size", 97> {};
    struct context_length : shaped::axis<"context_length", 16> {};
    struct emb_dim : shaped::axis<"emb_dim", 64> {};
    struct n_heads : shaped::axis<"n_heads", 4> {};
    struct batch : shaped::dynamic_axis<"batch"> {};
    struct num_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_length>> {};
    static constexpr std::size_t n_layers = 2;
    static constexpr double drop_rate = 0.1;
    static constexpr bool qkv_bias = true;
};
struct tiny_without_bias : tiny {
    static constexpr bool qkv_bias = false;
};
struct tiny_narrow : tiny {
    struct emb_dim : shaped::axis<"emb_dim", 32> {};
};

const std::string dir = std::string(SHAPED_GOLDEN_DIR) + "/weights/";
const std::string state_dict_file = dir + "tiny_state_dict.safetensors";
const std::string gpt2_file = dir + "tiny_gpt2.safetensors";

using ids_t = shaped::tensor<std::int64_t, tiny::batch, tiny::num_tokens>;
ids_t golden_ids() { return ids_t{{5, 17, 96, 0, 42}, {3, 3, 64, 12, 7}}; }


std::vector<char> bytes_of(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

// A file of the given bytes in the system's temporary folder, removed with the object.
struct temp_file {
    std::string path;
    explicit temp_file(const std::string& name, const std::vector<char>& bytes)
        : path((std::filesystem::temp_directory_path() / ("shaped_test_" + name)).string()) {
        std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
    ~temp_file() { std::remove(path.c_str()); }
};

// The bytes of a safetensors file with the given JSON header and data.
std::vector<char> safetensors_bytes(const std::string& header, std::size_t data_bytes) {
    std::vector<char> b(8 + header.size() + data_bytes, 0);
    const std::uint64_t n = header.size();
    std::memcpy(b.data(), &n, 8);
    std::memcpy(b.data() + 8, header.data(), header.size());
    return b;
}

}  // namespace

TEST_CASE("load_state_dict: the book's GPTModel saved by state_dict() names gives PyTorch's logits") {
    nn::gpt_model<tiny> model(nn::skip_init);
    io::load_state_dict(model, io::safetensors_file(state_dict_file));
    model.eval();
    CHECK(test::max_abs_diff(model(golden_ids()), golden::weights_tiny_logits) <= test::tolerance);
    // Every key of the file is one of the model's, and the other way round.
    const auto keys = nn::state_dict_keys(model);
    CHECK(keys.front() == "tok_emb.weight");
    CHECK(keys[3] == "trf_blocks.0.att.W_query.weight");
    CHECK(keys.size() == io::safetensors_file(state_dict_file).entries().size());
}

TEST_CASE("load_gpt2_weights: Hugging Face's layout, Conv1D weights transposed, out_head tied to wte") {
    nn::gpt_model<tiny> model(nn::skip_init);
    io::load_gpt2_weights(model, io::safetensors_file(gpt2_file));
    model.eval();
    CHECK(test::max_abs_diff(model(golden_ids()), golden::weights_tiny_logits) <= test::tolerance);
    struct max_seq : shaped::axis<"max_seq", 64> {};
    struct seq : shaped::dynamic_axis<"seq", shaped::at_most<max_seq>> {};
    const shaped::tensor<std::int64_t, tiny::batch, seq> prompt{{5, 17, 96}};
    const auto ids = nn::generate_text_simple(model, prompt, 20, 16);
    std::size_t mismatches = 0;
    for (std::size_t i = 0; i < golden::weights_tiny_generate.size(); ++i)
        mismatches += ids.data()[i] != golden::weights_tiny_generate[i];
    CHECK(mismatches == 0);
    CHECK(shaped::max_abs_diff(model.out_head.weight, model.tok_emb.weight.rename<tiny::vocab_size, tiny::emb_dim>()) ==
          0.0);
}

TEST_CASE("save_state_dict then load_state_dict gives the same model") {
    nn::gpt_model<tiny> model(nn::skip_init);
    io::load_state_dict(model, io::safetensors_file(state_dict_file));
    const temp_file saved("saved.safetensors", {});
    io::save_state_dict(model, saved.path);
    nn::gpt_model<tiny> again(nn::skip_init);
    io::load_state_dict(again, io::safetensors_file(saved.path));
    model.eval();
    again.eval();
    CHECK(shaped::max_abs_diff(model(golden_ids()), again(golden_ids())) == 0.0);
}

TEST_CASE("load_state_dict is strict: missing and unexpected keys, dtypes and shapes, each naming the file") {
    // Weights with q, k, v biases into a model without: the biases are unexpected, as PyTorch says.
    nn::gpt_model<tiny_without_bias> no_bias(nn::skip_init);
    const std::string unexpected = thrown<io::file_error>([&] { io::load_state_dict(no_bias, io::safetensors_file(state_dict_file)); });
    CHECK(unexpected.rfind("shaped::load_state_dict: " + state_dict_file +
                               ": the keys do not match the module's; unexpected key(s): \"trf_blocks.0.att.W_query.bias\", "
                               "\"trf_blocks.0.att.W_key.bias\"",
                           0) == 0);
    // The other way round: the biases are missing.
    struct one_layer : shaped::axis<"d", 64> {};
    nn::linear<one_layer, one_layer> layer(nn::skip_init);
    const std::vector<float> w(64 * 64, 0.5f);
    const temp_file weight_only("weight_only.safetensors", {});
    io::save_safetensors(weight_only.path, {{"weight", {64, 64}, w}});
    CHECK(thrown<io::file_error>([&] { io::load_state_dict(layer, io::safetensors_file(weight_only.path)); }) ==
          "shaped::load_state_dict: " + weight_only.path + ": the keys do not match the module's; missing key(s): \"bias\"");
    // A transposed or otherwise misshapen weight names the key, the axes it should have and the file's extents.
    nn::gpt_model<tiny_narrow> narrow(nn::skip_init);
    CHECK(thrown<shaped::shape_error>([&] { io::load_gpt2_weights(narrow, io::safetensors_file(gpt2_file)); }) ==
          "shaped::io::safetensors_file::read(" + gpt2_file + "): wte.weight: expected (vocab_size=97, emb_dim=32), got (97, 64)");
    nn::linear<one_layer, tiny::vocab_size> wide(nn::skip_init, false);
    CHECK(thrown<shaped::shape_error>([&] { io::load_state_dict(wide, io::safetensors_file(weight_only.path)); }) ==
          "shaped::io::safetensors_file::read(" + weight_only.path + "): weight: expected (vocab_size=97, d=64), got (64, 64)");
    // An integer tensor where floats are expected, checked before anything is copied.
    const temp_file ints("ints.safetensors",
                         safetensors_bytes(R"({"weight":{"dtype":"I64","shape":[2],"data_offsets":[0,16]}})", 16));
    struct two : shaped::axis<"two", 2> {};
    struct one_ : shaped::axis<"one_", 1> {};
    nn::linear<two, one_> tiny_layer(nn::skip_init, false);
    CHECK(thrown<io::file_error>([&] { io::load_state_dict(tiny_layer, io::safetensors_file(ints.path)); }) ==
          "shaped::safetensors: " + ints.path + ": weight is I64; a float tensor takes F32, F16 or BF16");
}

TEST_CASE("a file that is not a safetensors file, or lies about its tensors, throws naming the file") {
    const auto fails = [](const std::string& name, const std::vector<char>& bytes) {
        const temp_file f(name, bytes);
        return thrown<io::file_error>([&] { io::safetensors_file s(f.path); });
    };
    const std::string tmp = std::filesystem::temp_directory_path().string() + "/shaped_test_";
    CHECK(thrown<io::file_error>([] { io::safetensors_file s("/nonexistent/model.safetensors"); }) ==
          "shaped::safetensors: /nonexistent/model.safetensors: cannot open: No such file or directory");
    CHECK(fails("short", {'a', 'b'}) ==
          "shaped::safetensors: " + tmp + "short: too short for a safetensors file (2 bytes; the header length alone takes 8)");
    auto past = safetensors_bytes("{}", 0);
    past[0] = 100;
    CHECK(fails("past", past) == "shaped::safetensors: " + tmp +
                                     "past: the header length, 100 bytes, runs past the end of the file (10 bytes)");
    CHECK(fails("json", safetensors_bytes("{nope", 0)).find(tmp + "json: the header is not JSON (") != std::string::npos);
    CHECK(fails("array", safetensors_bytes("[1, 2]", 0)) == "shaped::safetensors: " + tmp + "array: the header does not begin with '{'");
    CHECK(fails("dtype", safetensors_bytes(R"({"w":{"dtype":"F12","shape":[2],"data_offsets":[0,8]}})", 8)) ==
          "shaped::safetensors: " + tmp + "dtype: w: unknown dtype \"F12\"");
    CHECK(fails("outside", safetensors_bytes(R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", 8)) ==
          "shaped::safetensors: " + tmp + "outside: w: data_offsets [0,16] lie outside the data (8 bytes)");
    CHECK(fails("count", safetensors_bytes(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,16]}})", 16)) ==
          "shaped::safetensors: " + tmp + "count: w: 16 bytes for F32 (3), which takes 12");
    CHECK(fails("overlap", safetensors_bytes(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                             R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                                             12)) == "shaped::safetensors: " + tmp + "overlap: a and b overlap in the data");
    CHECK(fails("negative", safetensors_bytes(R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4)) ==
          "shaped::safetensors: " + tmp + "negative: w: the shape [-1] is not a list of extents that fit in memory");
    CHECK(fails("huge", safetensors_bytes(R"({"w":{"dtype":"F32","shape":[4611686018427387904,8],"data_offsets":[0,4]}})", 4))
              .find("is not a list of extents that fit in memory") != std::string::npos);
    // A tensor of another rank than the parameter's.
    const temp_file rank3("rank3.safetensors",
                          safetensors_bytes(R"({"weight":{"dtype":"F32","shape":[1,2,1],"data_offsets":[0,8]}})", 8));
    struct two : shaped::axis<"two", 2> {};
    struct one_ : shaped::axis<"one_", 1> {};
    nn::linear<two, one_> layer(nn::skip_init, false);
    CHECK(thrown<shaped::shape_error>([&] { io::load_state_dict(layer, io::safetensors_file(rank3.path)); }) ==
          "shaped::io::safetensors_file::read(" + rank3.path + "): weight: expected (one_=1, two=2), got (1, 2, 1)");
}

TEST_CASE("F16 and BF16 tensors are converted to float exactly") {
    // 1.0, -2.5, 65504 (the largest half), 2^-24 (the smallest subnormal), -0, inf
    const std::vector<std::uint16_t> half{0x3c00, 0xc100, 0x7bff, 0x0001, 0x8000, 0x7c00};
    const std::vector<std::uint16_t> bf16{0x3f80, 0xc020, 0x477f, 0x0001, 0x8000, 0x7f80};
    const std::string header = R"({"h":{"dtype":"F16","shape":[6],"data_offsets":[0,12]},)"
                               R"("b":{"dtype":"BF16","shape":[6],"data_offsets":[12,24]}})";
    auto bytes = safetensors_bytes(header, 24);
    std::memcpy(bytes.data() + 8 + header.size(), half.data(), 12);
    std::memcpy(bytes.data() + 8 + header.size() + 12, bf16.data(), 12);
    const temp_file f("halves.safetensors", bytes);
    const io::safetensors_file s(f.path);
    struct six : shaped::axis<"six", 6> {};
    shaped::tensor<float, six> h, b;
    s.read("h", h);
    s.read("b", b);
    const std::vector<float> want_h{1.0f, -2.5f, 65504.0f, 0x1p-24f, -0.0f, INFINITY};
    const std::vector<float> want_b{1.0f, -2.5f, 65280.0f, std::bit_cast<float>(0x00010000u), -0.0f, INFINITY};
    for (std::size_t i = 0; i < 6; ++i) {
        CHECK(std::bit_cast<std::uint32_t>(h.at(i)) == std::bit_cast<std::uint32_t>(want_h[i]));
        CHECK(std::bit_cast<std::uint32_t>(b.at(i)) == std::bit_cast<std::uint32_t>(want_b[i]));
    }
    CHECK(thrown<io::file_error>([&] { shaped::tensor<float, six> t; s.read("x", t); }) ==
          "shaped::safetensors: " + f.path + ": no tensor x");
}

namespace {

// The resident kilobytes of the mapping that holds `address` (its "Rss" in /proc/self/smaps), -1 if none does.
long resident_kb(const void* address) {
    std::ifstream in("/proc/self/smaps");
    const auto a = reinterpret_cast<std::uintptr_t>(address);
    bool inside = false;
    for (std::string line; std::getline(in, line);) {
        unsigned long long begin = 0, end = 0;
        if (std::sscanf(line.c_str(), "%llx-%llx ", &begin, &end) == 2 && line.find(':') > line.find(' '))
            inside = begin <= a && a < end;
        else if (inside && line.rfind("Rss:", 0) == 0)
            return std::stol(line.substr(4));
    }
    return -1;
}

}  // namespace

TEST_CASE("reading tensors gives back the file's pages: a load holds what it fills, not the file as well") {
    // 20 MB of F32 and 18 MB of BF16, each more than one of the reader's 16 MiB slices.
    constexpr std::size_t nf = 5'000'000, nb = 9'000'000;
    const std::string header = R"({"f":{"dtype":"F32","shape":[5000000],"data_offsets":[0,20000000]},)"
                               R"("b":{"dtype":"BF16","shape":[9000000],"data_offsets":[20000000,38000000]}})";
    auto bytes = safetensors_bytes(header, 4 * nf + 2 * nb);
    char* data = bytes.data() + 8 + header.size();
    for (std::size_t i = 0; i < nf; ++i) {
        const float v = static_cast<float>(i);
        std::memcpy(data + 4 * i, &v, 4);
    }
    for (std::size_t i = 0; i < nb; ++i) {
        const auto v = static_cast<std::uint16_t>(0x3f80 + i % 128);  // 1 + (i % 128) / 128
        std::memcpy(data + 4 * nf + 2 * i, &v, 2);
    }
    const temp_file file("slices.safetensors", bytes);
    const io::safetensors_file s(file.path);
    struct f_axis : shaped::axis<"f", nf> {};
    struct b_axis : shaped::axis<"b", nb> {};
    shaped::tensor<float, f_axis> f;
    shaped::tensor<float, b_axis> b;
    s.read("f", f);
    s.read("b", b);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < nf; ++i) wrong += f.data()[i] != static_cast<float>(i);
    for (std::size_t i = 0; i < nb; ++i) wrong += b.data()[i] != 1.0f + static_cast<float>(i % 128) / 128.0f;
    CHECK(wrong == 0);
    // What stays mapped in: at most the pages a tensor shares with the header or its neighbour (a reader that
    // kept the pages it read holds all 38 MB).
    const long kb = resident_kb(s.bytes(*s.find("f")).data());
    CHECK(kb >= 0);
    CHECK(kb <= 16);
    // Given back is not lost: the bytes read again from the file.
    shaped::tensor<float, f_axis> again;
    s.read("f", again);
    CHECK(again.data()[nf - 1] == static_cast<float>(nf - 1));
}

TEST_CASE("a fuzzed file is refused with a clear exception or read, never read outside its bytes") {
    struct four : shaped::axis<"four", 4> {};
    struct three : shaped::axis<"three", 3> {};
    const temp_file good("fuzz_source.safetensors", {});
    const std::vector<float> w(12, 0.25f), b(3, -1.0f);
    io::save_safetensors(good.path, {{"weight", {3, 4}, w}, {"bias", {3}, b}});
    const std::vector<char> source = bytes_of(good.path);
    std::size_t refused = 0, read = 0;
    const auto attempt = [&](const std::vector<char>& bytes) {
        const temp_file f("fuzz.safetensors", bytes);
        try {
            nn::linear<four, three> layer(nn::skip_init);
            io::load_state_dict(layer, io::safetensors_file(f.path));
            ++read;
        } catch (const io::file_error& e) {
            CHECK(std::string(e.what()).find(f.path) != std::string::npos);
            ++refused;
        } catch (const shaped::shape_error& e) {
            CHECK(std::string(e.what()).find(f.path) != std::string::npos);
            ++refused;
        }
    };
    for (std::size_t n = 0; n < source.size(); ++n) attempt(std::vector<char>(source.begin(), source.begin() + n));
    for (std::size_t i = 0; i < source.size(); ++i)
        for (char v : {'\0', '9', '"', '{', ']', '\xff'}) {
            auto bytes = source;
            bytes[i] = v;
            attempt(bytes);
        }
    CHECK(refused > source.size());  // every truncation is refused
    CHECK(read > 0);                 // flips in the data are read as numbers
}

TEST_CASE("load_npy: NumPy's files with their shape checked, every bad file refused naming it") {
    nn::gpt_model<tiny> model(nn::skip_init);
    io::load_state_dict(model, io::safetensors_file(state_dict_file));
    using W = decltype(model.trf_blocks[0].att.W_query.weight);
    const auto w = io::load_npy<float, tiny::emb_dim, tiny::emb_dim>(dir + "W_query.npy");
    CHECK(shaped::max_abs_diff(w, W(model.trf_blocks[0].att.W_query.weight)) == 0.0);
    const auto ids = io::load_npy<std::int64_t, tiny::batch, tiny::num_tokens>(dir + "ids.npy");  // run-time axes
    CHECK(ids.shape[1] == 5);
    CHECK(shaped::max_abs_diff(ids, golden_ids()) == 0.0);

    struct d_out : shaped::axis<"d_out", 64> {};
    struct d_in : shaped::axis<"d_in", 32> {};
    CHECK(thrown<shaped::shape_error>([&] { (void)io::load_npy<float, d_out, d_in>(dir + "W_query.npy"); }) ==
          "shaped::io::load_npy(" + dir + "W_query.npy): expected (d_out=64, d_in=32), got (64, 64)");
    CHECK(thrown<shaped::shape_error>([&] { (void)io::load_npy<float, d_out>(dir + "W_query.npy"); }) ==
          "shaped::io::load_npy(" + dir + "W_query.npy): expected 1 axes, got (64, 64)");
    CHECK(thrown<io::file_error>([&] { (void)io::load_npy<double, d_out, d_out>(dir + "W_query.npy"); }) ==
          "shaped::load_npy: " + dir + "W_query.npy: the elements are <f4; this tensor takes <f8");
    CHECK(thrown<io::file_error>([&] { (void)io::load_npy<float, d_out, d_out>(dir + "W_query_fortran.npy"); }) ==
          "shaped::load_npy: " + dir + "W_query_fortran.npy: the elements are in Fortran order; save a C-ordered array");
    CHECK(thrown<io::file_error>([&] { (void)io::load_npy<float, d_out, d_out>(dir + "missing.npy"); }) ==
          "shaped::load_npy: " + dir + "missing.npy: cannot open");
    const auto source = bytes_of(dir + "W_query.npy");
    const temp_file truncated("truncated.npy", std::vector<char>(source.begin(), source.end() - 4));
    CHECK(thrown<io::file_error>([&] { (void)io::load_npy<float, d_out, d_out>(truncated.path); }) ==
          "shaped::load_npy: " + truncated.path +
              ": the header's shape (64, 64) of <f4 needs 16384 bytes, and the file holds 16380");
    const temp_file not_npy("not.npy", std::vector<char>(source.begin() + 1, source.end()));
    CHECK(thrown<io::file_error>([&] { (void)io::load_npy<float, d_out, d_out>(not_npy.path); })
              .find(not_npy.path + ": not a .npy file (") != std::string::npos);
    // A header that claims a huge shape is refused without allocating it.
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 64), }";
    header.append(128 - 10 - header.size() - 1, ' ');  // magic, version and length: 10 bytes; 128 in all
    header += '\n';
    const std::string magic = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size()) + '\0';
    const std::string huge = magic + header + std::string(16, '\0');
    const temp_file huge_file("huge.npy", std::vector<char>(huge.begin(), huge.end()));
    CHECK(thrown<io::file_error>([&] { (void)io::load_npy<float, d_out, d_out>(huge_file.path); })
              .find("has more elements than any file holds") != std::string::npos);
}

namespace {

// The bytes of a .npy file: magic, version, the header's length (2 bytes in 1.0, 4 in 2.0 and 3.0), the
// header as given (no padding added), then `data` bytes of zeros.
std::vector<char> npy_bytes(int major, const std::string& header, std::size_t data) {
    std::string b = std::string("\x93NUMPY", 6) + static_cast<char>(major) + '\0';
    const std::size_t n = header.size();
    for (std::size_t i = 0; i < (major == 1 ? 2u : 4u); ++i) b += static_cast<char>((n >> (8 * i)) & 0xff);
    b += header;
    b.append(data, '\0');
    return {b.begin(), b.end()};
}

// A header dict padded with spaces and a newline to `length` bytes, as NumPy pads it.
std::string padded(std::string dict, std::size_t length) {
    dict.append(length - dict.size() - 1, ' ');
    return dict + '\n';
}

}  // namespace

TEST_CASE("load_npy reads NumPy's header grammar itself: long headers, every version, strict integers") {
    struct two : shaped::axis<"two", 2> {};
    struct three : shaped::axis<"three", 3> {};
    const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    // Header lengths whose low byte is 0x80 or more: xtensor's reader read them through a signed char.
    for (const auto& [major, length] : std::vector<std::pair<int, std::size_t>>{{1, 134}, {1, 166}, {2, 154}, {3, 200}, {1, 1000}}) {
        const temp_file f("long_header.npy", npy_bytes(major, padded(dict, length), 24));
        const auto t = io::load_npy<float, two, three>(f.path);
        CHECK(t.at(1, 2) == 0.0f);
    }
    // Python's literal forms that NumPy accepts: double quotes, no trailing comma, keys in any order,
    // whitespace anywhere between tokens, a one-tuple with its comma.
    struct six : shaped::axis<"six", 6> {};
    for (const std::string h : {R"({"shape": (2, 3), "descr": "<f4", "fortran_order": False})",
                                "{ 'fortran_order' :False,'shape':( 2 ,3 , ),'descr':'<f4' }\n"}) {
        const temp_file f("forms.npy", npy_bytes(1, h, 24));
        CHECK(io::load_npy<float, two, three>(f.path).numel() == 6);
    }
    {
        const temp_file f("one_tuple.npy", npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (6,)}", 24));
        CHECK(io::load_npy<float, six>(f.path).numel() == 6);
    }
    const auto refused = [](const std::string& name, const std::vector<char>& bytes) {
        const temp_file f(name, bytes);
        const std::string what = thrown<io::file_error>([&] { (void)io::load_npy<float, two, three>(f.path); });
        CHECK(what.rfind("shaped::load_npy: " + f.path + ": ", 0) == 0);
        return what.substr(std::min(what.size(), std::string("shaped::load_npy: ").size() + f.path.size() + 2));
    };
    const auto with_shape = [&](const std::string& shape) {
        return npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }\n", 24);
    };
    CHECK(refused("float_extent.npy", with_shape("(2.9, 3)")) ==
          "the header is not a .npy header (the shape holds '2.9', which is not a non-negative integer)");
    CHECK(refused("suffix_extent.npy", with_shape("(2abc, 3)")) ==
          "the header is not a .npy header (the shape holds '2abc', which is not a non-negative integer)");
    CHECK(refused("negative_extent.npy", with_shape("(-2, 3)")) ==
          "the header is not a .npy header (the shape holds '-2', which is not a non-negative integer)");
    CHECK(refused("leading_zero.npy", with_shape("(02, 3)")) ==
          "the header is not a .npy header (the shape holds '02', which is not a non-negative integer)");
    CHECK(refused("not_a_tuple.npy", with_shape("(6)")) ==
          "the header is not a .npy header ('shape' is (n), an integer, not the tuple (n,))");
    CHECK(refused("list_shape.npy", with_shape("[2, 3]")) == "the header is not a .npy header ('shape' is not a tuple)");
    CHECK(refused("overflow.npy", with_shape("(99999999999999999999, 3)")) ==
          "the header is not a .npy header (the extent 99999999999999999999 does not fit in 64 bits)");
    CHECK(refused("empty_header.npy", npy_bytes(1, "", 0)) == "the header is empty");
    CHECK(refused("twice.npy", npy_bytes(1, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}", 24)) ==
          "the header is not a .npy header (the key 'descr' is given twice)");
    CHECK(refused("missing_key.npy", npy_bytes(1, "{'descr': '<f4', 'shape': (2, 3)}", 24)) ==
          "the header is not a .npy header (the key 'fortran_order' is missing (a header has descr, fortran_order and shape))");
    CHECK(refused("other_key.npy", npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1}", 24)) ==
          "the header is not a .npy header (unexpected key 'x' (a header has descr, fortran_order and shape))");
    CHECK(refused("after_dict.npy", npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)} 1", 24)) ==
          "the header is not a .npy header (bytes after the header's dict)");
    CHECK(refused("order.npy", npy_bytes(1, "{'descr': '<f4', 'fortran_order': 0, 'shape': (2, 3)}", 24)) ==
          "the header is not a .npy header ('fortran_order' is not True or False)");
    CHECK(refused("version.npy", npy_bytes(4, padded(dict, 64), 24)) ==
          "not a .npy file (version 4.0; NumPy writes 1.0, 2.0 and 3.0)");
    // 13 bytes whose 4-byte length says 0x80000000: refused at once, nothing allocated (xtensor's reader
    // allocated 8 GB first).
    // [thirteen_bytes]
    auto thirteen = npy_bytes(2, "", 1);
    thirteen[11] = '\x80';
    CHECK(refused("thirteen.npy", thirteen) == "the header's length, 2147483648 bytes, is over NumPy's bound of 10000");
    // [thirteen_bytes]
    auto past_end = npy_bytes(1, "{}", 0);
    past_end[8] = '\x10';
    CHECK(refused("past_end.npy", past_end) == "the header's length, 16 bytes, runs past the end of the 12-byte file");
    CHECK(refused("tiny.npy", {'\x93', 'N'}) == "not a .npy file (2 bytes; the magic and lengths take 10)");
    // A run-time axis takes the file's extent, checked against its bound before the elements are allocated.
    CHECK(thrown<shaped::shape_error>([&] {
              const temp_file f("too_long.npy", with_shape("(2, 3)"));
              (void)io::load_npy<float, two, two>(f.path);
          }).find("expected (two=2, two=2), got (2, 3)") != std::string::npos);
    // A FIFO or a directory is refused before it is opened: opening a FIFO would wait for a writer.
    const std::string fifo = (std::filesystem::temp_directory_path() / "shaped_test_fifo.npy").string();
    std::remove(fifo.c_str());
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    CHECK(thrown<io::file_error>([&] { (void)io::load_npy<float, two, three>(fifo); }) ==
          "shaped::load_npy: " + fifo + ": not a regular file");
    std::remove(fifo.c_str());
    const std::string folder = std::filesystem::temp_directory_path().string();
    CHECK(thrown<io::file_error>([&] { (void)io::load_npy<float, two, three>(folder); }) ==
          "shaped::load_npy: " + folder + ": not a regular file");
}

TEST_CASE("safetensors files that the reference reader refuses are refused, each naming the file and the rule") {
    const auto fails = [](const std::string& name, const std::vector<char>& bytes) {
        const temp_file f(name, bytes);
        const std::string what = thrown<io::file_error>([&] { io::safetensors_file s(f.path); });
        CHECK(what.rfind("shaped::safetensors: " + f.path + ": ", 0) == 0);
        return what.substr(std::min(what.size(), std::string("shaped::safetensors: ").size() + f.path.size() + 2));
    };
    const std::string a = R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";
    CHECK(fails("hole", safetensors_bytes("{" + a + R"(,"b":{"dtype":"F32","shape":[1],"data_offsets":[12,16]}})", 16)) ==
          "bytes 8 to 12 of the data belong to no tensor (between a and b)");
    CHECK(fails("before", safetensors_bytes(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8)) ==
          "bytes 0 to 4 of the data belong to no tensor (before a)");
    CHECK(fails("after", safetensors_bytes("{" + a + "}", 12)) ==
          "4 bytes after the last tensor belong to no tensor (the data ends at 8, the file 12 bytes after its header)");
    CHECK(fails("metadata_list", safetensors_bytes(R"({"__metadata__":["x"],)" + a + "}", 8)) ==
          "__metadata__ is not a map of strings to strings");
    CHECK(fails("metadata_number", safetensors_bytes(R"({"__metadata__":{"format":1},)" + a + "}", 8)) ==
          "__metadata__: format is not a string but 1");
    CHECK(fails("nul", safetensors_bytes(std::string("{" + a + "}") + std::string(4, '\0'), 8)) ==
          "the header holds a NUL byte (it is JSON, padded with spaces, never with NULs)");
    CHECK(fails("twice", safetensors_bytes("{" + a + "," + a + "}", 8)) == "the key \"a\" is given twice in the header");
    CHECK(fails("start", safetensors_bytes("x{" + a + "}", 8)) == "the header does not begin with '{'");
    CHECK(fails("spaces", safetensors_bytes("    ", 0)) == "the header does not begin with '{'");
    // Keys are shown with control characters escaped and cut short: a NUL would end what(), and a key may be
    // as long as the header.
    CHECK(fails("nul_key", safetensors_bytes(R"({"w\u0000":{"dtype":"F12","shape":[2],"data_offsets":[0,8]}})", 8)) ==
          "w\\x00: unknown dtype \"F12\"");
    CHECK(fails("long_key", safetensors_bytes("{\"" + std::string(5000, 'k') + R"(":{"dtype":"F12","shape":[2],"data_offsets":[0,8]}})", 8)) ==
          std::string(80, 'k') + "...: unknown dtype \"F12\"");
    CHECK(fails("empty_header", safetensors_bytes("", 0)) == "the header does not begin with '{'");
    // Nested 100,000 deep in 200 KB: refused at the fourth level, without recursion (before, the message was
    // built with json::dump(), which recursed once per level and overflowed the stack).
    const std::string deep = R"({"w":{"dtype":"F32","shape":)" + std::string(100000, '[') + std::string(100000, ']') +
                             R"(,"data_offsets":[0,0]}})";
    CHECK(fails("deep", safetensors_bytes(deep, 0)) == "the header nests values deeper than a tensor's shape (depth 4)");
    CHECK(fails("deep_metadata", safetensors_bytes(R"({"__metadata__":{"a":{"b":{}}}})", 0)) ==
          "the header nests values deeper than a tensor's shape (depth 4)");
    // What the reference accepts: trailing spaces, an empty file of tensors, metadata of strings, zero-size tensors.
    for (const std::string& header : {"{" + a + "}      ", "\t\n {" + a + "}\r ", R"({"__metadata__":null,)" + a + "}",
                                     R"({"__metadata__":{"format":"pt"},)" + a + "}",
                                     R"({"e":{"dtype":"F32","shape":[0],"data_offsets":[0,0]},)" + a + "}"}) {
        const temp_file f("accepted.safetensors", safetensors_bytes(header, 8));
        CHECK(io::safetensors_file(f.path).find("a") != nullptr);
    }
    // 100,000 keys, each looked up once among the others (the duplicate check was quadratic: minutes).
    std::string many = "{";
    for (int i = 0; i < 100000; ++i)
        many += (i ? "," : "") + std::string("\"t") + std::to_string(i) + R"(":{"dtype":"F32","shape":[0],"data_offsets":[0,0]})";
    const temp_file many_keys("many_keys.safetensors", safetensors_bytes(many + "}", 0));
    CHECK(io::safetensors_file(many_keys.path).entries().size() == 100000);
    const temp_file none("none.safetensors", safetensors_bytes("{}", 0));
    CHECK(io::safetensors_file(none.path).entries().empty());
    // A FIFO is refused at once: opening it for reading would wait for a writer.
    const std::string fifo = (std::filesystem::temp_directory_path() / "shaped_test_fifo.safetensors").string();
    std::remove(fifo.c_str());
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    CHECK(thrown<io::file_error>([&] { io::safetensors_file s(fifo); }) == "shaped::safetensors: " + fifo + ": not a regular file");
    std::remove(fifo.c_str());
    // The writer refuses what the reader would.
    const std::vector<float> w(2, 1.0f);
    CHECK_THROWS_AS(io::save_safetensors(none.path, {{"a", {2}, w}, {"a", {2}, w}}), std::invalid_argument);
    CHECK(thrown<std::invalid_argument>([&] { io::save_safetensors(none.path, {{"a\xff", {2}, w}}); }) ==
          "shaped::io::save_safetensors: the key a\xff is not UTF-8");
    // Keys that JSON must escape are written escaped and read back as they were.
    const std::string odd = "q\"uo\\te\n\x01 \xc3\xa9";
    io::save_safetensors(none.path, {{odd, {2}, w}, {"b", {1, 2}, w}});
    const io::safetensors_file back(none.path);
    REQUIRE(back.entries().size() == 2);
    CHECK(back.entries()[0].name == odd);
    CHECK(back.entries()[1].shape == std::vector<std::size_t>{1, 2});
}

TEST_CASE("the header's JSON reader: RFC 8259 exactly, nesting bounded, a key given twice refused") {
    namespace json = shaped::detail::json;
    using reason = json::error::reason;
    const auto refused = [](std::string_view text, std::size_t depth = 3) -> std::string {
        try {
            json::reader r(text, depth);
            r.skip();
            r.finish();
        } catch (const json::error& e) {
            return std::string(e.why == reason::syntax ? "syntax: " : e.why == reason::too_deep ? "too deep: " : "twice: ") +
                   (e.why == reason::key_twice ? e.key : e.what());
        }
        return "read";
    };
    // Values in document order, each as its kind's call reads it.
    json::reader r(R"( {"a\u00e9\ud83d\ude00" :[0, -1, 18446744073709551615, 18446744073709551616, 1.5e3,
                        true, false, null], "b": {"c": "\"\\\/\b\f\n\r\t"}} )", 3);
    std::string key;
    r.begin_object();
    REQUIRE(r.member(key));
    CHECK(key == "a\xc3\xa9\xf0\x9f\x98\x80");
    const std::size_t start = (r.next(), r.mark());
    r.begin_array();
    std::vector<json::number> numbers;
    for (int i = 0; i < 5; ++i) {
        REQUIRE(r.item());
        REQUIRE(r.next() == json::kind::number);
        numbers.push_back(r.read_number());
    }
    CHECK((numbers[0].is_unsigned && numbers[0].unsigned_value == 0));
    CHECK((!numbers[1].is_unsigned && numbers[1].text == "-1"));
    CHECK((numbers[2].is_unsigned && numbers[2].unsigned_value == 18446744073709551615ull));
    CHECK((!numbers[3].is_unsigned && numbers[3].text == "18446744073709551616"));
    CHECK((!numbers[4].is_unsigned && numbers[4].text == "1.5e3"));
    REQUIRE(r.item());
    CHECK(r.boolean());
    REQUIRE(r.item());
    CHECK(!r.boolean());
    REQUIRE(r.item());
    CHECK(r.next() == json::kind::null);
    r.null();
    CHECK(!r.item());
    CHECK(r.text_from(start).substr(0, 6) == "[0, -1");
    CHECK(r.text_from(start).back() == ']');
    REQUIRE(r.member(key));
    CHECK(key == "b");
    r.begin_object();
    REQUIRE(r.member(key));
    CHECK(r.string() == "\"\\/\b\f\n\r\t");
    CHECK(!r.member(key));
    CHECK(!r.member(key));
    r.finish();
    // quote() writes what the reader reads back.
    const std::string odd = "q\"\\\n\x01\x1f \xc3\xa9";
    CHECK(json::quote(odd) == "\"q\\\"\\\\\\n\\u0001\\u001f \xc3\xa9\"");
    const std::string quoted = json::quote(odd);
    json::reader back(quoted, 1);
    CHECK(back.string() == odd);
    // Refused, each with the byte where the text stopped being JSON.
    CHECK(refused("{\"a\":1,}") == "syntax: syntax error at byte 7: expected a key (a string), found '}'");
    CHECK(refused("[1 2]") == "syntax: syntax error at byte 3: expected ',' or ']', found '2'");
    CHECK(refused("[1,]") == "syntax: syntax error at byte 3: expected a value, found ']'");
    CHECK(refused("01") == "syntax: syntax error at byte 1: expected the end of the text after the value, found '1'");
    CHECK(refused("[1.]") == "syntax: syntax error at byte 3: expected a digit after '.', found ']'");
    CHECK(refused("1e400") == "syntax: syntax error at byte 0: expected a number within a double's range, found '1'");
    CHECK(refused("-1e400") == "syntax: syntax error at byte 0: expected a number within a double's range, found '-'");
    CHECK(refused("1e-400") == "read");  // underflow is a number (zero), as the reference readers read it
    CHECK(refused("\"\\ud800\"") == "syntax: syntax error at byte 7: expected \\u and a low surrogate after a high one, found '\"'");
    CHECK(refused("\"\\udc00\"") == "syntax: syntax error at byte 7: expected a high surrogate before a low one, found '\"'");
    CHECK(refused("\"\xed\xa0\x80\"") == "syntax: syntax error at byte 1: expected well-formed UTF-8, found byte 0xed");
    CHECK(refused("\"\xc0\xaf\"") == "syntax: syntax error at byte 1: expected well-formed UTF-8, found byte 0xc0");
    CHECK(refused("\"a\tb\"") == "syntax: syntax error at byte 2: expected a character of a string (control characters must be escaped), found byte 0x09");
    CHECK(refused("\"\\x\"") == "syntax: syntax error at byte 2: expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u after '\\', found 'x'");
    CHECK(refused("tru") == "syntax: syntax error at byte 0: expected true, found 't'");
    CHECK(refused("[1]\n[2]") == "syntax: syntax error at byte 4: expected the end of the text after the value, found '['");
    CHECK(refused("") == "syntax: syntax error at byte 0: expected a value, found the end of the text");
    CHECK(refused("\xef\xbb\xbf{}") == "syntax: syntax error at byte 0: expected a value, found byte 0xef");  // no byte-order mark
    // Nesting: the outermost value is at depth 1; the bound is checked as each level opens.
    CHECK(refused("[[[]]]") == "read");
    CHECK(refused("[[[[]]]]") == "too deep: nesting deeper than 3");
    CHECK(refused("{}", 0) == "too deep: nesting deeper than 0");
    CHECK(refused("1", 0) == "read");
    CHECK(refused(R"({"b":1,"a":{"x":1,"x":2}})") == "twice: x");
    CHECK(refused(R"({"a":{"x":1},"a":2})") == "twice: a");
    CHECK(refused(R"([{"a":1},{"a":1}])") == "read");  // twice across objects is not twice
    // A call for the wrong kind is refused as text that is not what was expected.
    json::reader wrong("[1]", 3);
    CHECK_THROWS_WITH_AS(wrong.begin_object(), "syntax error at byte 0: expected '{', found '['", json::error);
}

namespace {

// Every tensor of a safetensors file of F32 tensors, to write again with changes.
std::vector<std::pair<io::safetensors_entry, std::vector<float>>> tensors_of(const io::safetensors_file& f) {
    std::vector<std::pair<io::safetensors_entry, std::vector<float>>> all;
    for (const auto& e : f.entries()) {
        std::vector<float> v(e.numel());
        std::memcpy(v.data(), f.bytes(e).data(), f.bytes(e).size());
        all.emplace_back(e, std::move(v));
    }
    return all;
}

void write(const std::string& path, const std::vector<std::pair<io::safetensors_entry, std::vector<float>>>& all) {
    std::vector<io::safetensors_tensor> t;
    for (const auto& [e, v] : all) t.push_back({e.name, e.shape, v});
    io::save_safetensors(path, t);
}

}  // namespace

TEST_CASE("load_gpt2_weights is all or nothing and skips only the mask buffers of the model's blocks") {
    const auto all = tensors_of(io::safetensors_file(gpt2_file));
    nn::gpt_model<tiny> model(nn::skip_init);
    const auto untouched = [&] {
        for (std::size_t i = 0; i < model.tok_emb.weight.numel(); ++i)
            if (model.tok_emb.weight.data()[i] != 7.0f) return false;
        for (std::size_t i = 0; i < model.trf_blocks[1].att.W_query.weight.numel(); ++i)
            if (model.trf_blocks[1].att.W_query.weight.data()[i] != 7.0f) return false;
        return true;
    };
    std::fill_n(model.tok_emb.weight.data(), model.tok_emb.weight.numel(), 7.0f);
    std::fill_n(model.trf_blocks[1].att.W_query.weight.data(), model.trf_blocks[1].att.W_query.weight.numel(), 7.0f);
    // An lm_head.weight stored transposed: before, it was found after every other weight had been copied.
    auto with_head = all;
    io::safetensors_entry head;
    head.name = "lm_head.weight";
    head.shape = {64, 97};
    with_head.emplace_back(head, std::vector<float>(64 * 97, 0.5f));
    const temp_file f("head.safetensors", {});
    write(f.path, with_head);
    // [all_or_nothing]
    CHECK(thrown<shaped::shape_error>([&] { io::load_gpt2_weights(model, io::safetensors_file(f.path)); }) ==
          "shaped::io::safetensors_file::read(" + f.path + "): lm_head.weight: expected (vocab_size=97, emb_dim=64), got (64, 97)");
    CHECK(untouched());  // not one weight of the model was written
    // [all_or_nothing]
    // A misshapen weight of the last block: nothing of the earlier ones is written either.
    auto bad_last = all;
    for (auto& [e, v] : bad_last)
        if (e.name == "h.1.mlp.c_proj.bias") {
            e.shape = {2, 32};
        }
    write(f.path, bad_last);
    CHECK(thrown<shaped::shape_error>([&] { io::load_gpt2_weights(model, io::safetensors_file(f.path)); })
              .find("h.1.mlp.c_proj.bias: expected (emb_dim=64), got (2, 32)") != std::string::npos);
    CHECK(untouched());
    // Mask buffers: those of the model's blocks in their shape are skipped; one of a block the model does not
    // have, or of another shape, is an unexpected key.
    for (const auto& [name, shape] : std::vector<std::pair<std::string, std::vector<std::size_t>>>{
             {"h.2.attn.bias", {1, 1, 16, 16}}, {"h.0.attn.masked_bias", {1}}, {"h.10.attn.masked_bias", {}},
             {"transformer.lm_head.weight", {97, 64}}}) {  // a stray prefix did not flip every key to missing
        auto extra = all;
        io::safetensors_entry e;
        e.name = name;
        e.shape = shape;
        std::size_t n = 1;
        for (auto d : shape) n *= d;
        extra.emplace_back(e, std::vector<float>(n, 1.0f));
        write(f.path, extra);
        CHECK(thrown<io::file_error>([&] { io::load_gpt2_weights(model, io::safetensors_file(f.path)); }) ==
              "shaped::load_gpt2_weights: " + f.path + ": not a GPT-2 checkpoint of this configuration (2 layers); "
              "unexpected key(s): \"" + name + "\"");
        CHECK(untouched());
    }
    auto with_masked_bias = all;
    io::safetensors_entry masked;
    masked.name = "h.1.attn.masked_bias";
    with_masked_bias.emplace_back(masked, std::vector<float>{-1e4f});
    write(f.path, with_masked_bias);
    io::load_gpt2_weights(model, io::safetensors_file(f.path));
    CHECK(!untouched());
}

TEST_CASE("load_state_dict is all or nothing: a misshapen last key leaves every parameter as it was") {
    struct d : shaped::axis<"d", 4> {};
    struct e : shaped::axis<"e", 3> {};
    nn::linear<d, e> layer(nn::skip_init);
    std::fill_n(layer.weight.data(), layer.weight.numel(), 7.0f);
    const std::vector<float> w(12, 0.5f), b(4, 0.5f);
    const temp_file f("misshapen_bias.safetensors", {});
    io::save_safetensors(f.path, {{"weight", {3, 4}, w}, {"bias", {4}, b}});  // bias of 4, not 3
    CHECK(thrown<shaped::shape_error>([&] { io::load_state_dict(layer, io::safetensors_file(f.path)); }) ==
          "shaped::io::safetensors_file::read(" + f.path + "): bias: expected (e=3), got (4)");
    for (std::size_t i = 0; i < layer.weight.numel(); ++i) CHECK(layer.weight.data()[i] == 7.0f);
}
