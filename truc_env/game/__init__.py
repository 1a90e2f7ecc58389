"""The game itself: cards, variants and their rules, the action layout, the reference engine, what a seat sees, observations, records and the episode driver."""
