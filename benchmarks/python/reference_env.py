"""A plain Python/NumPy implementation of the gpuplace MDP, written the way a researcher would.

It exists to measure the gap to the C++ core side by side (benchmarks/python/step_speed.py) and is
checked against it (tests/python/test_reference_env.py): on the same jobs, with the same actions,
it gives the same rewards, metrics, masks and observations (to float32 rounding).

Scope: the tree topology (racks x nodes x GPUs), the Proximity-DRL route cost model
(comm model "tree_route", slowdown (cost / best)^exponent), FIFO order with backfill, no DEFER,
no co-location, the default JCT reward. The workload is a list of jobs (submit time, GPUs, ideal
duration, communication intensity), e.g. taken from the C++ env with :func:`jobs_from_core`.
"""

from __future__ import annotations

import heapq
import math

import numpy as np


class TreeRouteCost:
    """Sum of edge weights on the union of shortest paths among the spine and the job's GPUs."""

    def __init__(self, gpus_per_node, nodes_per_rack, racks, exponent=1.0):
        self.S, self.N, self.R = gpus_per_node, nodes_per_rack, racks
        self.exponent = exponent
        self.w_gpu, self.w_pair, self.w_node, self.w_rack = 1 / 40, 1 / 40, 1 / 4, 1 / 2
        self._best = {}

    def cost(self, gpus):
        per_node = {}
        racks = set()
        for g in gpus:
            node = g // self.S
            per_node[node] = per_node.get(node, 0) + 1
            racks.add(g // (self.S * self.N))
        pairs = sum(c * (c - 1) / 2 for c in per_node.values())
        return self._cost_of(len(gpus), pairs, len(per_node), len(racks))

    def _cost_of(self, n, pairs, nodes, racks):
        return n * self.w_gpu + pairs * self.w_pair + nodes * self.w_node + racks * self.w_rack

    def best(self, k):
        """Lowest cost of k GPUs on an empty cluster (spread evenly over as few racks as possible)."""
        if k not in self._best:
            best = math.inf
            n = math.ceil(k / self.S)
            while n <= min(k, self.N * self.R):
                per = math.floor(k / n)
                extra = k - per * n
                pairs = (n - extra) * per * (per - 1) / 2 + extra * (per + 1) * per / 2
                best = min(best, self._cost_of(k, pairs, n, math.ceil(n / self.N)))
                n += 1
            self._best[k] = best
        return self._best[k]

    def evaluate(self, gpus):
        c = self.cost(gpus)
        slowdown = 1.0 if self.exponent == 0 else max(1.0, c / self.best(len(gpus))) ** self.exponent
        return c, slowdown


class ReferenceEnv:
    """Sequential GPU selection: one GPU pick per step for the current job, under a mask."""

    def __init__(self, racks=2, nodes_per_rack=4, gpus_per_node=4, queue_window=8, time_scale=3600.0):
        self.racks, self.npr, self.gpn = racks, nodes_per_rack, gpus_per_node
        self.G = racks * nodes_per_rack * gpus_per_node
        self.K = queue_window
        self.time_scale = time_scale
        self.comm = TreeRouteCost(gpus_per_node, nodes_per_rack, racks)
        self.node_of = np.arange(self.G) // gpus_per_node
        self.rack_of = np.arange(self.G) // (gpus_per_node * nodes_per_rack)
        self.obs_size = 6 * self.G + 5 + 4 * self.K + 4

    # ---- episode -----------------------------------------------------------------------------

    def reset(self, jobs):
        """jobs: list of dicts with submit_time, num_gpus, ideal_duration, comm_intensity (in
        submit order). Returns (observation, mask)."""
        self.jobs = jobs
        self.now = min(0.0, jobs[0]["submit_time"]) if jobs else 0.0
        self.holder = np.full(self.G, -1)  # job index on each GPU, -1 = free
        self.end_time = np.zeros(self.G)
        self.events = []  # (end time, job index)
        self.next_arrival = 0
        self.in_system = 0
        self.queue = []  # waiting job indices, FIFO
        self.picked = []
        self.current = None
        self.records = {}  # job index -> dict(start, end, gpus, cost, slowdown)
        self.finished = []
        self.pending = self._advance()
        return self._observation(), self._mask()

    def step(self, action):
        mask = self._mask()
        if not (0 <= action < self.G) or not mask[action]:
            raise ValueError(f"invalid action {action}")
        reward, self.pending = self.pending, 0.0
        self.picked.append(action)
        job = self.jobs[self.current]
        if len(self.picked) == job["num_gpus"]:
            self._start_current()
            reward += self._advance()
        terminated = len(self.finished) == len(self.jobs)
        return self._observation(), reward, terminated, self._mask()

    # ---- simulation --------------------------------------------------------------------------

    def _free(self):
        return int(np.sum(self.holder < 0))

    def _find_candidate(self):
        free = self._free()
        for j in self.queue:
            if self.jobs[j]["num_gpus"] <= free:
                return j
        return None

    def _has_events(self):
        return bool(self.events) or self.next_arrival < len(self.jobs)

    def _advance(self):
        """Moves to the next decision point; returns the reward of the time that passed."""
        area = 0.0
        while True:
            self.current = self._find_candidate()
            if self.current is not None or not self._has_events():
                break
            t = self.events[0][0] if self.events else math.inf
            if self.next_arrival < len(self.jobs):
                t = min(t, self.jobs[self.next_arrival]["submit_time"])
            area += self.in_system * (t - self.now)
            self.now = t
            while self.events and self.events[0][0] <= t:
                end, j = heapq.heappop(self.events)
                for g in self.records[j]["gpus"]:
                    self.holder[g] = -1
                self.records[j]["end"] = end
                self.finished.append(j)
                self.in_system -= 1
            while self.next_arrival < len(self.jobs) and self.jobs[self.next_arrival]["submit_time"] <= t:
                self.in_system += 1
                self.queue.append(self.next_arrival)
                self.next_arrival += 1
        return -area / self.time_scale

    def _start_current(self):
        j = self.current
        gpus = sorted(self.picked)
        cost, slowdown = self.comm.evaluate(gpus)
        end = self.now + self.jobs[j]["ideal_duration"] * slowdown
        for g in gpus:
            self.holder[g] = j
            self.end_time[g] = end
        heapq.heappush(self.events, (end, j))
        self.records[j] = {"start": self.now, "end": end, "gpus": gpus, "cost": cost, "slowdown": slowdown}
        self.queue.remove(j)
        self.picked = []
        self.current = None

    # ---- observation and mask ----------------------------------------------------------------

    def _squash(self, seconds):
        x = max(0.0, seconds)
        return x / (x + self.time_scale)

    def _request(self, k):
        return math.log2(k + 1) / math.log2(self.G + 1)

    def _mask(self):
        mask = np.zeros(self.G + 1, dtype=np.uint8)
        if self.current is not None:
            mask[: self.G] = self.holder < 0
            mask[self.picked] = 0
        return mask

    def _observation(self):
        G = self.G
        busy = (self.holder >= 0).astype(np.float32)
        picked = np.zeros(G, dtype=np.float32)
        picked[self.picked] = 1.0
        remaining = np.array([self._squash(self.end_time[g] - self.now) if busy[g] else 0.0 for g in range(G)])
        proximity = np.zeros(G)
        if self.picked:
            nodes = set(self.node_of[self.picked])
            racks = set(self.rack_of[self.picked])
            for g in range(G):
                if self.node_of[g] in nodes:
                    proximity[g] = 1.0
                elif self.rack_of[g] in racks:
                    proximity[g] = 0.5
        free = 1.0 - busy
        node_free = np.bincount(self.node_of, weights=free)[self.node_of] / self.gpn
        rack_free = np.bincount(self.rack_of, weights=free)[self.rack_of] / (self.gpn * self.npr)
        job = np.zeros(5)
        if self.current is not None:
            j = self.jobs[self.current]
            k = j["num_gpus"]
            job[:] = [self._request(k), (k - len(self.picked)) / k, self._squash(j["ideal_duration"]),
                      j["comm_intensity"], self._squash(self.now - j["submit_time"])]
        window = np.zeros((self.K, 4))
        waiting = [q for q in self.queue if q != self.current][: self.K]
        for i, q in enumerate(waiting):
            j = self.jobs[q]
            window[i] = [1.0, self._request(j["num_gpus"]), self._squash(j["ideal_duration"]),
                         self._squash(self.now - j["submit_time"])]
        n = len(self.queue)
        glob = [busy.sum() / G, n / (n + (self.K or 1)), self._squash(self.now), len(self.finished) / len(self.jobs)]
        return np.concatenate([busy, picked, remaining, proximity, node_free, rack_free, job, window.ravel(), glob]).astype(
            np.float32)

    # ---- metrics -----------------------------------------------------------------------------

    def metrics(self):
        jct = [self.records[j]["end"] - self.jobs[j]["submit_time"] for j in self.finished]
        first = self.jobs[0]["submit_time"]
        last = max([first] + [self.records[j]["end"] for j in self.finished])
        return {"avg_jct": float(np.mean(jct)), "makespan": last - first, "jobs_done": len(self.finished),
                "avg_comm_cost": float(np.mean([self.records[j]["cost"] for j in self.finished]))}


def jobs_from_core(core_env, seed):
    """The jobs of the C++ env's episode `seed` (a gpuplace._core env of the tree_route model),
    in submit order, with the communication intensity the C++ observation shows for each. Runs the
    episode with first-fit actions to see every job as the current one; leaves the env reset."""
    core_env.reset(seed)
    layout = {s["name"]: s for s in core_env.observation_layout}
    job_off = layout["job"]["offset"]
    G = int(core_env.num_gpus)
    intensity = {}
    while not core_env.done:
        cj = core_env.current_job()
        intensity[int(cj["id"])] = float(core_env.observation[job_off + 3])
        mask = core_env.action_mask
        core_env.step(int(np.argmax(mask[:G])))
    fin = core_env.finished_jobs()
    order = np.argsort(fin["id"])
    jobs = []
    for i in order:
        jid = int(fin["id"][i])
        jobs.append({"submit_time": float(fin["submit"][i]), "num_gpus": int(fin["num_gpus"][i]),
                     "ideal_duration": float(fin["ideal_duration"][i]), "comm_intensity": intensity[jid]})
    core_env.reset(seed)
    return jobs
