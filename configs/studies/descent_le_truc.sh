#!/usr/bin/env bash
# How models/distilled_mmd_le_truc_w256.pt was made (docs/results/distillation.md, "Exploitability descent" and "Descent
# alone on the real game: 0.210 -> 0.0966"): full-width MMD distilled into the 256-128 network with 12 rounds
# of descent (seed 1), then five stages of exploitability descent alone, each resuming the last one's
# checkpoint (60 + 24 + 28 + 26 + 20 rounds; the last with its first-hand inputs off). 4.5 CPU-hours.
set -euo pipefail
truc train cfr --config configs/cfr/mmd_le_truc.yaml
truc train distill --config configs/distill/le_truc_mmd_descent.yaml --set seed=1   # models/distilled_mmd_le_truc_descent12.pt
for stage in descent_le_truc descent_le_truc_more descent_le_truc_stage3 descent_le_truc_stage4 descent_le_truc_stage5; do
  truc train distill --config configs/distill/$stage.yaml
done
truc exploitability --agent net:runs/descent_le_truc_stage5_forget/policy.pt --real-redeal
truc arena --config configs/arena/distill_le_truc.yaml
