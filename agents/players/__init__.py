"""Hand-written players: random, the heuristic styles (one at a time and batched), the human at the terminal, and the partner-information variants of the signal study."""
