#!/usr/bin/env bash
# The partner-signalling study of docs/signals.md: the heuristic channel, the 12 PPO runs of the experiment
# file and their analysis, the learned conventions, the leak and the bound.
set -euo pipefail
truc analyze signals --variant le_truc_4p --team heuristic:honest --against random --deals 1000 --sweep '' --influence 0
truc analyze signals --config configs/signals/experiments.yaml       # trains what is missing (12 x 300,000 steps), then analyses
truc analyze signals --config configs/signals/conv_le_truc_4p.yaml   # learned conventions
truc analyze signals --config configs/signals/leak_le_truc_4p.yaml   # what an eavesdropper learns
truc analyze bound --deals 1000                                      # oracle vs channel vs muted
