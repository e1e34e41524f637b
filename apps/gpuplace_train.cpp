// gpuplace-train: trains the reference PPO on a scenario, then (with --compare) evaluates it
// against every heuristic on held-out seeds, prints the table and writes plots.
//   gpuplace-train [--config FILE] [--scenario default|proximity_drl|colocation|FILE] [--steps N] [--seed N]
//                  [--restarts N] [--threads N] [--out DIR] [--compare] [--seeds N] [--load CHECKPOINT]
//                  [--no-plot] [--print-config]
// --restarts N trains seeds seed..seed+N-1 (in parallel, one per core) and keeps the network with the
// best validation JCT; each run's log is DIR/seed_K/learning.csv, DIR/restarts.csv sums them up.
// Writes DIR/learning.csv (one row per iteration), DIR/ppo.json (checkpoint), and with --compare
// DIR/compare.csv, DIR/compare.json, DIR/learning_curve.png and DIR/jct_comparison.png.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gpuplace/gpuplace.hpp>
#include <gpuplace/rl/rl.hpp>

namespace {
using namespace gpuplace;
using json = nlohmann::json;

/// The embedded default training config. "scenario" is evaluated as given; an optional
/// "train_reward" overrides the reward weights used for training only (e.g. {"comm": 2.0}: a
/// comm-cost penalty at each placement, an immediate signal for what the JCT reward only shows
/// hours of simulated time later; the default trains on the JCT reward alone).
/// Training first clones the pack heuristic (400k env steps), fits the value head for 10
/// iterations, then runs PPO for 600k env steps (docs/ppo.md). gamma is 1: DEFER takes no simulated
/// time, so with a per-step discount every DEFER would postpone the time penalty and look good.
/// Whether PPO finds DEFER depends on the run (about one training seed in three), so 8 restarts
/// (training seeds 1-8, one per core at a time) are trained and the one with the best validation
/// JCT is kept.
constexpr const char* default_config = R"({
  "scenario": "default",
  "restarts": 8,
  "validation_seeds": 16,
  "validate_every": 5,
  "ppo": {
    "total_steps": 600000, "num_envs": 16, "num_steps": 128, "epochs": 4, "minibatches": 4,
    "teacher": "pack", "imitation_steps": 400000, "imitation_learning_rate": 0.001, "value_warmup": 10,
    "learning_rate": 0.0003, "anneal_lr": true, "gamma": 1.0, "gae_lambda": 0.95,
    "clip": 0.1, "clip_value": false, "vf_coef": 0.5, "ent_coef": 0.0, "max_grad_norm": 0.5,
    "normalize_advantages": true, "normalize_rewards": true, "seed": 1, "threads": 1,
    "network": {"architecture": "per_gpu", "hidden": [64, 64], "value_hidden": [64, 64],
                "activation": "tanh", "normalize_obs": false, "node_features": true}
  }
})";

int usage() {
    std::fprintf(stderr,
                 "usage: gpuplace-train [--config FILE] [--scenario default|proximity_drl|colocation|FILE] [--steps N] [--seed N]\n"
                 "                      [--restarts N] [--threads N] [--out DIR] [--compare] [--seeds N] [--load CHECKPOINT]\n"
                 "                      [--no-plot] [--print-config]\n");
    return 2;
}

std::string read_file(const std::string& f) {
    std::ifstream in(f);
    if (!in) throw ConfigError("cannot open config file \"" + f + "\"");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

scenario load_scenario(const json& j) {
    if (j.is_string()) {
        const auto n = j.get<std::string>();
        for (const auto& p : preset_names())
            if (n == p) return preset_scenario(n);
        return scenario::load(n);
    }
    return scenario::from_json(j);
}

std::string hms(double s) {
    char b[32];
    const long t = long(std::max(0.0, s));
    std::snprintf(b, sizeof b, "%ld:%02ld:%02ld", t / 3600, (t / 60) % 60, t % 60);
    return b;
}

struct options {
    json cfg;
    std::string out = "out/train";
    bool compare = false, plot = true;
    std::size_t seeds = 20;
    std::string load;
    std::size_t restarts = 1, parallel = 1;  ///< training runs (seeds seed..seed+restarts-1), how many at once
};

/// Greedy evaluation of a network on the given seeds: mean JCT (s) and mean comm cost.
template <class E>
std::pair<double, double> validate(const scenario& s, const std::shared_ptr<const rl::actor_critic>& net,
                                   const std::vector<std::uint64_t>& seeds) {
    const auto rep = evaluate<E>(s, {rl::as_policy<E>("ppo", net)}, seeds, 1);
    return {rep.policies[0].get("avg_jct").mean, rep.policies[0].get("avg_comm_cost").mean};
}

/// What one training run keeps.
struct run_result {
    double best_val = 1e300;  ///< best greedy validation JCT (s)
    std::shared_ptr<rl::actor_critic> net;
    std::size_t env_steps = 0;
    double seconds = 0;
};

/// One training run: its learning log in dir/learning.csv, progress lines prefixed by tag; the
/// first run (announce) also prints what is trained.
template <class E>
run_result train_one(const scenario& train_s, const scenario& eval_s, const rl::ppo_config& pc,
                     const std::vector<std::uint64_t>& vseeds, std::size_t every, const std::string& dir,
                     const std::string& tag, bool announce) {
    const std::size_t nval = vseeds.size();
    rl::basic_ppo<E> ppo(train_s, pc);
    if (announce) {
        std::printf("training PPO on scenario %s: %zu parameters, %zu env steps (%zu iterations of %zu x %zu)\n",
                    eval_s.name.c_str(), ppo.network().num_params(), pc.total_steps, ppo.ppo_iterations(), pc.num_envs,
                    pc.num_steps);
        if (ppo.imitation_iterations() > 0)
            std::printf("first cloning %s: %zu env steps of its rollouts (%zu iterations), then %zu value-only iterations\n",
                        pc.teacher.c_str(), pc.imitation_steps, ppo.imitation_iterations(), pc.value_warmup);
    }
    std::ofstream log(dir + "/learning.csv");
    log << "iteration,env_steps,seconds,steps_per_sec,episodes,mean_return,mean_jct,mean_comm_cost,val_jct,val_comm_cost,"
           "policy_loss,value_loss,entropy,approx_kl,clip_frac,explained_variance,learning_rate,phase,teacher_agreement\n";
    const auto t0 = std::chrono::steady_clock::now();
    double best = 1e300;
    rl::actor_critic best_net = ppo.network();
    while (!ppo.done()) {
        const auto st = ppo.iterate();
        const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const double sps = double(st.env_steps) / el;
        double vj = NAN, vc = NAN;
        if (nval > 0 && (st.iteration % every == 0 || ppo.done())) {
            auto cur = std::make_shared<const rl::actor_critic>(ppo.network());
            std::tie(vj, vc) = validate<E>(eval_s, cur, vseeds);
            if (vj < best) {
                best = vj;
                best_net = ppo.network();
            }
        }
        char line[512];
        std::snprintf(line, sizeof line, "%zu,%zu,%.3f,%.1f,%zu,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%s,%.4g\n",
                      st.iteration, st.env_steps, el, sps, st.episodes, st.mean_return, st.mean_jct, st.mean_comm_cost,
                      vj, vc, st.policy_loss, st.value_loss, st.entropy, st.approx_kl, st.clip_frac,
                      st.explained_variance, st.learning_rate, st.imitation ? "imitation" : "ppo", st.teacher_agreement);
        log << line << std::flush;
        if (!std::isnan(vj) || ppo.done()) {
            const double eta = el / double(st.iteration) * double(ppo.total_iterations() - st.iteration);
            if (st.imitation)
                std::printf("%s[%s] it %4zu/%zu  steps %8zu  %6.0f steps/s  imitating %s: cross-entropy %.3f, agreement %.3f  "
                            "val JCT %.3f h  ETA %s\n",
                            tag.c_str(), hms(el).c_str(), st.iteration, ppo.total_iterations(), st.env_steps, sps, pc.teacher.c_str(),
                            st.policy_loss, st.teacher_agreement, vj / 3600, hms(eta).c_str());
            else
                std::printf("%s[%s] it %4zu/%zu  steps %8zu  %6.0f steps/s  return %8.2f  JCT %.3f h  val JCT %.3f h  "
                            "entropy %.3f  ETA %s\n",
                            tag.c_str(), hms(el).c_str(), st.iteration, ppo.total_iterations(), st.env_steps, sps, st.mean_return,
                            st.mean_jct / 3600, vj / 3600, st.entropy, hms(eta).c_str());
            std::fflush(stdout);
        }
    }
    if (nval == 0) best_net = ppo.network();  // nothing to select on: the last network
    run_result r;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.best_val = best;
    r.env_steps = ppo.env_steps();
    r.net = std::make_shared<rl::actor_critic>(std::move(best_net));
    return r;
}

template <class E>
int run(const options& o, const scenario& eval_s) {
    namespace fs = std::filesystem;
    fs::create_directories(o.out);
    const auto pc = rl::ppo_config::from_json(o.cfg.value("ppo", json::object()), "/ppo");
    std::shared_ptr<const rl::actor_critic> net;
    double train_secs = 0;
    if (!o.load.empty()) {
        auto ck = rl::load_checkpoint(o.load);
        net = std::make_shared<const rl::actor_critic>(std::move(ck.network));
        std::printf("loaded %s\n", o.load.c_str());
    } else {
        auto train_s = eval_s;
        if (o.cfg.contains("train_reward")) {
            auto j = train_s.to_json();
            j["reward"].merge_patch(o.cfg["train_reward"]);
            train_s = scenario::from_json(j);
        }
        const std::size_t nval = o.cfg.value("validation_seeds", 8);
        const std::size_t every = std::max<std::size_t>(1, o.cfg.value("validate_every", 10));
        std::vector<std::uint64_t> vseeds;
        for (std::size_t i = 0; i < nval; ++i) vseeds.push_back(2'000'000 + i);  // disjoint from held_out_seeds
        if (nval > 0) {  // the yardstick: every heuristic on the validation seeds
            std::vector<any_policy<E>> hs;
            for (const auto& n : heuristic_names()) hs.push_back(heuristic<E>(n));
            const auto rep = evaluate<E>(eval_s, hs, vseeds, 1);
            std::printf("validation seeds (%zu), mean JCT of the heuristics:", nval);
            std::ofstream vh(o.out + "/validation_heuristics.csv");
            vh << "policy,avg_jct\n";
            for (const auto& p : rep.policies) {
                std::printf("  %s %.3f h", p.policy.c_str(), p.get("avg_jct").mean / 3600);
                vh << p.policy << "," << p.get("avg_jct").mean << "\n";
            }
            std::printf("\n");
        }
        // Restarts: training seeds seed, seed+1, ...; runs in parallel (one thread each, up to the
        // cores); the network with the best validation JCT over all of them is kept.
        const std::size_t R = o.restarts;
        std::vector<run_result> res(R);
        std::vector<std::exception_ptr> errs(R);
        const auto t0 = std::chrono::steady_clock::now();
        if (R > 1)
            std::printf("%zu restarts (training seeds %llu..%llu), %zu at a time; the best on validation is kept\n", R,
                        static_cast<unsigned long long>(pc.seed), static_cast<unsigned long long>(pc.seed + R - 1), o.parallel);
        auto one = [&](std::size_t r) {
            try {
                auto c = pc;
                c.seed = pc.seed + r;
                const std::string dir = R > 1 ? o.out + "/seed_" + std::to_string(c.seed) : o.out;
                fs::create_directories(dir);
                const std::string tag = R > 1 ? "seed " + std::to_string(c.seed) + " " : "";
                res[r] = train_one<E>(train_s, eval_s, c, vseeds, every, dir, tag, r == 0);
            } catch (...) {
                errs[r] = std::current_exception();
            }
        };
        for (std::size_t r0 = 0; r0 < R; r0 += o.parallel) {
            std::vector<std::thread> ts;
            for (std::size_t r = r0; r < std::min(R, r0 + o.parallel); ++r) ts.emplace_back(one, r);
            for (auto& t : ts) t.join();
        }
        for (auto& e : errs)
            if (e) std::rethrow_exception(e);
        train_secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::size_t win = 0, steps = 0;
        for (std::size_t r = 0; r < R; ++r) {
            steps += res[r].env_steps;
            if (res[r].best_val < res[win].best_val) win = r;
        }
        if (R > 1) {
            std::ofstream rs(o.out + "/restarts.csv");
            rs << "seed,best_val_jct,env_steps,seconds\n";
            for (std::size_t r = 0; r < R; ++r) {
                rs << pc.seed + r << "," << res[r].best_val << "," << res[r].env_steps << "," << res[r].seconds << "\n";
                std::printf("seed %llu: best validation JCT %.3f h (%s)%s\n", static_cast<unsigned long long>(pc.seed + r),
                            res[r].best_val / 3600, hms(res[r].seconds).c_str(), r == win ? "  <- kept" : "");
            }
            // the kept run's learning log is the one plotted
            fs::copy_file(o.out + "/seed_" + std::to_string(pc.seed + win) + "/learning.csv", o.out + "/learning.csv",
                          fs::copy_options::overwrite_existing);
        }
        std::printf("trained in %s (%.0f env steps/s over %zu run(s)); best validation JCT %.3f h\n", hms(train_secs).c_str(),
                    double(steps) / train_secs, R, res[win].best_val / 3600);
        auto c = pc;
        c.seed = pc.seed + win;
        rl::save_checkpoint(o.out + "/ppo.json", *res[win].net, c, eval_s);
        std::printf("checkpoint %s/ppo.json (the network with the best validation JCT)\n", o.out.c_str());
        net = res[win].net;
    }
    if (!o.compare) return 0;
    std::vector<any_policy<E>> ps{rl::as_policy<E>("ppo", net)};
    for (const auto& n : heuristic_names()) ps.push_back(heuristic<E>(n));
    const auto rep = evaluate<E>(eval_s, ps, held_out_seeds(o.seeds), 0);
    std::printf("\nscenario %s, %zu held-out seeds:\n%s", eval_s.name.c_str(), o.seeds, rep.table().c_str());
    std::printf("\n%s", rep.paired_table("ppo").c_str());
    std::ofstream(o.out + "/compare.csv") << rep.csv();
    std::ofstream(o.out + "/compare.json") << rep.to_json().dump(2) << "\n";
    if (o.plot) {
        const std::string script = "scripts/plot_training.py";
        if (!fs::exists(script)) {
            std::printf("plots skipped: %s not found (run from the repository root)\n", script.c_str());
        } else {
            const std::string cmd = "python3 " + script + " --dir '" + o.out + "'";
            if (std::system(cmd.c_str()) != 0) std::printf("plots skipped: '%s' failed (is matplotlib installed?)\n", cmd.c_str());
        }
    }
    return 0;
}
}  // namespace

int main(int argc, char** argv) {
    gpuplace::rl::keep_freed_memory();  // the per_gpu network's matrices change size every minibatch (rl/memory.hpp)
    options o;
    try {
        o.cfg = json::parse(default_config);
        json over = json::object();
        for (int i = 1; i < argc; ++i) {
            const std::string a = argv[i];
            auto next = [&]() -> std::string {
                if (i + 1 >= argc) throw ConfigError("missing value after " + a);
                return argv[++i];
            };
            if (a == "--config") o.cfg.merge_patch(detail::parse_json(read_file(next()), "config file"));
            else if (a == "--scenario") over["scenario"] = next();
            else if (a == "--steps") over["ppo"]["total_steps"] = std::stoull(next());
            else if (a == "--seed") over["ppo"]["seed"] = std::stoull(next());
            else if (a == "--threads") over["ppo"]["threads"] = std::stoull(next());
            else if (a == "--restarts") over["restarts"] = std::stoull(next());
            else if (a == "--out") o.out = next();
            else if (a == "--compare") o.compare = true;
            else if (a == "--seeds") o.seeds = std::stoul(next());
            else if (a == "--load") o.load = next();
            else if (a == "--no-plot") o.plot = false;
            else if (a == "--print-config") {
                std::printf("%s\n", default_config);
                return 0;
            } else if (a == "-h" || a == "--help") return usage(), 0;
            else {
                std::fprintf(stderr, "unknown argument %s\n", a.c_str());
                return usage();
            }
        }
        o.cfg.merge_patch(over);
        detail::check_keys(o.cfg, "", {"scenario", "train_reward", "validation_seeds", "validate_every", "restarts", "ppo"});
        detail::read_int(o.cfg, "", "restarts", o.restarts, 1, 64);
        o.parallel = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, o.restarts);
        if (!o.load.empty()) o.compare = true;
        const auto s = load_scenario(o.cfg["scenario"]);
        const std::string comm = s.comm.value("model", "ring_allreduce");
        if (comm == TreeRouteCost::name) return run<tree_route_env>(o, s);
        return run<env>(o, s);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
}
