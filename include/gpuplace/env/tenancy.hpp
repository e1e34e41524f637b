#pragma once
/// \file env/tenancy.hpp
/// What the tenant, class and deadline disciplines know of each job (tenancy.hpp), and the parts
/// of their decisions that are not a sort key (env/discipline.hpp calls them):
///  - capacity: a job is within its tenant's quota when, its tenant's active jobs taken in submit
///    order, it fits in what the quota has left after the earlier ones that fit; jobs within quota
///    run first (submit order), then the others borrow what is idle (submit order). When an owner's
///    job arrives, borrowers that no longer fit are suspended and pay the restart.
///  - drf: progressive filling with one resource (GPUs): the tenant with the fewest GPUs held per
///    weight gets its next job (submit order) if it fits, until every job was offered.
///  - themis: the job with the worst estimated finish-time fairness first: rho = (now - submit +
///    remaining) / (estimate x max(1, GPUs x N / cluster GPUs)), N the active jobs (Themis' rho,
///    metrics.hpp, per job).
///  - edf: the earliest absolute deadline first (none: last). edf_ac: at its arrival a job is
///    admitted when now + its duration estimate <= its deadline; jobs not admitted run behind every
///    admitted one (best effort, EDF among them) and count as missed.
///  - spot: every guaranteed job before every spot job, under any preemptive discipline.
/// Duration estimates respect the information setting: the shown duration, or with durations
/// hidden the sampled jobs' mean GPU-seconds over the job's GPUs.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "../config.hpp"
#include "../error.hpp"
#include "../group_metrics.hpp"
#include "../job.hpp"
#include "../job_fields.hpp"
#include "../detail/rng.hpp"

namespace gpuplace::env_detail {

class tenancy {
public:
    static constexpr double none = std::numeric_limits<double>::infinity();

    /// Resolves the scenario's tenants, spot and deadlines against the declared fields and the
    /// workload's categories (ConfigErrors naming the key and the value); off: nothing.
    void init(const scenario& s, const field_dictionary& dict, std::size_t num_gpus) {
        const auto& t = s.tenants;
        const auto& sp = s.spot;
        const auto& d = s.deadlines;
        order_ = s.env.order;
        on_ = t.enabled || sp.enabled || d.enabled || (order_ >= queue_order::capacity && order_ <= queue_order::edf_ac);
        const bool needs_t = order_ == queue_order::capacity || order_ == queue_order::drf;
        const bool needs_d = order_ == queue_order::edf || order_ == queue_order::edf_ac;
        const std::string q(to_string(order_));
        if (needs_t && !t.enabled) throw ConfigError("config /env/queue_policy: \"" + q + "\" needs tenants (/tenants/enabled)");
        if (needs_d && !d.enabled) throw ConfigError("config /env/queue_policy: \"" + q + "\" needs deadlines (/deadlines/enabled)");
        if (!on_) return;
        num_gpus_ = double(num_gpus);
        const auto field = [&](bool on, const std::string& name, const char* path, field_type type) -> std::size_t {
            if (!on) return npos;
            const auto f = field_index(s.job_fields, name);
            if (f == npos) throw ConfigError("config " + std::string(path) + ": job field \"" + name + "\" is not declared (add it to /job_fields)");
            if (s.job_fields[f].type != type)
                throw ConfigError("config " + std::string(path) + ": job field \"" + name + "\" must be a " +
                                  (type == field_type::category ? "category" : "number"));
            return f;
        };
        tf_ = field(t.enabled, t.field, "/tenants/field", field_type::category);
        sf_ = field(sp.enabled, sp.field, "/spot/field", field_type::category);
        df_ = field(d.enabled, d.field, "/deadlines/field", field_type::number);
        lo_ = d.factor_lo;
        hi_ = d.factor_hi;
        if (tf_ != npos) {
            const auto& cats = dict.categories(tf_);
            num_tenants_ = cats.size();
            quota_.assign(num_tenants_ + 1, 0.0);  // the last: jobs without a tenant
            weight_.assign(num_tenants_ + 1, 0.0);
            const auto find = [&](const std::string& name, const std::string& path) {
                const auto it = std::find(cats.begin(), cats.end(), name);
                if (it == cats.end()) throw ConfigError("config " + path + ": no tenant \"" + name + "\" among the categories of field \"" + t.field + "\"");
                return std::size_t(it - cats.begin());
            };
            for (const auto& [name, v] : t.quotas) quota_[find(name, "/tenants/quotas/" + name)] = t.share ? v * num_gpus_ : v;
            for (std::size_t i = 0; i <= num_tenants_; ++i) weight_[i] = quota_[i] > 0 ? quota_[i] : 1.0;
            for (const auto& [name, v] : t.weights) weight_[find(name, "/tenants/weights/" + name)] = v;
        }
        if (sf_ != npos) {
            const auto& cats = dict.categories(sf_);
            const auto it = std::find(cats.begin(), cats.end(), sp.value);
            spot_value_ = it == cats.end() ? -1.0 : double(it - cats.begin());  // a value no job has: no spot jobs
        }
    }
    [[nodiscard]] bool on() const noexcept { return on_; }
    [[nodiscard]] bool tenants() const noexcept { return tf_ != npos; }
    [[nodiscard]] bool spot_on() const noexcept { return sf_ != npos; }
    [[nodiscard]] bool deadlines() const noexcept { return df_ != npos; }

    /// Reads jobs `from` onwards of an episode: their tenant, class and deadline from the fields
    /// (`fields`: jobs x width), a deadline drawn where none is given, and each job's duration
    /// estimate `estimate(j)`. Allocates only for more jobs than before.
    template <class Sim, class Estimate>
    void reset(const Sim& sim, std::span<const double> fields, std::size_t width, std::uint32_t from, std::uint64_t seed, Estimate&& estimate) {
        const std::size_t n = sim.jobs().size();
        tenant_.resize(n);
        spot_.resize(n);
        deadline_.resize(n);
        admitted_.resize(n);
        est_.resize(n);
        out_.reserve(n);
        const std::size_t T = num_tenants_ + 1;
        used_.assign(T, 0.0);
        held_.resize(T);
        demand_.resize(T);
        share_.resize(T);
        below_.resize(T);
        below_flag_.resize(T);
        cur_.assign(T, 0);
        end_.assign(T, 0);
        if (from == 0) {  // a new episode (else a future forked: the arrived jobs' counts stay)
            std::fill(held_.begin(), held_.end(), 0.0);
            std::fill(demand_.begin(), demand_.end(), 0.0);
            std::fill(below_.begin(), below_.end(), 0.0);
            std::fill(below_flag_.begin(), below_flag_.end(), 0);
            last_ = sim.now();
        }
        detail::rng r(detail::mix_seed(seed, 0x646561646c696e65ULL));  // "deadline"
        for (std::uint32_t j = 0; j < n; ++j) {
            const double u = r.uniform();  // one draw per job, whatever `from` is: job j's factor is the same
            if (j < from) continue;
            const auto v = [&](std::size_t f) { return fields[std::size_t(j) * width + f]; };
            const double tv = tf_ != npos ? v(tf_) : std::nan("");
            tenant_[j] = tv == tv && tv >= 0 && tv < double(num_tenants_) ? std::uint32_t(tv) : std::uint32_t(num_tenants_);
            spot_[j] = sf_ != npos && v(sf_) == spot_value_;
            deadline_[j] = none;
            if (df_ != npos) {
                const double dv = v(df_), submit = double(sim.job(j).submit_time);
                deadline_[j] = dv == dv ? submit + dv : submit + (lo_ + (hi_ - lo_) * u) * sim.ideal_duration(j);
            }
            admitted_[j] = 1;
            est_[j] = estimate(j);
        }
    }

    [[nodiscard]] std::uint32_t tenant(std::uint32_t j) const noexcept { return tenant_[j]; }
    [[nodiscard]] bool spot(std::uint32_t j) const noexcept { return spot_[j] != 0; }
    [[nodiscard]] double deadline(std::uint32_t j) const noexcept { return deadline_[j]; }
    /// The declared field the deadlines come from (its column in the episode's fields), or npos.
    [[nodiscard]] std::size_t deadline_column() const noexcept { return df_; }
    [[nodiscard]] bool admitted(std::uint32_t j) const noexcept { return admitted_[j] != 0; }
    [[nodiscard]] double estimate(std::uint32_t j) const noexcept { return est_[j]; }
    [[nodiscard]] std::size_t num_tenants() const noexcept { return num_tenants_; }
    [[nodiscard]] double quota(std::size_t t) const noexcept { return quota_[t]; }
    /// Seconds tenant t spent with demand below its guarantee, to the last event.
    [[nodiscard]] double below(std::size_t t) const noexcept { return below_[t]; }

    /// edf_ac: job j arrives at `now`; admitted when it can still meet its deadline.
    void arrived(std::uint32_t j, double now) noexcept {
        if (order_ == queue_order::edf_ac) admitted_[j] = now + est_[j] <= deadline_[j];
    }

    /// capacity: a decision's count of each tenant's GPUs within quota starts at none; then
    /// within_quota(j, k) for the active jobs in id order (which is submit order) says whether job j
    /// of k GPUs fits in its tenant's quota after the earlier jobs within it.
    void clear_quota_use() noexcept { std::fill(used_.begin(), used_.end(), 0.0); }
    [[nodiscard]] bool within_quota(std::uint32_t j, double k) noexcept {
        const auto t = tenant_[j];
        const bool in = used_[t] + k <= quota_[t];
        if (in) used_[t] += k;
        return in;
    }

    /// themis: job j's estimated finish-time fairness at `now` among `active` jobs.
    template <class Sim>
    [[nodiscard]] double rho(const Sim& sim, std::uint32_t j, double now, std::size_t active) const noexcept {
        const double k = sim.job(j).num_gpus, e = std::max(est_[j], 1.0);
        const double left = std::max(0.0, e - sim.attained(j) / k);
        return (now - double(sim.job(j).submit_time) + left) / (e * std::max(1.0, k * double(active) / num_gpus_));
    }

    /// drf: reorders `all` (sorted by class, tenant, submit) by progressive filling over `free`
    /// GPUs; `fixed(j)`: a running job that keeps its GPUs whatever the order (already counted
    /// out of `free`).
    template <class Sim, class Fixed>
    void fill(const Sim& sim, std::vector<std::uint32_t>& all, std::size_t free, Fixed&& fixed) {
        std::fill(share_.begin(), share_.end(), 0.0);
        for (auto j : all)
            if (fixed(j)) share_[tenant_[j]] += sim.job(j).num_gpus;
        out_.clear();
        for (std::size_t s = 0; s < all.size();) {  // each class in turn (guaranteed, then spot)
            std::size_t e = s;
            while (e < all.size() && spot_[all[e]] == spot_[all[s]]) ++e;
            std::fill(cur_.begin(), cur_.end(), 0);
            std::fill(end_.begin(), end_.end(), 0);
            for (std::size_t i = e; i-- > s;) cur_[tenant_[all[i]]] = i;
            for (std::size_t i = s; i < e; ++i) end_[tenant_[all[i]]] = i + 1;
            for (std::size_t left = e - s; left > 0; --left) {
                std::size_t best = npos;
                for (std::size_t t = 0; t < cur_.size(); ++t)
                    if (cur_[t] < end_[t] && (best == npos || share_[t] * weight_[best] < share_[best] * weight_[t])) best = t;
                const auto j = all[cur_[best]++];
                out_.push_back(j);
                const std::size_t k = sim.job(j).num_gpus;
                if (fixed(j) || k > free) continue;
                free -= k;
                share_[best] += double(k);
            }
            s = e;
        }
        all.swap(out_);
    }

    /// Tenants: each tenant's demand (the GPUs of its arrived, unfinished jobs) and holding (those
    /// of its running ones), kept as jobs arrive, start, stop (suspended or failed) and finish,
    /// O(1) each. The counts are whole numbers of GPUs, exact in any order of the sums.
    void job_arrived(std::uint32_t j, double k) noexcept { demand_[tenant_[j]] += k; }
    void job_started(std::uint32_t j, double k) noexcept { held_[tenant_[j]] += k; }
    void job_stopped(std::uint32_t j, double k) noexcept { held_[tenant_[j]] -= k; }
    void job_finished(std::uint32_t j, double k) noexcept {
        held_[tenant_[j]] -= k;
        demand_[tenant_[j]] -= k;
    }

    /// Tenants: before time moves from `now`, counts the time since the last call for each tenant
    /// that was below its guarantee, then whether each is below it now (holds fewer GPUs than the
    /// least of its quota and its demand). O(tenants).
    void account(double now) noexcept {
        if (tf_ == npos) return;
        for (std::size_t t = 0; t < below_.size(); ++t) {
            if (below_flag_[t]) below_[t] += now - last_;
            below_flag_[t] = held_[t] < std::min(quota_[t], demand_[t]);
        }
        last_ = now;
    }

    /// The group metrics of the finished jobs `done` on a cluster of `num_gpus` GPUs.
    template <class Record>
    [[nodiscard]] group_metrics compute(std::span<const Record> done, std::size_t num_gpus) const;

private:
    static constexpr std::size_t npos = std::string::npos;
    bool on_ = false;
    queue_order order_ = queue_order::fifo;
    std::size_t tf_ = npos, sf_ = npos, df_ = npos;  ///< the fields read (npos: the feature is off)
    std::size_t num_tenants_ = 0;
    double num_gpus_ = 1, lo_ = 0.5, hi_ = 1.5, spot_value_ = -1;
    std::vector<double> quota_, weight_;             ///< per tenant (the last: none)
    std::vector<std::uint32_t> tenant_;              ///< per job
    std::vector<std::uint8_t> spot_, admitted_;
    std::vector<double> deadline_, est_;             ///< per job: absolute deadline (inf: none), duration estimate
    std::vector<double> used_, held_, demand_, below_;
    std::vector<double> share_;  ///< drf fill(): the GPUs each tenant is given so far
    std::vector<std::uint8_t> below_flag_;
    std::vector<std::size_t> cur_, end_;
    std::vector<std::uint32_t> out_;
    double last_ = 0;
};

template <class Record>
group_metrics tenancy::compute(std::span<const Record> done, std::size_t num_gpus) const {
    group_metrics g;
    g.tenants = tf_ != npos;
    g.spot = sf_ != npos;
    g.deadlines = df_ != npos;
    if (g.tenants) {
        g.num_tenants = num_tenants_;
        std::vector<double> jct(num_tenants_ + 1, 0.0), sd(num_tenants_ + 1, 0.0), rho(num_tenants_ + 1, 0.0), cnt(num_tenants_ + 1, 0.0);
        for (const auto& r : done) {
            const auto t = tenant_[r.id];
            jct[t] += r.jct();
            sd[t] += r.ideal_duration > 0 ? r.jct() / r.ideal_duration : 1.0;
            rho[t] += r.finish_time_fairness(num_gpus);
            cnt[t] += 1;
        }
        std::vector<double> x;
        for (std::size_t t = 0; t <= num_tenants_; ++t) {
            g.below_guarantee_hours += below_[t] / 3600.0;
            if (cnt[t] == 0) continue;
            x.push_back(sd[t] / cnt[t]);
            g.worst_tenant_rho = std::max(g.worst_tenant_rho, rho[t] / cnt[t]);
            if (t < max_metric_tenants && t < num_tenants_) {
                g.tenant_jobs[t] = std::size_t(cnt[t]);
                g.tenant_jct[t] = jct[t] / cnt[t];
                g.tenant_slowdown[t] = sd[t] / cnt[t];
            }
        }
        for (std::size_t t = 0; t < std::min(num_tenants_, max_metric_tenants); ++t) g.tenant_below[t] = below_[t];
        g.jain_index = jain_index(x.data(), x.size());
    }
    if (g.spot) {
        double n[2] = {0, 0}, jct[2] = {0, 0}, q[2] = {0, 0}, ev = 0;
        for (const auto& r : done) {
            const int c = spot_[r.id] ? 1 : 0;
            n[c] += 1;
            jct[c] += r.jct();
            q[c] += r.queueing_delay();
            if (c) ev += r.preemptions;
        }
        g.spot_jobs = std::size_t(n[1]);
        if (n[0] > 0) g.guaranteed_jct = jct[0] / n[0], g.guaranteed_delay = q[0] / n[0];
        if (n[1] > 0) g.spot_jct = jct[1] / n[1], g.spot_delay = q[1] / n[1], g.spot_evictions = ev / n[1];
    }
    if (g.deadlines) {
        double with = 0, met = 0, late = 0;
        for (const auto& r : done) {
            const double d = deadline_[r.id];
            if (!admitted_[r.id]) ++g.not_admitted;
            if (d == none) continue;
            ++with;
            if (r.end <= d && admitted_[r.id]) ++met;
            else late += std::max(0.0, r.end - d);
        }
        if (with > 0) g.deadlines_met = met / with;
        if (with > met) g.avg_lateness = late / (with - met);
    }
    return g;
}

}  // namespace gpuplace::env_detail
