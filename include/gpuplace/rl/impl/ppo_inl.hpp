#pragma once
/// \file rl/impl/ppo_inl.hpp
/// basic_ppo's rollout and update (rl/ppo.hpp includes this): a rollout of num_steps x num_envs
/// steps with GAE, and the minibatch epochs of PPO, behaviour cloning or expert iteration.

namespace gpuplace::rl {

template <VectorEnv Env, std::floating_point S>
void basic_ppo<Env, S>::rollout(bool teacher, labels label) {
    const auto N = cfg_.num_envs, T = cfg_.num_steps, A = spec_.num_actions(), O = spec_.obs_size();
    std::vector<std::int64_t> act(N);
    typename network_type::workspace w, wf;
    for (std::size_t t = 0; t < T; ++t) {
        const Eigen::Map<const Eigen::MatrixXf> o(venv_.observations().data(), Eigen::Index(O), Eigen::Index(N));
        net_.update_normalizers(o);
        const auto base = t * N;
        obs_.middleCols(Eigen::Index(base), Eigen::Index(N)) = o;
        std::copy(venv_.action_masks().begin(), venv_.action_masks().end(), masks_.begin() + std::ptrdiff_t(base * A));
        if (teacher) {  // cloning needs only the teacher's actions: no network pass
            for (std::size_t i = 0; i < N; ++i) act[i] = actions_[base + i] = teachers_[i](venv_.env(i));
        } else {
            // expert iteration with dagger_draws: a teacher per draw and env (ppo.hpp's teachers_); one otherwise
            const std::size_t draws = label == labels::teacher ? teachers_.size() / N : 1;
            if (label != labels::none)  // what the teacher would do in the states the policy visits
                for (std::size_t i = 0; i < N; ++i) {
                    teacher_act_[base + i] = label == labels::planner ? planner_label(venv_.env(i), base + i) : teachers_[i](venv_.env(i));
                    if (!bases_.empty()) moved_[base + i] = teacher_act_[base + i] != bases_[i](venv_.env(i));
                    for (std::size_t d = 1; d < draws; ++d)  // the same state with other futures
                        draw_act_[(base + i) * (draws - 1) + d - 1] = teachers_[d * N + i](venv_.env(i));
                }
            net_.forward(o, w, venv_.action_masks().data());
            for (std::size_t i = 0; i < N; ++i) {
                const basic_masked_categorical<S> d(w.logits.col(Eigen::Index(i)), venv_.action_masks().subspan(i * A, A));
                const auto a = d.sample(rng_);
                act[i] = actions_[base + i] = std::int64_t(a);
                logp_[base + i] = d.log_prob(a);
                values_[base + i] = w.values(Eigen::Index(i));
            }
        }
        venv_.step(act);
        steps_ += N;
        for (std::size_t i = 0; i < N; ++i) {  // the episode so far (a saved state replays it)
            if (venv_.dones()[i]) ep_actions_[i].clear();
            else ep_actions_[i].push_back(act[i]);
        }
        // bootstrap truncated episodes from their final observation
        std::vector<std::size_t> trunc;
        for (std::size_t i = 0; i < N; ++i)
            if (venv_.truncated()[i] && !venv_.terminated()[i]) trunc.push_back(i);
        std::vector<S> boot(N, S(0));
        if (!teacher && !trunc.empty()) {
            Eigen::MatrixXf fo(Eigen::Index(O), Eigen::Index(trunc.size()));
            for (std::size_t k = 0; k < trunc.size(); ++k)
                fo.col(Eigen::Index(k)) = Eigen::Map<const Eigen::VectorXf>(venv_.final_observations().data() + trunc[k] * O, Eigen::Index(O));
            net_.forward(fo, wf);
            for (std::size_t k = 0; k < trunc.size(); ++k) boot[trunc[k]] = wf.values(Eigen::Index(k));
        }
        for (std::size_t i = 0; i < N; ++i) {
            const bool done = venv_.terminated()[i] || venv_.truncated()[i];
            const double g = discount_of(venv_.elapsed()[i]);
            gammas_[base + i] = S(g);
            rewards_[base + i] = S(scale_reward(i, venv_.rewards()[i], done, g)) + S(g) * boot[i];
            dones_[base + i] = done;
            if (done) {
                const auto& f = venv_.final(i);
                recent_.push_back({f.episode_return, f.m.avg_jct, f.m.avg_comm_cost});
                if (recent_.size() > window_) recent_.pop_front();
                ++episodes_;
            }
        }
    }
    if (teacher) return;  // no advantages for cloning
    // value of the state after the rollout
    const Eigen::Map<const Eigen::MatrixXf> o(venv_.observations().data(), Eigen::Index(O), Eigen::Index(N));
    net_.forward(o, w, venv_.action_masks().data());
    std::vector<S> last(N);
    for (std::size_t i = 0; i < N; ++i) last[i] = w.values(Eigen::Index(i));
    // GAE
    std::vector<S> gae(N, S(0));
    const S lam = S(cfg_.gae_lambda);
    for (std::size_t t = T; t-- > 0;) {
        for (std::size_t i = 0; i < N; ++i) {
            const auto k = t * N + i;
            const S g = gammas_[k];
            const S nonterm = dones_[k] ? S(0) : S(1);
            const S next_v = t + 1 == T ? last[i] : values_[k + N];
            const S delta = rewards_[k] + g * next_v * nonterm - values_[k];
            gae[i] = delta + g * lam * nonterm * gae[i];
            adv_[k] = gae[i];
            ret_[k] = gae[i] + values_[k];
        }
    }
}

template <VectorEnv Env, std::floating_point S>
void basic_ppo<Env, S>::update(ppo_stats& st) {
    const auto TN = cfg_.num_steps * cfg_.num_envs, A = spec_.num_actions();
    const auto MB = TN / cfg_.minibatches;
    // expert iteration trains on every demonstration gathered so far, the others on the rollout
    const bool clone = st.imitation || st.dagger;
    const Eigen::MatrixXf& obs = st.dagger ? demo_obs_ : obs_;
    const std::vector<std::uint8_t>& masks = st.dagger ? demo_masks_ : masks_;
    const std::vector<std::int64_t>& actions = st.dagger ? demo_labels_ : actions_;
    const auto n = actions.size();
    std::vector<std::size_t> idx(n);
    std::iota(idx.begin(), idx.end(), std::size_t{0});
    typename network_type::workspace w;
    Eigen::MatrixXf mo(Eigen::Index(spec_.obs_size()), Eigen::Index(MB));
    std::vector<std::uint8_t> mm(MB * A);
    std::vector<std::int64_t> ma(MB), mt(cfg_.teacher_coef > 0 && !clone ? MB : 0);
    const std::size_t draws = st.dagger ? cfg_.dagger_draws : 1;  // each demonstration's labels, one per draw of futures
    std::vector<std::int64_t> md(MB * (draws - 1));
    const bool weighted = st.dagger && !demo_moved_.empty();  // dagger_moved_weight
    std::vector<S> mw(weighted ? MB : 0);
    std::vector<S> mlp_(MB), madv(MB), mret(MB), mval(MB);
    const bool counterfactual = st.dagger && planner_;
    std::vector<float> mq(counterfactual ? MB * A : 0);
    const float q_scale = counterfactual ? float(1.0 / advantage_scale()) : 1.0f;
    std::vector<vector_t<S>*> params, grads;
    for (auto* p : net_.parts()) {
        params.push_back(&p->params());
        grads.push_back(&p->grads());
    }
    double n_mb = 0;
    for (std::size_t ep = 0; ep < cfg_.epochs; ++ep) {
        for (std::size_t i = n; i > 1; --i) std::swap(idx[i - 1], idx[rng_.below(i)]);
        for (std::size_t b = 0; b + MB <= n; b += MB) {
            double mean = 0, sq = 0;
            for (std::size_t j = 0; j < MB; ++j) {
                const auto k = idx[b + j];
                // the rollout's observations are larger than the L2: fetch a later column
                // while this one is copied
                if (j + 2 < MB)
                    gpuplace::detail::prefetch_range(obs.col(Eigen::Index(idx[b + j + 2])).data(),
                                                     std::size_t(obs.rows()) * sizeof(float));
                mo.col(Eigen::Index(j)) = obs.col(Eigen::Index(k));
                std::copy_n(masks.begin() + std::ptrdiff_t(k * A), A, mm.begin() + std::ptrdiff_t(j * A));
                ma[j] = actions[k];
                if (weighted) mw[j] = demo_moved_[k] ? S(cfg_.dagger_moved_weight) : S(1);
                for (std::size_t d = 1; d < draws; ++d) md[(d - 1) * MB + j] = demo_draws_[k * (draws - 1) + d - 1];
                for (std::size_t a = 0; a < mq.size() / MB; ++a) mq[j * A + a] = demo_adv_[k * A + a] * q_scale;
                if (clone) continue;
                if (!mt.empty()) mt[j] = teacher_act_[k];
                mlp_[j] = logp_[k];
                madv[j] = adv_[k];
                mret[j] = ret_[k];
                mval[j] = values_[k];
                mean += double(madv[j]);
            }
            if (cfg_.normalize_advantages && MB > 1) {
                mean /= double(MB);
                for (auto a : madv) sq += (double(a) - mean) * (double(a) - mean);
                const double sd = std::sqrt(sq / double(MB - 1));
                for (auto& a : madv) a = S((double(a) - mean) / (sd + 1e-8));
            }
            net_.forward(mo, w, mm.data());
            auto L = counterfactual ? advantage_loss<S>(w.logits, mm, mq, ma, st.teacher_agreement)
                   : clone        ? imitation_loss<S>(w.logits, mm, ma, st.teacher_agreement, mw)
                                  : compute_ppo_loss<S>(w.logits, w.values, mm, ma, mlp_, madv, mret, mval, cfg_);
            if (draws > 1) {  // the mean of every draw's cross-entropy: a soft target, the share of draws for each action
                double unused = 0;
                for (std::size_t d = 1; d < draws; ++d) {
                    const auto Ld = imitation_loss<S>(w.logits, mm, std::span<const std::int64_t>(md).subspan((d - 1) * MB, MB), unused);
                    L.dlogits += Ld.dlogits;
                    L.policy += Ld.policy;
                }
                L.dlogits /= S(draws);
                L.policy /= double(draws);
                L.total = L.policy;
            }
            if (!clone && cfg_.teacher_coef > 0) {  // the pull towards the teacher's actions
                const basic_masked_categorical_batch<S> d(w.logits, mm);
                matrix_t<S> g;
                d.gradient(g, mt, vector_t<S>::Constant(Eigen::Index(MB), -S(cfg_.teacher_coef) / S(MB)), S(0));
                L.dlogits += g;
                double agree = 0;
                for (std::size_t j = 0; j < MB; ++j) agree += d.argmax(Eigen::Index(j)) == std::size_t(mt[j]) ? 1.0 : 0.0;
                st.teacher_agreement += agree / double(MB);
            }
            // value warm-up: the policy keeps what it has (e.g. the cloned teacher) until the value is fit
            if (!clone && iter_ - imitation_iterations() - dagger_iterations() < cfg_.value_warmup) L.dlogits.setZero();
            net_.backward(w, L.dlogits, L.dvalues, false);  // writes every gradient: no zeroing pass
            const double norm = global_norm(grads);
            st.grad_norm += norm;
            opt_.step(params, grads, st.learning_rate, clip_factor<S>(norm, cfg_.max_grad_norm));
            st.policy_loss += L.policy;
            st.value_loss += L.value;
            st.entropy += L.entropy;
            st.approx_kl += L.approx_kl;
            st.clip_frac += L.clip_frac;
            n_mb += 1;
        }
    }
    if (n_mb > 0)
        for (double* x : {&st.policy_loss, &st.value_loss, &st.entropy, &st.approx_kl, &st.clip_frac, &st.grad_norm,
                          &st.teacher_agreement})
            *x /= n_mb;
    if (clone) return;  // no values were estimated in the teacher's rollout, none are trained on demonstrations
    // explained variance of the rollout values
    double mr = 0, mv = 0;
    for (std::size_t k = 0; k < TN; ++k) mr += double(ret_[k]) / double(TN);
    double vr = 0, ve = 0;
    for (std::size_t k = 0; k < TN; ++k) {
        vr += (double(ret_[k]) - mr) * (double(ret_[k]) - mr);
        const double e = double(ret_[k]) - double(values_[k]);
        mv += e / double(TN);
    }
    for (std::size_t k = 0; k < TN; ++k) {
        const double e = double(ret_[k]) - double(values_[k]) - mv;
        ve += e * e;
    }
    st.explained_variance = vr > 0 ? 1.0 - ve / vr : 0.0;
}

}  // namespace gpuplace::rl
