#pragma once
/// \file lp/clp.hpp
/// A linear program solved by COIN-OR CLP (EPL-2.0; Debian coinor-libclp-dev), the LP solver of
/// the optional component gpuplace::lp (CMake option GPUPLACE_WITH_LP, docs/rounds.md). Only the
/// round policies that solve Gavel's LPs (rounds/gavel_lp.hpp) include this header; a program that
/// includes it links gpuplace::lp.
///
/// lp::model: maximize c'x subject to row_lo <= A x <= row_hi and col_lo <= x <= col_hi, built row
/// bounds first, then column by column with the column's non-zeros. After a solve, bounds and
/// objective coefficients may change and solve() starts from the last basis (warm start).

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <ClpSimplex.hpp>
#include <CoinFinite.hpp>

#include "../error.hpp"

namespace gpuplace::lp {

/// What a solve found.
enum class status : std::uint8_t { optimal, infeasible, unbounded, failed };

[[nodiscard]] inline const char* to_string(status s) noexcept {
    switch (s) {
        case status::optimal: return "optimal";
        case status::infeasible: return "infeasible";
        case status::unbounded: return "unbounded";
        default: return "failed";
    }
}

/// The name and version of the solver behind lp::model.
[[nodiscard]] inline std::string solver_name() { return "COIN-OR CLP"; }

class model {
public:
    static constexpr double inf = std::numeric_limits<double>::infinity();

    model() { clp_.setLogLevel(0); }

    /// Adds a row lo <= a'x <= hi; returns its index. Before the first solve.
    int add_row(double lo, double hi) {
        row_lo_.push_back(bound(lo));
        row_hi_.push_back(bound(hi));
        return int(row_lo_.size()) - 1;
    }
    /// Adds a column with objective coefficient `obj`, bounds [lo, hi] and non-zeros (row, value);
    /// returns its index. Before the first solve.
    int add_column(double obj, double lo, double hi, std::span<const std::pair<int, double>> entries) {
        obj_.push_back(obj);
        col_lo_.push_back(bound(lo));
        col_hi_.push_back(bound(hi));
        for (const auto& [r, v] : entries) {
            index_.push_back(r);
            value_.push_back(v);
        }
        start_.push_back(CoinBigIndex(index_.size()));
        return int(obj_.size()) - 1;
    }
    int add_column(double obj, double lo, double hi, std::initializer_list<std::pair<int, double>> entries) {
        return add_column(obj, lo, hi, std::span<const std::pair<int, double>>(entries.begin(), entries.size()));
    }
    [[nodiscard]] int num_rows() const noexcept { return int(row_lo_.size()); }
    [[nodiscard]] int num_columns() const noexcept { return int(obj_.size()); }

    /// Changes, after a solve, an objective coefficient, a column's or a row's bounds.
    void set_objective(int col, double c) { loaded_ ? clp_.setObjectiveCoefficient(col, c) : void(obj_[std::size_t(col)] = c); }
    void set_column_bounds(int col, double lo, double hi) {
        if (loaded_) clp_.setColumnBounds(col, bound(lo), bound(hi));
        else col_lo_[std::size_t(col)] = bound(lo), col_hi_[std::size_t(col)] = bound(hi);
    }
    void set_row_bounds(int row, double lo, double hi) {
        if (loaded_) clp_.setRowBounds(row, bound(lo), bound(hi));
        else row_lo_[std::size_t(row)] = bound(lo), row_hi_[std::size_t(row)] = bound(hi);
    }

    /// Maximises the objective (dual simplex; from the last basis after the first solve).
    status solve() {
        if (!loaded_) {
            clp_.loadProblem(num_columns(), num_rows(), start_.data(), index_.data(), value_.data(), col_lo_.data(), col_hi_.data(),
                             obj_.data(), row_lo_.data(), row_hi_.data());
            clp_.setOptimizationDirection(-1);  // maximise
            loaded_ = true;
        }
        clp_.dual();
        switch (clp_.status()) {
            case 0: return status::optimal;
            case 1: return status::infeasible;
            case 2: return status::unbounded;
            default: return status::failed;
        }
    }

    /// Column j's value and the objective's, after an optimal solve.
    [[nodiscard]] double value(int col) const noexcept { return clp_.primalColumnSolution()[col]; }
    [[nodiscard]] double objective() const noexcept { return clp_.objectiveValue(); }

private:
    static double bound(double v) noexcept {
        if (v == inf) return COIN_DBL_MAX;
        if (v == -inf) return -COIN_DBL_MAX;
        return v;
    }

    std::vector<double> obj_, col_lo_, col_hi_, row_lo_, row_hi_, value_;
    std::vector<CoinBigIndex> start_{0};
    std::vector<int> index_;
    ClpSimplex clp_;
    bool loaded_ = false;
};

}  // namespace gpuplace::lp
