#!/usr/bin/env bash
# The default heads-up Le Truc network within 2 CPU-hours from nothing, three seeds (docs/results.md,
# "Within 2 CPU-hours with a margin: a cheaper teacher"): a cheap full-width MMD table, fitted into a
# 512-256 network with its first-hand inputs off, then 50 rounds of exploitability descent. Median 0.0913
# points/hand at 6,545 CPU s. Each seed needs its own empty TRUC_CACHE_DIR to be "from nothing".
set -euo pipefail
truc train cfr --config configs/cfr/mmd_le_truc_budget.yaml                         # 1,460 CPU s
for S in 0 1 2; do
  truc train distill --config configs/distill/budget_w512_le_truc_fit.yaml --set seed=$S --set out=runs/lean_fit_s$S
  truc train distill --config configs/distill/budget_w512_le_truc_descent.yaml --set seed=$S \
      --set init=net:runs/lean_fit_s$S/checkpoint.pt --set out=runs/lean_descent_s$S
  truc exploitability --agent net:runs/lean_descent_s$S/policy.pt --real-redeal
done
