"""The table shown to people: as text, as a picture, and in the words players use."""
