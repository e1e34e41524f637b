#pragma once
/// \file rl/mlp.hpp
/// A multilayer perceptron on Eigen with analytic backpropagation and orthogonal initialisation.
/// Samples are the columns of a matrix (features x batch). Templated on the scalar type: float
/// for training, double for gradient checks.

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <Eigen/Dense>

#include "../detail/rng.hpp"
#include "../error.hpp"

namespace gpuplace::rl {

/// Hidden-layer nonlinearity.
enum class activation : unsigned char { tanh, relu };

[[nodiscard]] inline std::string_view to_string(activation a) noexcept { return a == activation::tanh ? "tanh" : "relu"; }

/// Parses "tanh" or "relu"; throws ConfigError naming `where` otherwise.
[[nodiscard]] inline activation parse_activation(std::string_view s, std::string_view where) {
    if (s == "tanh") return activation::tanh;
    if (s == "relu") return activation::relu;
    throw ConfigError(std::string(where) + ": unknown activation \"" + std::string(s) + "\" (allowed: tanh, relu)");
}

template <std::floating_point S>
using matrix_t = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>;
template <std::floating_point S>
using vector_t = Eigen::Matrix<S, Eigen::Dynamic, 1>;

namespace detail {

/// Applies the activation in place.
template <class M>
void activate(M&& x, activation a) {
    using S = typename std::decay_t<M>::Scalar;
    if (a == activation::tanh) x = x.array().tanh();
    else x = x.array().max(S(0));
}

/// Multiplies `d` (gradient w.r.t. the activation's output) by the derivative, given the output `y`.
template <class D, class Y>
void activation_backward(D&& d, const Y& y, activation a) {
    using S = typename std::decay_t<D>::Scalar;
    if (a == activation::tanh) d.array() *= (S(1) - y.array().square());
    else d.array() *= (y.array() > S(0)).template cast<S>();
}

/// Widest batch for which a layer's forward pass uses `direct_product` even when the layer has
/// fewer rows than a SIMD packet (a rollout step's few envs); wider batches use it when the layer
/// has at least a packet of rows, Eigen's GEMM otherwise; one sample uses Eigen's matrix-vector
/// product.
inline constexpr Eigen::Index direct_batch = 16;

/// Depth of one pass of `direct_product` over its tiles: a weight gradient's depth is the
/// number of samples, thousands in a per_gpu network's minibatch (one column per valid GPU),
/// and panels of 512 (128 KiB for 64 rows of float) stay in the L2 while every tile reads them.
inline constexpr Eigen::Index direct_depth_block = 512;

/// Rows of a SIMD packet of S: layers with at least this many rows take `direct_product` at any
/// batch size.
template <class S>
inline constexpr Eigen::Index packet_rows = Eigen::internal::packet_traits<S>::size;

/// What direct_product() does to a packet of finished outputs (rows i.. of column j) before
/// storing it: nothing.
struct store_as_is {
    template <class P>
    P operator()(const P& x, Eigen::Index, Eigen::Index) const noexcept {
        return x;
    }
};

/// Whether a layer's bias and activation can be applied by direct_product() as it stores each
/// packet (bias_activation) with the same bits as the whole-matrix passes after it: Eigen
/// vectorises the activation for S, and every column is whole packets (rows a multiple of the
/// packet size), so no element takes Eigen's scalar path for the matrix's last few elements.
template <class S>
[[nodiscard]] constexpr bool fuses_activation(Eigen::Index rows, activation a) noexcept {
    namespace ei = Eigen::internal;
    constexpr Eigen::Index ps = ei::packet_traits<S>::size;
    constexpr bool tanh_packets = ei::functor_traits<ei::scalar_tanh_op<S>>::PacketAccess;
    return ps > 1 && rows % ps == 0 && (a == activation::relu || tanh_packets);
}

/// direct_product() epilogue of a layer's forward pass: adds the bias of each row, then applies
/// the activation (when `apply`), as `x.colwise() += b` and activate() would.
template <class S>
struct bias_activation {
    const S* bias;
    activation act;
    bool apply;
    template <class P>
    P operator()(const P& x, Eigen::Index i, Eigen::Index) const {
        namespace ei = Eigen::internal;
        const P y = ei::padd(x, ei::ploadu<P>(bias + i));
        if (!apply) return y;
        if (act == activation::relu) return ei::scalar_max_op<S, S>().packetOp(y, ei::pset1<P>(S(0)));
        if constexpr (ei::functor_traits<ei::scalar_tanh_op<S>>::PacketAccess) {
            return ei::scalar_tanh_op<S>().packetOp(y);
        } else {  // Eigen has no packet tanh for S: lane by lane, as its own passes do
            constexpr Eigen::Index ps = ei::packet_traits<S>::size;
            alignas(64) S t[ps];
            ei::pstoreu(t, y);
            for (auto& v : t) v = ei::scalar_tanh_op<S>()(v);
            return ei::ploadu<P>(t);
        }
    }
};

/// direct_product() epilogue of a layer's input gradient: multiplies by the derivative of the
/// activation that produced `y` (column-major, leading dimension ld), as activation_backward() would.
template <class S>
struct activation_derivative {
    const S* y;
    Eigen::Index ld;
    activation act;
    template <class P>
    P operator()(const P& d, Eigen::Index i, Eigen::Index j) const {
        namespace ei = Eigen::internal;
        const P v = ei::ploadu<P>(y + j * ld + i);
        if (act == activation::tanh) return ei::pmul(d, ei::psub(ei::pset1<P>(S(1)), ei::pmul(v, v)));
        const P one = ei::pset1<P>(S(1)), zero = ei::pset1<P>(S(0));
        return ei::pmul(d, ei::pselect(ei::pcmp_lt(zero, v), one, zero));
    }
};

/// out = A * B (or out += A * B when `accumulate`) without packing either operand. A is
/// column-major (rows x depth, leading dimension rows); B's element (k, j) is
/// b[j * col_stride + k * depth_stride], so B can be a column-major matrix (col_stride = its
/// leading dimension, depth_stride = 1) or the transpose of one (col_stride = 1, depth_stride =
/// the leading dimension of the matrix transposed), which is how a weight gradient dy * x^T
/// reads x where it is. out is column-major (rows x cols).
///
/// Eigen's GEMM copies both operands into packed panels on every call, which for the shapes of
/// PPO's networks (64 rows, depth 425 or 64, 8 to 64 columns) costs 10-20% of the product. Each
/// tile of 2 packets of rows x 4 columns (8 columns with AVX-512's 32 registers) keeps its
/// accumulators in registers while it reads A's columns where they are and broadcasts B's
/// entries. Every output is the sum over k in order (one fused multiply-add per term where the
/// CPU has FMA), so its value does not depend on the tile it is computed in: the last rows are
/// covered by a packet that overlaps the rows before, of which only the new rows are stored, or
/// (one or two rows, a packet of columns or more: a policy head of G + 1 actions) by a lane per
/// column.
/// An epilogue other than store_as_is (applied to each stored packet, e.g. a bias and an
/// activation) needs rows to be a multiple of the packet size.
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-attributes"  // a SIMD type as template argument (PacketBlock), as in Eigen's own headers
#endif
template <class S, class E = store_as_is>
void direct_product(const S* a, Eigen::Index rows, Eigen::Index depth, const S* b, Eigen::Index col_stride,
                    Eigen::Index depth_stride, Eigen::Index cols, S* out, bool accumulate = false,
                    const E& epilogue = {}) {
    namespace ei = Eigen::internal;
    using P = typename ei::packet_traits<S>::type;
    constexpr Eigen::Index ps = ei::packet_traits<S>::size;
    if constexpr (!std::is_same_v<E, store_as_is>) {
        if (ps == 1 || rows % ps != 0)
            throw Error("direct_product: an epilogue needs whole packets of rows (" + std::to_string(rows) + " rows, packets of " +
                        std::to_string(ps) + ")");
    }
    // The depth in blocks (a weight gradient's depth is the number of samples, thousands for a
    // per_gpu network): a block's panels of A and B stay in the L2 while every tile reads them.
    // Between blocks a tile's accumulators wait in `out`: saved and reloaded, they continue the
    // same sums. Adding to `out` keeps its values from before in `before` (a copy when `out`
    // holds partial sums).
    const Eigen::Index blocks = std::max<Eigen::Index>(1, (depth + direct_depth_block - 1) / direct_depth_block);
    std::vector<S> saved;
    if (accumulate && blocks > 1) saved.assign(out, out + rows * cols);
    const S* before = saved.empty() ? nullptr : saved.data();
    const bool add_to_out = accumulate && blocks == 1;  // the tiles add their sums to `out` as they store them
    // The last rows of a layer whose rows are not whole packets (the 65th action of 64 GPUs): a
    // packet tile overlapping the rows before costs as much as two packets of rows, so up to two
    // such rows take a lane per column instead (lane_row), when B can be read as packets of
    // columns and there is at least a packet of them. Either way each output is the same chain
    // of multiply-adds over k in order, from 0.
    const Eigen::Index lane_rows = ps > 1 && rows > ps && rows % ps <= 2 && cols >= ps && (col_stride == 1 || depth_stride == 1)
                                       ? rows % ps
                                       : 0;
    const Eigen::Index tiled_rows = rows - lane_rows;
    // NP packets of rows from row i, NC columns from column j0, depth k0..k1, starting from 0 or
    // (init false) from the sums in `out`; only rows >= i + skip are stored
    auto tile = [&]<int NP, int NC>(Eigen::Index i, Eigen::Index j0, Eigen::Index skip, Eigen::Index k0, Eigen::Index k1,
                                    bool init) {
        P acc[NP][NC];
        for (int p = 0; p < NP; ++p)
            for (int j = 0; j < NC; ++j)
                acc[p][j] = init ? ei::pset1<P>(S(0)) : ei::ploadu<P>(out + (j0 + j) * rows + i + p * ps);
        const S* ak = a + i + k0 * rows;
        const S* bk = b + j0 * col_stride + k0 * depth_stride;
        for (Eigen::Index k = k0; k < k1; ++k, ak += rows, bk += depth_stride) {
            P w[NP];
            for (int p = 0; p < NP; ++p) w[p] = ei::ploadu<P>(ak + p * ps);
            for (int j = 0; j < NC; ++j) {
                const P x = ei::pset1<P>(bk[j * col_stride]);
                for (int p = 0; p < NP; ++p) acc[p][j] = ei::pmadd(w[p], x, acc[p][j]);
            }
        }
        for (int j = 0; j < NC; ++j) {
            S* o = out + (j0 + j) * rows + i;
            if (skip == 0) {
                for (int p = 0; p < NP; ++p)
                    ei::pstoreu(o + p * ps, add_to_out ? ei::padd(ei::ploadu<P>(o + p * ps), acc[p][j]) : acc[p][j]);
            } else {  // NP == 1: the rows before i + skip are another tile's
                alignas(64) S t[ps];
                ei::pstoreu(t, acc[0][j]);
                for (Eigen::Index r = skip; r < ps; ++r) o[r] = add_to_out ? o[r] + t[r] : t[r];
            }
        }
    };
    // the finished sums of columns j0..j1: `out` from before added (after several depth blocks),
    // then the epilogue (kept out of the tiles' loops, whose registers it would crowd)
    auto finish = [&](Eigen::Index j0, Eigen::Index j1) {
        if (!before && std::is_same_v<E, store_as_is>) return;
        for (Eigen::Index j = j0; j < j1; ++j) {
            S* o = out + j * rows;
            const S* o0 = before ? before + j * rows : nullptr;
            Eigen::Index r = 0;
            for (; r + ps <= rows; r += ps) {
                const P v = ei::ploadu<P>(o + r);
                ei::pstoreu(o + r, epilogue(o0 ? ei::padd(ei::ploadu<P>(o0 + r), v) : v, r, j));
            }
            for (; r < tiled_rows; ++r) o[r] = o0[r] + o[r];  // (no epilogue: it needs whole packets; lane_row adds its own)
        }
    };
    // columns per tile: 8 with 32 vector registers (AVX-512: 16 accumulators), else 4 (AVX2's 16
    // registers hold 8 accumulators, the weights and a broadcast)
    constexpr int NC = EIGEN_ARCH_DEFAULT_NUMBER_OF_REGISTERS >= 32 ? 8 : 4;
    // every row tile of NCT columns from j0, one after the other: they share B's columns, read once
    auto row_tiles = [&]<int NCT>(Eigen::Index j0, Eigen::Index k0, Eigen::Index k1, bool init, bool last) {
        Eigen::Index i = 0;
        for (; i + 2 * ps <= rows; i += 2 * ps) tile.template operator()<2, NCT>(i, j0, 0, k0, k1, init);
        if (i + ps <= rows) {
            tile.template operator()<1, NCT>(i, j0, 0, k0, k1, init);
            i += ps;
        }
        // the last rows (e.g. the 65th action): a packet overlapping the rows before
        if (i < tiled_rows) tile.template operator()<1, NCT>(rows - ps, j0, ps - (rows - i), k0, k1, init);
        if (last) finish(j0, j0 + NCT);
    };
    // the value of output `at` when its sum over this block's depths is `sum`: `out` from before
    // added after the last block
    auto finished = [&](Eigen::Index at, S sum, bool last) {
        return last && accumulate ? (before ? before[at] : out[at]) + sum : sum;
    };
    // fewer rows than a packet (e.g. a value head of one row): scalar, 4 columns at a time, from column jb
    auto scalar_rows = [&](Eigen::Index k0, Eigen::Index k1, bool init, bool last, Eigen::Index jb) {
        for (Eigen::Index r = 0; r < rows; ++r)
            for (Eigen::Index j0 = jb; j0 < cols; j0 += 4) {
                const int nc = int(std::min<Eigen::Index>(4, cols - j0));
                S acc[4] = {S(0), S(0), S(0), S(0)};
                if (!init)
                    for (int j = 0; j < nc; ++j) acc[j] = out[(j0 + j) * rows + r];
                for (Eigen::Index k = k0; k < k1; ++k) {
                    const S w = a[k * rows + r];
                    for (int j = 0; j < nc; ++j) acc[j] += w * b[(j0 + j) * col_stride + k * depth_stride];
                }
                for (int j = 0; j < nc; ++j) out[(j0 + j) * rows + r] = finished((j0 + j) * rows + r, acc[j], last);
            }
    };
    // Row r of A times Q packets of B's columns from j0, a lane per column (several packets: independent
    // chains of additions), lanes from first_lane on stored. Each term is fused as in a packet tile
    // (Fused: a layer's last rows, which a tile would otherwise cover) or a multiply then an add as in
    // the scalar loop (a layer of one row). B's rows are read as packets where B is a transpose
    // (col_stride 1), else a square of packets is loaded from B's columns and transposed.
    auto lanes = [&]<bool Fused, int Q>(Eigen::Index r, Eigen::Index j0, Eigen::Index first_lane, Eigen::Index k0,
                                        Eigen::Index k1, bool init, bool last) {
        if constexpr (ps > 1) {
            auto term = [](const P& acc, const P& w, const P& x) {
                if constexpr (Fused) return ei::pmadd(w, x, acc);
                else return ei::padd(acc, ei::pmul(w, x));
            };
            alignas(64) S t[ps];
            P acc[Q];
            for (int q = 0; q < Q; ++q) {
                const Eigen::Index jq = j0 + q * ps;
                if (init) {
                    acc[q] = ei::pset1<P>(S(0));
                } else if (rows == 1) {
                    acc[q] = ei::ploadu<P>(out + jq);
                } else {
                    for (Eigen::Index l = 0; l < ps; ++l) t[l] = out[(jq + l) * rows + r];
                    acc[q] = ei::pload<P>(t);
                }
            }
            if (col_stride == 1) {
                for (Eigen::Index k = k0; k < k1; ++k) {
                    const P w = ei::pset1<P>(a[k * rows + r]);
                    for (int q = 0; q < Q; ++q) acc[q] = term(acc[q], w, ei::ploadu<P>(b + j0 + q * ps + k * depth_stride));
                }
            } else {  // depth_stride 1
                Eigen::Index k = k0;
                for (; k + ps <= k1; k += ps)
                    for (int q = 0; q < Q; ++q) {
                        ei::PacketBlock<P, int(ps)> blk;
                        for (Eigen::Index l = 0; l < ps; ++l) blk.packet[l] = ei::ploadu<P>(b + (j0 + q * ps + l) * col_stride + k);
                        ei::ptranspose(blk);  // packet m: B's row k + m, columns j0 + q ps ...
                        for (Eigen::Index m = 0; m < ps; ++m) acc[q] = term(acc[q], ei::pset1<P>(a[(k + m) * rows + r]), blk.packet[m]);
                    }
                for (int q = 0; q < Q && k < k1; ++q) {  // the last terms
                    if constexpr (Fused) {  // B's row gathered into a packet, one term at a time
                        for (Eigen::Index kk = k; kk < k1; ++kk) {
                            for (Eigen::Index l = 0; l < ps; ++l) t[l] = b[(j0 + q * ps + l) * col_stride + kk];
                            acc[q] = ei::pmadd(ei::pset1<P>(a[kk * rows + r]), ei::pload<P>(t), acc[q]);
                        }
                    } else {  // lane by lane, as the scalar loop
                        ei::pstore(t, acc[q]);
                        for (Eigen::Index l = 0; l < ps; ++l)
                            for (Eigen::Index kk = k; kk < k1; ++kk) t[l] += a[kk * rows + r] * b[(j0 + q * ps + l) * col_stride + kk];
                        acc[q] = ei::pload<P>(t);
                    }
                }
            }
            for (int q = 0; q < Q; ++q) {
                const Eigen::Index jq = j0 + q * ps;
                if (rows == 1 && first_lane == 0) {
                    S* o = out + jq;
                    ei::pstoreu(o, last && accumulate ? ei::padd(ei::ploadu<P>(before ? before + jq : o), acc[q]) : acc[q]);
                } else {
                    ei::pstore(t, acc[q]);
                    for (Eigen::Index l = first_lane; l < ps; ++l) out[(jq + l) * rows + r] = finished((jq + l) * rows + r, t[l], last);
                }
            }
        }
    };
    // one row (a value head, a per-GPU score), unfused; returns the first column left to the scalar loop
    auto one_row = [&](Eigen::Index k0, Eigen::Index k1, bool init, bool last) -> Eigen::Index {
        if (ps == 1 || (col_stride != 1 && depth_stride != 1)) return 0;
        Eigen::Index j0 = 0;
        for (; j0 + 4 * ps <= cols; j0 += 4 * ps) lanes.template operator()<false, 4>(0, j0, 0, k0, k1, init, last);
        for (; j0 + ps <= cols; j0 += ps) lanes.template operator()<false, 1>(0, j0, 0, k0, k1, init, last);
        return j0;
    };
    // a layer's last rows (from tiled_rows), fused; the last packet of columns overlaps the one before
    // when cols is not whole packets, and runs first, while its old lanes' sums in `out` are untouched
    auto lane_row = [&](Eigen::Index r, Eigen::Index k0, Eigen::Index k1, bool init, bool last) {
        if (cols % ps != 0) lanes.template operator()<true, 1>(r, cols - ps, ps - cols % ps, k0, k1, init, last);
        Eigen::Index j0 = 0;
        for (; j0 + 4 * ps <= cols; j0 += 4 * ps) lanes.template operator()<true, 4>(r, j0, 0, k0, k1, init, last);
        for (; j0 + ps <= cols; j0 += ps) lanes.template operator()<true, 1>(r, j0, 0, k0, k1, init, last);
    };
    for (Eigen::Index blk = 0; blk < blocks; ++blk) {
        const Eigen::Index k0 = blk * direct_depth_block, k1 = std::min(depth, k0 + direct_depth_block);
        const bool init = blk == 0, last = blk + 1 == blocks;
        if (rows < ps) {
            scalar_rows(k0, k1, init, last, rows == 1 ? one_row(k0, k1, init, last) : Eigen::Index(0));
            continue;
        }
        Eigen::Index j0 = 0;
        for (; j0 + NC <= cols; j0 += NC) row_tiles.template operator()<NC>(j0, k0, k1, init, last);
        if constexpr (NC == 8) {
            if (j0 + 4 <= cols) {
                row_tiles.template operator()<4>(j0, k0, k1, init, last);
                j0 += 4;
            }
        }
        switch (cols - j0) {
            case 3: row_tiles.template operator()<3>(j0, k0, k1, init, last); break;
            case 2: row_tiles.template operator()<2>(j0, k0, k1, init, last); break;
            case 1: row_tiles.template operator()<1>(j0, k0, k1, init, last); break;
            default: break;
        }
        for (Eigen::Index r = tiled_rows; r < rows; ++r) lane_row(r, k0, k1, init, last);
    }
}

#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

/// direct_product() with B column-major (depth x cols, leading dimension ldb).
template <class S>
void direct_product(const S* a, Eigen::Index rows, Eigen::Index depth, const S* b, Eigen::Index ldb, Eigen::Index cols,
                    S* out) {
    direct_product(a, rows, depth, b, ldb, Eigen::Index(1), cols, out);
}

/// out = x^T, block by block: a square of packets is loaded from x's columns, transposed in
/// registers and stored into out's columns (Eigen's plain transpose copy writes one scalar per
/// cache line it touches, slower here than what it saves later).
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-attributes"  // a SIMD type as template argument, as in Eigen's own headers
#endif
template <class X, class S = typename X::Scalar>
void transpose_into(const X& x, matrix_t<S>& out) {
    static_assert(!X::IsRowMajor, "transpose_into reads column-major matrices");
    namespace ei = Eigen::internal;
    using P = typename ei::packet_traits<S>::type;
    constexpr Eigen::Index ps = ei::packet_traits<S>::size;
    const Eigen::Index rows = x.rows(), cols = x.cols();
    out.resize(cols, rows);
    const Eigen::Index rb = rows - rows % ps, cb = cols - cols % ps;
    for (Eigen::Index j = 0; j < cb; j += ps)
        for (Eigen::Index i = 0; i < rb; i += ps) {
            ei::PacketBlock<P, int(ps)> blk;
            for (Eigen::Index c = 0; c < ps; ++c) blk.packet[c] = ei::ploadu<P>(&x(i, j + c));
            ei::ptranspose(blk);
            for (Eigen::Index c = 0; c < ps; ++c) ei::pstoreu(&out(j, i + c), blk.packet[c]);
        }
    for (Eigen::Index j = 0; j < cols; ++j)  // the edges: the last rows, then the last columns
        for (Eigen::Index i = j < cb ? rb : 0; i < rows; ++i) out(j, i) = x(i, j);
}
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

/// A random (rows x cols) matrix with orthonormal rows or columns, scaled by gain (Saxe et al.).
template <std::floating_point S>
[[nodiscard]] matrix_t<S> orthogonal(std::size_t rows, std::size_t cols, double gain, gpuplace::detail::rng& r) {
    const auto big = std::max(rows, cols), small = std::min(rows, cols);
    Eigen::MatrixXd a(big, small);
    for (Eigen::Index j = 0; j < a.cols(); ++j)
        for (Eigen::Index i = 0; i < a.rows(); ++i) a(i, j) = r.normal();
    Eigen::HouseholderQR<Eigen::MatrixXd> qr(a);
    Eigen::MatrixXd q = qr.householderQ() * Eigen::MatrixXd::Identity(Eigen::Index(big), Eigen::Index(small));
    const Eigen::MatrixXd rr = qr.matrixQR().topLeftCorner(Eigen::Index(small), Eigen::Index(small));
    for (Eigen::Index j = 0; j < q.cols(); ++j)
        if (rr(j, j) < 0) q.col(j) = -q.col(j);  // makes the distribution uniform (Haar)
    Eigen::MatrixXd w = rows >= cols ? q : Eigen::MatrixXd(q.transpose());
    return (w * gain).template cast<S>();
}

}  // namespace detail

/// A fully connected network: sizes = {inputs, hidden..., outputs}. Hidden layers use the
/// activation; the output layer is linear unless `output_activation` is set. Parameters live in
/// one flat vector (layer by layer: W column-major, then b), gradients in another.
template <std::floating_point S>
class basic_mlp {
public:
    using scalar = S;
    using matrix = matrix_t<S>;
    using vector = vector_t<S>;
    using weight_map = Eigen::Map<matrix>;
    using const_weight_map = Eigen::Map<const matrix>;
    using bias_map = Eigen::Map<vector>;
    using const_bias_map = Eigen::Map<const vector>;

    /// Activations kept by forward() for backward(): a[0] = input (unless forward_view() left it
    /// with the caller), a[L] = output.
    struct cache {
        std::vector<matrix> a;
        const matrix* input = nullptr;  ///< forward_view()'s input, which backward() reads (else a[0])
    };

    basic_mlp() = default;

    /// Parameters (weights and biases) of a network with these layer sizes, without building it.
    [[nodiscard]] static std::size_t count_params(const std::vector<std::size_t>& sizes) noexcept {
        std::size_t n = 0;
        for (std::size_t l = 0; l + 1 < sizes.size(); ++l) n += sizes[l] * sizes[l + 1] + sizes[l + 1];
        return n;
    }

    /// A network with zero parameters of the given shape (call init() or set params()).
    basic_mlp(std::vector<std::size_t> sizes, activation act, bool output_activation = false)
        : sizes_(std::move(sizes)), act_(act), out_act_(output_activation) {
        if (sizes_.size() < 2) throw ConfigError("mlp: needs at least an input and an output size");
        for (auto s : sizes_)
            if (s == 0) throw ConfigError("mlp: layer sizes must be >= 1");
        std::size_t n = 0;
        for (std::size_t l = 0; l + 1 < sizes_.size(); ++l) {
            offsets_.push_back(n);
            n += sizes_[l] * sizes_[l + 1] + sizes_[l + 1];
        }
        params_ = vector::Zero(Eigen::Index(n));
        grads_ = vector::Zero(Eigen::Index(n));
    }

    /// Orthogonal weights (gain `hidden_gain` for hidden layers, `output_gain` for the last), zero biases.
    void init(gpuplace::detail::rng& r, double hidden_gain, double output_gain) {
        for (std::size_t l = 0; l < num_layers(); ++l) {
            const double g = l + 1 == num_layers() ? output_gain : hidden_gain;
            W(l) = detail::orthogonal<S>(sizes_[l + 1], sizes_[l], g, r);
            b(l).setZero();
        }
    }

    [[nodiscard]] const std::vector<std::size_t>& sizes() const noexcept { return sizes_; }
    [[nodiscard]] std::size_t num_layers() const noexcept { return sizes_.empty() ? 0 : sizes_.size() - 1; }
    [[nodiscard]] std::size_t inputs() const noexcept { return sizes_.front(); }
    [[nodiscard]] std::size_t outputs() const noexcept { return sizes_.back(); }
    [[nodiscard]] activation hidden_activation() const noexcept { return act_; }
    [[nodiscard]] bool output_activation() const noexcept { return out_act_; }
    [[nodiscard]] std::size_t num_params() const noexcept { return std::size_t(params_.size()); }

    [[nodiscard]] vector& params() noexcept { return params_; }
    [[nodiscard]] const vector& params() const noexcept { return params_; }
    [[nodiscard]] vector& grads() noexcept { return grads_; }
    [[nodiscard]] const vector& grads() const noexcept { return grads_; }
    void zero_grad() { grads_.setZero(); }

    /// Weight matrix (out x in) and bias of layer l, as views into params().
    [[nodiscard]] weight_map W(std::size_t l) { return {params_.data() + offsets_[l], rows(l), cols(l)}; }
    [[nodiscard]] const_weight_map W(std::size_t l) const { return {params_.data() + offsets_[l], rows(l), cols(l)}; }
    [[nodiscard]] bias_map b(std::size_t l) { return {params_.data() + offsets_[l] + wsize(l), rows(l)}; }
    [[nodiscard]] const_bias_map b(std::size_t l) const { return {params_.data() + offsets_[l] + wsize(l), rows(l)}; }

    /// Forward pass of a batch X (inputs x B); the output is c.a.back() (outputs x B).
    template <class X>
    const matrix& forward(const X& x, cache& c) const {
        c.a.resize(sizes_.size());
        c.a[0] = x;
        c.input = nullptr;
        return run(c.a[0], c);
    }

    /// forward() without copying the input: backward() reads x where it is, so x must stay
    /// alive and unchanged until then (a workspace member, not a temporary).
    const matrix& forward_view(const matrix& x, cache& c) const {
        c.a.resize(sizes_.size());
        c.input = &x;
        return run(x, c);
    }
    const matrix& forward_view(matrix&&, cache&) const = delete;

    /// Backward pass: dy = dLoss/dOutput (outputs x B). Adds the parameter gradients to grads(),
    /// or with `accumulate` false writes them there (no zero_grad() needed); writes dLoss/dInput
    /// into *dx when dx is not null.
    void backward(const cache& c, matrix dy, matrix* dx = nullptr, bool accumulate = true) {
        bool derivative_applied = false;  // by the input-gradient product of the layer after
        for (std::size_t l = num_layers(); l-- > 0;) {
            if ((l + 1 < num_layers() || out_act_) && !derivative_applied) detail::activation_backward(dy, c.a[l + 1], act_);
            derivative_applied = false;
            weight_map gW{grads_.data() + offsets_[l], rows(l), cols(l)};
            bias_map gb{grads_.data() + offsets_[l] + wsize(l), rows(l)};
            const matrix& in = l == 0 && c.input ? *c.input : c.a[l];
            if (direct(rows(l), dy.cols()))  // gW += dy * in^T, reading in where it is
                detail::direct_product(dy.data(), rows(l), dy.cols(), in.data(), Eigen::Index(1), in.rows(), cols(l),
                                       gW.data(), accumulate);
            else if (accumulate)
                gW.noalias() += dy * in.transpose();
            else
                gW.noalias() = dy * in.transpose();
            if (accumulate) gb.noalias() += dy.rowwise().sum();
            else gb.noalias() = dy.rowwise().sum();
            if (l > 0 || dx) {  // dLoss/d(layer input) = W^T dy
                matrix prev;
                if (direct(cols(l), dy.cols())) {
                    detail::transpose_into(W(l), wt_);
                    prev.resize(cols(l), dy.cols());
                    // layer l's input is the activation of layer l - 1: its derivative is applied
                    // as each packet is stored
                    if (l > 0 && detail::fuses_activation<S>(cols(l), act_)) {
                        detail::direct_product(wt_.data(), cols(l), rows(l), dy.data(), rows(l), Eigen::Index(1), dy.cols(),
                                               prev.data(), false,
                                               detail::activation_derivative<S>{c.a[l].data(), c.a[l].rows(), act_});
                        derivative_applied = true;
                    } else {
                        detail::direct_product(wt_.data(), cols(l), rows(l), dy.data(), rows(l), dy.cols(), prev.data());
                    }
                } else {
                    prev.noalias() = W(l).transpose() * dy;
                }
                dy = std::move(prev);
            }
        }
        if (dx) *dx = std::move(dy);
    }

private:
    /// Whether a layer of `r` rows takes direct_product() for a batch of `b` samples.
    [[nodiscard]] static bool direct(Eigen::Index r, Eigen::Index b) noexcept {
        return b > 1 && (b <= detail::direct_batch || r >= detail::packet_rows<S>);
    }

    const matrix& run(const matrix& x, cache& c) const {
        for (std::size_t l = 0; l < num_layers(); ++l) {
            const matrix& in = l == 0 ? x : c.a[l];
            const bool act = l + 1 < num_layers() || out_act_;
            if (!direct(rows(l), in.cols())) {
                c.a[l + 1].noalias() = W(l) * in;
            } else {
                c.a[l + 1].resize(rows(l), in.cols());
                if (detail::fuses_activation<S>(rows(l), act_)) {  // bias and activation as each packet is stored
                    detail::direct_product(W(l).data(), rows(l), cols(l), in.data(), in.rows(), Eigen::Index(1),
                                           in.cols(), c.a[l + 1].data(), false,
                                           detail::bias_activation<S>{b(l).data(), act_, act});
                    continue;
                }
                detail::direct_product(W(l).data(), rows(l), cols(l), in.data(), in.rows(), in.cols(),
                                       c.a[l + 1].data());
            }
            c.a[l + 1].colwise() += b(l);
            if (act) detail::activate(c.a[l + 1], act_);
        }
        return c.a.back();
    }

    [[nodiscard]] Eigen::Index rows(std::size_t l) const { return Eigen::Index(sizes_[l + 1]); }
    [[nodiscard]] Eigen::Index cols(std::size_t l) const { return Eigen::Index(sizes_[l]); }
    [[nodiscard]] std::size_t wsize(std::size_t l) const { return sizes_[l] * sizes_[l + 1]; }

    std::vector<std::size_t> sizes_;
    std::vector<std::size_t> offsets_;
    activation act_ = activation::tanh;
    bool out_act_ = false;
    vector params_, grads_;
    matrix wt_;  ///< backward()'s scratch: a weight matrix transposed
};

using mlp = basic_mlp<float>;

}  // namespace gpuplace::rl
