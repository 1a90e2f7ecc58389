"""The adapters of the engine to the field's interfaces: PettingZoo, Gymnasium (single and vector) and OpenSpiel."""
