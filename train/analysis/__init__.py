"""Analysis of how agents play and talk: partner signals, the bound of team information, information measures, play style."""
