"""The package's boundary with the outside: shipped files by name, atomic artifact writes and bounded reads, the input contract for seeds, action ids and batch memory."""
