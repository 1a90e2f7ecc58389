"""Training: PPO/MMD self-play, CFR and its variants, PSRO, distillation, OpenSpiel's NFSP, and the runs of the signal experiments."""
