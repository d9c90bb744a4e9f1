#ifndef SHAPED_NN_EMBEDDING_HPP
#define SHAPED_NN_EMBEDDING_HPP

/// \file
/// `nn::embedding<Vocab, Emb>`: a lookup table from integer ids to rows of a weight, as `torch.nn.Embedding`.

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "../bfloat16.hpp"
#include "../diagnostics.hpp"
#include "../tensor.hpp"
#include "../torch/normal.hpp"
#include "parameters.hpp"

namespace shaped::nn {

namespace detail {
[[noreturn, gnu::noinline, gnu::cold]] inline void id_out_of_range(std::int64_t id, std::size_t vocab,
                                                                    const std::string& axis) {
    throw std::out_of_range("shaped::nn::embedding: id " + std::to_string(id) + " is outside the vocabulary of " +
                            std::to_string(vocab) + " (" + axis + "); ids run from 0 to " + std::to_string(vocab - 1));
}
}  // namespace detail

/// A table of `Vocab` rows of `Emb` values; the call replaces each integer id by its row.
///
/// Shapes: `weight` is `(Vocab, Emb)`; the call maps ids `(Axes...)` (integers, `std::int64_t`) to
/// `(Axes..., Emb)`. The ids' axes are positions (`batch`, `num_tokens`), static or run-time.
/// Element type: float rows; the table float (`Weight`'s default) or `bfloat16` (kept in BF16, each row
/// looked up converted to float exactly).
/// Errors: compile time, ids that are not integers (a float tensor: `.to<std::int64_t>()` it if that is what
/// was meant), or that lie along the vocabulary or the embedding axis (the table's own axes: a tensor of
/// scores or of embeddings, not of ids); `Vocab` or `Emb` a run-time axis. Thrown: `std::out_of_range` for
/// an id outside `[0, Vocab)`, naming the id and the vocabulary's size.
/// Source: `torch.nn.Embedding(num_embeddings, embedding_dim)`, whose weight is drawn with `normal_(0, 1)`:
/// the same seed gives the same table (see `torch::normal_`). The book's `tok_emb` and `pos_emb` (chapter 4).
/// Example: `shaped::nn::embedding<vocab_size, emb_dim> tok_emb;  auto x = tok_emb(in_idx);`
template <Axis Vocab, Axis Emb, class Weight = float>
class embedding {
    static_assert(std::is_same_v<Weight, float> || std::is_same_v<Weight, bfloat16>,
                  "shaped::nn::embedding<Vocab, Emb, Weight>: the table holds float or bfloat16");
    static_assert(StaticAxis<Vocab> && StaticAxis<Emb>,
                  "shaped::nn::embedding<Vocab, Emb>: the vocabulary and the embedding are static axes (the table's "
                  "shape is fixed when it is built)");

public:
    /// The vocabulary axis, `num_embeddings`.
    using num_embeddings = Vocab;
    /// The embedding axis, `embedding_dim`.
    using embedding_dim = Emb;

    /// `weight`: `(Vocab, Emb)`.
    tensor<Weight, Vocab, Emb> weight;

    /// Draws the table from `gen` (the default generator unless given): `normal_(0, 1)`; a bfloat16 table
    /// is drawn as a float one and rounded.
    explicit embedding(torch::generator& gen = torch::default_generator()) : weight(uninitialized) {
        if constexpr (std::is_same_v<Weight, float>) {
            torch::normal_(weight, 0.0, 1.0, gen);
        } else {
            tensor<float, Vocab, Emb> drawn(uninitialized);
            torch::normal_(drawn, 0.0, 1.0, gen);
            to_bfloat16(drawn.data(), weight.data(), weight.numel());
        }
    }

    /// Allocates the table without drawing it, for weights that will be loaded.
    explicit embedding(skip_init_t) : weight(uninitialized) {}

    /// Each id's row: ids `(X...)` to `(X..., Emb)`. Throws `std::out_of_range` for an id outside
    /// `[0, Vocab)`.
    template <class Id, class Layout, Axis... X>
    auto operator()(const basic_tensor<Id, Layout, X...>& ids) const {
        static_assert(std::is_integral_v<Id> && !std::is_same_v<Id, bool>,
                      "shaped::nn::embedding(ids): ids are integers (std::int64_t, PyTorch's torch.long); a float "
                      "tensor here is a tensor of values, not of ids");
        constexpr bool positions = !(std::is_same_v<X, Vocab> || ...) && !(std::is_same_v<X, Emb> || ...);
        static_assert(diag::expect<positions, shaped::detail::described<diag::tensor_axes, X...>,
                                   shaped::detail::described<diag::expected_axes, Vocab, Emb>>,
                      "shaped::nn::embedding(ids): the ids lie along the table's own vocabulary or embedding axis; ids "
                      "lie along positions (batch, num_tokens): is this a tensor of scores or of embeddings, or were "
                      "the embedding's axes declared the wrong way round?");
        if constexpr (std::is_integral_v<Id> && !std::is_same_v<Id, bool> && positions) {
            using result_t = tensor<float, X..., Emb>;
            constexpr std::size_t n = sizeof...(X);
            static constexpr auto sources = [] {
                std::array<shaped::detail::axis_source, n + 1> s{};
                for (std::size_t i = 0; i < n; ++i) s[i] = {0, i};
                return s;
            }();
            result_t out(shaped::detail::take_extents<typename result_t::extents_type, sources>(ids.shape),
                         uninitialized);
            const auto& id_elements = ids.storage();  // row-major
            const Weight* table = weight.data();
            float* y = out.data();
            for (std::size_t i = 0; i < ids.numel(); ++i, y += Emb::extent) {
                const auto id = static_cast<std::int64_t>(id_elements.data()[i]);
                if (id < 0 || id >= static_cast<std::int64_t>(Vocab::extent)) [[unlikely]]
                    detail::id_out_of_range(id, Vocab::extent, axis_name<Vocab>());
                if constexpr (std::is_same_v<Weight, float>)
                    std::copy_n(table + static_cast<std::size_t>(id) * Emb::extent, Emb::extent, y);
                else
                    to_float(table + static_cast<std::size_t>(id) * Emb::extent, y, Emb::extent);
            }
            return out;
        } else {
            return diag::failed_shape_check{};
        }
    }

    /// The parameter list, from which nn::for_each_parameter, io::load_state_dict and parameter_count follow,
    /// under PyTorch's `state_dict()` names: `weight`.
    static constexpr auto parameters() {
        return parameter_list(parameter("weight", &embedding::weight));
    }
};

}  // namespace shaped::nn

#endif
