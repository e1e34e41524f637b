#pragma once
/// \file rl/impl/ppo_state_inl.hpp
/// basic_ppo's saving and resuming (rl/ppo.hpp includes this): the trainer's whole state between
/// iterations as a state document (rl/state_file.hpp).

namespace gpuplace::rl {

template <VectorEnv Env, std::floating_point S>
gpuplace::detail::json basic_ppo<Env, S>::save_state() const {
    using gpuplace::detail::json;
    using detail::to_bytes;
    json j;
    j["ppo"] = cfg_.to_json();
    j["scenario"] = gpuplace::to_json(scen_);
    if (mixture_.size() > 1) {
        j["mixture"] = json::array();
        for (const auto& m : mixture_) j["mixture"].push_back(gpuplace::to_json(m));
    }
    j["iteration"] = iter_;
    j["env_steps"] = steps_;
    j["episodes"] = episodes_;
    const auto rs = rng_.state();
    j["rng"] = to_bytes<std::uint64_t>(rs);
    json parts = json::array(), norms = json::array(), m = json::array(), v = json::array();
    for (const auto& [name, n] : net_.named()) parts.push_back(to_bytes<S>({n->params().data(), std::size_t(n->params().size())}));
    for (const auto& r : net_.normalizers()) norms.push_back(norm_json(r));
    for (const auto& x : opt_.first_moments()) m.push_back(to_bytes<S>({x.data(), std::size_t(x.size())}));
    for (const auto& x : opt_.second_moments()) v.push_back(to_bytes<S>({x.data(), std::size_t(x.size())}));
    j["network"] = {{"parts", std::move(parts)}, {"normalizers", std::move(norms)}};
    j["adam"] = {{"steps", opt_.steps()}, {"m", std::move(m)}, {"v", std::move(v)}};
    j["return_normalizer"] = norm_json(ret_norm_);
    j["episode_returns"] = to_bytes<double>(ep_ret_);
    std::vector<double> recent;
    for (const auto& e : recent_) recent.insert(recent.end(), {e.ret, e.jct, e.comm});
    j["recent"] = to_bytes<double>(recent);
    const auto N = cfg_.num_envs;
    std::vector<std::uint64_t> episode(N), sampler;
    json actions = json::array();
    for (std::size_t i = 0; i < N; ++i) {
        episode[i] = venv_.episode(i);
        const auto st = venv_.sampler(i).state();
        sampler.insert(sampler.end(), st.begin(), st.end());
        actions.push_back(to_bytes<std::int64_t>(ep_actions_[i]));
    }
    j["envs"] = {{"seed", venv_.seed()}, {"episode", to_bytes<std::uint64_t>(episode)},
                 {"sampler", to_bytes<std::uint64_t>(sampler)}, {"actions", std::move(actions)}};
    if (!demo_labels_.empty())
        j["demonstrations"] = {{"obs", to_bytes<float>({demo_obs_.data(), std::size_t(demo_obs_.size())})},
                               {"masks", to_bytes<std::uint8_t>(demo_masks_)},
                               {"labels", to_bytes<std::int64_t>(demo_labels_)}};
    if (!demo_adv_.empty()) j["demonstrations"]["advantages"] = to_bytes<float>(demo_adv_);
    if (!demo_moved_.empty()) j["demonstrations"]["moved"] = to_bytes<std::uint8_t>(demo_moved_);
    if (!demo_draws_.empty()) j["demonstrations"]["draws"] = to_bytes<std::int64_t>(demo_draws_);
    return j;
}

template <VectorEnv Env, std::floating_point S>
void basic_ppo<Env, S>::load_state(const gpuplace::detail::json& j, std::string_view source) {
    using gpuplace::detail::json;
    using detail::from_bytes;
    using detail::state_get;
    using detail::state_uint;
    const std::string src(source);
    auto fail = [&](const std::string& what) { throw CheckpointError("state " + src + ": " + what); };
    auto without_threads = [](json c) {
        c.erase("threads");
        return c;
    };
    const auto& pj = state_get(j, source, "", "ppo");
    if (without_threads(pj) != without_threads(cfg_.to_json()))
        fail("made with another PPO config: " + detail::differences(without_threads(pj), without_threads(cfg_.to_json())));
    const auto& sj = state_get(j, source, "", "scenario");
    if (sj != gpuplace::to_json(scen_)) fail("made for another scenario: " + detail::differences(sj, gpuplace::to_json(scen_)));
    {
        json mine = json::array(), theirs = j.contains("mixture") ? j["mixture"] : json::array();
        if (mixture_.size() > 1)
            for (const auto& m : mixture_) mine.push_back(gpuplace::to_json(m));
        if (mine != theirs) fail("made for another mixture of scenarios: " + detail::differences(theirs, mine));
    }
    const auto iter = state_uint(j, source, "", "iteration");
    if (iter > total_iterations()) fail("/iteration: " + std::to_string(iter) + " is past the run's " + std::to_string(total_iterations()));
    const auto r = from_bytes<std::uint64_t>(state_get(j, source, "", "rng"), source, "/rng", 4);
    // network
    const auto& nj = state_get(j, source, "", "network");
    const auto& parts = state_get(nj, source, "/network", "parts");
    auto named = net_.named();
    if (!parts.is_array() || parts.size() != named.size()) fail("/network/parts: expected " + std::to_string(named.size()) + " parts");
    std::vector<std::vector<S>> params;
    for (std::size_t k = 0; k < named.size(); ++k)
        params.push_back(from_bytes<S>(parts[k], source, "/network/parts/" + std::to_string(k), named[k].second->num_params()));
    const auto& norms = state_get(nj, source, "/network", "normalizers");
    if (!norms.is_array() || norms.size() != net_.normalizers().size()) fail("/network/normalizers: wrong number of normalizers");
    // optimiser
    const auto& aj = state_get(j, source, "", "adam");
    const auto& mj = state_get(aj, source, "/adam", "m");
    const auto& vj = state_get(aj, source, "/adam", "v");
    if (!mj.is_array() || !vj.is_array() || mj.size() != named.size() || vj.size() != named.size())
        fail("/adam: expected moments for " + std::to_string(named.size()) + " parts");
    std::vector<std::vector<S>> m, v;
    for (std::size_t k = 0; k < named.size(); ++k) {
        m.push_back(from_bytes<S>(mj[k], source, "/adam/m/" + std::to_string(k), named[k].second->num_params()));
        v.push_back(from_bytes<S>(vj[k], source, "/adam/v/" + std::to_string(k), named[k].second->num_params()));
    }
    const auto N = cfg_.num_envs;
    const auto ep_ret = from_bytes<double>(state_get(j, source, "", "episode_returns"), source, "/episode_returns", N);
    const auto recent = from_bytes<double>(state_get(j, source, "", "recent"), source, "/recent");
    if (recent.size() % 3 != 0 || recent.size() / 3 > window_) fail("/recent: malformed statistics window");
    const auto& ej = state_get(j, source, "", "envs");
    const auto episode = from_bytes<std::uint64_t>(state_get(ej, source, "/envs", "episode"), source, "/envs/episode", N);
    const auto sampler = from_bytes<std::uint64_t>(state_get(ej, source, "/envs", "sampler"), source, "/envs/sampler", 4 * N);
    const auto& acts = state_get(ej, source, "/envs", "actions");
    if (!acts.is_array() || acts.size() != N) fail("/envs/actions: expected " + std::to_string(N) + " lists");
    // expert iteration's demonstrations: one rollout's states per expert iteration done
    const auto O = spec_.obs_size(), A = spec_.num_actions(), TN = cfg_.num_steps * N;
    const auto nd = (std::min(iter, imitation_iterations() + dagger_iterations()) - std::min(iter, imitation_iterations())) * TN;
    std::vector<float> dobs;
    std::vector<std::uint8_t> dmasks;
    std::vector<std::int64_t> dlabels;
    std::vector<float> dadv;
    std::vector<std::uint8_t> dmoved;
    std::vector<std::int64_t> ddraws;
    const auto K = cfg_.dagger_draws - 1;  // the other draws' labels per demonstration
    if (nd > 0) {
        const auto& dj = state_get(j, source, "", "demonstrations");
        dobs = from_bytes<float>(state_get(dj, source, "/demonstrations", "obs"), source, "/demonstrations/obs", nd * O);
        dmasks = from_bytes<std::uint8_t>(state_get(dj, source, "/demonstrations", "masks"), source, "/demonstrations/masks", nd * A);
        dlabels = from_bytes<std::int64_t>(state_get(dj, source, "/demonstrations", "labels"), source, "/demonstrations/labels", nd);
        if (planner_)
            dadv = from_bytes<float>(state_get(dj, source, "/demonstrations", "advantages"), source, "/demonstrations/advantages", nd * A);
        if (dagger_base_.make)
            dmoved = from_bytes<std::uint8_t>(state_get(dj, source, "/demonstrations", "moved"), source, "/demonstrations/moved", nd);
        if (K > 0)
            ddraws = from_bytes<std::int64_t>(state_get(dj, source, "/demonstrations", "draws"), source, "/demonstrations/draws", nd * K);
        for (std::size_t k = 0; k < nd; ++k)
            if (dlabels[k] < 0 || std::size_t(dlabels[k]) >= A || !dmasks[k * A + std::size_t(dlabels[k])])
                fail("/demonstrations/labels/" + std::to_string(k) + ": " + std::to_string(dlabels[k]) + " is not a valid action of its state");
        for (std::size_t k = 0; k < nd * K; ++k)
            if (ddraws[k] < 0 || std::size_t(ddraws[k]) >= A || !dmasks[k / K * A + std::size_t(ddraws[k])])
                fail("/demonstrations/draws/" + std::to_string(k) + ": " + std::to_string(ddraws[k]) + " is not a valid action of its state");
    }
    // everything read: apply
    for (std::size_t k = 0; k < named.size(); ++k)
        std::copy(params[k].begin(), params[k].end(), named[k].second->params().data());
    for (std::size_t k = 0; k < norms.size(); ++k) set_norm(net_.normalizers()[k], norms[k], src, "/network/normalizers/" + std::to_string(k));
    for (std::size_t k = 0; k < named.size(); ++k) {
        std::copy(m[k].begin(), m[k].end(), opt_.first_moments()[k].data());
        std::copy(v[k].begin(), v[k].end(), opt_.second_moments()[k].data());
    }
    const auto& adam_steps = state_get(aj, source, "/adam", "steps");
    if (!adam_steps.is_number_integer()) fail("/adam/steps: expected an integer");
    opt_.set_steps(adam_steps.template get<long long>());
    set_norm(ret_norm_, state_get(j, source, "", "return_normalizer"), src, "/return_normalizer");
    ep_ret_ = ep_ret;
    recent_.clear();
    for (std::size_t k = 0; k < recent.size(); k += 3) recent_.push_back({recent[k], recent[k + 1], recent[k + 2]});
    rng_.set_state({r[0], r[1], r[2], r[3]});
    if (cfg_.dagger_iterations > 0) {
        demo_obs_ = Eigen::Map<const Eigen::MatrixXf>(dobs.data(), Eigen::Index(O), Eigen::Index(nd));
        demo_masks_ = std::move(dmasks);
        demo_labels_ = std::move(dlabels);
        demo_adv_ = std::move(dadv);
        demo_moved_ = std::move(dmoved);
        demo_draws_ = std::move(ddraws);
    }
    iter_ = iter;
    steps_ = state_uint(j, source, "", "env_steps");
    episodes_ = state_uint(j, source, "", "episodes");
    venv_.reset(state_uint(ej, source, "/envs", "seed"));
    for (std::size_t i = 0; i < N; ++i) {
        ep_actions_[i] = from_bytes<std::int64_t>(acts[i], source, "/envs/actions/" + std::to_string(i));
        gpuplace::detail::rng smp;
        smp.set_state({sampler[4 * i], sampler[4 * i + 1], sampler[4 * i + 2], sampler[4 * i + 3]});
        try {
            venv_.restore(i, episode[i], ep_actions_[i], smp);
        } catch (const Error& e) {
            fail("/envs/actions/" + std::to_string(i) + ": the env's episode cannot be replayed: " + e.what());
        }
    }
}

template <VectorEnv Env, std::floating_point S>
gpuplace::detail::json basic_ppo<Env, S>::norm_json(const running_norm& r) {
    using detail::to_bytes;
    const double c = r.count();
    return {{"mean", to_bytes<double>({r.mean().data(), std::size_t(r.mean().size())})},
            {"var", to_bytes<double>({r.var().data(), std::size_t(r.var().size())})},
            {"count", to_bytes<double>({&c, 1})}};
}

template <VectorEnv Env, std::floating_point S>
void basic_ppo<Env, S>::set_norm(running_norm& r, const gpuplace::detail::json& j, const std::string& src, const std::string& path) {
    using detail::from_bytes;
    using detail::state_get;
    const auto n = std::size_t(r.mean().size());
    const auto mean = from_bytes<double>(state_get(j, src, path, "mean"), src, path + "/mean", n);
    const auto var = from_bytes<double>(state_get(j, src, path, "var"), src, path + "/var", n);
    const auto count = from_bytes<double>(state_get(j, src, path, "count"), src, path + "/count", 1);
    r.set(Eigen::Map<const Eigen::VectorXd>(mean.data(), Eigen::Index(n)),
          Eigen::Map<const Eigen::VectorXd>(var.data(), Eigen::Index(n)), count[0]);
}

}  // namespace gpuplace::rl
