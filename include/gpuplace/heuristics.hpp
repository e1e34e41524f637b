#pragma once
/// \file heuristics.hpp
/// The heuristic placers: random, first-fit, pack/best-fit, pack that waits, load-balance,
/// topology-greedy, the failure-aware avoid_failed, and on heterogeneous clusters typed_policy<Rule, Base>, which chooses each
/// job's GPU type and lets Base place it there. Each reads a placement view
/// (placement_view.hpp): a whole placement with plan(), or the next GPU with next()
/// (heuristics/placer.hpp), in every action mode of the env (act(env)). A GPU is "available" when
/// the view's mask allows it.

#include "heuristics/avoid_failed.hpp"
#include "heuristics/load_balance.hpp"
#include "heuristics/pack.hpp"
#include "heuristics/placer.hpp"
#include "heuristics/random.hpp"
#include "heuristics/topology_greedy.hpp"
#include "heuristics/typed.hpp"
