"""The `truc` command line: the parser and its subcommands, the typed flags they share."""
