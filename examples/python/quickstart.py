"""Quick start: a Gymnasium step, MaskablePPO for a few seconds, then every heuristic next to it."""
import gymnasium as gym
from sb3_contrib import MaskablePPO

import gpuplace  # registers gpuplace/Default-v0 and gpuplace/ProximityDRL-v0
from gpuplace.evaluation import evaluate_agent, maskable_policy

env = gym.make("gpuplace/ProximityDRL-v0")  # 32 GPUs: 2 racks x 4 nodes x 4 GPUs, 30 jobs
obs, info = env.reset(seed=0)
mask = env.unwrapped.action_masks()  # the GPUs the current job may take next
obs, reward, terminated, truncated, info = env.step(int(mask.argmax()))  # pick the first of them

model = MaskablePPO("MlpPolicy", env, n_steps=256, batch_size=64, seed=0, device="cpu")
model.learn(total_timesteps=1024)  # seconds; a policy worth using needs far more (docs/python.md)

report = gpuplace.evaluate("proximity_drl", seeds=10)  # every heuristic, run in C++
evaluate_agent(maskable_policy(model), "proximity_drl", 10, name="maskable_ppo", report=report)
print(report.table())
