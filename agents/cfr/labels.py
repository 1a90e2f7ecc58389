"""Edge labels and node kinds of the public tree, shared by the tree builder and the unfolding."""

PLAY = 1 << 16  # labels at and above: a card play of class (label - PLAY)
STUCK = PLAY - 1  # a hand the public plays rule out, with no card left to play (see build_tree)
REVEAL = 1 << 15  # labels REVEAL + 64 * role + points: the envido announcement (role 0 = the dealer)
FLOR_REVEAL = REVEAL + 128  # + 64 * role + points: the better flor of a flor against flor (20..38)
FLOR_HELD = REVEAL + 256  # + 2 * role + held: whether the seat answering a flor holds one
# edge classes of non-play actions (play edges carry the class played, >= 0)
FLOR_ONLY, NO_FLOR = -2, -3  # the actor's hand set narrows to flor hands / to hands without flor
NO_FLOR_PLAY = 1 << 20  # added to a play's class: the play also says "no flor"
CHILD, LEAF, REDEAL = 0, 1, 2
NATURE = 2  # actor of an announcement node: the hands decide which branch is taken
