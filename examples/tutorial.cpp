// The tutorial's program. Every snippet of docs/ that is not taken from the seed's examples is a region
// of this file, the text between two `// [name]` lines (tests/check_docs.py keeps the docs equal to it).
// Each section prints what a learner sees and compares it with what PyTorch 1.13 printed for the same
// lines: the expected text is itself a region (`name_out`), shown in the docs under the code. The program
// exits with 1 if any printed text or any check differs.
// Build: g++ -std=c++20 -O1 -Wall -Wextra -Wpedantic -Iinclude examples/tutorial.cpp -ldnnl -lgomp -lopenblas -o tutorial
// [includes]
#include <array>
#include <boost/hana/at.hpp>
#include <boost/hana/zip_with.hpp>
#include <cmath>
#include <iostream>
#include <limits>
#include <shaped/shaped.hpp>
#include <vector>

namespace hana = boost::hana;
namespace torch = shaped::torch;
// [includes]

#include <cstdlib>
#include <shaped/nn/multi_head_attention_sdpa.hpp>  // the fused attention is not in the umbrella header
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>

#include "tutorial_check.hpp"


// ---------------------------------------------------------------------------------------------------
// The book's running example (chapter 3): six tokens of three dimensions, and its MultiHeadAttention.
namespace book {

// [qs_axes]
struct context_length : shaped::axis<"context_length", 6> {};  // the longest input the causal mask covers
struct num_tokens : shaped::axis<"num_tokens", 6, shaped::at_most<context_length>> {};  // "Your journey starts with one step"
struct d_in : shaped::axis<"d_in", 3> {};              // each token is embedded in three dimensions
struct d_out : shaped::axis<"d_out", 2> {};            // queries, keys and values have two
// [qs_axes]

// [mha_axes]
struct batch : shaped::axis<"batch", 2> {};                           // two copies of the six tokens
struct num_heads : shaped::axis<"num_heads", 2> {};
struct head_dim : shaped::quotient<"head_dim", d_out, num_heads> {};  // d_out // num_heads, here 1
// [mha_axes]

// [mha_class]
// The book's MultiHeadAttention (listing 3.5) without dropout, for inputs (batch, num_tokens, d_in).
class MultiHeadAttention {
public:
    using input_t = shaped::tensor<float, batch, num_tokens, d_in>;
    using output_t = shaped::tensor<float, batch, num_tokens, d_out>;
    using num_keys = shaped::key<num_tokens>;  // the keys' token axis: the extent of num_tokens, another axis

    explicit MultiHeadAttention(bool qkv_bias = false)
        : W_query(qkv_bias), W_key(qkv_bias), W_value(qkv_bias) {}

    output_t forward(const input_t& x) const {
        auto keys = W_key(x);  // (batch, num_tokens, d_out)
        auto queries = W_query(x);
        auto values = W_value(x);

        // (batch, num_tokens, d_out) -> (batch, num_tokens, num_heads, head_dim)
        //                            -> (batch, num_heads, num_tokens, head_dim), keys and values on num_keys
        auto queries_h = queries.view<batch, num_tokens, num_heads, head_dim>().transpose<1, 2>();
        auto keys_h = keys.view<batch, num_tokens, num_heads, head_dim>().transpose<1, 2>();
        auto values_h = values.view<batch, num_tokens, num_heads, head_dim>().transpose<1, 2>();
        auto keys_k = keys_h.rename<batch, num_heads, num_keys, head_dim>();
        auto values_k = values_h.rename<batch, num_heads, num_keys, head_dim>();

        // (batch, num_heads, num_tokens, num_keys)
        auto attn_scores = shaped::matmul(queries_h, keys_k.transpose<2, 3>());
        auto mask_bool = mask.to<bool>().slice<num_tokens, num_keys>();  // mask.bool()[:num_tokens, :num_tokens]
        auto masked = attn_scores.masked_fill(mask_bool, -std::numeric_limits<float>::infinity());
        auto attn_weights = shaped::softmax<-1>(masked / std::sqrt(static_cast<float>(head_dim::extent)));

        // (batch, num_heads, num_tokens, head_dim) -> (batch, num_tokens, num_heads, head_dim)
        auto context_vec = shaped::matmul(attn_weights, values_k).transpose<1, 2>();
        auto merged = context_vec.contiguous().view<batch, num_tokens, d_out>();
        return out_proj(merged);
    }

private:
    // Declared, so constructed and drawn from the random stream, in the book's order.
    shaped::nn::linear<d_in, d_out> W_query, W_key, W_value;
    shaped::nn::linear<d_out, d_out> out_proj;
    shaped::tensor<float, context_length, context_length> mask =
        shaped::triu<1>(shaped::ones<context_length, context_length>());
};
// [mha_class]

void run() {
    check::section("page 1, Quick start: the book's inputs, a first attention");
    // [qs_inputs]
    shaped::tensor<float, num_tokens, d_in> inputs{{0.43, 0.15, 0.89},   // Your     (x^1)
                                                   {0.55, 0.87, 0.66},   // journey  (x^2)
                                                   {0.57, 0.85, 0.64},   // starts   (x^3)
                                                   {0.22, 0.58, 0.33},   // with     (x^4)
                                                   {0.77, 0.25, 0.10},   // one      (x^5)
                                                   {0.05, 0.80, 0.55}};  // step     (x^6)
    std::cout << "inputs.shape = " << inputs.shape << "\n";
    std::cout << "inputs = " << inputs << "\n";
    // [qs_inputs]
    check::printed(R"out(
// [qs_inputs_out]
inputs.shape = torch.Size([6, 3])
inputs = tensor([[0.4300, 0.1500, 0.8900],
        [0.5500, 0.8700, 0.6600],
        [0.5700, 0.8500, 0.6400],
        [0.2200, 0.5800, 0.3300],
        [0.7700, 0.2500, 0.1000],
        [0.0500, 0.8000, 0.5500]])
// [qs_inputs_out]
)out");

    // [qs_first_attention]
    auto attn_scores = shaped::matmul(inputs, inputs.T());         // inputs @ inputs.T
    auto attn_weights = shaped::softmax<-1>(attn_scores);          // torch.softmax(attn_scores, dim=-1)
    auto all_context_vecs = shaped::matmul(attn_weights, inputs);  // attn_weights @ inputs
    std::cout << "attn_scores.shape = " << attn_scores.shape << "\n";
    std::cout << "attn_weights = " << attn_weights << "\n";
    std::cout << "all_context_vecs = " << all_context_vecs << "\n";
    // [qs_first_attention]
    check::printed(R"out(
// [qs_first_attention_out]
attn_scores.shape = torch.Size([6, 6])
attn_weights = tensor([[0.2098, 0.2006, 0.1981, 0.1242, 0.1220, 0.1452],
        [0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581],
        [0.1390, 0.2369, 0.2326, 0.1242, 0.1108, 0.1565],
        [0.1435, 0.2074, 0.2046, 0.1462, 0.1263, 0.1720],
        [0.1526, 0.1958, 0.1975, 0.1367, 0.1879, 0.1295],
        [0.1385, 0.2184, 0.2128, 0.1420, 0.0988, 0.1896]])
all_context_vecs = tensor([[0.4421, 0.5931, 0.5790],
        [0.4419, 0.6515, 0.5683],
        [0.4431, 0.6496, 0.5671],
        [0.4304, 0.6298, 0.5510],
        [0.4671, 0.5910, 0.5266],
        [0.4177, 0.6503, 0.5645]])
// [qs_first_attention_out]
)out");
    static_assert(std::is_same_v<decltype(attn_scores), shaped::tensor<float, num_tokens, num_tokens>>);

    // [qs_weights]
    torch::manual_seed(123);                            // torch.manual_seed(123)
    auto W_query = torch::rand<d_in, d_out>();          // W_query = torch.rand(d_in, d_out)
    auto W_key = torch::rand<d_in, d_out>();
    auto W_value = torch::rand<d_in, d_out>();
    auto queries = shaped::matmul(inputs, W_query);     // queries = inputs @ W_query
    auto keys = shaped::matmul(inputs, W_key);
    auto values = shaped::matmul(inputs, W_value);
    auto scores = shaped::matmul(queries, keys.T());    // queries @ keys.T
    auto weights = shaped::softmax<-1>(scores / std::sqrt(static_cast<float>(d_out::extent)));  // keys.shape[-1]**0.5
    auto context_vec = shaped::matmul(weights, values);  // weights @ values
    std::cout << "keys.shape = " << keys.shape << "\n";
    std::cout << "context_vec = " << context_vec << "\n";
    // [qs_weights]
    check::printed(R"out(
// [qs_weights_out]
keys.shape = torch.Size([6, 2])
context_vec = tensor([[0.2996, 0.8053],
        [0.3061, 0.8210],
        [0.3058, 0.8203],
        [0.2948, 0.7939],
        [0.2927, 0.7891],
        [0.2990, 0.8040]])
// [qs_weights_out]
)out");

    check::section("page 5, The two forms of multi-head attention: the book's MultiHeadAttention (listing 3.5)");
    // [mha_run]
    auto batch_x = shaped::stack<0, batch>(std::array{inputs, inputs});  // torch.stack((inputs, inputs), dim=0)
    std::cout << "batch.shape = " << batch_x.shape << "\n";
    torch::manual_seed(123);
    MultiHeadAttention mha;  // MultiHeadAttention(d_in, d_out, context_length, 0.0, num_heads=2)
    auto context_vecs = mha.forward(batch_x);
    std::cout << "context_vecs = " << context_vecs << "\n";
    std::cout << "context_vecs.shape = " << context_vecs.shape << "\n";
    // [mha_run]
    check::printed(R"out(
// [mha_run_out]
batch.shape = torch.Size([2, 6, 3])
context_vecs = tensor([[[0.3190, 0.4858],
         [0.2943, 0.3897],
         [0.2856, 0.3593],
         [0.2693, 0.3873],
         [0.2639, 0.3928],
         [0.2575, 0.4028]],

        [[0.3190, 0.4858],
         [0.2943, 0.3897],
         [0.2856, 0.3593],
         [0.2693, 0.3873],
         [0.2639, 0.3928],
         [0.2575, 0.4028]]])
context_vecs.shape = torch.Size([2, 6, 2])
// [mha_run_out]
)out");
    // PyTorch's values in full (torch.set_printoptions(precision=8)).
    const shaped::tensor<float, num_tokens, d_out> pytorch{{0.31901830, 0.48576289}, {0.29434600, 0.38967627},
                                                           {0.28557467, 0.35927770}, {0.26926368, 0.38732666},
                                                           {0.26387054, 0.39279571}, {0.25747356, 0.40278262}};
    check::that(shaped::max_abs_diff(context_vecs, shaped::stack<0, batch>(std::array{pytorch, pytorch})) <= 1e-6,
                "MultiHeadAttention equals PyTorch's context_vecs to 1e-6");

    // [mha_module]
    torch::manual_seed(123);
    shaped::nn::multi_head_attention<d_in, d_out, context_length, num_heads> mha_module(0.0);  // dropout 0.0
    auto module_vecs = mha_module(batch_x);
    std::cout << "module_vecs.shape = " << module_vecs.shape << "\n";
    std::cout << "max |module_vecs - context_vecs| = " << shaped::max_abs_diff(module_vecs, context_vecs) << "\n";
    // [mha_module]
    check::printed(R"out(
// [mha_module_out]
module_vecs.shape = torch.Size([2, 6, 2])
max |module_vecs - context_vecs| = 0
// [mha_module_out]
)out");

    // [mha_three_forms]
    // The bonus notebook's forms with mha_module's weights: qkv = torch.cat([W_query, W_key, W_value]), proj = out_proj.
    using combined_t = shaped::nn::multi_head_attention_combined_qkv<d_in, d_out, context_length, num_heads>;
    using fused_t = shaped::nn::multi_head_attention_sdpa<d_in, d_out, context_length, num_heads>;
    auto qkv_weight = shaped::cat<0>(hana::make_tuple(mha_module.W_query.weight, mha_module.W_key.weight,
                                                      mha_module.W_value.weight))
                          .rename<combined_t::qkv_dim, d_in>();  // 3·d_out = (qkv_part, num_heads, head_dim)
    combined_t combined(shaped::nn::skip_init, 0.0);
    combined.qkv.weight = qkv_weight;
    combined.proj = mha_module.out_proj;
    fused_t fused(shaped::nn::skip_init, 0.0);
    fused.qkv.weight = qkv_weight;
    fused.proj = mha_module.out_proj;
    fused.eval();  // the fused kernel has no dropout: evaluation mode
    auto combined_vecs = combined(batch_x);
    auto fused_vecs = fused(batch_x);
    std::cout << std::boolalpha << "combined_vecs.shape = " << combined_vecs.shape << ", within 1e-6 of module_vecs: "
              << (shaped::max_abs_diff(combined_vecs, module_vecs) <= 1e-6) << "\n";
    std::cout << "fused_vecs.shape = " << fused_vecs.shape << ", within 1e-6 of module_vecs: "
              << (shaped::max_abs_diff(fused_vecs, module_vecs) <= 1e-6) << "\n";
    // [mha_three_forms]
    check::printed(R"out(
// [mha_three_forms_out]
combined_vecs.shape = torch.Size([2, 6, 2]), within 1e-6 of module_vecs: true
fused_vecs.shape = torch.Size([2, 6, 2]), within 1e-6 of module_vecs: true
// [mha_three_forms_out]
)out");

    check::section("page 3, The operations: nn::dropout (section 3.5.2)");
    // [op_dropout]
    torch::manual_seed(123);                                   // torch.manual_seed(123)
    shaped::nn::dropout dropout(0.5);                          // dropout = torch.nn.Dropout(0.5)
    auto example = shaped::ones<num_tokens, num_tokens>();     // example = torch.ones(6, 6)
    std::cout << "dropout(example) = " << dropout(example) << "\n";
    dropout.eval();                                            // dropout.eval(): the identity
    std::cout << "eval: " << (shaped::max_abs_diff(dropout(example), example) == 0 ? "unchanged" : "changed") << "\n";
    // [op_dropout]
    check::printed(R"out(
// [op_dropout_out]
dropout(example) = tensor([[2., 2., 0., 2., 2., 0.],
        [0., 0., 0., 2., 0., 2.],
        [2., 2., 2., 2., 0., 2.],
        [0., 2., 2., 0., 0., 2.],
        [0., 2., 0., 2., 0., 2.],
        [0., 2., 2., 2., 2., 0.]])
eval: unchanged
// [op_dropout_out]
)out");
}

}  // namespace book

// ---------------------------------------------------------------------------------------------------
// The seed's sizes, for chapters 2 to 5: batch 1, num_tokens 2, d_out 6, num_heads 3, head_dim 2.
namespace seed {

// [ax_declare]
struct batch : shaped::axis<"batch", 1> {};
struct context_length : shaped::axis<"context_length", 4> {};
struct num_tokens : shaped::axis<"num_tokens", 2, shaped::at_most<context_length>> {};  // within context_length
struct d_out : shaped::axis<"d_out", 6> {};
struct num_heads : shaped::axis<"num_heads", 3> {};
struct head_dim : shaped::quotient<"head_dim", d_out, num_heads> {};  // head_dim = d_out // num_heads
struct d_model : shaped::product<"d_model", num_heads, head_dim> {};   // d_model = num_heads * head_dim
// [ax_declare]

// [ax_same]
static_assert(head_dim::extent == 2 && d_model::extent == 6);
static_assert(shaped::same_axis_v<d_out, d_out>);
static_assert(!shaped::same_axis_v<head_dim, num_tokens>);                        // both 2, still different
static_assert(shaped::same_axis_v<shaped::merged<num_heads, head_dim>, d_out>);   // heads outermost: d_out
static_assert(!shaped::same_axis_v<shaped::merged<head_dim, num_heads>, d_out>);  // the other order is not
static_assert(shaped::same_axis_v<d_model, d_out>);                               // same factors, same order
static_assert(!shaped::same_axis_v<shaped::concat<d_out, d_out, d_out>, d_out>);  // 18 wide, an axis of its own

struct other_d_out : shaped::axis<"d_out", 6> {};  // same name, same extent, another declaration
static_assert(!shaped::same_axis_v<other_d_out, d_out>);
// [ax_same]

void axes_and_shapes() {
    check::section("page 2, Axes and shapes");
    // [ax_view]
    torch::manual_seed(1223);
    auto q = torch::rand<batch, num_tokens, d_out>();                             // the learner's q
    auto q4 = q.view<batch, num_tokens, num_heads, head_dim>();                   // split d_out into heads
    auto q3 = q4.view<batch, num_tokens, d_out>();                                // merge them back
    auto qm = q4.view<batch, num_tokens, shaped::merged<num_heads, head_dim>>();  // or leave the merge unnamed
    shaped::tensor<float, batch, num_tokens, d_out> same = qm;                    // (num_heads*head_dim) is d_out
    auto rows = q.view<shaped::merged<batch, num_tokens>, d_out>();               // merge batch and num_tokens
    std::cout << "q4: " << q4.shape_text() << "\n";
    std::cout << "qm: " << qm.shape_text() << "\n";
    std::cout << "rows: " << rows.shape_text() << "\n";
    // [ax_view]
    check::printed(R"out(
// [ax_view_out]
q4: (batch=1, num_tokens=2, num_heads=3, head_dim=2)
qm: (batch=1, num_tokens=2, (num_heads*head_dim)=6)
rows: ((batch*num_tokens)=2, d_out=6)
// [ax_view_out]
)out");
    check::that(shaped::max_abs_diff(q3, q) == 0 && shaped::max_abs_diff(same, q) == 0, "view keeps the elements");

    // [ax_concat]
    auto heads = q.split<head_dim, -1>();       // num_heads tensors (batch, num_tokens, head_dim)
    auto joined = shaped::cat<-1>(heads);       // num_heads parts of head_dim: d_out again
    auto wide = shaped::cat<-1>(std::array{q, q, q});  // three full-width copies
    auto pair = shaped::cat<-1>(hana::make_tuple(hana::at_c<0>(heads), hana::at_c<1>(heads)));  // two of three heads
    std::cout << "joined: " << joined.shape_text() << "\n";
    std::cout << "wide: " << wide.shape_text() << "\n";
    std::cout << "pair: " << pair.shape_text() << "\n";
    // [ax_concat]
    check::printed(R"out(
// [ax_concat_out]
joined: (batch=1, num_tokens=2, d_out=6)
wide: (batch=1, num_tokens=2, cat(d_out, d_out, d_out)=18)
pair: (batch=1, num_tokens=2, cat(head_dim, head_dim)=4)
// [ax_concat_out]
)out");
    static_assert(std::is_same_v<decltype(wide),
                                 shaped::tensor<float, batch, num_tokens, shaped::concat<d_out, d_out, d_out>>>);

    // [ax_layout]
    auto qh = q4.transpose<1, 2>();  // (batch, num_heads, num_tokens, head_dim)
    static_assert(std::is_same_v<decltype(qh), shaped::strided_tensor<float, batch, num_heads, num_tokens, head_dim>>);
    auto back = qh.transpose<1, 2>().contiguous().view<batch, num_tokens, d_out>();  // contiguous() before view
    auto back_too = qh.transpose<1, 2>().reshape<batch, num_tokens, d_out>();        // reshape() does both
    std::cout << std::boolalpha << "qh.is_contiguous = " << qh.is_contiguous << "\n";  // qh.is_contiguous()
    std::cout << "back.is_contiguous = " << back.is_contiguous << "\n";
    // [ax_layout]
    check::printed(R"out(
// [ax_layout_out]
qh.is_contiguous = false
back.is_contiguous = true
// [ax_layout_out]
)out");
    check::that(shaped::max_abs_diff(back, q) == 0 && shaped::max_abs_diff(back_too, q) == 0,
                "transpose, contiguous and view back restore q");

    // [ax_key]
    using num_keys = shaped::key<num_tokens>;  // the keys' token axis
    auto k = torch::rand<batch, num_tokens, d_out>().rename<batch, num_keys, d_out>();
    auto scores = shaped::matmul(q, k.transpose<1, 2>());  // (batch, num_tokens, key<num_tokens>)
    auto weights = shaped::softmax<-1>(scores);            // over the keys; softmax<-2> does not compile
    auto by_name = scores.softmax<num_keys>();             // the same, by name
    std::cout << "weights: " << weights.shape_text() << "\n";
    // [ax_key]
    check::printed(R"out(
// [ax_key_out]
weights: (batch=1, num_tokens=2, key<num_tokens>=2)
// [ax_key_out]
)out");
    check::that(shaped::max_abs_diff(weights, by_name) == 0, "softmax by name is softmax<-1>");

    // [ax_unit]
    auto q2 = q.view<num_tokens, d_out>();       // q.view(num_tokens, d_out): batch has extent 1
    auto q1 = q2.unsqueeze<0>();                 // q2.unsqueeze(0): (one, num_tokens, d_out)
    auto row_bias = torch::rand<batch, d_out>();
    auto shifted = q + row_bias.unsqueeze<1>();  // (batch, num_tokens, d_out) + (batch, one, d_out)
    std::cout << "q2: " << q2.shape_text() << "\nq1: " << q1.shape_text() << "\nshifted: " << shifted.shape_text()
              << "\n";
    // [ax_unit]
    check::printed(R"out(
// [ax_unit_out]
q2: (num_tokens=2, d_out=6)
q1: (one=1, num_tokens=2, d_out=6)
shifted: (batch=1, num_tokens=2, d_out=6)
// [ax_unit_out]
)out");
}

void ops() {
    check::section("page 3, The operations");
    // [op_rand]
    torch::manual_seed(1223);                          // torch.manual_seed(1223)
    auto q = torch::rand<batch, num_tokens, d_out>();  // q = torch.rand(batch, num_tokens, d_out)
    auto k = torch::rand<batch, num_tokens, d_out>();
    auto v = torch::rand<batch, num_tokens, d_out>();
    std::cout << "q = " << q << "\n";
    torch::generator g(1223);                                 // g = torch.Generator().manual_seed(1223)
    auto q_again = torch::rand<batch, num_tokens, d_out>(g);  // torch.rand(..., generator=g)
    std::cout << "torch.equal(q_again, q) = " << (shaped::max_abs_diff(q_again, q) == 0 ? "True" : "False") << "\n";
    // [op_rand]
    check::printed(R"out(
// [op_rand_out]
q = tensor([[[0.4437, 0.9082, 0.8187, 0.4739, 0.8862, 0.9652],
         [0.5938, 0.0244, 0.1877, 0.2675, 0.8214, 0.4462]]])
torch.equal(q_again, q) = True
// [op_rand_out]
)out");

    // [op_view]
    auto q4 = q.view<batch, num_tokens, num_heads, head_dim>();  // q.view(batch, num_tokens, num_heads, head_dim)
    std::cout << "q4.shape = " << q4.shape << "\n";
    std::cout << "q4 = " << q4 << "\n";
    // [op_view]
    check::printed(R"out(
// [op_view_out]
q4.shape = torch.Size([1, 2, 3, 2])
q4 = tensor([[[[0.4437, 0.9082],
          [0.8187, 0.4739],
          [0.8862, 0.9652]],

         [[0.5938, 0.0244],
          [0.1877, 0.2675],
          [0.8214, 0.4462]]]])
// [op_view_out]
)out");

    // [op_transpose]
    auto qh = q4.transpose<1, 2>();                                                  // q4.transpose(1, 2)
    auto kh = k.view<batch, num_tokens, num_heads, head_dim>().transpose<-3, -2>();  // .transpose(-3, -2)
    auto vh = v.view<batch, num_tokens, num_heads, head_dim>().transpose<num_tokens, num_heads>();  // by name
    auto qp = q4.permute<0, 2, 1, 3>();                                              // q4.permute(0, 2, 1, 3)
    std::cout << "qh.shape = " << qh.shape << "\n";
    std::cout << "qh = " << qh << "\n";
    // [op_transpose]
    check::printed(R"out(
// [op_transpose_out]
qh.shape = torch.Size([1, 3, 2, 2])
qh = tensor([[[[0.4437, 0.9082],
          [0.5938, 0.0244]],

         [[0.8187, 0.4739],
          [0.1877, 0.2675]],

         [[0.8862, 0.9652],
          [0.8214, 0.4462]]]])
// [op_transpose_out]
)out");
    check::that(shaped::max_abs_diff(qp, qh) == 0, "permute<0, 2, 1, 3> is transpose<1, 2>");

    // [op_T]
    auto keys2 = torch::rand<num_tokens, d_out>();
    auto keys2_T = keys2.T();  // keys2.T: (d_out, num_tokens)
    static_assert(std::is_same_v<decltype(keys2_T), shaped::strided_tensor<float, d_out, num_tokens>>);
    // [op_T]

    // [op_contiguous]
    auto context = qh.transpose<1, 2>();  // (batch, num_tokens, num_heads, head_dim), strided
    auto merged = context.contiguous().view<batch, num_tokens, d_out>();  // .contiguous().view(b, num_tokens, d_out)
    auto merged_too = context.reshape<batch, num_tokens, d_out>();        // .reshape(b, num_tokens, d_out)
    // [op_contiguous]
    check::that(shaped::max_abs_diff(merged, q) == 0 && shaped::max_abs_diff(merged_too, q) == 0,
                "contiguous().view and reshape give q back");

    // [op_matmul]
    using num_keys = shaped::key<num_tokens>;                     // the keys' token axis (see Axes and shapes)
    auto kk = kh.rename<batch, num_heads, num_keys, head_dim>();
    auto vk = vh.rename<batch, num_heads, num_keys, head_dim>();
    auto attn_scores = shaped::matmul(qh, kk.transpose<2, 3>());  // qh @ kh.transpose(2, 3)
    auto context_vec = shaped::matmul(attn_scores, vk);           // attn_scores @ vh
    auto W = torch::rand<head_dim, head_dim>();
    auto projected = shaped::matmul(qh, W);                       // qh @ W: W is used for every batch and head
    std::cout << "attn_scores.shape = " << attn_scores.shape << "\n";
    std::cout << "attn_scores = " << attn_scores << "\n";
    std::cout << "context_vec.shape = " << context_vec.shape << ", projected.shape = " << projected.shape << "\n";
    // [op_matmul]
    check::printed(R"out(
// [op_matmul_out]
attn_scores.shape = torch.Size([1, 3, 2, 2])
attn_scores = tensor([[[[1.1003, 0.7338],
          [0.4271, 0.5321]],

         [[0.2048, 1.0390],
          [0.0745, 0.3152]],

         [[0.9539, 0.6726],
          [0.7107, 0.4004]]]])
context_vec.shape = torch.Size([1, 3, 2, 2]), projected.shape = torch.Size([1, 3, 2, 2])
// [op_matmul_out]
)out");
    static_assert(std::is_same_v<decltype(attn_scores), shaped::tensor<float, batch, num_heads, num_tokens, num_keys>>);

    // [op_split]
    auto q_split = q.split<head_dim, -1>();  // q.split(head_dim, dim=-1): a hana::tuple of num_heads tensors
    auto q_0 = hana::at_c<0>(q_split);       // q_split[0]: (batch, num_tokens, head_dim)
    std::cout << "q_split[0] = " << q_0 << "\n";
    // [op_split]
    check::printed(R"out(
// [op_split_out]
q_split[0] = tensor([[[0.4437, 0.9082],
         [0.5938, 0.0244]]])
// [op_split_out]
)out");

    // [op_cat]
    auto q_joined = shaped::cat<-1>(q_split);  // torch.cat(q_split, dim=-1): (batch, num_tokens, d_out)
    std::array<shaped::tensor<float, batch, num_tokens, head_dim>, num_heads::extent> head_list;
    for (auto& h : head_list) h = q_0;           // a list filled in a loop, as with .append()
    auto three_q0 = shaped::cat<-1>(head_list);  // also (batch, num_tokens, d_out)
    std::cout << "three_q0 = " << three_q0 << "\n";
    // [op_cat]
    check::printed(R"out(
// [op_cat_out]
three_q0 = tensor([[[0.4437, 0.9082, 0.4437, 0.9082, 0.4437, 0.9082],
         [0.5938, 0.0244, 0.5938, 0.0244, 0.5938, 0.0244]]])
// [op_cat_out]
)out");
    check::that(shaped::max_abs_diff(q_joined, q) == 0, "cat of the split is q");

    // [op_stack]
    struct versions : shaped::axis<"versions", 2> {};
    auto both = shaped::stack<0, versions>(std::array{keys2, 2.0f * keys2});  // torch.stack((keys2, 2 * keys2))
    auto keys2_1 = keys2.unsqueeze<0>();                                      // keys2.unsqueeze(0), keys2[None]
    std::cout << "both = " << both << "\n";
    std::cout << "keys2_1.shape = " << keys2_1.shape << "\n";
    // [op_stack]
    check::printed(R"out(
// [op_stack_out]
both = tensor([[[0.5733, 0.4665, 0.0207, 0.2905, 0.1585, 0.4341],
         [0.9098, 0.6934, 0.7630, 0.7105, 0.1010, 0.8405]],

        [[1.1467, 0.9331, 0.0415, 0.5811, 0.3169, 0.8681],
         [1.8195, 1.3869, 1.5261, 1.4210, 0.2019, 1.6809]]])
keys2_1.shape = torch.Size([1, 2, 6])
// [op_stack_out]
)out");

    // [op_softmax]
    auto w_last = shaped::softmax<-1>(attn_scores);  // torch.softmax(attn_scores, dim=-1)
    auto w_named = q.softmax<d_out>();               // torch.softmax(q, dim=-1), the axis named
    std::cout << "w_last = " << w_last << "\n";
    // [op_softmax]
    check::printed(R"out(
// [op_softmax_out]
w_last = tensor([[[[0.5906, 0.4094],
          [0.4738, 0.5262]],

         [[0.3028, 0.6972],
          [0.4401, 0.5599]],

         [[0.5699, 0.4301],
          [0.5770, 0.4230]]]])
// [op_softmax_out]
)out");
    check::that(shaped::max_abs_diff(w_named, shaped::softmax<2>(q)) == 0, "softmax<d_out> is softmax<2>");

    // [op_mask]
    auto mask = shaped::triu<1>(shaped::ones<context_length, context_length>());  // torch.triu(torch.ones(c, c), 1)
    auto mask_bool = mask.to<bool>().slice<num_tokens, num_keys>();  // mask.bool()[:num_tokens, :num_tokens]
    auto masked = attn_scores.masked_fill(mask_bool, -std::numeric_limits<float>::infinity());  // -torch.inf
    auto attn_weights = shaped::softmax<-1>(masked / std::sqrt(static_cast<float>(head_dim::extent)));
    std::cout << "mask = " << mask << "\n";
    std::cout << "mask_bool = " << mask_bool << "\n";
    std::cout << "masked = " << masked << "\n";
    std::cout << "attn_weights = " << attn_weights << "\n";
    // [op_mask]
    check::printed(R"out(
// [op_mask_out]
mask = tensor([[0., 1., 1., 1.],
        [0., 0., 1., 1.],
        [0., 0., 0., 1.],
        [0., 0., 0., 0.]])
mask_bool = tensor([[False,  True],
        [False, False]])
masked = tensor([[[[1.1003,   -inf],
          [0.4271, 0.5321]],

         [[0.2048,   -inf],
          [0.0745, 0.3152]],

         [[0.9539,   -inf],
          [0.7107, 0.4004]]]])
attn_weights = tensor([[[[1.0000, 0.0000],
          [0.4814, 0.5186]],

         [[1.0000, 0.0000],
          [0.4575, 0.5425]],

         [[1.0000, 0.0000],
          [0.5546, 0.4454]]]])
// [op_mask_out]
)out");

    // [op_linear]
    torch::manual_seed(1223);
    shaped::nn::linear<d_out, d_out> out_proj;        // out_proj = nn.Linear(d_out, d_out)
    shaped::nn::linear<d_out, d_out> W_query(false);  // W_query = nn.Linear(d_out, d_out, bias=False)
    auto y = out_proj(q);                             // out_proj(q): (batch, num_tokens, d_out)
    std::cout << "out_proj.weight.shape = " << out_proj.weight.shape << "\n";
    std::cout << "out_proj.bias = " << *out_proj.bias << "\n";
    std::cout << "y = " << y << "\n";
    // [op_linear]
    check::printed(R"out(
// [op_linear_out]
out_proj.weight.shape = torch.Size([6, 6])
out_proj.bias = tensor([ 0.0599, -0.0273, -0.3913, -0.1710, -0.2789, -0.0538])
y = tensor([[[ 1.1911, -0.4547, -0.3823, -0.0098, -0.6244,  0.3172],
         [ 0.5123,  0.1059, -0.3571, -0.1079, -0.3521, -0.0336]]])
// [op_linear_out]
)out");
    check::that(!W_query.has_bias(), "bias=False");

    // [op_elementwise]
    auto bias = torch::rand<d_out>();
    auto sum = q + k;               // q + k: the same axes
    auto shifted = q + bias;        // (batch, num_tokens, d_out) + (d_out): bias broadcasts over batch, num_tokens
    auto scaled = 2.0f * q - 1.0f;  // 2 * q - 1
    auto ratio = q / (k + 1.0f);    // q / (k + 1)
    std::cout << "shifted = " << shifted << "\n";
    // [op_elementwise]
    check::printed(R"out(
// [op_elementwise_out]
shifted = tensor([[[0.7548, 1.6805, 0.9595, 0.8220, 0.9403, 1.4865],
         [0.9049, 0.7967, 0.3285, 0.6156, 0.8755, 0.9675]]])
// [op_elementwise_out]
)out");
    check::that(sum(0, 1, 2) == q(0, 1, 2) + k(0, 1, 2) && scaled(0, 0, 0) == 2.0f * q(0, 0, 0) - 1.0f &&
                    ratio(0, 0, 5) == q(0, 0, 5) / (k(0, 0, 5) + 1.0f),
                "elementwise arithmetic");

    // [op_compare]
    auto by_view = qh.transpose<1, 2>().contiguous().view<batch, num_tokens, d_out>();
    std::cout << "torch.allclose(by_view, q) = " << (shaped::allclose(by_view, q) ? "True" : "False") << "\n";
    std::cout << "max |by_view - q| = " << shaped::max_abs_diff(by_view, q) << "\n";  // (by_view - q).abs().max()
    // [op_compare]
    check::printed(R"out(
// [op_compare_out]
torch.allclose(by_view, q) = True
max |by_view - q| = 0
// [op_compare_out]
)out");

    // [op_print]
    std::cout << "q.shape = " << q.shape << "\n";            // print(f"{q.shape = }")
    std::cout << "q.shape[-1] = " << d_out::extent << "\n";  // the extent is part of the axis
    std::cout << "axes: " << q.shape_text() << "\n";         // names and extents
    std::cout << "q.double() = " << q.to<double>() << "\n";  // float64 prints its dtype, as in PyTorch
    // [op_print]
    check::printed(R"out(
// [op_print_out]
q.shape = torch.Size([1, 2, 6])
q.shape[-1] = 6
axes: (batch=1, num_tokens=2, d_out=6)
q.double() = tensor([[[0.4437, 0.9082, 0.8187, 0.4739, 0.8862, 0.9652],
         [0.5938, 0.0244, 0.1877, 0.2675, 0.8214, 0.4462]]],
       dtype=torch.float64)
// [op_print_out]
)out");

    // [op_outside_data]
    std::vector<float> buffer(10, 0.5f);
    try {
        auto t = shaped::tensor<float, batch, num_tokens, d_out>::from_buffer(buffer);  // needs 12 elements
        std::cout << t << "\n";
    } catch (const shaped::shape_error& e) {
        std::cout << e.what() << "\n";
    }
    // [op_outside_data]
    check::printed(R"out(
// [op_outside_data_out]
shaped::tensor::from_buffer: expected 12 elements for (batch=1, num_tokens=2, d_out=6), got 10 elements
// [op_outside_data_out]
)out");
}

void cheat_sheet() {
    check::section("Cheat sheet: the learner's sizes, causal, both forms");
    // [cheat]
    const float inf = std::numeric_limits<float>::infinity();
    const float scale = std::sqrt(static_cast<float>(head_dim::extent));  // head_dim**0.5
    torch::manual_seed(1223);                          // torch.manual_seed(1223)
    shaped::nn::linear<d_out, d_out> out_proj;         // out_proj = nn.Linear(d_out, d_out)
    auto q = torch::rand<batch, num_tokens, d_out>();  // q = torch.rand(batch, num_tokens, d_out)
    auto k = torch::rand<batch, num_tokens, d_out>();
    auto v = torch::rand<batch, num_tokens, d_out>();
    auto mask = shaped::triu<1>(shaped::ones<context_length, context_length>());  // torch.triu(torch.ones(c, c), 1)
    auto mask_bool = mask.to<bool>().slice<num_tokens, num_tokens>();  // mask.bool()[:num_tokens, :num_tokens]

    // The view/transpose form (listing 3.5).
    auto qh = q.view<batch, num_tokens, num_heads, head_dim>().transpose<1, 2>();      // .transpose(1, 2)
    auto kh = k.view<batch, num_tokens, num_heads, head_dim>().permute<0, 2, 1, 3>();  // .permute(0, 2, 1, 3)
    auto vh = v.view<batch, num_tokens, num_heads, head_dim>().transpose<1, 2>();
    auto scores = shaped::matmul(qh, kh.transpose<2, 3>());  // qh @ kh.transpose(2, 3)
    auto weights = shaped::softmax<-1>(scores.masked_fill(mask_bool, -inf) / scale);
    auto context = shaped::matmul(weights, vh).transpose<1, 2>().contiguous();
    auto out = out_proj(context.view<batch, num_tokens, d_out>());

    // The loop over heads: zip(q.split(head_dim, -1), k.split(head_dim, -1), v.split(head_dim, -1)).
    auto heads = hana::zip_with(
        [&](const auto& q_h, const auto& k_h, const auto& v_h) {
            auto s = shaped::matmul(q_h, k_h.template transpose<1, 2>());  // q_h @ k_h.transpose(1, 2)
            return shaped::matmul(shaped::softmax<-1>(s.masked_fill(mask_bool, -inf) / scale), v_h);
        },
        q.split<head_dim, -1>(), k.split<head_dim, -1>(), v.split<head_dim, -1>());
    auto out_loop = out_proj(shaped::cat<-1>(heads));  // out_proj(torch.cat(heads, dim=-1))

    std::cout << "out.shape = " << out.shape << "\n";
    std::cout << "out = " << out << "\n";
    std::cout << "torch.allclose(out, out_loop) = " << (shaped::allclose(out, out_loop) ? "True" : "False") << "\n";
    // [cheat]
    check::printed(R"out(
// [cheat_out]
out.shape = torch.Size([1, 2, 6])
out = tensor([[[ 0.8787, -0.5265, -0.3441, -0.0963, -0.5221,  0.2862],
         [ 0.7969, -0.2077, -0.3204, -0.2118, -0.4681,  0.2206]]])
torch.allclose(out, out_loop) = True
// [cheat_out]
)out");
    // PyTorch's out in full (torch.set_printoptions(precision=8)).
    const shaped::tensor<float, batch, num_tokens, d_out> pytorch{
        {{0.87872690, -0.52647382, -0.34405994, -0.09629922, -0.52208304, 0.28618619},
         {0.79685855, -0.20766167, -0.32039946, -0.21179415, -0.46806625, 0.22062492}}};
    check::that(shaped::max_abs_diff(out, pytorch) <= 1e-6 && shaped::max_abs_diff(out_loop, pytorch) <= 1e-6,
                "both forms equal PyTorch's out to 1e-6");
}

}  // namespace seed

int main() {
    check::real_cout = std::cout.rdbuf(check::captured.rdbuf());
    book::run();
    seed::cheat_sheet();
    seed::axes_and_shapes();
    seed::ops();
    std::cout.rdbuf(check::real_cout);
    std::cout << "\n" << (check::failures == 0 ? "all checks passed" : "some checks failed") << " ("
              << check::failures << " failures)\n";
    return check::failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
