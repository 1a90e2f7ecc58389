"""A person at the terminal: sees the table from the seat's side, picks an action by name or number."""

from __future__ import annotations

import sys

from truc_env.actions import layout_of

from .base import legal_ids


class HumanAgent:
    name = "human"

    def __init__(self, stdin=None, stdout=None):
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stdout

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, observation, action_mask) -> int:
        L = layout_of(observation["rules"])
        ids = [int(a) for a in legal_ids(action_mask)]
        out = self.stdout
        out.write("\n" + observation["text"] + "\n")
        for k, a in enumerate(ids):
            out.write(f"  [{k}] {L.to_string(a)}\n")
        while True:
            out.write("your action (number or name): ")
            out.flush()
            line = self.stdin.readline()
            if not line:
                raise EOFError("input ended before an action was chosen")
            text = " ".join(line.split())
            if text.isdigit() and int(text) < len(ids):
                return ids[int(text)]
            for a in ids:
                if L.to_string(a) == text:
                    return a
            out.write(f"  '{text}' is not one of the legal actions above; type its number (0-{len(ids) - 1}) "
                      "or its name, e.g. '" + L.to_string(ids[0]) + "'\n")
